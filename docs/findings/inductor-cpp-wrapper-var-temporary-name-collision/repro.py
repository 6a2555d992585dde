"""New: Inductor's C++ wrapper (cpp_wrapper=True) names its own temporaries `var_0`,
`var_1`, ... (`arg_var_id` in torch/_inductor/codegen/cpp_wrapper_cpu.py) without reserving
the graph's input names. An FX node is named after its op, so the second `torch.var` of a
program is `var_1`; when AOT Autograd saves it for the backward it becomes a backward graph
input declared as `auto var_1 = std::move(inputs[k]);`, and the wrapper's own `auto var_1 =
wrap_with_raii_handle_if_needed(...)` for an output view then fails to compile:
"conflicting declaration 'auto var_1'". The default (Python) wrapper compiles it. Whether
the partitioner saves `var_1` (rather than recomputing it) depends on the graph: here the
matmul between the two vars makes it; with the matmul written after the second var it is
recomputed and the program compiles.
Found by dlcfuzz (torch_compile_cpu, bench feedback seed 1, random side), reduced by the
campaign's reducer and by hand. Exit 1 when the bug shows, 0 when it does not."""
import sys

import torch
import torch._inductor.config

print("release: torch", torch.__version__)


def f(p, w, q):
    a = torch.var(q, [-4, 2], correction=1, keepdim=True)  # FX node `var`
    y = torch.reshape(p, [1, 1, 2, 3])
    m = torch.matmul(y, w.transpose(-2, -1))
    b = torch.var(y, 3, correction=0)  # FX node `var_1`, saved for the backward
    return a, m, b * b


torch.manual_seed(0)
xs = [torch.randn(2, 3), torch.randn(1, 1, 2, 3), torch.randn(1, 2, 3, 1)]


def grads(fn):
    leaves = [x.clone().requires_grad_(True) for x in xs]
    sum(o.sum() for o in fn(*leaves)).backward()
    return [x.grad for x in leaves]


eager = grads(f)
torch._dynamo.reset()
assert all(torch.allclose(e, g, equal_nan=True) for e, g in zip(eager, grads(torch.compile(f))))
print("default wrapper: compiles, gradients match eager")
torch._dynamo.reset()
try:
    with torch._inductor.config.patch(cpp_wrapper=True):
        got = grads(torch.compile(f))
except Exception as e:  # noqa: BLE001 - the compiler's error is the bug
    lines = [l for l in str(e).splitlines() if "error:" in l]
    print(type(e).__name__, lines[0].strip() if lines else str(e)[:300])
    print("reproduced")
    sys.exit(1)
ok = all(torch.allclose(e, g, equal_nan=True) for e, g in zip(eager, got))
print("cpp_wrapper: compiles, gradients", "match" if ok else "DIFFER")
print("not reproduced" if ok else "reproduced")
sys.exit(0 if ok else 1)
