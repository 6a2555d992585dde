"""TVM 0.27.0.post1: ONNX Equal on two bool tensors imports and legalizes, then
`tvm.compile(target="llvm")` fails LLVM module verification:
    Invalid operand types for FCmp instruction
      %N = fcmp oeq i1 %a, %b
The LLVM codegen lowers an equality on a 1-bit integer as a floating-point compare.
Run: PYTHONPATH=.deps/python python3 repro.py
"""
import numpy as np
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

a = helper.make_tensor_value_info("a", TensorProto.BOOL, [4])
b = helper.make_tensor_value_info("b", TensorProto.BOOL, [4])
y = helper.make_tensor_value_info("y", TensorProto.BOOL, [4])
graph = helper.make_graph([helper.make_node("Equal", ["a", "b"], ["y"])], "g", [a, b], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
mod = from_onnx(model, shape_dict={"a": [4], "b": [4]})
vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())  # InternalError here
x = np.array([True, False, True, False])
z = np.array([True, True, False, False])
got = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(z)).numpy()
assert (got == (x == z)).all(), got
print("no bug: bool Equal builds and runs")
