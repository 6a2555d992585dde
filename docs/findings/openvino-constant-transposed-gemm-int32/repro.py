"""OpenVINO CPU: Gemm(transA=1, transB=1) of an int32 constant A[8,2] and B = BitwiseOr(P, Q) of
two int32 constants [5,8] (a subgraph of constants only, which the plugin computes at compile
time) returns A.reshape(2,8) @ B.reshape(8,5) * alpha: both transposes are lost.
ONNX Gemm: Y = alpha * A' * B' + beta * C, A' = transpose(A) if transA else A.
model.onnx: no inputs; y = Gemm(w13, BitwiseOr(w15, w16), alpha=-2, transA=1, transB=1).
(ov.Model.evaluate cannot evaluate BitwiseOr on i32, which is also why the core does not fold
it and the plugin runs the constant subgraph itself.) With A or P/Q given as inputs, with
transA=0, or with Add/Max instead of BitwiseOr (folded away), the CPU result is right.
Needs only openvino and numpy. Exit status 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov

HERE = os.path.dirname(os.path.abspath(__file__))
A = np.array([[0, -3], [-2, 6], [4, 8], [-6, 7], [0, 1], [8, 2], [1, 3], [5, -8]], np.int64)
P = np.array([[-1, -5, -6, 7, 5, -8, 5, -2], [-1, -2, 2, 5, -5, 0, -5, -3], [-5, -6, -2, 7, 2, 3, 2, -6],
              [-3, -7, 0, 1, 2, -5, -3, 5], [-2, -1, 3, -7, -1, 3, 6, 8]], np.int64)
Q = np.array([[6, -8, -3, 7, 3, -6, 5, -4], [-3, 5, 8, -1, 7, -4, 5, -3], [-8, -7, -1, 4, 2, 6, 5, -5],
              [-8, -1, 6, -6, -3, 4, -6, -4], [3, 4, -5, 5, 3, -5, 7, -1]], np.int64)
expected = (-2 * (A.T @ (P | Q).T)).astype(np.int32)   # [[178, 0, -4, -64, 76], [-80, -164, -206, -68, 92]]

core = ov.Core()
print("release: openvino", ov.__version__)
model = core.read_model(os.path.join(HERE, "model.onnx"))
bad = False
for props in ({"INFERENCE_PRECISION_HINT": "f32"},
              {"INFERENCE_PRECISION_HINT": "f32", "EXECUTION_MODE_HINT": "ACCURACY", "SNIPPETS_MODE": "DISABLE"}):
    got = np.array(list(core.compile_model(model, "CPU", props).infer_new_request({}).values())[0])
    ok = np.array_equal(got, expected)
    bad |= not ok
    print("CPU", props, ":", "right" if ok else f"WRONG {got.tolist()}")
print("expected", expected.tolist())
print("reproduced" if bad else "not reproduced")
sys.exit(1 if bad else 0)
