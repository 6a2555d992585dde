"""ONNX Runtime at ORT_ENABLE_EXTENDED rejects a valid 4-node model: Transpose(x) = t feeds
Gemm(w, t, c), an identity Transpose(t, perm=[0,1]) = u and Gemm(u, w, t, transA=1) (t also
its C). TransposeOptimizer and GemmTransposeFusion together leave a node reading t after the
node producing t is gone: "Invalid model. Node input 't' is not a graph input, initializer,
or output of a previous node". Exit 1 while the bug is present. Needs onnx, numpy, onnxruntime."""
import sys
import numpy as np, onnx, onnxruntime as ort
from onnx import helper as h, TensorProto as T
print("release: onnxruntime", ort.__version__)
nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
         h.make_node("Gemm", ["w", "t", "c"], ["y1"]),
         h.make_node("Transpose", ["t"], ["u"], perm=[0, 1]),
         h.make_node("Gemm", ["u", "w", "t"], ["y2"], transA=1)]
io = lambda n: h.make_tensor_value_info(n, T.FLOAT, [6, 6])
m = h.make_model(h.make_graph(nodes, "g", [io("x"), io("w"), io("c")], [io("y1"), io("y2")]),
                 opset_imports=[h.make_opsetid("", 21)])
m.ir_version = 10
onnx.checker.check_model(m, full_check=True)
rng = np.random.RandomState(0)
feeds = {k: rng.rand(6, 6).astype(np.float32) for k in ("x", "w", "c")}
def session(level, disabled=()):
    so = ort.SessionOptions(); so.graph_optimization_level = level
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"],
                                disabled_optimizers=list(disabled))
want = session(ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)
extended = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
for disabled in (["GemmTransposeFusion"], ["TransposeOptimizer"], ["TransposeOptimizer_CPUExecutionProvider"],
                 ["TransposeOptimizer", "TransposeOptimizer_CPUExecutionProvider"]):
    try:
        got = session(extended, disabled).run(None, feeds)
        print("without", disabled, "right" if all(np.allclose(a, b) for a, b in zip(want, got)) else "WRONG")
    except Exception as e:
        print("without", disabled, "fails:", str(e)[:60])
try:
    got = session(extended).run(None, feeds)
except Exception as e:
    print("reproduced:", str(e)[:200]); sys.exit(1)
print("not reproduced" if all(np.allclose(a, b) for a, b in zip(want, got)) else "reproduced: wrong values")
sys.exit(0 if all(np.allclose(a, b) for a, b in zip(want, got)) else 1)
