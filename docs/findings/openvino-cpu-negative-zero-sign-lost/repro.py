"""OpenVINO's CPU plugin computes Negative, and Multiply by a negative scalar constant, as
`0 - x` and `x * s + 0` in its x64 JIT Eltwise kernels (jit_negative_emitter,
jit_power_static_emitter), so a +0.0 input gives +0.0 where -0.0 is right (IEEE 754 negate;
OpenVINO's Negative-1 spec "a_i = -a_i"; torch.neg "out = -1 x input"). The Snippets Subgraph
path (a static shape with snippets on) keeps the sign; a dynamic shape or SNIPPETS_MODE=DISABLE
takes the Eltwise node and loses it. It shows through signbit, copysign, 1/x (+inf instead of
-inf), atan2.

Through torch.compile(backend="openvino"), which converts with dynamic dimensions:
`n = torch.neg(x).reshape(-1); torch.signbit(n)` on zeros. Found by dlcfuzz's
torch_compile_openvino target (seed 7171 campaign, `value:signbit`). Exit 1 while the bug is
present, 0 when it is not. Needs openvino and numpy.
"""
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

print("release: openvino", ov.__version__)
core = ov.Core()
data = np.array([0.0, -0.0, 1.5, -2.0], np.float32)
wrong = []
for shape in ([4], [-1]):
    for config in ({}, {"SNIPPETS_MODE": "DISABLE"}):
        for name, make in [
            ("Negative", ops.negative),
            ("Multiply(-1)", lambda p: ops.multiply(p, ops.constant(np.float32(-1)))),
        ]:
            p = ops.parameter(shape, np.float32)
            compiled = core.compile_model(ov.Model([make(p)], [p]), "CPU",
                                          {"INFERENCE_PRECISION_HINT": "f32", **config})
            out = compiled(data)[0]
            if (np.signbit(out) != np.signbit(-data)).any():
                wrong.append(f"{name} shape={shape} {config}: {[str(v) for v in out.tolist()]}")
if wrong:
    print("reproduced: the sign of zero is lost (expected", [str(v) for v in (-data).tolist()], ")")
    for line in wrong:
        print("  ", line)
    sys.exit(1)
print("not reproduced")
