#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): torch.stack of tensors of different
dtypes exports as Concat of the unconverted inputs, an invalid model.

torch.stack follows torch.cat's type promotion (stack([bool, float32]) is float32). The exporter's
`aten_stack` (onnxscript torch_lib core.py) unsqueezes each input and concatenates them without
casting to the promoted type, so Concat gets inputs of different types; Concat-13: "All input
tensors must have the same ... type" — the checker rejects it ("inputs has inconsistent type").
torch.cat of the same inputs exports correctly (a Cast is inserted), so only stack misses the
promotion. int32 + float32 fails the same way. Found by the torch_onnx_export campaign and reduced
to stack + erf by it.
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnx
import onnxruntime as ort
import torch


def f(a, b):
    return torch.stack([a, b], 0)


XS = (torch.tensor([True, False]), torch.tensor([1.5, 2.0]))


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
