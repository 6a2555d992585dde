"""Inductor with freezing (torch._inductor.config.freezing = True, under torch.no_grad())
crashes compiling a convolution whose weight is an input of the compiled function, with
dynamic shapes: the freezing pass enforce_output_layout materializes the output's stride,
which contains Max(1, ...) (the output length depends on the symbolic kernel size), and
fx.Graph.materialize_symints fails on the Max. The same call without freezing, or with the
weight a module parameter (frozen, so static), compiles and is right.

Found by dlcfuzz's torch_compile_cpu target (freezing drawn as the test's configuration).
Exit 1 while the bug is present, 0 when it is not. Needs only torch.
"""
import sys

import torch
import torch._inductor.config

print("release: torch", torch.__version__)
x, w = torch.randn(1, 3, 8, 8), torch.randn(4, 3, 3, 3)


def conv(x, w):
    return torch.nn.functional.conv2d(x, w)


with torch.no_grad():
    want = conv(x, w)
    plain = torch.compile(conv, dynamic=True)(x, w)
    assert torch.allclose(plain, want, atol=1e-5), "without freezing the result is wrong too"
    torch._dynamo.reset()
    try:
        with torch._inductor.config.patch(freezing=True):
            got = torch.compile(conv, dynamic=True)(x, w)
    except Exception as e:  # noqa: BLE001 - any failure to compile is the bug
        print("reproduced: freezing + dynamic shapes fails to compile conv2d:",
              str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else e)
        sys.exit(1)
    if not torch.allclose(got, want, atol=1e-5):
        print("reproduced: wrong values", float((got - want).abs().max()))
        sys.exit(1)
print("not reproduced")
