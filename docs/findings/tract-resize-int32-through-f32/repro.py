#!/usr/bin/env python3
"""tract-onnx 0.23.9: nearest Resize of 32-bit integers rounds values through float32.
Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, nh, np, save_and_reference  # noqa: E402,F401

data = nh.from_array(np.array([[2147483647, 16777217], [3, 4]], dtype=np.int32), "data")
scales = nh.from_array(np.array([1.0, 2.0], dtype=np.float32), "scales")
graph = h.make_graph(
    [h.make_node("Resize", ["data", "", "scales"], ["y"], mode="nearest")],
    "resize_u32",
    [],
    [h.make_tensor_value_info("y", T.INT32, [2, 4])],
    [data, scales],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {}, __file__)
# Nearest Resize copies elements: [[2147483647, 2147483647, 16777217, 16777217], [3, 3, 4, 4]].
# tract 0.23.9 changes 16777217 into 16777216 at every level: the
# values went through float32. The campaign found it on uint32 (4294967291 -> 4294967295),
# which ONNX Runtime has no Resize kernel for.
