#!/usr/bin/env python3
"""tract-onnx 0.23.9: Pow with a uniform constant exponent that broadcasts the base is rewritten without the broadcast. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Pow", ["x", "e"], ["y"])],
    "pow_square",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 2])],
    [h.make_tensor_value_info("y", T.FLOAT, [3, 2])],
    [nh.from_array(np.full((3, 2), 2, dtype=np.float32), "e")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([1, 2], np.float32)}, __file__)
# typed runs; declutter fails: "Pow: Trying to substitute a 3,2,F32 by 1,2,F32" (the Square
# it substitutes keeps the base's shape).
