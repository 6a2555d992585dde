"""torch.compile(mode="max-autotune-no-cudagraphs") on the CPU fails to compile a batched
matmul whose batch-1 result is squeezed to 2-D and then used twice, by a pointwise op and
through a reshape back to 3-D: Inductor's C++ BMM template codegen asserts "wrong ndim
[s_b_index, i0 + m_start, i1 + n_start] [2, 3]". The default mode (no GEMM templates), or
max-autotune with Inductor's fusion off (max_fusion_size=1, epilogue_fusion=False), compiles it
and gives eager's values; so does the same program
with `a @ b.t()` (the mm template) or without the squeeze. `torch.einsum('ij,kj->ik', a, b)`
lowers to this batch-1 bmm, which is how the fuzzer found it.

Found by dlcfuzz's torch_compile_cpu target (max-autotune drawn as the test's configuration).
Exit 1 while the bug is present, 0 when it is not. Needs only torch.
"""
import sys

import torch

print("release: torch", torch.__version__)
torch.manual_seed(0)
a, b = torch.randn(2, 3), torch.randn(3, 3)


def f(a, b):
    y = torch.bmm(a.unsqueeze(0), b.t().unsqueeze(0)).squeeze(0)
    return torch.lt(y, y), y.reshape(1, 2, 3) * 2


want = f(a, b)
plain = torch.compile(f)(a, b)
assert all(torch.equal(p, w) for p, w in zip(plain, want)), "the default mode is wrong too"
torch._dynamo.reset()
try:
    got = torch.compile(f, mode="max-autotune-no-cudagraphs")(a, b)
except Exception as e:  # noqa: BLE001 - any failure to compile is the bug
    lines = [l for l in str(e).splitlines() if "Error" in l]
    print("reproduced: max-autotune fails to compile:", lines[0] if lines else e)
    sys.exit(1)
if not all(torch.allclose(g.float(), w.float()) for g, w in zip(got, want)):
    print("reproduced: wrong values")
    sys.exit(1)
print("not reproduced")
