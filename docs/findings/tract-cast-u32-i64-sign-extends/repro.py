#!/usr/bin/env python3
"""tract-onnx 0.23.9: Cast uint32 -> int64 sign-extends. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, nh, np, save_and_reference  # noqa: E402,F401

w = nh.from_array(np.array([4294967291, 5, 2147483648], dtype=np.uint32), "w")
graph = h.make_graph(
    [h.make_node("Cast", ["w"], ["y"], to=T.INT64)],
    "cast_u32_i64",
    [],
    [h.make_tensor_value_info("y", T.INT64, [3])],
    [w],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {}, __file__)
# Every uint32 fits in int64, so Cast must keep the value: [4294967291, 5, 2147483648].
# tract 0.23.9 gives [-5, 5, -2147483648] at every level (the bits read as int32).
