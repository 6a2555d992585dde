#!/usr/bin/env python3
"""OpenVINO CPU: MatMul(x[3,1,1], w[1] const) -> Neg. ONNX MatMul-13 (numpy.matmul): 1-D second operand
is treated as [1,1] and the appended dim removed -> output [3,1]. The OV model's declared output shape is
[3,1], but the CPU plugin returns a (3,1,1) tensor. MatMul alone is correct; Neg (turned into Multiply by -1)
triggers MatMulMultiplyFusion, which folds the constant into the 1-D weight and loses the squeeze.
(With x[3,1,2], w[2] the same fusion throws at compile time: "Incompatible MatMul matrix dimension".)
Exit 1 if the bug is present."""
import sys, numpy as np, openvino as ov
from onnx import helper as h, TensorProto as T, numpy_helper as nh
g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["t"]), h.make_node("Neg", ["t"], ["y"])], "g",
                 [h.make_tensor_value_info("x", T.INT32, [3, 1, 1])], [h.make_tensor_value_info("y", T.INT32, None)],
                 [nh.from_array(np.array([2], np.int32), "w")])
mb = h.make_model(g, opset_imports=[h.make_opsetid("", 19)]).SerializeToString()
x = np.array([1, -6, -6], np.int32).reshape(3, 1, 1)
want = -np.matmul(x, np.array([2], np.int32))     # shape (3, 1): [[-2],[12],[12]]
core = ov.Core()
bad = False
for dyn in (False, True):
    m = core.read_model(mb, b"")
    if dyn:
        m.reshape({"x": ov.PartialShape([-1, -1, -1])})
    got = np.array(core.compile_model(m, "CPU")([x])[0])
    ok = got.shape == want.shape and np.array_equal(got, want)
    print(f"{'dynamic' if dyn else 'static '}: model out pshape {m.outputs[0].get_partial_shape()}, got {got.shape} {got.ravel().tolist()}, want {want.shape} {want.ravel().tolist()}: {'ok' if ok else 'WRONG'}")
    bad |= not ok
sys.exit(1 if bad else 0)
