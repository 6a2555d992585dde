#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): torch.atan2(0, x) for x < 0 is -pi in the
exported model, +pi in PyTorch.

atan2(+0, x) for x < 0 is +pi (C99 Annex F, and torch.atan2). The exporter's `_atan2`
(onnxscript torch_lib core.py) computes `atan(y / x)` and picks the quadrant with
`Where(Greater(y, 0), atan + pi, atan - pi)` for x < 0: y == 0 takes the `- pi` branch, so the
result is off by 2*pi. A zero numerator is common (integer inputs, relu outputs); the fuzzer
found it as `atan2(v, v)` on a tensor holding zeros, then `argmax` and `frac` of such values.
(Signed zeros differ too: atan2(0, -0.0) is pi in torch, 0 exported; atan2(-0.0, 0) is -0.0 in
torch, 0 exported.)
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnxruntime as ort
import torch


class Program(torch.nn.Module):
    def forward(self, y, x):
        return (torch.atan2(y, x),)


y = torch.tensor([0.0, 1.0, -1.0, 2.0])
x = torch.tensor([-1.0, -1.0, -1.0, 2.0])
print("release: torch", torch.__version__, "onnxscript", __import__("onnxscript").__version__,
      "onnxruntime", ort.__version__)
eager = Program()(y, x)[0]
with contextlib.redirect_stdout(io.StringIO()):
    model = torch.onnx.export(Program(), (y, x)).model_proto
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
got = torch.from_numpy(session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), (y, x))})[0])
print("eager   ", eager.tolist())
print("exported", got.tolist())
if not torch.allclose(got, eager):
    print("reproduced")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
