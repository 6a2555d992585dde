#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: AveragePool(count_include_pad=0) gives 0 for a window that covers
only padding when unoptimized, and NaN at ORT_ENABLE_ALL (the NCHWc layout kernel).

x[1, 16, 1, 1] -> AveragePool(kernel=[2, 2], strides=[2, 1], pads=[1, 1, 1, 1],
dilations=[2, 2], ceil_mode=1, count_include_pad=0). The one output window's taps (dilation 2
around a 1x1 input) all land in padding. ORT_DISABLE_ALL averages it to 0, ORT_ENABLE_ALL
(16 channels select the NCHWc kernel; with 8 channels both give 0) to NaN.
Bisected culprit: NchwcTransformer (disabling it alone makes ORT_ENABLE_ALL give 0 again).
The ONNX spec does not define an average over zero elements (count_include_pad=0 divides by a
zero count), so this is undefined behaviour, not filed; the script only shows the two answers.
Exits 1 when the two levels disagree, 0 when they agree. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

node = helper.make_node(
    "AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 1], pads=[1, 1, 1, 1],
    dilations=[2, 2], ceil_mode=1, count_include_pad=0,
)
graph = helper.make_graph(
    [node], "avgpool_padding_window",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 1, 1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 1, 1])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
x = np.arange(1, 17, dtype=np.float32).reshape(1, 16, 1, 1)


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 4
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"],
                                disabled_optimizers=list(disabled))
    return sess.run(None, {"x": x})[0]


print("onnxruntime", ort.__version__)
ref = run(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
got = run(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
fixed = run(ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ["NchwcTransformer"])
print("ORT_DISABLE_ALL                   ", ref.shape, ref[0, 0].ravel().tolist())
print("ORT_ENABLE_ALL                    ", got.shape, got[0, 0].ravel().tolist())
print("ORT_ENABLE_ALL - NchwcTransformer ", fixed.shape, fixed[0, 0].ravel().tolist())
if not np.array_equal(ref, got, equal_nan=True):
    print("BUG present (undefined-behaviour edge): ORT_DISABLE_ALL and ORT_ENABLE_ALL disagree")
    sys.exit(1)
print("not reproduced: both levels agree")
