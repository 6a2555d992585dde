#!/usr/bin/env python3
"""OpenVINO: AbsSinking (SimplifyShapeOfSubGraph, common transformations) rewrites a rank-1
Abs(Concat(a, b)) into Concat(Abs(a), Abs(b)) by re-wiring the inputs of the existing Concat
(input.replace_source_output) and then dropping the Abs, without checking that the Concat has
other consumers: every other consumer of the Concat now reads the absolute values.
c = Concat(x0, x5); outputs Abs(c) and BitwiseOr(c, x7) (or Add, Relu, Multiply ...): the
second output is computed from |c|. Graph inputs are Parameters here, so this is not
openvinotoolkit/openvino#38166 as filed (constant-only rank-1 Abs removed; "Abs on a Parameter
is correct"), but the same pass. Found inside the fuzzer's bug merged with #38166
(finding-33d1c258c2bfd303; finding-61248d826adcd8a0 and finding-fb8b1611e52033ec have the same
shape on constants). A rank-2 Concat is not matched (rank_equals(1)) and is right.
Needs only openvino and numpy; exit 1 while the bug shows."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

print("release: openvino", ov.__version__)
core = ov.Core()
x0 = np.array([1, -1, 0], np.float32)
x5 = np.array([5, -2, -1], np.float32)
x7 = np.array([0, 1, 0, 8, -4, 8], np.float32)
wrong = False
for rank in (1, 2):
    shp = (3,) if rank == 1 else (1, 3)
    p0 = ops.parameter(list(shp), np.float32); p5 = ops.parameter(list(shp), np.float32)
    p7 = ops.parameter([6] if rank == 1 else [1, 6], np.float32)
    c = ops.concat([p0, p5], -1)
    model = ov.Model([ops.abs(c), ops.add(c, p7)], [p0, p5, p7])
    feeds = [x0.reshape(shp), x5.reshape(shp), x7.reshape(p7.get_output_shape(0))]
    got = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)
    cc = np.concatenate([x0, x5])
    want_add = (cc + x7).reshape(-1)
    got_add = np.asarray(got[1]).reshape(-1)
    print(f"rank {rank}: Abs(c) = {np.asarray(got[0]).reshape(-1).tolist()}; Add(c, x7) CPU {got_add.tolist()}, "
          f"expected {want_add.tolist()}")
    if not np.array_equal(got_add, want_add):
        wrong = True
print("reproduced" if wrong else "not reproduced")
sys.exit(1 if wrong else 0)
