#!/usr/bin/env python3
"""torch.compile(backend="openvino"): `prod` and `cumsum` of an 8-bit integer tensor keep the
input type inside the compiled graph, where torch accumulates every integral input in int64.
When the result is the graph's output the backend still returns int64 (its FX metadata says
so), but an op after it computes in uint8: `neg(prod(x, 0))` gives uint8 [255, 255] for
eager's int64 [-6, -20], `prod(x, 0) * 1000` gives [255, 255] for [6000, 20000]. `sum` is
right. Needs torch and openvino. Exit 1 when the bug shows."""
import sys

import openvino.torch  # noqa: F401  (registers the backend)
import torch

x = torch.tensor([[3, 5], [2, 4]], dtype=torch.uint8)
cases = {
    "neg(prod(x, 0))": lambda v: torch.neg(torch.prod(v, 0)),
    "prod(x, 0) * 1000": lambda v: torch.prod(v, 0) * 1000,
    "neg(cumsum(x, 0))": lambda v: torch.neg(torch.cumsum(v, 0)),
    "neg(sum(x, 0))": lambda v: torch.neg(torch.sum(v, 0)),
}
bug = False
for name, f in cases.items():
    torch._dynamo.reset()
    want, got = f(x), torch.compile(f, backend="openvino")(x)
    ok = got.dtype == want.dtype and torch.equal(got.to(torch.int64), want)
    bug |= not ok
    print(f"{name:20} eager {want.dtype} {want.tolist()}  openvino {got.dtype} {got.tolist()}")
print("bug shows" if bug else "no bug")
sys.exit(1 if bug else 0)
