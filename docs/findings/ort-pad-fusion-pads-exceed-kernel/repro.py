#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: PadFusion folds a constant Pad into MaxPool's pads without checking
that the result stays smaller than the kernel.

x[1, 1, 4, 4] -> Pad(pads=[0, 0, 0, 0, 0, 0, 1, 0], constant) -> MaxPool(kernel_shape=[1, 2]).
ORT_DISABLE_ALL runs it. At ORT_ENABLE_BASIC the fused MaxPool has an end pad of 1 on an axis
whose kernel is 1, and session creation fails in PoolAttributes with "Pad should be smaller
than kernel". (A Pad whose value is not the pool's identity would also change results, but
here ORT simply rejects its own rewrite.) Needs onnx, onnxruntime and numpy."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
    helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[1, 2]),
]
graph = helper.make_graph(
    nodes, "pad_maxpool",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5, 3])],
    [numpy_helper.from_array(np.array([0, 0, 0, 0, 0, 0, 1, 0], np.int64), "pads")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
for level in [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC]:
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 4
    try:
        y = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        print(level, "shape", y.shape)
    except Exception as e:
        print(level, "FAILS", str(e).splitlines()[0][-100:])
