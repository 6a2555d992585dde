#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: wrong output shape at ORT_ENABLE_BASIC for a constant
Squeeze -> strided Slice (axes omitted) -> Tile chain.

w (a [4, 3] initializer) -> Squeeze (no axes; nothing to squeeze) -> Slice(starts=[0],
ends=[INT64_MAX], steps=[3], axes omitted) -> Tile(repeats=[1, 2]).
The Slice keeps rows 0 and 3, so the result is [2, 6]: ORT_DISABLE_ALL agrees, ORT_ENABLE_BASIC
returns [4, 6] (the Slice's stride is lost during constant folding). Giving `axes=[0]`
explicitly, or dropping the Squeeze, makes both levels agree.
Needs onnx (to build the model), onnxruntime and numpy."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

INT64_MAX = int(np.iinfo(np.int64).max)


def build(with_axes):
    inits = [
        helper.make_tensor("w", TensorProto.FLOAT, [4, 3], [float(i) for i in range(12)]),
        helper.make_tensor("starts", TensorProto.INT64, [1], [0]),
        helper.make_tensor("ends", TensorProto.INT64, [1], [INT64_MAX]),
        helper.make_tensor("axes", TensorProto.INT64, [1], [0]),
        helper.make_tensor("steps", TensorProto.INT64, [1], [3]),
        helper.make_tensor("reps", TensorProto.INT64, [2], [1, 2]),
    ]
    nodes = [
        helper.make_node("Squeeze", ["w"], ["sq"]),
        helper.make_node("Slice", ["sq", "starts", "ends", "axes" if with_axes else "", "steps"], ["sl"]),
        helper.make_node("Tile", ["sl", "reps"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "squeeze_slice_tile", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


for with_axes in [False, True]:
    shapes = []
    for level in [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC]:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.log_severity_level = 3
        shapes.append(ort.InferenceSession(build(with_axes), so, providers=["CPUExecutionProvider"]).run(None, {})[0].shape)
    verdict = "BUG" if shapes[0] != shapes[1] else "ok"
    print(f"axes given: {with_axes!s:5} disable={shapes[0]} basic={shapes[1]} {verdict}")
