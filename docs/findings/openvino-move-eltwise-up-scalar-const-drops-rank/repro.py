#!/usr/bin/env python3
"""OpenVINO 2026.4.1 CPU: MoveEltwiseUpThroughDataMovScalar (common transformation, registered
by the CPU plugin) moves an eltwise whose other input is a one-element constant of HIGHER rank
than the data (e.g. Multiply(Transpose(x[2,3]), c[1,1,1])) above the data-movement op and turns
the constant into a scalar (or keeps it at the lower rank): the rank the constant's broadcast
added is lost. The compiled model's output is [3,2] instead of [1,3,2] (static shapes, every
level; values right, rank wrong). Same with Reshape/Unsqueeze, Add, and when the constant is
produced by ConvertBroadcast3 from a bidirectional Broadcast (ONNX Expand) on a dynamic input,
which is how the campaign found it (MatMul(x, Expand(Reshape(y,[-1]),[1,1])) lost a dim:
"Axis 3 out of the tensor rank range" in a following ReduceL2).
model.onnx (x[2,3] -> Transpose -> Mul(float[1,1,1])) is built by make_model.py.
Needs only openvino and numpy. Exit 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = os.path.dirname(os.path.abspath(__file__))
X = (np.arange(6).reshape(2, 3) % 5 - 2).astype(np.float32)
print("release: openvino", ov.__version__)
bad = False

def check(name, model, want):
    global bad
    core = ov.Core()
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled([X])[0]
    ok = got.shape == want.shape and np.allclose(got, want)
    bad |= not ok
    print(f"{name}: declared {model.outputs[0].get_partial_shape()}, compiled {compiled.outputs[0].get_partial_shape()}, "
          f"got {got.shape}: {'right' if ok else 'WRONG (expected %s)' % (want.shape,)}")

c = np.full([1, 1, 1], 2.0, np.float32)
x = ops.parameter([2, 3], np.float32, name="x")
y = ops.multiply(ops.transpose(x, ops.constant(np.array([1, 0], np.int64))), ops.constant(c))
check("opset: Transpose(x[2,3]) * c[1,1,1]", ov.Model([y], [x]), X.T * c)
x = ops.parameter([2, 3], np.float32, name="x")
y = ops.add(ops.reshape(x, ops.constant(np.array([-1], np.int64)), False), ops.constant(np.full([1, 1], 0.5, np.float32)))
check("opset: Reshape(x[2,3],[-1]) + c[1,1]", ov.Model([y], [x]), X.reshape(-1) + np.full([1, 1], 0.5, np.float32))
check("model.onnx", ov.Core().read_model(os.path.join(HERE, "model.onnx")), X.T * c)
print("reproduced" if bad else "not reproduced")
sys.exit(1 if bad else 0)
