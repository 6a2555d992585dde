"""TVM Relax: ToMixedPrecision fails on a 1-D Conv followed by Clip.

model.onnx (beside this file): Conv(x: float[2, 5, 5], w: float[2, 5, 7], kernel 5, stride 3,
pads [1, 2], dilation 2) -> Clip(min=-2.625, max=-1.3125), valid at opset 19. Imported with
from_onnx and built plain for llvm it runs; relax.transform.ToMixedPrecision() on the imported
module fails "Check failed: (tensor) is false: Expected TensorType, but got R.Callable(...)"
(infer_amp_utils.cc NTypeFrom, the check of row 17 hit by a function-typed value instead of a
shape). Found by the 30-minute tvm_llvm_patterns campaign (reduced from 18 to 2 nodes; pass
sequence cut to the one pass by hand). Exits 1 while the bug shows."""
import os
import sys

import numpy as np
import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

print("release: tvm", tvm.__version__)
MODEL = onnx.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx"))
PASSES = ["ToMixedPrecision"]
NAMES = ["x19"]
arrays = [
    np.frombuffer(bytes.fromhex("00008ebf0000a83f000090bf000010be0000f03f000086bf0000803f0000a03f00009c3f0000b43f00006c3f0000743f0000c6bf0000dcbf000048bf0000143f000020bf0000823f0000f2bf0000f6bf00006c3f00004c3f0000683f000040bd00009e3f0000823f0000e2bf0000a8bf0000eabf00003cbf0000e63f000060bf0000b63f0000ea3f00000cbf0000c2bf0000c03e0000e83f000090be0000103e0000d0be0000903e00004c3f0000703f0000c03e000088bf0000b03e00009c3f0000c43f0000ca3f"), dtype=np.dtype("float32").newbyteorder("<")).reshape([2, 5, 5]).copy(),
]


def make(name):
    t = relax.transform
    special = {
        "DeadCodeElimination": lambda: t.DeadCodeElimination(["main"]),
        "ToMixedPrecision": lambda: t.ToMixedPrecision(out_dtype="float32"),
        "AlterOpImpl": lambda: t.AlterOpImpl({}, {}),
    }
    return special[name]() if name in special else getattr(t, name)()


def build_and_run(passes):
    mod = from_onnx(MODEL, shape_dict={n: list(a.shape) for n, a in zip(NAMES, arrays)})
    for p in passes:
        print("applying", p)
        mod = make(p)(mod)
    device = tvm.cuda(0) if "llvm".startswith("cuda") else tvm.cpu(0)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), device)
    out = vm["main"](*[tvm.runtime.tensor(a, device) for a in arrays])
    out = out if isinstance(out, (list, tuple)) or not hasattr(out, "numpy") else [out]
    return [np.asarray(list(o)) if not hasattr(o, "numpy") else o.numpy() for o in out]


def check():
    plain = build_and_run([])
    with_passes = build_and_run(PASSES)
    for k, (a, b) in enumerate(zip(plain, with_passes)):
        np.testing.assert_allclose(b, a, atol=1e-3, rtol=1e-3, err_msg=f"output {k}")


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
