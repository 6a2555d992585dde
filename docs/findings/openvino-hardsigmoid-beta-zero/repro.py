#!/usr/bin/env python3
"""OpenVINO CPU: ONNX HardSigmoid with beta=0 computes as if beta were its default 0.5.

y = max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid-6). With alpha=0.9375, beta=0 and
x = 0.703125 the result is 0.6591796875; OpenVINO's CPU plugin returns 1.0 (= clamp(0.659 +
0.5)). beta=0.1 and beta=0.5 are right. The converted model carries beta=0 (its Constant),
so the frontend is right and the CPU plugin is at fault. The ONNX model is built in memory
with OpenVINO's own opset API, so the script needs only openvino and numpy.
Exit status 1 while the bug shows."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

x = np.array([0.92578125, 0.8769531, 0.72265625, 0.703125, 0.890625], np.float32)
print("release: openvino", ov.__version__)
bad = False
for beta in (0.0, 0.1, 0.5):
    p = ops.parameter([5], np.float32, name="x")
    y = ops.hard_sigmoid(p, np.array(0.9375, np.float32), np.array(beta, np.float32))
    model = ov.Model([y], [p])
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({0: x})[0]
    want = np.clip(0.9375 * x + beta, 0.0, 1.0)
    ok = np.allclose(got, want, atol=1e-6)
    bad |= not ok
    print(f"beta={beta}: {'right' if ok else f'WRONG {got} (expected {want})'}")
sys.exit(1 if bad else 0)
