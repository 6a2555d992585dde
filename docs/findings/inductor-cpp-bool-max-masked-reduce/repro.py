#!/usr/bin/env python3
"""torch.compile (Inductor, CPU, torch 2.15.0): the max of a bool tensor made by logical_or of
float tensors fails to compile: C++ compile error in the generated kernel.

    torch.compile(lambda x: torch.logical_or(x, x).max())(torch.randn(17))

Inductor's vectorized CPU codegen emits
    tmp_acc0_vec = max_masked_reduce(tmp_acc0_vec, tmp19, static_cast<int64_t>(...));
with the accumulator a `VecMask<float, 1>` and the value a `VecMask<int, 1>`; the template
`max_masked_reduce(const T&, const T&, int64_t)` in torch/csrc/inductor/cpp_prefix.h cannot
deduce one T, and g++ rejects the kernel ("no matching function for call to
'max_masked_reduce(VecMask<float, 1>&, VecMask<int, 1>&, int64_t)'"). Eager returns True.
Any shape fails, with or without a vector tail. dlcfuzz's localization: turning off Inductor's
fusion (max_fusion_size=1, epilogue_fusion=False) makes it compile; the campaign found it in a
30-statement program and reduced it to 21, then to this line by hand.
Exits 1 while the bug is present, 0 when not. Needs torch."""
import sys

import torch

print("release: torch", torch.__version__)
torch.set_num_threads(1)


def f(x):
    return torch.logical_or(x, x).max()


x = torch.randn(17)
eager = f(x)
try:
    got = torch.compile(f)(x)
except Exception as e:  # noqa: BLE001 - the compiler's own error is the bug
    message = str(e)
    line = next((l for l in message.splitlines() if "error:" in l), message.splitlines()[0])
    print(type(e).__name__, line.strip()[:300])
    print("reproduced")
    sys.exit(1)
assert got.item() == eager.item(), (got, eager)
print("not reproduced")
sys.exit(0)
