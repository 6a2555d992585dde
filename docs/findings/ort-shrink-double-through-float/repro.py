#!/usr/bin/env python3
"""ONNX Runtime CPU (1.19.2 through 1.32.0): Shrink on a float64 tensor computes in float32.

x: float64[3] = [0.7, 0.1, 123456.789012345]
  y = Shrink(x, bias=0.5, lambd=0.25)      # x < -lambd: x + bias; x > lambd: x - bias; else 0
The ONNX spec defines y = x - bias for these inputs, with y of x's type (float64); bias = 0.5 is
exact in float32 and float64, so the exact results are 0.2, 0 (|0.1| <= lambd) and
123456.289012345, each within one float64 rounding. ONNX Runtime returns
[0.19999998807907104, 0.0, 123456.2890625]: float32(x) - bias, an error of 1.2e-8 and 5e-5,
about 10^8 float64 ulps. Same at every optimization level (a kernel, not an optimizer).
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

BIAS, LAMBD = 0.5, 0.25
X = np.array([0.7, 0.1, 123456.789012345], dtype=np.float64)


def model():
    node = helper.make_node("Shrink", ["x"], ["y"], bias=BIAS, lambd=LAMBD)
    graph = helper.make_graph(
        [node],
        "shrink_f64",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 8
    return m.SerializeToString()


def main():
    exact = np.where(X < -LAMBD, X + BIAS, np.where(X > LAMBD, X - BIAS, 0.0))
    print("onnxruntime", ort.__version__)
    bug = False
    for level in ["ORT_DISABLE_ALL", "ORT_ENABLE_ALL"]:
        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        sess = ort.InferenceSession(model(), so, providers=["CPUExecutionProvider"])
        y = sess.run(None, {"x": X})[0]
        # One float64 rounding of the exact result is all the spec allows.
        wrong = np.abs(y - exact) > 4 * np.finfo(np.float64).eps * np.maximum(np.abs(exact), 1.0)
        print(f"{level}: {y.tolist()} exact {exact.tolist()} {'WRONG' if wrong.any() else 'ok'}")
        bug |= bool(wrong.any())
    print("reproduced" if bug else "not reproduced")
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
