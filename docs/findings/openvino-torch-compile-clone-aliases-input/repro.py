"""torch.compile(backend="openvino"): a `clone()` run in an OpenVINO partition returns the
input's own memory, so an in-place op applied to the clone afterwards (in torch) writes into
the original tensor. Here `c = t.clone().clamp_(-1, 0.5)` changes `t` itself: eager
t = [0.693, 1.524, 0.285, 0.261], openvino t = [0.5, 0.5, 0.285, 0.261].

The backend's executor (`torchdynamo/execute.py`) infers with share_inputs=True and
share_outputs=True; a clone compiles to a pass-through from input to output, so the output
tensor is the input's buffer. With share_inputs=False (or share_outputs=False) it is right.
The opposite direction of a write lost through a view (docs/findings row 52).

Found by dlcfuzz's torch_compile_openvino target (seed 6161 campaign, `value:squeeze`,
`value:interpolate2d`). Exit 1 while the bug is present, 0 when it is not. Needs torch and
openvino.
"""
import sys
import warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
import openvino  # noqa: E402
import openvino.torch  # noqa: E402,F401  registers the backend

print("release: torch", torch.__version__, "openvino", openvino.__version__)


def f(s, x):
    m = F.mish(torch.clamp_min(s - s, 0)) * 1  # puts the clone into a 2-op OpenVINO partition
    t = torch.lgamma(x)  # runs in torch
    c = t.clone().clamp_(-1.0, 0.5)  # clone in OpenVINO, clamp_ in torch
    return torch.squeeze(t, 0), c * 2, m


s, x = torch.tensor(0.3), torch.tensor([[3.0, 0.2, 2.5, 0.7]])
want = f(s, x)
got = torch.compile(f, backend="openvino")(s, x)
if not torch.allclose(got[0], want[0], atol=1e-5):
    print("reproduced: t =", got[0].tolist(), "eager", want[0].tolist())
    sys.exit(1)
print("not reproduced")
