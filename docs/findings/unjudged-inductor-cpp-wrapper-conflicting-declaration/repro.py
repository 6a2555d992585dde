"""torch.compile reproducer written by dlcfuzz: eager vs compiled, each output within
its type's tolerance. Usage: python3 repro.py [backend] (inductor by default; aot_eager
tells the backend's bugs from Dynamo's and AOT Autograd's)."""
import contextlib
import json
import sys

import numpy as np
import torch
import torch._inductor.config

print("release: torch", torch.__version__)
# ---- the program
import torch

DT_BOOL = torch.bool
DT_U8 = torch.uint8
DT_I8 = torch.int8
DT_I16 = torch.int16
DT_I32 = torch.int32
DT_I64 = torch.int64
DT_F16 = torch.float16
DT_BF16 = torch.bfloat16
DT_F32 = torch.float32
DT_F64 = torch.float64

def main(p1, p3, p9, p10, p17, p18, p21, p22, p29, p30, p31, p36, p37, p38, p41, p42, p47, p48, p52):
    def fn57():
        v13 = torch.add(v12, v5)
        v14 = v12.contiguous().view(-1).view(v12.shape)
        v15 = torch.pow((v7.abs() + 0.5), 0.125)
        v16 = torch.var(v12, [-4, 2], correction=1, keepdim=True)
        return (v13, v14, v15, v16)
    def fn59():
        v40 = torch.nn.functional.adaptive_max_pool2d(v39, [2, 1])
        v43 = torch.nn.functional.layer_norm(v40, [2, 1], p41, p42, eps=0.376)
        v44 = torch.log((p38.abs() + 0.5))
        return (v40, v43, v44)
    def fn58():
        v49 = torch.scatter(v43, -4, p47, p48)
        v50 = torch.ceil(v40)
        v51 = torch.reshape(p37, [16, 3])
        v53 = torch.mm(v51, (p52.abs() * 8).clamp(max=255).to(torch.uint8).to(v51.dtype))
        return (v49, v50, v53)
    v2 = torch.reshape(p1, [1, 3, 3])
    v4 = torch.bmm(p3.transpose(1, 2), v2.transpose(1, 2)).transpose(1, 2)
    v5 = torch.max(v4, 2, keepdim=True).values
    v6 = torch.nn.functional.celu(v2, 1.5)
    v7 = v5.clone().clamp_(-2.0, 1.5)
    v8 = torch.reshape(v7, [1, 1, 3, 1])
    v11 = torch.tanh(torch.nn.functional.conv_transpose2d(v8, p9, p10, stride=1, padding=1, output_padding=0, groups=1, dilation=2))
    v12 = torch.hypot(v11, v7)
    v13, v14, v15, v16 = fn57()
    v19 = torch.acosh((p17.abs() + 1.25))
    v20 = torch.reshape(p18, [1, 1, 2, 3])
    v23 = torch.matmul(torch.softmax(torch.matmul(v20, p21.transpose(-2, -1)) / 2.125, dim=-1), p22)
    v24 = torch.var(v20, [3], correction=0, keepdim=False)
    v25 = torch.clamp_min(v24, 1)
    v26 = torch.softmax(v25, 2)
    v27 = torch.digamma((v24.abs() + 0.5))
    v28 = torch.reshape(v24, [1, 1, 1, 2])
    v32 = (torch.matmul(v28.transpose(1, 2).contiguous().permute(0, 2, 1, 3), p29.transpose(1, 2).contiguous().permute(0, 2, 1, 3).transpose(-2, -1)).div(0.5) + p31).softmax(dim=-1).matmul(p30.transpose(1, 2).contiguous().permute(0, 2, 1, 3))
    v33 = torch.nn.functional.gelu(v27, approximate='none')
    v34 = torch.stack([v33, v25, v27], -4)
    v35 = torch.clamp(v28 * 0.9375 + 1.0, 0.0, 1.0)
    v39 = torch.reshape(p37, [1, 4, 4, 3])
    v40, v43, v44 = fn59()
    v45 = torch.softmax(v43 / 2.0, -2)
    v46 = torch.exp(v45)
    if len(p47.shape) >= 4:
        v49, v50, v53 = fn58()
    else:
        v49 = torch.zeros([1, 4, 2, 1], dtype=DT_F32, device=p47.device)
        v50 = torch.zeros([1, 4, 2, 1], dtype=DT_F32, device=p47.device)
        v53 = torch.zeros([16, 5], dtype=DT_F32, device=p47.device)
    v54 = torch.nan_to_num(v50, nan=-0.5)
    v56 = v54.clone().clamp_(-0.875, 1.25)
    return (v6, v13, v14, v15, v16, v19, v23, v26, v32, v34, v35, v44, v46, v49, v53, v56)


