# tract-onnx 0.23.9: MatMul(Expand(x), W) where the Expand broadcasts the contracted (k) axis.
# tract-core ops/einsum/mod.rs `declutter_broadcast` replaces a MultiBroadcastTo input of an EinSum
# by the un-broadcast tensor without checking which axis was broadcast. On a k axis the output
# shape is unchanged, so no check fires and the EinSum then sums over k = 1 only:
# y = x * W[0, :] instead of x * sum_k W[k, :]. Silent wrong result at decluttered/optimized.
# (Same rule as the crashes T3 -- broadcast m axis, "Trying to substitute" -- and T6 -- rank change.)
import os  # DLCFUZZ=path/to/dlcfuzz names the binary that runs tract
import numpy as np, onnx, onnxruntime as ort, subprocess
from onnx import helper as h, TensorProto as T
from onnx.reference import ReferenceEvaluator
nodes = [h.make_node("Expand", ["x", "shape"], ["xb"]),   # [2,1] -> [2,3]
         h.make_node("MatMul", ["xb", "w"], ["y"])]        # [2,3] @ [3,2]
g = h.make_graph(nodes, "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 1]), h.make_tensor_value_info("w", T.FLOAT, [3, 2])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 2])],
                 initializer=[onnx.numpy_helper.from_array(np.array([2, 3], np.int64), "shape")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
onnx.checker.check_model(m, full_check=True); onnx.save(m, "model.onnx")
pat = lambda s: np.array([(7 * i % 11) - 3 for i in range(int(np.prod(s)))], np.float32).reshape(s)
feeds = {"x": pat([2, 1]), "w": pat([3, 2])}          # dlcfuzz pattern inputs: x=[-3,4], w=[[-3,4],[0,7],[3,-1]]
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
print("ORT:      ", ort.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"]).run(None, feeds)[0].ravel())
print("reference:", ReferenceEvaluator(m).run(None, feeds)[0].ravel())
print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", "model.onnx"],
                     capture_output=True, text=True).stdout)
# expected [0,-30,0,40] (typed agrees); decluttered/optimized give [9,-12,-12,16] = x * w[0,:]

# Same rule with the broadcast operand on the right (MatMul(W, Expand(x))): the EinSum now takes
# k = 2 from W and slices past the un-broadcast k = 1 of x -> panic at run time
# "assertion failed: end <= axis_len (at tract-core-0.23.9/src/ops/einsum/eval.rs:138)".
nodes = [h.make_node("Expand", ["x", "shape"], ["xb"]),   # [1,2] -> [3,2]: broadcasts k (axis 0 of the right operand)
         h.make_node("MatMul", ["w", "xb"], ["y"])]        # [2,3] @ [3,2]
g = h.make_graph(nodes, "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, 2]), h.make_tensor_value_info("w", T.FLOAT, [2, 3])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 2])],
                 initializer=[onnx.numpy_helper.from_array(np.array([3, 2], np.int64), "shape")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
onnx.checker.check_model(m, full_check=True); onnx.save(m, "model_panic.onnx")
feeds = {"x": pat([1, 2]), "w": pat([2, 3])}
print("ORT:      ", ort.InferenceSession("model_panic.onnx", so, providers=["CPUExecutionProvider"]).run(None, feeds)[0].ravel())
print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", "model_panic.onnx"],
                     capture_output=True, text=True).stdout)
# expected [-3,4,-27,36] (typed agrees); decluttered/optimized panic in einsum/eval.rs:138
