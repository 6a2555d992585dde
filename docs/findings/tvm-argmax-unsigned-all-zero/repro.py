"""TVM 0.27.0.post1: ArgMax/argmax over an unsigned tensor whose values along the axis are
all 0 returns an index out of range: -1 (select_last_index=0) or the axis length
(select_last_index=1), where the answer is 0 (or length - 1). The same for every type whose
axis holds only its minimum: int8 all -128, int32 all INT_MIN, float32 all -inf (checked on
0.27.0.post1). Zeros of a signed or float type are right. The reduction starts from the
type's minimum with index -1 and only moves on a strictly greater value.
Run: PYTHONPATH=.deps/python python3 repro.py
"""
import numpy as np
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def argmax(x, last):
    xi = helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), list(x.shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, select_last_index=last)
    model = helper.make_model(
        helper.make_graph([node], "g", [xi], [y]), opset_imports=[helper.make_opsetid("", 19)]
    )
    mod = from_onnx(model, shape_dict={"x": list(x.shape)})
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy()


wrong = []
for dtype in (np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.float32):
    x = np.zeros((1, 3), dtype)
    for last, want in ((0, 0), (1, 2)):
        got = int(argmax(x, last)[0])
        print(f"{np.dtype(dtype).name:8} zeros select_last_index={last}: TVM {got}, expected {want}")
        if got != want:
            wrong.append((np.dtype(dtype).name, last, got))
for dtype, low in ((np.int8, -128), (np.int32, np.iinfo(np.int32).min), (np.float32, -np.inf)):
    x = np.full((1, 3), low, dtype)
    for last, want in ((0, 0), (1, 2)):
        got = int(argmax(x, last)[0])
        print(f"{np.dtype(dtype).name:8} all {low} select_last_index={last}: TVM {got}, expected {want}")
        if got != want:
            wrong.append((np.dtype(dtype).name, low, last, got))
assert not wrong, f"out-of-range ArgMax results: {wrong}"
