# tract-onnx 0.23.9: ONNX LogSoftmax is lowered to ln(Softmax(x)) (tract-hir LayerLogSoftmax),
# so it returns -inf whenever exp(x_i - max) underflows, instead of x_i - max - log(sum(exp(x - max))).
# The ONNX spec's own function body for LogSoftmax (opset 13+) is the stable form.
import os  # DLCFUZZ=path/to/dlcfuzz names the binary that runs tract
import numpy as np, onnx, onnxruntime as ort, subprocess
from onnx import helper as h, TensorProto as T
for dt, npdt, name in [(T.DOUBLE, np.float64, "f64"), (T.FLOAT, np.float32, "f32")]:
    x = np.array([[0.0, 1000.0, 3.0]], dtype=npdt)
    g = h.make_graph([h.make_node("LogSoftmax", ["x"], ["y"], axis=1)], "g",
                     [h.make_tensor_value_info("x", dt, [1, 3])],
                     [h.make_tensor_value_info("y", dt, [1, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    onnx.checker.check_model(m, full_check=True)
    path = f"model_{name}.onnx"; onnx.save(m, path)
    so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    y = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    xm = x - x.max(axis=1, keepdims=True)
    exact = xm - np.log(np.exp(xm).sum(axis=1, keepdims=True))  # ONNX function body
    print(name, "ORT:", y.ravel(), " spec function body:", exact.ravel())
# Saved single-model copy for the tract run (x is an initializer so the pattern inputs do not matter)
x = np.array([[0.0, 1000.0, 3.0]], dtype=np.float64)
g = h.make_graph([h.make_node("LogSoftmax", ["x"], ["y"], axis=1)], "g", [],
                 [h.make_tensor_value_info("y", T.DOUBLE, [1, 3])],
                 initializer=[onnx.numpy_helper.from_array(x, "x")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 19)]), "model.onnx")
print("tract (null = -inf in JSON):")
print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", "model.onnx"],
                     capture_output=True, text=True).stdout)
# expected: [-1000, 0, -997]; tract gives [-inf, 0, -inf] at typed/decluttered/optimized
