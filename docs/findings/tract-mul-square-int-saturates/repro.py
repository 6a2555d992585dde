#!/usr/bin/env python3
"""tract-onnx 0.23.9: Mul(a, a) on int8 becomes Square, which saturates where Mul wraps.

Writes the model(s) next to this script (onnx.checker full_check passes),
prints ONNX Runtime's output on dlcfuzz's pattern input as the reference, and names the
`dlcfuzz run-model` command that shows tract's typed / decluttered / optimized results.
Needs onnx, onnxruntime and numpy."""

import os
import sys

import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from tract_repro import i64, pattern, save_and_reference  # noqa: E402


graph = h.make_graph(
    [h.make_node("Add", ["x", "c"], ["a"]), h.make_node("Mul", ["a", "a"], ["y"])],
    "mul_square",
    [h.make_tensor_value_info("x", T.INT8, [4])],
    [h.make_tensor_value_info("y", T.INT8, [4])],
    [nh.from_array(np.array(100, dtype=np.int8), "c")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([4], np.int8)}, HERE)
# a = [97, 104, 100, 107]: typed wraps like ONNX Runtime ([-63, 64, 16, -71]); decluttered
# and optimized rewrite Mul(a, a) to Square and give [127, 127, 127, 127]. With int16 the
# rewritten Square fails instead ("Square does not support I16").
