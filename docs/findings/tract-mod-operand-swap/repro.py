#!/usr/bin/env python3
"""tract-onnx 0.23.9: Mod swaps its operands after decluttering when the dividend broadcasts.

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
    [h.make_node("Mod", ["x", "w"], ["y"], fmod=0)],
    "mod",
    [h.make_tensor_value_info("x", T.INT32, [1])],
    [h.make_tensor_value_info("y", T.INT32, [3])],
    [nh.from_array(np.array([5, 6, 7], dtype=np.int32), "w")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([1], np.int32)}, HERE)
# x = [-3]: ONNX gives -3 mod [5, 6, 7] = [2, 3, 4] (typed agrees); decluttered and optimized
# give [2, 0, 1] = [5, 6, 7] mod 3, i.e. w mod x. With fmod=1 the same swap happens.
