#!/usr/bin/env python3
"""tract-onnx 0.23.9: Mod swaps its operands after decluttering when the dividend broadcasts. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Mod", ["x", "w"], ["y"], fmod=0)],
    "mod",
    [h.make_tensor_value_info("x", T.INT32, [1])],
    [h.make_tensor_value_info("y", T.INT32, [3])],
    [nh.from_array(np.array([5, 6, 7], dtype=np.int32), "w")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([1], np.int32)}, __file__)
# x = [-3]: ONNX gives -3 mod [5, 6, 7] = [2, 3, 4] (typed agrees); decluttered and optimized
# give [2, 0, 1] = [5, 6, 7] mod 3, i.e. w mod x. With fmod=1 the same swap happens.
