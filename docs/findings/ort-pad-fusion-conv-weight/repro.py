#!/usr/bin/env python3
"""ONNX Runtime: PadFusion ("Pad_Fusion", a level-1 rewrite rule) fuses a Pad into the Conv
that consumes it without checking that the Pad output is the Conv's data input X. When the
Pad pads the Conv's weight W instead, the rule rewires input 0 (X) to the Pad's input and
deletes the Pad, so W is left pointing at a value nobody produces and the session fails
("Node input 'w' is not a graph input, initializer, or output of a previous node"). The
unoptimized session runs the model. Exits 1 while the bug is present, 0 otherwise.
Needs onnx, numpy and onnxruntime."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

x = np.arange(1 * 1 * 5 * 5, dtype=np.float32).reshape(1, 1, 5, 5) / 10
w0 = np.ones((1, 1, 1, 1), dtype=np.float32)
# Pad the kernel's spatial dims only (N and C pads are 0, as PadFusion requires): 1x1 -> 3x3.
pads = np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64)
graph = helper.make_graph(
    [
        helper.make_node("Pad", ["w0", "pads"], ["w"], mode="constant"),
        helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[0, 0, 0, 0]),
    ],
    "pad_into_conv_weight",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 3])],
    [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(pads, "pads")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
data = model.SerializeToString()


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"],
                                disabled_optimizers=list(disabled))
    return sess.run(None, {"x": x})[0]


print("onnxruntime", ort.__version__)
# The 3x3 kernel is 1 at its centre: the result is x's inner 3x3 window.
expected = x[:, :, 1:4, 1:4]
reference = run(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
assert np.allclose(reference, expected), reference
assert np.allclose(run(ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, ["Pad_Fusion"]), expected)
try:
    got = run(ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
except Exception as e:  # noqa: BLE001
    print("BUG: ORT_ENABLE_BASIC rejects the model:", str(e).splitlines()[0][:200])
    sys.exit(1)
if not np.allclose(got, expected):
    print("BUG: wrong result at ORT_ENABLE_BASIC:", got)
    sys.exit(1)
print("OK: the optimized session runs the model right")
