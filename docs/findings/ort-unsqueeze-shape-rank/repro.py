#!/usr/bin/env python3
"""ONNX Runtime rejects a valid model: Shape -> Unsqueeze(axes=[0]) -> Add.

x: uint8[3,3,3,3]; s = Shape(x) (int64[4]); u = Unsqueeze(s, axes=[0]) (int64[1,4]);
y = Add(s, u) (int64[1,4], plain broadcasting). onnx.checker (full_check) and onnx's shape
inference with data propagation accept it; ONNX Runtime 1.31.1 and 1.32.0 fail to load it at
every optimization level, ORT_DISABLE_ALL included:
  [ShapeInferenceError] Invalid rank for Add broadcasting: (4) vs (5).
Expected output: [[6, 6, 6, 6]].

The campaign's form used axes=[2,1,0] ("(4) vs (7)"); sorted axes fail the same way, so the
axis order is not the cause. The rank ORT reports for u is always 4 + len(axes), i.e. the
length of the Shape *value* plus one per inserted axis, not u's rank (1 + len(axes)): ORT's
shape-value (data) propagation for Unsqueeze gives the 2-D u a propagated value as if the
value were a shape, and Add's value propagation then rejects the length mismatch (inferred
from the reported lengths; the ORT source was not read). Sub and Mul fail the same way, Div
and Add(u, u) load. Feeding the same int64[4] from a graph input (no propagated value) loads
and runs.
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def build(axes, from_shape=True):
    if from_shape:
        first = helper.make_node("Shape", ["x"], ["s"])
        inp = helper.make_tensor_value_info("x", TensorProto.UINT8, [3, 3, 3, 3])
    else:  # the same int64[4] value, but from a graph input: nothing to propagate
        first = helper.make_node("Identity", ["v"], ["s"])
        inp = helper.make_tensor_value_info("v", TensorProto.INT64, [4])
    graph = helper.make_graph(
        [first, helper.make_node("Unsqueeze", ["s", "axes"], ["u"]), helper.make_node("Add", ["s", "u"], ["y"])],
        "unsqueeze_shape_rank",
        [inp],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [1] * len(axes) + [4])],
        [helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    return model


print("onnxruntime", ort.__version__)
print("onnx checker (full) and data-propagating shape inference accept every model below")
bug = False
for axes, from_shape in [([0], True), ([2, 1, 0], True), ([0, 1, 2], True), ([0], False)]:
    model = build(axes, from_shape)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    feeds = {"x": np.zeros((3, 3, 3, 3), np.uint8)} if from_shape else {"v": np.array([3, 3, 3, 3], np.int64)}
    label = f"{'Shape(x)' if from_shape else 'graph input'} -> Unsqueeze(axes={axes}) -> Add"
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        y = sess.run(None, feeds)[0]
        print(f"{label:45} ok {y.shape} {y.ravel().tolist()}")
    except Exception as e:  # the bug
        print(f"{label:45} REJECTED: {str(e).split('] ')[-1]}")
        bug |= from_shape and axes == [0]
if bug:
    print("BUG present: ORT rejects Shape -> Unsqueeze(axes=[0]) -> Add at load (ORT_DISABLE_ALL)")
    sys.exit(1)
print("not reproduced: ORT loads Shape -> Unsqueeze(axes=[0]) -> Add")
