#!/usr/bin/env python3
"""tract-onnx 0.23.9: PushSplitDown merges three identical nodes into one it already removed, and the decluttered model evaluates a Dummy op. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

# Three identical Max(x, w): the first and the last are graph outputs, the middle one feeds Neg.
graph = h.make_graph(
    [
        h.make_node("Max", ["x", "w"], ["a"]),
        h.make_node("Max", ["x", "w"], ["t"]),
        h.make_node("Neg", ["t"], ["c"]),
        h.make_node("Max", ["x", "w"], ["d"]),
    ],
    "push_split_down_dummy",
    [h.make_tensor_value_info("x", T.INT32, [2]), h.make_tensor_value_info("w", T.INT32, [2])],
    [h.make_tensor_value_info(n, T.INT32, [2]) for n in ("a", "c", "d")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([2], np.int32), "w": pattern([2], np.int32)}, __file__)
# typed runs ([-3, 4], [3, -4], [-3, 4]); decluttered and optimized fail at run time:
# 'Evaluating #4 "t.0" Dummy: eval() called on a Dummy op. This is a bug.'
