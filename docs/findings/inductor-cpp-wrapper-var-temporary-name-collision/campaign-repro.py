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

def main(p18, p21, p22, v12):
    v16 = torch.var(v12, [-4, 2], correction=1, keepdim=True)
    v20 = torch.reshape(p18, [1, 1, 2, 3])
    v23 = torch.matmul(torch.softmax(torch.matmul(v20, p21.transpose(-2, -1)) / 2.125, dim=-1), p22)
    v24 = torch.var(v20, [3], correction=0, keepdim=False)
    v25 = torch.clamp_min(v24, 1)
    v27 = torch.digamma((v24.abs() + 0.5))
    v33 = torch.nn.functional.gelu(v27, approximate='none')
    v34 = torch.stack([v33, v25, v27], -4)
    return (v16, v23, v34)


# ---- the inputs
arrays = [
    np.frombuffer(bytes.fromhex("0000a43f000020be000080bd0000e03d0000503f00009ebf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([2, 3]).copy(),
    np.frombuffer(bytes.fromhex("0000283f000070bf000070be0000303f0000e6bf0000bcbf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 2, 3]).copy(),
    np.frombuffer(bytes.fromhex("0000e8be0000e8bf000040bf0000d8bf0000c0bd00002cbf0000183f0000ec3f0000e03f0000a6bf"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 1, 2, 5]).copy(),
    np.frombuffer(bytes.fromhex("4a12b03fb67cda3fd4c9813f3869a63f9fc7d23f65b1683f"), dtype=np.dtype("float32").newbyteorder("<")).reshape([1, 2, 3, 1]).copy(),
]

TYPES = ["float32", "float32", "float32", "float32"]
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
