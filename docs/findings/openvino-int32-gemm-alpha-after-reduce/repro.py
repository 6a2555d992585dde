#!/usr/bin/env python3
"""OpenVINO CPU: an int32 Gemm with alpha != 1 whose B operand is a ReduceSum over the middle
axis (keepdims=0) returns all zeros.

model.onnx: x:int32[2,2,2] -> ReduceSum(axes=[1], keepdims=0) -> r:int32[2,2];
            a:int32[2,6] -> Gemm(a, r, transA=1, alpha=-2) -> y:int32[6,2].
The model as the ONNX frontend converts it is right (ov.Model.evaluate, the core reference);
the CPU plugin's compiled model returns zeros (its MatMul runs in f32 with the alpha Multiply
fused). With alpha=1, or a reduction over another axis, the result is right.
Needs only openvino and numpy. Exit status 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov

HERE = os.path.dirname(os.path.abspath(__file__))
x = np.array([-3, 3, 3, -3, -2, 5, -3, -1], np.int32).reshape(2, 2, 2)
a = (np.arange(12).reshape(2, 6) % 7 + 60).astype(np.int32)
expected = (-2 * (a.T.astype(np.int64) @ x.sum(axis=1).astype(np.int64))).astype(np.int32)

core = ov.Core()
model = core.read_model(os.path.join(HERE, "model.onnx"))
print("release: openvino", ov.__version__)
frontend = [ov.Tensor(np.zeros((6, 2), np.int32))]
model.evaluate(frontend, [ov.Tensor(x), ov.Tensor(a)])
print("converted model (ov.Model.evaluate):", frontend[0].data.ravel()[:4], "expected", expected.ravel()[:4])
bad = False
for props in ({}, {"INFERENCE_PRECISION_HINT": "f32", "EXECUTION_MODE_HINT": "ACCURACY"}):
    got = list(core.compile_model(model, "CPU", props).infer_new_request({0: x, 1: a}).values())[0]
    ok = np.array_equal(got, expected)
    bad |= not ok
    print("CPU", props or "defaults", ":", "right" if ok else f"WRONG {got.ravel()[:4]}")
sys.exit(1 if bad else 0)
