"""TVM 0.27.0.post1 (Relax ONNX frontend): Slice with a negative step and a start far below
-dim gives an empty axis; the ONNX spec clamps such a start to 0 ("[0, dims[axes[i]]-1] for
negative stepping"), so the axis keeps one element. ONNX Runtime 1.31.1 follows the spec
(shape (1, 1, 3)); TVM and onnx.reference (numpy slicing) give (1, 0, 3).
Run: PYTHONPATH=.deps/python python3 repro.py
"""
import numpy as np
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

consts = {
    "starts": [-30, 3, 1],
    "ends": [np.iinfo(np.int64).min, -43, 0],
    "axes": [-2, -1, 0],
    "steps": [-1, -1, -2],
}
inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), k) for k, v in consts.items()]
x = helper.make_tensor_value_info("x", TensorProto.INT64, [3, 3, 3])
y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
graph = helper.make_graph(
    [helper.make_node("Slice", ["x", *consts], ["y"])], "g", [x], [y], initializer=inits
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
vm = relax.VirtualMachine(tvm.compile(from_onnx(model, shape_dict={"x": [3, 3, 3]}), "llvm"), tvm.cpu())
data = np.arange(27, dtype=np.int64).reshape(3, 3, 3)
got = vm["main"](tvm.runtime.tensor(data)).numpy()
# The spec's clamping: axis 1 starts at clamp(-30 + 3, 0, 2) = 0 and ends at -1 (exclusive):
# one element, index 0. Axis 2: 2, 1, 0. Axis 0: index 1.
want = data[1:2, 0:1, ::-1]
print("TVM:", got.shape, " ONNX spec:", want.shape)
assert got.shape == want.shape, "TVM drops the clamped start of a negative-step Slice"
