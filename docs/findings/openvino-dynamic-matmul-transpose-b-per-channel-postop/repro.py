#!/usr/bin/env python3
"""OpenVINO 2026.4.1 CPU: a MatMul with transpose_b=True whose output channel dim N (B's dim 0)
is dynamic, followed by an Add/Multiply of a constant of shape [N] (per output channel), fails
to compile: the eltwise is fused as a oneDNN post-op with OC = 0 (the undefined dim):
  "Check 'data.size() == OC' failed at src/plugins/intel_cpu/src/dnnl_postops_composer.cpp:483:
   data size: 8 OC: 0"   (Add)
  "Check 'any_of(scale.size(), OC, 1U)' failed at .../dnnl_postops_composer.cpp:526" (Multiply).
Static shapes, transpose_b=False (B [?,?]), or a per-row bias of shape [M,1] compile and run right;
both inputs as Parameters fail the same way.
The campaign's form: ONNX Gemm(transA=1, transB=1, C=ReduceMean(const)) with the input made
dynamic. Needs only openvino and numpy. Exit 1 while the bug shows."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

rng = np.random.default_rng(0)
A = rng.standard_normal((8, 2)).astype(np.float32)    # [M, K] constant
C = rng.standard_normal(8).astype(np.float32)         # [N] per-output-channel constant
XB = rng.standard_normal((8, 2)).astype(np.float32)   # B given as [N, K], used transposed
print("release: openvino", ov.__version__)
bad = False
for shape, eltwise in (([8, 2], "add"), ([-1, 2], "add"), ([-1, -1], "add"), ([-1, -1], "multiply")):
    b = ops.parameter(shape, np.float32, name="b")
    mm = ops.matmul(ops.constant(A), b, False, True)
    y = getattr(ops, eltwise)(mm, ops.constant(C))
    want = (A @ XB.T + C) if eltwise == "add" else (A @ XB.T) * C
    try:
        got = ov.Core().compile_model(ov.Model([y], [b]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([XB])[0]
        ok = got.shape == want.shape and np.allclose(got, want, atol=1e-4)
        verdict = "right" if ok else "WRONG"
    except Exception as e:  # noqa: BLE001
        ok, verdict = False, "FAILS: " + " ".join(str(e).strip().splitlines()[-2:])[:160]
    bad |= not ok
    print(f"MatMul(A const[8,2], B{shape}, transpose_b) {eltwise} c[8]: {verdict}")
print("reproduced" if bad else "not reproduced")
sys.exit(1 if bad else 0)
