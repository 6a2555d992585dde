#!/usr/bin/env python3
"""tract-onnx 0.23.9: Valid single-op models that panic or fail at the plain typed level.

Writes the model(s) next to this script (onnx.checker full_check passes).
Needs onnx, onnxruntime and numpy."""

import os
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))


def i64(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)


def single(name, op, inputs, out, inits, attrs=None):
    graph = h.make_graph([h.make_node(op, [i.name for i in inputs] + [t.name for t in inits], ["y"], **(attrs or {}))],
                         name, inputs, [out], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(HERE, name + ".onnx"))
    print("wrote", name + ".onnx")


vi = h.make_tensor_value_info
# Squeeze with unsorted axes: panics "assertion failed: index < len" (smallvec); [0, 1, 2] runs.
single("squeeze_unsorted_axes", "Squeeze", [vi("x", T.FLOAT, [1, 1, 1, 3])], vi("y", T.FLOAT, [3]), [i64("axes", [2, 1, 0])])
# Pad (constant) with a negative pad: panics "ndarray: could not broadcast array from shape".
single("pad_negative", "Pad", [vi("x", T.FLOAT, [5, 7, 1])], vi("y", T.FLOAT, [5, 6, 1]), [i64("pads", [0, 0, 0, 0, -1, 0])], {"mode": "constant"})
# MatMul on int64 (also uint32, uint64): panics "Can't build a WeightType from I64".
single("matmul_int64", "MatMul", [vi("x", T.INT64, [2, 3]), vi("w", T.INT64, [3, 2])], vi("y", T.INT64, [2, 2]), [])
# Gemm float64 with alpha: typed and decluttered fail ("tensor is F32, accessed as F64"),
# optimized runs; float16 is rejected ("expected 2,2,F16 got 2,2,F32").
single("gemm_float64_alpha", "Gemm", [vi("x", T.DOUBLE, [2, 3]), vi("w", T.DOUBLE, [3, 2])], vi("y", T.DOUBLE, [2, 2]), [], {"alpha": 2.0})
# IsNaN on float64: analysis accepts it, evaluation fails ("Element wise eval in-place not defined").
single("isnan_float64", "IsNaN", [vi("x", T.DOUBLE, [4])], vi("y", T.BOOL, [4]), [])
print("run each with: dlcfuzz run-model --backend tract <file>.onnx (and --backend ort for the reference)")
