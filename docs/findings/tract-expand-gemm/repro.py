#!/usr/bin/env python3
"""tract-onnx 0.23.9: Expand feeding Gemm breaks EinSum's rank check during declutter. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Expand", ["x", "sh"], ["t"]), h.make_node("Gemm", ["t", "b"], ["y"], transB=1)],
    "expand_gemm",
    [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("b", T.FLOAT, [2, 3])],
    [h.make_tensor_value_info("y", T.FLOAT, [2, 2])],
    [i64("sh", [2, 3])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([3], np.float32), "b": pattern([2, 3], np.float32)}, __file__)
# typed runs; declutter fails: "EinSum: Condition failed: shapes ... fact.len() ==
# self.axes.rank(InOut::In(ix))".
