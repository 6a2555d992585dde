# builds model.onnx: x[2,3] -> Transpose -> Mul(c: float[1,1,1] = 2) -> y[1,3,2]
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
g = h.make_graph([h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), h.make_node("Mul", ["t", "c"], ["y"])], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 2])],
                 [nh.from_array(np.full([1, 1, 1], 2.0, np.float32), "c")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, "model.onnx")
