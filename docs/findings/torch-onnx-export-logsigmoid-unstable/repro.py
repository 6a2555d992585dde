#!/usr/bin/env python3
"""torch.onnx.export (dynamo=True, onnxscript's torchlib `aten_log_sigmoid`): `logsigmoid` is
exported as `Log(Sigmoid(x))`. For large negative x the float32 sigmoid underflows to 0 and
the exported model returns -inf where eager returns x (logsigmoid(-120) = -120): under the
ONNX operators' own semantics (`onnx.reference`) from x < -103, and in ONNX Runtime from
x < -17, whose Sigmoid flushes tiny results to 0 (pytorch/pytorch#147508). A stable form
exists in ONNX: -Softplus(-x). Exits 1 while the bug is present, 0 otherwise. Needs torch,
onnxscript, onnx and onnxruntime."""
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx.reference import ReferenceEvaluator

warnings.filterwarnings("ignore")


class LogSigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.logsigmoid(x)


x = torch.tensor([-120.0, -30.0, -1.0, 0.0, 5.0], dtype=torch.float32)
print("torch", torch.__version__, "onnxruntime", ort.__version__)
with tempfile.TemporaryDirectory() as tmp:
    path = f"{tmp}/logsigmoid.onnx"
    torch.onnx.export(LogSigmoid(), (x,), dynamo=True).save(path)
    model = onnx.load(path)
    print("exported nodes:", [n.op_type for n in model.graph.node])
    name = model.graph.input[0].name
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    runtime = session.run(None, {name: x.numpy()})[0]
    reference = ReferenceEvaluator(model).run(None, {name: x.numpy()})[0]
eager = LogSigmoid()(x).numpy()
print("eager          ", eager)
print("onnx.reference ", reference)
print("ONNX Runtime   ", runtime)
if not np.isfinite(reference).all() or not np.isfinite(runtime).all():
    print("BUG: the exported logsigmoid is -inf where eager is finite")
    sys.exit(1)
print("OK")
