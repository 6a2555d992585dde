#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): torch.relu on a uint8 tensor exports
as ONNX Relu on uint8, an invalid model.

torch.relu accepts every integer type (on uint8 it is the identity). ONNX Relu-14 constrains T to
float types and the signed integers int8, int16, int32, int64: uint8 is not allowed, and the
checker rejects the model ("X typestr: T, has unsupported type: tensor(uint8)"). The exporter's
`aten_relu` (onnxscript torch_lib nn.py) returns `op.Relu(self)` for any real type. Found by the
torch_onnx_export campaign (`x.clone().relu_()` on uint8), reduced by it.
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnx
import onnxruntime as ort
import torch


def f(x):
    return torch.relu(x)


XS = (torch.tensor([0, 1, 200], dtype=torch.uint8),)


class Program(torch.nn.Module):
    def forward(self, *xs):
        return (f(*xs),)


def main():
    print("release: torch", torch.__version__, "onnxscript", __import__("onnxscript").__version__,
          "onnx", onnx.__version__, "onnxruntime", ort.__version__)
    eager = f(*XS)
    with contextlib.redirect_stdout(io.StringIO()):
        model = torch.onnx.export(Program(), XS).model_proto  # the wheel's default exporter
    print("exported ops:", [n.op_type for n in model.graph.node])
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # the exported model is invalid at its own opset
        print("invalid model:", str(e).strip().splitlines()[-1])
        print("reproduced")
        sys.exit(1)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {i.name: x.numpy() for i, x in zip(session.get_inputs(), XS)})[0]
    torch.testing.assert_close(torch.from_numpy(got), eager)
    print("not reproduced")
    sys.exit(0)


main()
