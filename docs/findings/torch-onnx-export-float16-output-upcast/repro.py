#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): a float16 program whose last op is abs
(or sum) exports with a float32 output.

torch.abs of a float16 tensor is float16. The exporter's type-promotion pass rewrites the exported
program to `convert_element_type(x, float32) -> abs -> convert_element_type(·, float16)`, but the
ONNX graph keeps only the first conversion: `Cast(to=FLOAT) -> Abs`, and the model's output is
declared and computed as float32 (with `optimize=False` too, so not the onnxscript optimizer).
The model is valid, so nothing warns: a consumer silently gets float32 where PyTorch gives
float16. `x * 2` in the same program keeps float16. Found by the torch_onnx_export campaign as a
dtype mismatch on `abs`, `sum` and `amax` outputs, reduced by it.
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnx
import onnxruntime as ort
import torch


def f(x):
    return torch.abs(x)


XS = (torch.tensor([[1.5, -2.0]], dtype=torch.float16),)

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
