#!/usr/bin/env python3
"""torch.onnx.export (dynamo=True, onnxscript's torchlib): `torch.sinc` of a float64 tensor
is exported with pi as a float32 constant cast to double (`_MATH_PI_cast` =
3.1415927410125732), so the exported model computes sin(pi_f32 * x) / (pi_f32 * x) and
loses float64 precision: a relative error of about 6e-6 where eager's float64 sinc is exact
to the last bits. Exits 1 while the bug is present, 0 otherwise. Needs torch, onnxscript,
onnx and onnxruntime."""
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

warnings.filterwarnings("ignore")


class Sinc(torch.nn.Module):
    def forward(self, x):
        return torch.sinc(x)


x = torch.linspace(-3.3, 3.7, 50, dtype=torch.float64)
print("torch", torch.__version__, "onnxruntime", ort.__version__)
with tempfile.TemporaryDirectory() as tmp:
    path = f"{tmp}/sinc.onnx"
    torch.onnx.export(Sinc(), (x,), dynamo=True).save(path)
    model = onnx.load(path)
    for init in model.graph.initializer:
        value = onnx.numpy_helper.to_array(init)
        print("constant", init.name, value.dtype, value)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
exact = np.sinc(x.numpy())  # float64 throughout
eager = torch.sinc(x).numpy()
rel = lambda a: float(np.max(np.abs(a - exact) / np.maximum(np.abs(exact), 1e-300)))  # noqa: E731
print(f"largest relative error: exported {rel(got):.3e}, eager {rel(eager):.3e}")
if rel(got) > 1e-12:
    print("BUG: the exported float64 sinc is only float32-accurate")
    sys.exit(1)
print("OK")
