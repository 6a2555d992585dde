#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: pushing a Transpose through Resize drops Resize's `sizes` when
the opset-18 `axes` attribute is used.

x[4, 8, 2, 1] -> Transpose(perm=[0, 3, 1, 2]) -> Resize(sizes=[7, 2], axes=[-2, 3]).
ORT_DISABLE_ALL runs it (shape [4, 1, 7, 2]); at ORT_ENABLE_EXTENDED session creation fails
with "[ShapeInferenceError] Number of elements of input 'sizes' (0) does not match the number
of axes (2)": the rewritten Resize keeps `axes` but loses its sizes.
Needs onnx (to build the model), onnxruntime and numpy."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def build(dtype_code):
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
        helper.make_node("Resize", ["t", "", "", "sizes"], ["y"], mode="linear", axes=[-2, 3]),
    ]
    graph = helper.make_graph(
        nodes, "transpose_resize_axes",
        [helper.make_tensor_value_info("x", dtype_code, [4, 8, 2, 1])],
        [helper.make_tensor_value_info("y", dtype_code, [4, 1, 7, 2])],
        [numpy_helper.from_array(np.array([7, 2], np.int64), "sizes")],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


for code, dtype in [(TensorProto.INT8, np.int8), (TensorProto.FLOAT, np.float32)]:
    x = np.arange(64).reshape(4, 8, 2, 1).astype(dtype)
    for level in [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED]:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.log_severity_level = 4
        try:
            y = ort.InferenceSession(build(code), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            print(f"{np.dtype(dtype).name:8} {level}: shape {y.shape}")
        except Exception as e:
            print(f"{np.dtype(dtype).name:8} {level}: FAILS {str(e).splitlines()[0][-120:]}")
