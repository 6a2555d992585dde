#!/usr/bin/env python3
"""ONNX Runtime CPU (1.31.1 and 1.32.0): MatmulTransposeFusion gives wrong results for Transpose -> MatMul
whose other operand is a 1-D vector.

x[3, 2] -> Transpose (default perm) -> MatMul(., b[3]) -> y[2], i.e. y = x^T b.
ORT_DISABLE_ALL and ORT_ENABLE_BASIC agree with numpy; at ORT_ENABLE_EXTENDED the pair is fused
into com.microsoft.FusedMatMul(x, b, transA=1), whose CPU kernel ignores transA when B is 1-D
and computes x.reshape(2, 3) @ b instead. Disabling only MatmulTransposeFusion fixes it, and
a hand-written FusedMatMul(transA=1) with a 1-D B is wrong even at ORT_DISABLE_ALL.
Exits 1 when the bug reproduces. Needs onnx, onnxruntime and numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

L = ort.GraphOptimizationLevel


def model(nodes, opsets):
    graph = helper.make_graph(
        nodes, "transpose_matmul_vec",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def run(m, level, disabled=None, save=None):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    if save:
        so.optimized_model_filepath = save
    kw = {} if disabled is None else {"disabled_optimizers": disabled}
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"], **kw)
    return sess.run(None, {"x": x, "b": b})[0]


plain = model([helper.make_node("Transpose", ["x"], ["xt"]),
               helper.make_node("MatMul", ["xt", "b"], ["y"])],
              [helper.make_opsetid("", 19)])
onnx.checker.check_model(plain, full_check=True)

x = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
b = np.array([1, 10, 100], np.float32)
expected = np.matmul(x.T, b)  # ONNX MatMul = numpy matmul semantics: [531, 642]
print("onnxruntime", ort.__version__)
print(f"numpy x.T @ b          : {expected}   (x.reshape(2, 3) @ b would be {x.reshape(2, 3) @ b})")

bad = False
with tempfile.TemporaryDirectory() as tmp:
    cases = [("ORT_DISABLE_ALL", L.ORT_DISABLE_ALL, None),
             ("ORT_ENABLE_BASIC", L.ORT_ENABLE_BASIC, None),
             ("ORT_ENABLE_EXTENDED", L.ORT_ENABLE_EXTENDED, None),
             ("EXTENDED minus MatmulTransposeFusion", L.ORT_ENABLE_EXTENDED, ["MatmulTransposeFusion"])]
    for name, level, disabled in cases:
        path = os.path.join(tmp, "opt.onnx")
        y = run(plain, level, disabled, save=path)
        ok = np.allclose(y, expected, rtol=1e-5, atol=1e-5)
        bad |= not ok
        ops = [(n.domain + "." if n.domain else "") + n.op_type
               + "".join(f" {a.name}={a.i}" for a in n.attribute if a.name in ("transA", "transB"))
               for n in onnx.load(path).graph.node]
        print(f"{name:37}: {y}  {'ok' if ok else 'MISMATCH'}  graph: {ops}")

# The fused node written by hand: the kernel itself mishandles transA with a 1-D B.
fused = model([helper.make_node("FusedMatMul", ["x", "b"], ["y"], domain="com.microsoft", transA=1)],
              [helper.make_opsetid("", 19), helper.make_opsetid("com.microsoft", 1)])
y = run(fused, L.ORT_DISABLE_ALL)
print(f"FusedMatMul(transA=1) at DISABLE_ALL : {y}  {'ok' if np.allclose(y, expected) else 'MISMATCH'}")

if bad:
    print("BUG: ORT_ENABLE_EXTENDED result differs from numpy / ORT_DISABLE_ALL")
    sys.exit(1)
print("not reproduced")
