#!/usr/bin/env python3
"""torch.compile(backend="openvino"), CPU, float32 inference precision: a circular `pad` of
an input comes back as garbage (values like 8e20 and 4.6e-41: memory nobody wrote) when the
same graph also multiplies a 4-D `reshape` of that input, computed before the pad:

    r = x.reshape(1, 1, 2, 5); y = pad(x, [2, 2], mode="circular"); return y, r * 2

The other output is right. The same graph without the reshape output, with `unsqueeze`,
`flatten` or `clone` instead of the reshape, or with the pad computed first, is right; so are
`reflect`, `replicate` and `constant` padding. Needs torch and openvino. Exit 1 when the bug
shows."""
import sys

import openvino.torch  # noqa: F401  (registers the backend)
import torch

OPTIONS = {"config": {"INFERENCE_PRECISION_HINT": "f32"}, "device": "CPU"}


def graph(x):
    r = torch.reshape(x, [1, 1, 2, 5])
    y = torch.nn.functional.pad(x, [2, 2], mode="circular")
    return y, r * 2


x = torch.arange(10, dtype=torch.float32).reshape(2, 5)
want = graph(x)
got = torch.compile(graph, backend="openvino", options=OPTIONS)(x)
bug = False
for k, (w, g) in enumerate(zip(want, got)):
    same = torch.allclose(w, g)
    bug |= not same
    print(f"output {k}: {'right' if same else 'WRONG'}\n  eager   {w.flatten().tolist()}\n  openvino {g.flatten().tolist()}")
print("bug shows" if bug else "no bug")
sys.exit(1 if bug else 0)
