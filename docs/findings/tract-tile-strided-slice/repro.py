#!/usr/bin/env python3
"""tract-onnx 0.23.9: Tile of a size-1 axis followed by a strided Slice breaks the declutter patch. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Tile", ["x", "r"], ["t"]), h.make_node("Slice", ["t", "s", "e", "a", "st"], ["y"])],
    "tile_slice",
    [h.make_tensor_value_info("x", T.FLOAT, [5, 1])],
    [h.make_tensor_value_info("y", T.FLOAT, [5, 2])],
    [i64("r", [1, 4]), i64("s", [0]), i64("e", [4]), i64("a", [1]), i64("st", [2])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([5, 1], np.float32)}, __file__)
# typed runs; declutter fails: "Pulling Downsample over MultiBroadcastTo: Trying to substitute
# a 5,2,F32 by 5,4,F32".
