#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): torch.signbit of a 0-d tensor exports
as an invalid model.

The exporter's `aten_signbit` (onnxscript torch_lib core.py) is `Less(self, Constant([0]))` with a
1-element 1-D constant, so for a 0-d input the Less broadcasts to rank 1 while the exported graph
declares the rank-0 result torch computes: the checker rejects the model ("Inferred shape and
existing shape differ in rank: (1) vs (0)"). (The same function documents that it cannot give
signbit(-0.0) = True, which is a known limitation and not reported here.) Found by the
torch_onnx_export campaign, reduced by it to this one statement.
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnx
import onnxruntime as ort
import torch


def f(x):
    return torch.signbit(x)


XS = (torch.tensor(-1.5),)

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
    got = torch.from_numpy(session.run(None, {i.name: x.numpy() for i, x in zip(session.get_inputs(), XS)})[0])
    if got.dtype != eager.dtype:
        print(f"output dtype {got.dtype}, PyTorch gives {eager.dtype}")
        print("reproduced")
        sys.exit(1)
    torch.testing.assert_close(got, eager)
    print("not reproduced")
    sys.exit(0)


main()