# ---- the inputs
arrays = [
    np.frombuffer(bytes.fromhex("0000103f0000e03f0000443f0000c2bf000090be0000b8be0000a6bf0000103f0000ac3f"), dtype=np.dtype("float32").newbyteorder("<")).reshape([3, 3]).copy(),
    np.frombuffer(bytes.fromhex("000086bf000050be0000383f0000ba3f000018bf0000e6bf0000923f0000503f0000a0be00001c3f0000d8bf0000febf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 3, 4]).copy(),
    np.frombuffer(bytes.fromhex("000000bd000000bd00005c3f0000d6bf000084bf000020bf00007cbf0000a0bd"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 2, 2, 2]).copy(),
    np.frombuffer(bytes.fromhex("0000923f000054bf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([2]).copy(),
    np.frombuffer(bytes.fromhex("00001c3f0000a0be0000643f0000c0bd0000803d00003c3f0000843f0000e8bf0000b43f0000e03f0000d83f0000f4bf0000603f0000ea3f0000803c0000583f0000aabf000030bf00008e3f00008a3f000058bf000090be0000e4bf0000d23f0000503f00006cbf000060bf000008bf0000cc3f0000083f0000b6bf000080bc"), dtype=np.dtype("float32").newbyteorder("<")).reshape([4, 2, 2, 2]).copy(),
    np.frombuffer(bytes.fromhex("0000a43f000020be000080bd0000e03d0000503f00009ebf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([2, 3]).copy(),
    np.frombuffer(bytes.fromhex("0000283f000070bf000070be0000303f0000e6bf0000bcbf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 2, 3]).copy(),
    np.frombuffer(bytes.fromhex("0000e8be0000e8bf000040bf0000d8bf0000c0bd00002cbf0000183f0000ec3f0000e03f0000a6bf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 2, 5]).copy(),
    np.frombuffer(bytes.fromhex("000060be000082bf000000be0000c43f0000c03d000048bf0000c83e0000cc3f"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 4, 2]).copy(),
    np.frombuffer(bytes.fromhex("000000be0000ca3f00006cbf0000c4bf0000a83f000050bf00008e3f000020be0000f83e0000febf000080bc0000ee3f000080be0000ecbf000000bf0000103f0000fa3f0000e83f0000fabf000020be"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 4, 5]).copy(),
    np.frombuffer(bytes.fromhex("00009ebf0000a63f0000dcbf0000de3f"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 4]).copy(),
    np.frombuffer(bytes.fromhex("fe02040807f905f903"), dtype=np.dtype("int8").newbyteorder("<")).reshape([3, 3]).copy(),
    np.frombuffer(bytes.fromhex("0000d43f000088bf000068bf0000fcbf0000c03d0000d2bf0000b0bf0000c43f000098bf0000c8bf0000b8bf000096bf000074bf0000fe3f00006cbf0000443f00000c3f0000003d00006c3f000064bf0000c23f000000be0000b83f0000d0bf00008c3f0000ae3f000028bf00000c3f0000d23f0000f0be0000d43f0000c63f00001cbf00006c3f0000f63f00007cbf0000983f000038bf0000fe3f00009cbf000004bf0000603e0000d0be0000583f000050be0000d0be0000f83f000018bf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([4, 4, 3]).copy(),
    np.frombuffer(bytes.fromhex("203f"), dtype=np.dtype("float16").newbyteorder("<")).reshape([]).copy(),
    np.frombuffer(bytes.fromhex("00002cbf0000febf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([2, 1]).copy(),
    np.frombuffer(bytes.fromhex("0000f23f000024bf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([2, 1]).copy(),
    np.frombuffer(bytes.fromhex("00000000000000000000000000000000"), dtype=np.dtype("int64").newbyteorder("<")).reshape([1, 1, 2, 1]).copy(),
    np.frombuffer(bytes.fromhex("000050be0000f4bf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 2, 1]).copy(),
    np.frombuffer(bytes.fromhex("0000bc3f0000d8bf000018bf0000de3f0000d03f0000a23f0000fe3f000068bf00005cbf0000243f00001c3f000070be0000cc3f00007c3f0000d03e"), dtype=np.dtype("float32").newbyteorder("<")).reshape([3, 5]).copy(),
]

TYPES = ["float32", "float32", "float32", "float32", "bfloat16", "float32", "float32", "float32", "float32", "float32", "float32", "int8", "float32", "float16", "float32", "float32", "int64", "float32", "float32"]
DYNAMIC, BACKWARD, RECOMPILE = True, True, False
# Inputs the compiled program holds as module parameters (a model's weights).
WEIGHTS = []
# Inductor's configuration as the fuzzer compiled with it (mode, config patch, no_grad).
MODE, CONFIG, NO_GRAD = None, json.loads("{\"cpp_wrapper\":true}"), False
TOLERANCE = {"bool": (0e0, 0e0), "uint8": (0e0, 0e0), "int8": (0e0, 0e0), "int16": (0e0, 0e0), "int32": (0e0, 0e0), "int64": (0e0, 0e0), "float16": (1e-2, 1e-3), "bfloat16": (5e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}
backend = sys.argv[1] if len(sys.argv) > 1 else "inductor"
options = None if backend == "inductor" else None
if backend != "inductor":
    MODE, CONFIG, NO_GRAD = None, {}, False
kwargs = dict(mode=MODE) if MODE else dict(options=options)
xs = [torch.from_numpy(a).to(getattr(torch, t)).to("cpu") for a, t in zip(arrays, TYPES)]


def run(fn):
    if not BACKWARD:
        return list(fn(*[x.clone() for x in xs]))
    leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in xs]
    outs = list(fn(*leaves))
    g = torch.Generator().manual_seed(0)
    terms = [(o.to(torch.float64) * torch.rand(o.shape, generator=g, dtype=torch.float64).to(o.device)).sum()
             for o in outs if o.is_floating_point() and o.requires_grad]
    wrt = [x for x in leaves if x.requires_grad]
    grads = torch.autograd.grad(sum(terms), wrt, allow_unused=True) if terms and wrt else [None] * len(wrt)
    return [o.detach() for o in outs] + [torch.zeros_like(x) if d is None else d for x, d in zip(wrt, grads)]


class Model(torch.nn.Module):
    """`main` with the inputs at WEIGHTS (ascending) held as parameters, called with the others."""

    def __init__(self):
        super().__init__()
        self.held = torch.nn.ParameterList([torch.nn.Parameter(xs[k], requires_grad=False) for k in WEIGHTS])

    def forward(self, *free):
        args = list(free)
        for k, weight in zip(WEIGHTS, self.held):
            args.insert(k, weight)
        return main(*args)


def batched(*xs):
    outs = [main(*[x[b] for x in xs]) for b in range(xs[0].shape[0])]
    return tuple(torch.stack([o[k] for o in outs]) for k in range(len(outs[0])))


def compare(name, want, got):
    for k, (w, g) in enumerate(zip(want, got)):
        assert g.dtype == w.dtype, f"{name}, output {k}: {g.dtype} where eager gives {w.dtype}"
        rtol, atol = TOLERANCE[str(w.dtype).replace("torch.", "")]
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                   msg=lambda m: f"{name}, output {k}: {m}")


def check():
    eager = run(main)
    grad = torch.no_grad() if NO_GRAD else contextlib.nullcontext()
    with grad, torch._inductor.config.patch(CONFIG):
        if RECOMPILE:
            compiled = torch.compile(batched, backend=backend, dynamic=DYNAMIC, **kwargs)
            for batch in (1, 2):
                result = compiled(*[torch.stack([x] * batch) for x in xs])
                compare(f"batch {batch}", eager, [r[batch - 1] for r in result])
        elif WEIGHTS:
            compiled = torch.compile(Model(), backend=backend, dynamic=DYNAMIC, **kwargs)
            compare("compiled", eager, run(lambda *a: compiled(*[a[k] for k in range(len(a)) if k not in WEIGHTS])))
        else:
            compare("compiled", eager, run(torch.compile(main, backend=backend, dynamic=DYNAMIC, **kwargs)))


def verdict():
    import traceback
    try:
        check()
    except AssertionError as e:
        print("mismatch:", str(e).strip().splitlines()[:6])
        print("reproduced")
        sys.exit(1)
    except Exception as e:  # the compiler's own error is the bug
        print("".join(traceback.format_exception_only(type(e), e)).strip()[-2000:])
        print("reproduced")
        sys.exit(1)
    print("not reproduced")
    sys.exit(0)


verdict()
