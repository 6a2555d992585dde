#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: pushing a Transpose through Resize drops Resize's `sizes` when
the opset-18 `axes` attribute is used.

x[4, 8, 2, 1] -> Transpose(perm=[0, 3, 1, 2]) -> Resize(sizes=[7, 2], axes=[-2, 3]).
ORT_DISABLE_ALL runs it (shape [4, 1, 7, 2]); at ORT_ENABLE_EXTENDED session creation fails
with "[ShapeInferenceError] Number of elements of input 'sizes' (0) does not match the number
of axes (2)": the rewritten Resize keeps `axes` but loses its sizes. float32 is fine.
Also on 1.32.0. Bisected culprit: TransposeOptimizer_CPUExecutionProvider (the level-2,
EP-specific instance of the transpose optimizer); disabling the level-1 "TransposeOptimizer"
does not help.
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

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


L = ort.GraphOptimizationLevel
print("onnxruntime", ort.__version__)
bug = False
for code, dtype in [(TensorProto.INT8, np.int8), (TensorProto.FLOAT, np.float32)]:
    x = np.arange(64).reshape(4, 8, 2, 1).astype(dtype)
    ref = None
    for name, level, disabled in [
            ("ORT_DISABLE_ALL", L.ORT_DISABLE_ALL, ()),
            ("ORT_ENABLE_EXTENDED", L.ORT_ENABLE_EXTENDED, ()),
            ("EXTENDED - TransposeOptimizer_CPUExecutionProvider", L.ORT_ENABLE_EXTENDED,
             ("TransposeOptimizer_CPUExecutionProvider",))]:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.log_severity_level = 4
        try:
            y = ort.InferenceSession(build(code), so, providers=["CPUExecutionProvider"],
                                     disabled_optimizers=list(disabled)).run(None, {"x": x})[0]
            ok = ref is None or (y.shape == ref.shape and np.array_equal(y, ref))
            ref = y if ref is None else ref
            print(f"{np.dtype(dtype).name:8} {name:51}: shape {y.shape}{'' if ok else ' DIFFERENT'}")
        except Exception as e:
            ok = False
            print(f"{np.dtype(dtype).name:8} {name:51}: FAILS {str(e).splitlines()[0][-120:]}")
        if name == "ORT_ENABLE_EXTENDED" and not ok:
            bug = True
if bug:
    print("BUG present: the transpose optimizer drops Resize's sizes (axes attribute) at ORT_ENABLE_EXTENDED")
    sys.exit(1)
print("not reproduced: ORT_ENABLE_EXTENDED agrees with ORT_DISABLE_ALL")
