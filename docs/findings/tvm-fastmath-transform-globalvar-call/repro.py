"""TVM 0.27.0.post1: relax.transform.FastMathTransform raises AttributeError on any module
whose Relax function calls another function through a GlobalVar (after FuseOps, say).

FastMathCodeGenerator.visit_call_ reads `call.op.name`; a call to a fused function has a
GlobalVar as its op, which has `name_hint` and no `name`.
Run: PYTHONPATH=.deps/python python3 repro.py
"""
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
graph = helper.make_graph(
    [helper.make_node("Exp", ["x"], ["t"]), helper.make_node("Tanh", ["t"], ["y"])],
    "g",
    [x],
    [y],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
mod = from_onnx(model, shape_dict={"x": [4]})
for p in [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps()]:
    mod = p(mod)
print("functions after FuseOps:", [gv.name_hint for gv in mod.get_global_vars()])
relax.transform.FastMathTransform()(mod)  # AttributeError: 'GlobalVar' object has no attribute 'name'
print("no bug: FastMathTransform accepted the fused module")
