#!/usr/bin/env python3
"""OpenVINO CPU: Abs(PRelu(c, 0.5625)) of a constant c = -1.640625 gives -0.923 instead of
+0.923: the CPU plugin evaluates the constant subgraph without its Abs. The same graph on a
Parameter is right, and so are ov.Model.evaluate (the core reference) and the offline
constant folding. Found as ONNX LeakyRelu(alpha=0.5625) -> Abs on a weight, which the ONNX
frontend converts to exactly this PRelu -> Abs; built here with OpenVINO's opset API, so the
script needs only openvino and numpy. Exit status 1 while the bug shows."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

v = np.array([-1.640625], np.float32)
want = np.abs(np.where(v < 0, 0.5625 * v, v))
print("release: openvino", ov.__version__)
model = ov.Model([ops.absolute(ops.prelu(ops.constant(v), np.array([0.5625], np.float32)))], [])
reference = [ov.Tensor(np.zeros(1, np.float32))]
model.evaluate(reference, [])
print("ov.Model.evaluate:", reference[0].data, "expected", want)
got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({})[0]
print("CPU, constant input:", got)
p = ops.parameter([1], np.float32)
fed = ov.Core().compile_model(ov.Model([ops.absolute(ops.prelu(p, np.array([0.5625], np.float32)))], [p]), "CPU",
                              {"INFERENCE_PRECISION_HINT": "f32"})({0: v})[0]
print("CPU, the same value as an input:", fed)
sys.exit(0 if np.allclose(got, want) else 1)
