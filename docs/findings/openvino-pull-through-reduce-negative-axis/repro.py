#!/usr/bin/env python3
"""OpenVINO 2026.4.1 CPU: PullUnsqueezeThroughReduce / PullReshapeThroughReduce
(src/common/transformations/.../pull_through_reduce.cpp) reuse the Reduce's original axes
constant when the normalized axes need no adjustment, so a NEGATIVE axis is re-interpreted
against the lower rank of the Unsqueeze's input:
  * Unsqueeze(x[6,2,7], axes=[1]) -> ReduceSum(axes=[-4]) : compile fails
    "Axis -4 out of the tensor rank range [-3, 2]" (static shapes, every level);
  * Unsqueeze(x[6,2,7], axes=[3]) -> ReduceSum(axes=[-3], keep_dims) : compiles and returns
    shape (1,2,1,7) instead of (6,1,7,1) (axis -3 now means axis 0): silent wrong result.
model.onnx (the campaign's reduced model: Unsqueeze(axes=[1]) -> ReduceL2(axes=[-4], keepdims=1),
int32) fails the same way. Needs only openvino and numpy. Exit 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = os.path.dirname(os.path.abspath(__file__))
X = (np.arange(84).reshape(6, 2, 7) % 9 - 4).astype(np.float32)
print("release: openvino", ov.__version__)
bad = False
for uaxes, axes, keep in (([1], [-4], True), ([3], [-3], True), ([3], [-3], False), ([1], [0], True)):
    x = ops.parameter([6, 2, 7], np.float32, name="x")
    y = ops.reduce_sum(ops.unsqueeze(x, ops.constant(np.array(uaxes, np.int64))),
                       ops.constant(np.array(axes, np.int64)), keep)
    want = np.expand_dims(X, tuple(uaxes)).sum(axis=tuple(axes), keepdims=keep)
    try:
        got = ov.Core().compile_model(ov.Model([y], [x]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([X])[0]
        ok = got.shape == want.shape and np.allclose(got, want)
        verdict = "right" if ok else f"WRONG: shape {got.shape}, expected {want.shape}"
    except Exception as e:  # noqa: BLE001
        ok, verdict = False, "FAILS: " + str(e).strip().splitlines()[-1][:120]
    bad |= not ok
    print(f"Unsqueeze{uaxes} -> ReduceSum(axes={axes}, keep_dims={keep}): {verdict}")

core = ov.Core()
xi = (np.arange(84).reshape(6, 2, 7) % 9 - 4).astype(np.int32)
want = np.sqrt((np.expand_dims(xi, 1).astype(np.float64) ** 2).sum(axis=0, keepdims=True))
try:
    got = core.compile_model(core.read_model(os.path.join(HERE, "model.onnx")), "CPU",
                             {"INFERENCE_PRECISION_HINT": "f32"})([xi])[0]
    ok = got.shape == want.shape and np.allclose(got, want, atol=1)
    verdict = "right" if ok else f"WRONG: shape {got.shape}"
except Exception as e:  # noqa: BLE001
    ok, verdict = False, "FAILS: " + str(e).strip().splitlines()[-1][:120]
bad |= not ok
print("model.onnx (Unsqueeze[1] -> ReduceL2[-4], int32):", verdict)
print("reproduced" if bad else "not reproduced")
sys.exit(1 if bad else 0)
