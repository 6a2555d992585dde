"""Inductor with dynamic shapes fails to compile the backward of var/std over a length
that is an expression of a size symbol (v[1:] has length s - 1), when a convolution in the
same graph has a weight dimension sharing that symbol (duck sizing: w.size(0) == v.size(0)):
"InductorError: TypeError: Cannot convert expression to float" from
torch/_inductor/index_propagation.py TypedExpr.__post_init__.

The forward's convolution lowering specializes the shared symbol (guard_int_seq on the
weight's size), so the backward's `2.0 / sym_float(s + 2)` reaches the generic
operator.truediv lowering with plain numbers; both float_truediv and int_truediv map to
operator.truediv and int_truediv wins, so the constant becomes IntTrueDiv(2.0, 5.0), which
sympy leaves unevaluated and float() rejects. Eager and the aot_eager backend compute the
same gradient; dynamic=False compiles; a v of length 4 (no shared symbol) compiles.

Found by dlcfuzz's torch_compile_cpu target (seed 6161 campaign, backward mode).
Exit 1 while the bug is present, 0 when it is not. Needs only torch.
"""
import sys

import torch
import torch.nn.functional as F

print("release: torch", torch.__version__)


def f(x, w, v):
    return F.conv1d(x, w), v[1:].var()


torch.manual_seed(0)
x, w = torch.randn(1, 1, 4), torch.randn(3, 1, 2)
v = torch.randn(3, requires_grad=True)


def grad_of(fn):
    v.grad = None
    _, s = fn(x, w, v)
    s.backward()
    return v.grad.clone()


want = grad_of(f)
assert torch.allclose(grad_of(torch.compile(f, backend="aot_eager", dynamic=True)), want)
try:
    got = grad_of(torch.compile(f, dynamic=True))
except Exception as e:  # noqa: BLE001 - any failure to compile is the bug
    print("reproduced: Inductor fails the backward of var:", str(e).strip().splitlines()[-1][:200])
    sys.exit(1)
if not torch.allclose(got, want, atol=1e-5):
    print("reproduced: wrong gradient", got, want)
    sys.exit(1)
print("not reproduced")
