#!/usr/bin/env python3
"""tract-onnx 0.23.9: Mul(a, a) on int8 becomes Square, which saturates where Mul wraps. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Add", ["x", "c"], ["a"]), h.make_node("Mul", ["a", "a"], ["y"])],
    "mul_square",
    [h.make_tensor_value_info("x", T.INT8, [4])],
    [h.make_tensor_value_info("y", T.INT8, [4])],
    [nh.from_array(np.array(100, dtype=np.int8), "c")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([4], np.int8)}, __file__)
# a = [97, 104, 100, 107]: typed wraps like ONNX Runtime ([-63, 64, 16, -71]); decluttered
# and optimized rewrite Mul(a, a) to Square and give [127, 127, 127, 127]. With int16 the
# rewritten Square fails instead ("Square does not support I16").
