"""Row 53's second trigger: the same freezing crash with the convolution's weight a frozen
module parameter, when the convolution's input length is a sum of size symbols (a cat of two
dynamic inputs), so the output stride holds Max(1, s0 + s1 - 2). Plain torch.compile: the
second call with new sizes recompiles with automatic dynamic shapes and fails with
"AssertionError: expected (numpy.integer, numpy.floating, int, float), got NoneType"
(freezing.enforce_output_layout -> fx.Graph.materialize_symints -> sym_max(1, None): the
middle node of the three-term sum never gets a value). Without freezing it compiles.

Exit 1 while the bug is present, 0 when it is not. Needs only torch.
"""
import sys

import torch
import torch._inductor.config

print("release: torch", torch.__version__)
torch.manual_seed(0)
m = torch.nn.Conv1d(1, 3, 3).eval()


def f(x, y):
    return m(torch.cat([x, y], -1))


calls = [(torch.randn(1, 1, 15), torch.randn(1, 1, 7)), (torch.randn(1, 1, 16), torch.randn(1, 1, 9))]
with torch.no_grad():
    want = [f(*c) for c in calls]
    compiled = torch.compile(f)
    try:
        with torch._inductor.config.patch(freezing=True):
            got = [compiled(*c) for c in calls]
    except Exception as e:  # noqa: BLE001 - any failure to compile is the bug
        print("reproduced: freezing + automatic dynamic shapes fails on a parameter conv:",
              next((l for l in str(e).splitlines() if "Error" in l), str(e))[:200])
        sys.exit(1)
    if not all(torch.allclose(g, w, atol=1e-5) for g, w in zip(got, want)):
        print("reproduced: wrong values")
        sys.exit(1)
print("not reproduced")
