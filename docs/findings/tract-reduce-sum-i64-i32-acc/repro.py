# tract-onnx 0.23.9: integer Reduce<Sum> (tract-core ops/nn/reduce.rs, q_sum_t) accumulates every
# non-float type in an i32 (`v.fold(0i32, |acc, &v| acc + v.as_())`), so int64 ReduceSum /
# ReduceL1 / ReduceMean results are truncated modulo 2^32 even though the
# values and the sum fit int64 easily (no overflow in the ONNX sense). ReduceMean int64 too
# ([5e9, 5e9] -> 705032704). (ReduceSumSquare int64 is rejected instead: "Square does not support I64".)
import os  # DLCFUZZ=path/to/dlcfuzz names the binary that runs tract
import numpy as np, onnx, onnxruntime as ort, subprocess
from onnx import helper as h, TensorProto as T
from onnx.reference import ReferenceEvaluator
x = np.array([[5000000000, 1], [2147483647, 1], [-8028160000, -903168000]], np.int64)
axes = np.array([-1], np.int64)
outs, nodes = [], []
for op in ["ReduceSum", "ReduceL1"]:
    nodes.append(h.make_node(op, ["x", "axes"], [op], keepdims=0))
    outs.append(h.make_tensor_value_info(op, T.INT64, [3]))
g = h.make_graph(nodes, "g", [], outs, initializer=[onnx.numpy_helper.from_array(x, "x"),
                                                  onnx.numpy_helper.from_array(axes, "axes")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
onnx.checker.check_model(m, full_check=True); onnx.save(m, "model.onnx")
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
print("ORT:      ", [o.tolist() for o in ort.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"]).run(None, {})])
print("reference:", [o.tolist() for o in ReferenceEvaluator(m).run(None, {})])
print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", "model.onnx"],
                     capture_output=True, text=True).stdout)
# expected ReduceSum [5000000001, 2147483648, -8931328000], ReduceL1 [5000000001, 2147483648, 8931328000]
