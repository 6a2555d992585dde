"""Known upstream: pytorch/pytorch#191499 (open; fix PR #191543 open). Inductor's CPU
vectorized min/max reductions on int8/uint8 combine the zeroed lanes a partial load leaves:
the minimum of positive uint8/int8 values (amin, min, argmin) and the maximum of negative
int8 values (amax, max, argmax) come out as 0 or a garbage index, for 16 or more elements.
Found by dlcfuzz (torch_compile_cpu, bench feedback seed 2): argmin of a flattened [5, 4]
uint8 input. Exit 1 when the bug shows, 0 when it does not."""
import sys

import torch

print("release: torch", torch.__version__)
torch.set_num_threads(1)
CASES = [
    ("argmin", lambda p: torch.argmin(p, 0), torch.uint8, [5] * 13 + [1] + [5] * 6),
    ("amin", lambda p: torch.amin(p, 0), torch.int8, [5] * 13 + [1] + [5] * 6),
    ("amax", lambda p: torch.amax(p, 0), torch.int8, [-5] * 13 + [-1] + [-5] * 6),
]
wrong = []
for name, fn, dtype, values in CASES:
    x = torch.tensor(values, dtype=dtype)
    torch._dynamo.reset()
    eager, compiled = fn(x).item(), torch.compile(fn)(x).item()
    print(f"{name} of {dtype} ({len(values)} elements): eager {eager}, compiled {compiled}")
    if eager != compiled:
        wrong.append(name)
print("reproduced" if wrong else "not reproduced")
sys.exit(1 if wrong else 0)
