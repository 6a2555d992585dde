#!/usr/bin/env python3
"""torch.compile(backend="openvino") returns outputs without autograd when the graph takes
a view (`narrow`, `transpose`) of an input that requires grad: `neg(narrow(x, 0, 0, 1))` comes back with
`requires_grad=False`, so `.backward()` fails ("element 0 of tensors does not require grad")
and `torch.autograd.grad(..., allow_unused=True)` silently gives no gradient. Eager, the
`inductor` backend, and the same graph without `narrow` (`neg(x)`, `elu(x)`) keep autograd.
OpenVINO documents this backend for fine-tuning (its `aot_autograd` option, on by default).
Needs torch and openvino. Exit 1 when the bug shows."""
import sys

import openvino.torch  # noqa: F401  (registers the backend)
import torch


def graphs():
    yield "neg(narrow(x))", lambda x: torch.neg(torch.narrow(x, 0, 0, 1))
    yield "elu(narrow(x))", lambda x: torch.nn.functional.elu(torch.narrow(x, 0, 0, 1))
    yield "neg(x)", lambda x: torch.neg(x)
    yield "transpose(x) * 2", lambda x: torch.transpose(x, 0, 1) * 2


bug = False
x0 = torch.tensor([[-1.27, -0.29, -4.93, 0.40]])
for name, f in graphs():
    for backend in ("eager", "inductor", "openvino"):
        torch._dynamo.reset()
        x = x0.clone().requires_grad_(True)
        y = torch.compile(f, backend=backend)(x)
        print(f"{name:18} {backend:9} requires_grad={y.requires_grad}")
        if backend == "openvino" and not y.requires_grad:
            bug = True
print("bug shows" if bug else "no bug")
sys.exit(1 if bug else 0)
