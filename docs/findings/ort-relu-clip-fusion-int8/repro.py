#!/usr/bin/env python3
"""ONNX Runtime 1.31.1: FuseReluClip throws on a valid int8 Relu -> Clip graph.

Relu (int8, opset >= 14) followed by Clip (int8, opset >= 12) with a constant `min` is valid
ONNX and runs with optimizations disabled, but session creation at ORT_ENABLE_BASIC fails in
relu_clip_fusion.cc with "Unexpected data type for Clip 'min' input of 3" (3 = INT8).
Also on 1.32.0. Bisected culprit: the FuseReluClip rewrite rule (disabling it alone fixes it).
Exits 1 when the bug is present (int8 or int32 fails at basic), 0 when not.
Needs only onnx (to build the model), onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

print("onnxruntime", ort.__version__)
bug = False
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
    for name, level, disabled in [("ORT_DISABLE_ALL", ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ()),
                                  ("ORT_ENABLE_BASIC", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, ()),
                                  ("BASIC - FuseReluClip", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, ("FuseReluClip",))]:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.log_severity_level = 4
        try:
            sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"],
                                        disabled_optimizers=list(disabled))
            print(f"{np.dtype(dtype).name:8} {name:21} ->", sess.run(None, {"x": x})[0])
        except Exception as e:
            print(f"{np.dtype(dtype).name:8} {name:21} -> FAILS:", str(e).splitlines()[0][-90:])
            bug |= name == "ORT_ENABLE_BASIC"
if bug:
    print("BUG present: FuseReluClip fails on an integer Relu -> Clip at ORT_ENABLE_BASIC")
    sys.exit(1)
print("not reproduced: every dtype loads at ORT_ENABLE_BASIC")
