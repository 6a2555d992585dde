#!/usr/bin/env python3
"""torch.compile (Inductor, CPU, torch 2.15.0): a row reduction fused with an in-place index write
fails to compile with `InductorError: KeyError: 'buf1'`.

    f = lambda x: x.index_fill(0, torch.arange(x.shape[0]), 1.0) + x.sum(-1, keepdim=True)
    torch.compile(f)(torch.randn(8, 8))

The index_fill (likewise `z[idx] = v`, index_put, scatter) lowers to a buffer `buf1` that is a
*mutation output* of `buf0` (layout MutationLayoutSHOULDREMOVE, buf1.mutations == ['buf0']).
The CPP scheduler fuses the sum, the index write and the add into one OuterLoopFusedSchedulerNode.
CppScheduling.codegen_outer_loop_node -> try_outer_loop_fusion_with_local_buf then considers buf1
for promotion to a thread-local buffer: its helper is_all_write_read_contiguous() calls
LoopBody.get_read_expr('buf1') on every scheduler user of buf1, but the user's loop body loads the
mutation's real name 'buf0', so get_read_expr raises KeyError (torch/_inductor/loop_body.py).
Eager and backend="aot_eager" run. Fails with default config, cpp_wrapper=True, dynamic=True,
cpp.simdlen=1, epilogue_fusion=False, aggressive_fusion=False; passes with max_fusion_size=1 (or 2).
Needs a last dimension of >= 8 with static shapes (any size with dynamic shapes).
dlcfuzz found it in the *backward* graph of
    interpolate(erfc(softmax(x * 0.875)), scale_factor=0.5, mode='nearest'),
    min(logit(sigmoid(cosh(x))), -2).values
(the min backward's scatter into zeros and the nearest-upsample backward's index_put are both
mutation outputs fused with the softmax-backward reductions).
Known upstream: pytorch/pytorch#188228 and #196570 (open; fix PR #196639 open).
Exits 1 while the bug is present, 0 when not. Needs torch."""
import sys

import torch

print("release: torch", torch.__version__)


def f(x):
    return x.index_fill(0, torch.arange(x.shape[0]), 1.0) + x.sum(-1, keepdim=True)


torch.manual_seed(0)
x = torch.randn(8, 8)
eager = f(x)
try:
    got = torch.compile(f, backend="inductor")(x)
except Exception as e:  # noqa: BLE001 - the compiler's own error is the bug
    print(type(e).__name__, str(e).splitlines()[0][:300])
    print("reproduced")
    sys.exit(1)
if not torch.allclose(got, eager, rtol=1e-5, atol=1e-5):
    print("wrong values: max abs diff", (got - eager).abs().max().item())
    print("reproduced")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
