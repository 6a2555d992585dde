#!/usr/bin/env python3
"""OpenVINO CPU: Slice(axes=[-3,-1], starts=[1000,-37], ends=[-1000,44], steps=[-1,2]) followed by
Slice(starts=[-40], ends=[39], steps=[2]) on an int32 [6,4,3] input. ONNX Slice-13 -> shape [3,4,2]
(first slice: axis0 start 1000->5, end -1000->-1, step -1 => 6 rows; axis2 0:3:2 => 2; second slice
axis0 0:6:2 => 3). With the input reshaped to dynamic dims, OV infers the first slice's dim 0 as
[0..1001] (bound from the start value, not the input dim), the second Slice's bound-based shape
inference then yields a static 0 and the CPU plugin returns an empty (0,0,0) tensor.
Exit 1 if the bug is present."""
import sys, subprocess, numpy as np, openvino as ov
from onnx import helper as h, TensorProto as T, numpy_helper as nh
i64 = lambda n, v: nh.from_array(np.array(v, np.int64), n)
g = h.make_graph(
    [h.make_node("Slice", ["x", "s0", "e0", "a0", "st0"], ["t"]),
     h.make_node("Slice", ["t", "s1", "e1", "", "st1"], ["y"])], "g",
    [h.make_tensor_value_info("x", T.INT32, [6, 4, 3])], [h.make_tensor_value_info("y", T.INT32, None)],
    [i64("s0", [1000, -37]), i64("e0", [-1000, 44]), i64("a0", [-3, -1]), i64("st0", [-1, 2]),
     i64("s1", [-40]), i64("e1", [39]), i64("st1", [2])])
mb = h.make_model(g, opset_imports=[h.make_opsetid("", 19)]).SerializeToString()
x = np.arange(72, dtype=np.int32).reshape(6, 4, 3)
want = x[::-1][:, :, 0:3:2][0:6:2]          # numpy == ONNX Slice semantics
core = ov.Core()
bad = False
CASE = sys.argv[1] if len(sys.argv) > 1 else None
if CASE is None:  # run each case in its own process (a later compile in the same process segfaulted)
    rcs = [subprocess.call([sys.executable, __file__, c]) for c in ("single", "chain")]
    sys.exit(1 if any(rcs) else 0)
if CASE == "single":
    # even smaller trigger: one Slice on an input whose dim 0 is the interval [6..1001] (input really has 6 rows)
    g2 = h.make_graph([h.make_node("Slice", ["x", "s1", "e1", "", "st1"], ["y"])], "g",
        [h.make_tensor_value_info("x", T.INT32, [6, 4, 3])], [h.make_tensor_value_info("y", T.INT32, None)],
        [i64("s1", [-40]), i64("e1", [39]), i64("st1", [2])])
    m = core.read_model(h.make_model(g2, opset_imports=[h.make_opsetid("", 19)]).SerializeToString(), b"")
    m.reshape({"x": ov.PartialShape([ov.Dimension(6, 1001), 4, 3])})
    got = np.array(core.compile_model(m, "CPU", {"INFERENCE_NUM_THREADS": "1"})([x])[0])
    print(f"single Slice, x dim0 in [6..1001]: pshape {m.outputs[0].get_partial_shape()}, got {got.shape}, want (3, 4, 3)")
    bad |= got.shape != (3, 4, 3)
    sys.exit(1 if bad else 0)
for dyn in (False, True):
    m = core.read_model(mb, b"")
    if dyn:
        m.reshape({"x": ov.PartialShape([-1, -1, -1])})
    for cfg in ({"INFERENCE_NUM_THREADS": "1"}, {}):
        try:
            got = np.array(core.compile_model(m, "CPU", cfg)([x])[0]); r = got.shape
            ok = got.shape == want.shape and np.array_equal(got, want)
        except RuntimeError as e:
            ok, r = False, "EXCEPTION " + str(e).strip().splitlines()[-1][:160]
        print(f"{'dynamic' if dyn else 'static '} cfg={cfg}: model out pshape {m.outputs[0].get_partial_shape()}, got {r}, want {want.shape}: {'ok' if ok else 'WRONG'}")
        bad |= not ok
sys.exit(1 if bad else 0)
