"""TVM 0.27.0.post1: relax.transform.ToMixedPrecision fails an internal check on a function
whose output tuple holds a shape value (an ONNX `Shape` output becomes `R.Shape([2, 3])`):
    src/relax/transform/infer_amp_utils.cc, NTypeFrom:
    InternalError: Check failed: (tensor) is false: Expected TensorType, but got R.Shape([2, 3])
Run: PYTHONPATH=.deps/python python3 repro.py
"""
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
outputs = [
    helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
    helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 3]),
]
graph = helper.make_graph(
    [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Relu", ["x"], ["r"])],
    "g",
    [x],
    outputs,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
mod = from_onnx(model, shape_dict={"x": [2, 3]})
relax.transform.ToMixedPrecision(out_dtype="float32")(mod)  # InternalError here
print("no bug: ToMixedPrecision accepted a shape output")
