#!/usr/bin/env python3
"""torch.onnx.export (dynamo, onnxscript torchlib): `torch.erfc` is exported as
`Sub(1, Erf(x))` (torch_lib `aten_special_erfc`), which cancels catastrophically as erf(x)
approaches 1: float32 erfc(3) is 0.27 % off, erfc(4) and beyond are exactly 0, where eager
gives 1.54e-8. A later `pow(erfc(x), y)` with y < 0 turns that into a large error or inf.
Needs torch, onnxscript, onnxruntime and numpy. Exit 1 when the bug shows."""
import sys

import numpy as np
import onnxruntime as ort
import torch


class Erfc(torch.nn.Module):
    def forward(self, x):
        return torch.erfc(x)


x = torch.tensor([1.0, 3.0, 4.0, 5.0], dtype=torch.float32)
onnx_program = torch.onnx.export(Erfc(), (x,), dynamo=True)
path = "erfc.onnx"
onnx_program.save(path)
ops = [n.op_type for n in onnx_program.model_proto.graph.node]
got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x.numpy()})[0]
eager = torch.erfc(x).numpy()
exact = torch.erfc(x.double()).numpy()
print("exported ops:", ops)
print("eager   :", eager)
print("exported:", got)
relative = np.abs(got - exact) / np.abs(exact)
print("relative error of the export:", relative)
bad = bool((relative > 1e-3).any())
print("bug shows" if bad else "no bug")
sys.exit(1 if bad else 0)
