#!/usr/bin/env python3
"""torch.onnx.export (torch 2.15.0, onnxscript 0.7.2): torch.amax on an int16 tensor exports as
ONNX ReduceMax on int16, an invalid model.

ReduceMax-20's T allows uint32, uint64, int32, int64, float16, float, double, bfloat16, uint8,
int8 and bool, not int16; the exporter's `aten_amax` (onnxscript torch_lib core.py, typed
TRealOrUInt8, which includes int16) emits it anyway and the checker rejects the model ("data
typestr: T, has unsupported type: tensor(int16)"). amin (ReduceMin) is the same. Found by the
torch_onnx_export campaign.
Exits 1 while the bug is present, 0 when not. Needs torch, onnxscript, onnx, onnxruntime."""
import contextlib
import io
import sys

import onnx
import onnxruntime as ort
import torch


def f(x):
    return torch.amax(x, 0)


XS = (torch.tensor([1, -2, 3], dtype=torch.int16),)


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
