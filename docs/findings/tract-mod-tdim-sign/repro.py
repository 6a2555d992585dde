# tract-onnx 0.23.9: Mod(fmod=0) on values that tract types as TDim (anything computed from Shape)
# uses the plain truncated remainder; onnx/src/ops/math/rem.rs skips the sign fix-up when the
# super type is TDim (commit 8f86dbd3b "just use Rem for TDim", the fix for sonos/tract#1294).
# ONNX Mod fmod=0: "semantics follow that of the Python %-operator. The sign of the result is that of the divisor."
import os  # DLCFUZZ=path/to/dlcfuzz names the binary that runs tract
import numpy as np, onnx, onnxruntime as ort, subprocess
from onnx import helper as h, TensorProto as T
b = np.array([4, 5], dtype=np.int64)
nodes = [h.make_node("Shape", ["x"], ["s"]),          # [1, 8]
         h.make_node("Neg", ["s"], ["n"]),            # [-1, -8]
         h.make_node("Mod", ["n", "b"], ["y"], fmod=0)]
g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 8])],
                 [h.make_tensor_value_info("y", T.INT64, [2])],
                 initializer=[onnx.numpy_helper.from_array(b, "b")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
onnx.checker.check_model(m, full_check=True); onnx.save(m, "model.onnx")
x = np.zeros((1, 8), np.float32)
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
print("ORT:   ", ort.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0])
print("python:", [-1 % 4, -8 % 5])
print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", "model.onnx"],
                     capture_output=True, text=True).stdout)
# expected [3, 2]; tract gives [-1, -3] at every level. The same Mod on plain int64 tensors is correct.
