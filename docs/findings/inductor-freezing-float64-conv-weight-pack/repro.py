"""Inductor's freezing passes pack a float64 convolution's weight for oneDNN, which has no
float64 kernels, and torch.compile fails:

    RuntimeError: itensor_view_from_dense expects float/bfloat16/half/int8/fp8 tensor inputDouble
    While executing %_reorder_convolution_weight ... mkldnn._reorder_convolution_weight

`_is_packable_convolution` (torch/_inductor/fx_passes/mkldnn_fusion.py) checks bfloat16 and
float16 support but not float64; `_is_packable_linear` refuses float64 (the linear form of
this bug, pytorch/pytorch#121175, was fixed that way). Eager runs, freezing off runs, and
`torch._inductor.config.cpp.weight_prepack = False` runs. Conv2d, Conv3d and ConvTranspose2d
fail alike.

Needs only torch. Exits 1 while the bug is present, 0 when it is not.
"""
import sys

import torch
import torch._inductor.config as config

config.freezing = True
torch.manual_seed(0)
failed = []
for name, model, shape in [
    ("Conv2d", torch.nn.Conv2d(3, 4, 3), (1, 3, 8, 8)),
    ("Conv3d", torch.nn.Conv3d(3, 4, 3), (1, 3, 6, 6, 6)),
    ("ConvTranspose2d", torch.nn.ConvTranspose2d(3, 4, 3), (1, 3, 8, 8)),
]:
    model = model.double().eval()
    x = torch.randn(*shape, dtype=torch.float64)
    torch._dynamo.reset()
    with torch.no_grad():
        expected = model(x)
        try:
            got = torch.compile(model)(x)
        except Exception as e:  # noqa: BLE001 - the compile failure is the bug
            lines = str(e).splitlines()
            failed.append(name)
            print(f"{name}: BUG: {lines[1] if len(lines) > 1 else lines[0]}")
            continue
    print(f"{name}: ok (max |eager - compiled| = {(expected - got).abs().max().item():.3g})")
print(f"torch {torch.__version__}: {'BUG present' if failed else 'fixed'}")
sys.exit(1 if failed else 0)
