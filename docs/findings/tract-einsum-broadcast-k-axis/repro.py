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
pat = lambda s: np.array([(7 * i % 11) - 3 for i in range(int(np.prod(s)))], np.float32).reshape(s)
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL


def case(path, x_shape, w_shape, expand_to, matmul_inputs):
    """MatMul over Expand(x) (to `expand_to`) and w, in the operand order `matmul_inputs`:
    saved to `path`, run on ONNX Runtime, the onnx reference and tract (dlcfuzz run-model)."""
    nodes = [h.make_node("Expand", ["x", "shape"], ["xb"]), h.make_node("MatMul", matmul_inputs, ["y"])]
    g = h.make_graph(nodes, "g",
                     [h.make_tensor_value_info("x", T.FLOAT, x_shape), h.make_tensor_value_info("w", T.FLOAT, w_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 2])],
                     initializer=[onnx.numpy_helper.from_array(np.array(expand_to, np.int64), "shape")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    onnx.checker.check_model(m, full_check=True); onnx.save(m, path)
    feeds = {"x": pat(x_shape), "w": pat(w_shape)}  # dlcfuzz pattern inputs
    print("ORT:      ", ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)[0].ravel())
    print("reference:", ReferenceEvaluator(m).run(None, feeds)[0].ravel())
    print(subprocess.run([os.environ.get("DLCFUZZ", "dlcfuzz"), "run-model", "--backend", "tract", path],
                         capture_output=True, text=True).stdout)


# x = [-3,4] expanded [2,1] -> [2,3], then [2,3] @ w [3,2] with w = [[-3,4],[0,7],[3,-1]].
case("model.onnx", [2, 1], [3, 2], [2, 3], ["xb", "w"])
# expected [0,-30,0,40] (typed agrees); decluttered/optimized give [9,-12,-12,16] = x * w[0,:]

# Same rule with the broadcast operand on the right (MatMul(W, Expand(x))): the EinSum now takes
# k = 2 from W and slices past the un-broadcast k = 1 of x -> panic at run time
# "assertion failed: end <= axis_len (at tract-core-0.23.9/src/ops/einsum/eval.rs:138)".
# x [1,2] expanded to [3,2] broadcasts k (axis 0 of the right operand); w is [2,3].
case("model_panic.onnx", [1, 2], [2, 3], [3, 2], ["w", "xb"])
# expected [-3,4,-27,36] (typed agrees); decluttered/optimized panic in einsum/eval.rs:138
