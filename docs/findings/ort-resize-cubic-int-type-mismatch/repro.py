#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: Resize(mode="cubic") on an integer tensor fails at run time with an
internal assertion ("Tensor type mismatch" in Tensor::MutableData<float>) instead of either
computing the result or rejecting the model as NOT_IMPLEMENTED. The model is valid opset 19
(Resize's T1 includes int8/uint8/int32). Fails even with optimizations disabled (a kernel
issue, no optimizer involved). Also on 1.32.0.
Exits 1 when an integer type fails, 0 when all run. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

print("onnxruntime", ort.__version__)
bug = False
for code, dtype in [(TensorProto.UINT8, np.uint8), (TensorProto.INT32, np.int32), (TensorProto.FLOAT, np.float32)]:
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="cubic")],
        "resize_cubic",
        [helper.make_tensor_value_info("x", code, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", code, [1, 1, 8, 8])],
        [helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(m, full_check=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    x = np.arange(16, dtype=dtype).reshape(1, 1, 4, 4)
    try:
        y = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        print(np.dtype(dtype).name, "ok", y.shape)
    except Exception as e:
        print(np.dtype(dtype).name, "FAILS:", str(e).splitlines()[0][-160:])
        bug = True
if bug:
    print("BUG present: Resize(mode=cubic) on an integer tensor hits an internal type assertion")
    sys.exit(1)
print("not reproduced: cubic Resize runs on every type tried")
