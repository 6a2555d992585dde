#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): torch.squeeze(x, dim) on a dimension
whose size is not 1 exports as ONNX Squeeze(axes=[dim]), an invalid model.

torch.squeeze(input, dim): "If input is of shape (A x 1 x B), squeeze(input, 0) leaves the tensor
unchanged" — squeezing a dimension of size other than 1 is a no-op. ONNX Squeeze-13: "If an axis
is selected with shape entry not equal to one, an error is raised." The exporter (onnxscript's
torch_lib `aten_squeeze_dim`, which returns `op.Squeeze(self, [dim])` for any rank > 0) emits the
Squeeze unconditionally although the shape is static at export time: the checker rejects the
model ("Dimension of input 1 must be 1 instead of 3") and ONNX Runtime fails at run time. The old
TorchScript-based exporter handled this (pytorch#36796); the default dynamo exporter does not.
Found by dlcfuzz's torch_onnx_export campaign, reduced by it to this one statement.
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnx
import onnxruntime as ort
import torch


def f(x):
    return torch.squeeze(x, 1)


XS = (torch.ones(2, 3),)


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
