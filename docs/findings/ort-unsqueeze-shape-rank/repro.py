#!/usr/bin/env python3
"""ONNX Runtime rejects a valid model: Shape -> Unsqueeze(axes=[2,1,0]) -> Add.

x: uint8[3,3,3,3]; s = Shape(x) (int64[4]); u = Unsqueeze(s, axes=[2,1,0]) (int64[1,1,1,4]);
y = Add(s, u) (int64[1,1,1,4], plain broadcasting). onnx.checker (full_check) and onnx's
shape inference with data propagation accept it; ONNX Runtime 1.31.1 fails to load it at every
optimization level, ORT_DISABLE_ALL included:
  [ShapeInferenceError] Invalid rank for Add broadcasting: (4) vs (7).
Expected output: [[[[6, 6, 6, 6]]]].
"""
import numpy as np
import onnx
from onnx import TensorProto, helper
import onnxruntime as ort

graph = helper.make_graph(
    [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Unsqueeze", ["s", "axes"], ["u"]),
        helper.make_node("Add", ["s", "u"], ["y"]),
    ],
    "unsqueeze_shape_rank",
    [helper.make_tensor_value_info("x", TensorProto.UINT8, [3, 3, 3, 3])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 1, 1, 4])],
    [helper.make_tensor("axes", TensorProto.INT64, [3], [2, 1, 0])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
print("onnx: the model is valid")
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
try:
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    print("ONNX Runtime:", sess.run(None, {"x": np.zeros((3, 3, 3, 3), np.uint8)})[0].tolist())
except Exception as e:  # the bug
    print("ONNX Runtime rejects it:", e)
