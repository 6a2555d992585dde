#!/usr/bin/env python3
"""OpenVINO 2026.4.1 CPU: Tile of an input whose shape is partially static, [1,1,?,?] (also
[?,1,?,?], [?,1,1,?]), with repeats [1,4,4,1] (or [4,4,4,1]) returns wrong values: every
output row repeats the first element of the row instead of the row ([-3,-3,-3,-3] for
[-3,4,0,7]). The same Tile on a static or on a fully dynamic [?,?,?,?] input is right.
In the compiled model the plugin splits the Tile into two Tile nodes; the second one runs in
the channels-last layout 'acdb' followed by a Reorder, only in the partially static case.
The campaign's form (model.onnx): Split(x f16[1,3,1,4], split=[1,1,1], axis=-3) -> Tile(out0,
[4,4,4,1]) with every input dim made dynamic: the VariadicSplit output is [?,1,?,?].
Needs only openvino and numpy. Exit 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = os.path.dirname(os.path.abspath(__file__))
CFG = {"INFERENCE_PRECISION_HINT": "f32"}
print("release: openvino", ov.__version__)
bad = False
X = np.array([[[[-3, 4, 0, 7], [1, -2, 5, 6]]]], np.float32)   # [1,1,2,4]
for shape in ([1, 1, 2, 4], [-1, -1, -1, -1], [1, 1, -1, -1], [-1, 1, -1, -1]):
    for rep in ([1, 4, 4, 1], [4, 4, 4, 1]):
        x = ops.parameter(shape, np.float32, name="x")
        y = ops.tile(x, ops.constant(np.array(rep, np.int64)))
        got = ov.Core().compile_model(ov.Model([y.output(0)], [x]), "CPU", CFG)([X])[0]
        want = np.tile(X, rep)
        ok = got.shape == want.shape and np.array_equal(got, want)
        bad |= not ok
        print(f"Tile(x{shape}, {rep}): {'right' if ok else 'WRONG: first row %s, expected %s' % (got.reshape(-1, 4)[0], want.reshape(-1, 4)[0])}")

core = ov.Core()
m = core.read_model(os.path.join(HERE, "model.onnx"))
m.reshape({0: ov.PartialShape([-1] * 4)})
x10 = (np.arange(12).reshape(1, 3, 1, 4) * 7 % 11 - 3).astype(np.float16)
got = core.compile_model(m, "CPU", CFG)([x10])
want = np.tile(x10[:, :1], [4, 4, 4, 1])
ok = np.array_equal(got[2], want)
bad |= not ok
print("model.onnx (Split -> Tile), inputs dynamic:", "right" if ok else f"WRONG: {got[2].reshape(-1, 4)[0]} for {want.reshape(-1, 4)[0]}")
print("reproduced" if bad else "not reproduced")
sys.exit(1 if bad else 0)
