#!/usr/bin/env python3
"""tract-onnx 0.23.9: Tile of a size-1 axis feeding MatMul breaks the declutter patch. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Tile", ["x", "r"], ["t"]), h.make_node("MatMul", ["t", "w"], ["y"])],
    "tile_matmul",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
    [h.make_tensor_value_info("y", T.FLOAT, [4, 8])],
    [i64("r", [4, 1]), nh.from_array(np.ones((4, 8), dtype=np.float32), "w")],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([1, 4], np.float32)}, __file__)
# typed runs; declutter fails: "EinSum: Trying to substitute a 4,8,F32 by 1,8,F32".
