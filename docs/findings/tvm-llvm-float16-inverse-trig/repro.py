"""TVM 0.27.0.post1: a float16 Acos (also Asin, Atan, Acosh, Asinh, Sinh, Cosh) imports and
legalizes, then fails to build for `llvm` with InternalError "unknown intrinsic tirx.acos".
float32 and float64 build and run; float16 Tan, Atanh and Erf build too.
Run: PYTHONPATH=.deps/python python3 repro.py
"""
import tvm
from onnx import TensorProto, helper
from tvm.relax.frontend.onnx import from_onnx

failures = []
for op in ["Acos", "Asin", "Atan", "Acosh", "Asinh", "Sinh", "Cosh", "Tan", "Atanh"]:
    for dtype in (TensorProto.FLOAT16, TensorProto.FLOAT):
        x = helper.make_tensor_value_info("x", dtype, [4])
        y = helper.make_tensor_value_info("y", dtype, None)
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        try:
            tvm.compile(from_onnx(model, shape_dict={"x": [4]}), target="llvm")
            status = "builds"
        except Exception as e:  # noqa: BLE001
            status = f"{type(e).__name__}: {str(e).splitlines()[-1][:90]}"
            failures.append((op, dtype))
        print(f"{op:6} {TensorProto.DataType.Name(dtype):8} {status}")
assert not failures, f"{len(failures)} op/dtype pairs fail to build"
