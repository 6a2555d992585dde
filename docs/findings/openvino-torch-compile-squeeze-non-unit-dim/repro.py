"""torch.compile(backend="openvino") drops a dimension of size > 1 that `squeeze(x, dim)`
must keep: `neg(squeeze(x, 0))` on a [5, 1, 4] tensor returns shape [1, 20] (eager: [5, 1, 4],
squeeze of a dimension whose size is not 1 is a no-op, torch.squeeze docs).

The backend converts with every dimension that is not 1 marked dynamic ([?, 1, ?]), even for
a static compile, and the PyTorch frontend translates aten.squeeze.dim to the opset-1 Squeeze,
which treats a dynamic axis as squeezable; the CPU plugin then silently reshapes. Outside
torch.compile, openvino.convert_model of the same module with a dynamic input fails at infer
("isCompatible(dims) failed"), with a static input it is right.

Found by dlcfuzz's torch_compile_openvino target (seed 6161 campaign, `shape:neg_int`).
Exit 1 while the bug is present, 0 when it is not. Needs torch and openvino.
"""
import sys
import warnings

import torch

warnings.filterwarnings("ignore")
import openvino  # noqa: E402
import openvino.torch  # noqa: E402,F401  registers the backend

print("release: torch", torch.__version__, "openvino", openvino.__version__)


def f(x):
    return torch.neg(torch.squeeze(x, 0))


x = torch.randn(5, 1, 4)
want = f(x)
got = torch.compile(f, backend="openvino")(x)
if got.shape != want.shape:
    print(f"reproduced: shape {tuple(got.shape)}, eager {tuple(want.shape)}")
    sys.exit(1)
if not torch.allclose(got, want):
    print("reproduced: wrong values")
    sys.exit(1)
print("not reproduced")
