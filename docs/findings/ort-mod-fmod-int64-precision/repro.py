#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: Mod with fmod=1 on 64-bit integers loses precision (computed
through double), even unoptimized. ONNX Runtime 1.32.0 gives the exact values.

Not a bug to file: the model is outside the ONNX spec. Mod-13's text (as shipped in onnx
1.23.2's schema) constrains T to floating point types when fmod=1: "If `fmod` is set to `1`,
the behavior of this operator follows that of the `fmod` function in C and `T` is constrained
to floating point data types." Integer fmod=1 therefore has no defined meaning; onnx.checker
does not enforce the constraint, so the model still passes check_model(full_check=True).
Exits 1 when ORT's result differs from exact integer fmod, 0 when it agrees.
Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h

print("onnxruntime", ort.__version__)
wrong = 0
for elem, dtype, a, b in [
    (T.UINT64, np.uint64, 2**64 - 3, 2),
    (T.INT64, np.int64, 2**62 + 1, 2),
    (T.INT64, np.int64, -(2**60) - 1, 3),
]:
    graph = h.make_graph(
        [h.make_node("Mod", ["a", "b"], ["y"], fmod=1)],
        "mod",
        [h.make_tensor_value_info("a", elem, [1]), h.make_tensor_value_info("b", elem, [1])],
        [h.make_tensor_value_info("y", elem, [1])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(model, full_check=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    got = int(sess.run(None, {"a": np.array([a], dtype), "b": np.array([b], dtype)})[0][0])
    exact = int(np.fmod(np.array([a], dtype), np.array([b], dtype))[0])  # C fmod on integers
    print(f"{np.dtype(dtype).name}: fmod({a}, {b}) = {exact}; ONNX Runtime gives {got}",
          "(WRONG)" if got != exact else "")
    wrong += got != exact
if wrong:
    print(f"BUG present (outside the spec, not filed): {wrong} of 3 integer fmod results are not exact")
    sys.exit(1)
print("not reproduced: integer fmod results are exact")
