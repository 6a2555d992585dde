#!/usr/bin/env python3
"""torch.compile(backend="openvino") loses a write through a view into a tensor the program
made itself: `v = x.clone(); v[0] = x[1]; return v * 1.0` returns x unchanged. The same module
converted by openvino.convert_model (from torch.export, or traced) and compiled on the same
CPU plugin is right, and so are backend="aot_eager" and eager: the defect is in the
torch.compile backend's handling of the FX graph. A second spelling, a buffer from
torch.empty filled element by element through select(...).copy_(...) and then read by
nan_to_num and abs, returns uninitialized memory (values such as 6e23). Found by dlcfuzz's
torch_compile_openvino target. Needs torch and openvino. Exit status 1 while the bug shows."""
import sys
import torch
import openvino
import openvino.torch  # noqa: F401  (registers the backend)


def write_into_clone(x):
    v = x.clone()
    v[0] = x[1]
    return v * 1.0


def fill_empty_then_nan_to_num_abs(x):
    v = torch.empty([5], dtype=torch.float32)
    for i in range(5):
        v.select(0, i).copy_(x.select(0, i) + 0.5)
    return torch.abs(torch.nan_to_num(v))


print("release: torch", torch.__version__, "openvino", openvino.__version__)
x = torch.tensor([-10.0, 3.390625, -5.453125, -12.1875, -5.09375])
options = {"device": "CPU", "config": {"INFERENCE_PRECISION_HINT": "f32"}}
wrong = False
for program in (write_into_clone, fill_empty_then_nan_to_num_abs):
    want = program(x.clone())
    for backend in ("aot_eager", "openvino"):
        torch._dynamo.reset()
        compiled = torch.compile(program, backend=backend,
                                 options=options if backend == "openvino" else None)
        got = compiled(x.clone())
        ok = torch.allclose(got, want)
        print(f"{program.__name__:32} {backend:10}", "ok" if ok else
              f"WRONG: {got.tolist()} (eager {want.tolist()})")
        wrong |= backend == "openvino" and not ok


class WriteIntoClone(torch.nn.Module):
    def forward(self, x):
        return write_into_clone(x)


# The same first program through openvino.convert_model is right.
exported = torch.export.export(WriteIntoClone(), (x,))
model = openvino.compile_model(openvino.convert_model(exported), "CPU", options["config"])
print("write_into_clone via convert_model(torch.export):", model(x.numpy())[0].tolist())
sys.exit(1 if wrong else 0)
