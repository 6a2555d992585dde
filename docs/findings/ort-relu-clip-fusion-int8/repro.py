#!/usr/bin/env python3
"""ONNX Runtime 1.31.1: FuseReluClip throws on a valid int8 Relu -> Clip graph.

Relu (int8, opset >= 14) followed by Clip (int8, opset >= 12) with a constant `min` is valid
ONNX and runs with optimizations disabled, but session creation at ORT_ENABLE_BASIC fails in
relu_clip_fusion.cc with "Unexpected data type for Clip 'min' input of 3" (3 = INT8).
Needs only onnx (to build the model), onnxruntime and numpy."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

for dtype, code in [(np.int8, TensorProto.INT8), (np.int32, TensorProto.INT32), (np.float32, TensorProto.FLOAT)]:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Clip", ["r", "lo"], ["y"])],
        "relu_clip",
        [helper.make_tensor_value_info("x", code, [4])],
        [helper.make_tensor_value_info("y", code, [4])],
        [helper.make_tensor("lo", code, [], [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(model, full_check=True)
    x = np.array([-3, 0, 2, 5], dtype=dtype)
    for level in [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC]:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        try:
            sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            print(np.dtype(dtype).name, level, "->", sess.run(None, {"x": x})[0])
        except Exception as e:
            print(np.dtype(dtype).name, level, "-> FAILS:", str(e).splitlines()[0][:200])
