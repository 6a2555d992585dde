# tract-onnx 0.23.9: declutter fuses Square -> Reduce<Sum> -> Mul(1/N) into Reduce<MeanOfSquares>
# (tract-core ops/nn/reduce.rs declutter_mean_of_square). Reducer::mean_of_squares and
# expand_mean_of_squares always cast the input to f32, so a float64 graph loses precision
# (~1e-8 relative) or overflows (inf / zero output) at the decluttered and optimized levels,
# while the typed level is exact. Hits InstanceNormalization(f64) and ReduceMean(x*x) (f64).
import os  # DLCFUZZ=path/to/dlcfuzz names the binary that runs tract
import numpy as np, onnx, onnxruntime as ort, subprocess
from onnx import helper as h, TensorProto as T
from onnx.reference import ReferenceEvaluator
c = lambda a, n: onnx.numpy_helper.from_array(np.asarray(a), n)
nodes = [h.make_node("Mul", ["x", "k"], ["xk"]),                       # xk = x * 1e25 (f64)
         h.make_node("Mul", ["xk", "xk"], ["sq"]),
         h.make_node("ReduceMean", ["sq", "ax"], ["ms"], keepdims=1),   # mean of squares
         h.make_node("InstanceNormalization", ["xk", "s", "b"], ["inorm"]),
         h.make_node("Mul", ["x", "k2"], ["xk2"]),                     # xk2 = x * 0.1 (f64)
         h.make_node("InstanceNormalization", ["xk2", "s", "b"], ["inorm_small"])]
g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.DOUBLE, [1, 2, 4])],
                 [h.make_tensor_value_info("ms", T.DOUBLE, [1, 2, 1]),
                  h.make_tensor_value_info("inorm", T.DOUBLE, [1, 2, 4]),
                  h.make_tensor_value_info("inorm_small", T.DOUBLE, [1, 2, 4])],
                 initializer=[c(np.float64(1e25), "k"), c(np.float64(0.1), "k2"),
                              c(np.array([2], np.int64), "ax"), c(np.ones(2), "s"), c(np.zeros(2), "b")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
onnx.checker.check_model(m, full_check=True); onnx.save(m, "model.onnx")
x = np.array([(7 * i % 11) - 3 for i in range(8)], np.float64).reshape(1, 2, 4)  # dlcfuzz pattern input
print("x =", x.ravel())
for n, v in zip(["ms", "inorm", "inorm_small"], ReferenceEvaluator(m).run(None, {"x": x})):
    print("onnx.reference", n, v.ravel().tolist())
xk = x * 1e25
print("numpy mean(xk^2):", (xk * xk).mean(axis=2).ravel())
print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", "model.onnx"],
                     capture_output=True, text=True).stdout)
# typed: exact. decluttered/optimized: ms = inf (null), inorm = all 0 instead of ±1.31/±0.53/...,
# inorm_small off by ~1.4e-8 relative (f32 rounding).
