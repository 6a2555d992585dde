#!/usr/bin/env python3
"""tract-onnx 0.23.9: Resize align_corners with scales whose product is not an integer.
Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, nh, np, pattern, save_and_reference  # noqa: E402,F401

scales = nh.from_array(np.array([1.5, 2.0], dtype=np.float32), "scales")
graph = h.make_graph(
    [
        h.make_node(
            "Resize",
            ["x", "", "scales"],
            ["y"],
            mode="nearest",
            coordinate_transformation_mode="align_corners",
            nearest_mode="round_prefer_floor",
        )
    ],
    "resize_align_corners",
    [h.make_tensor_value_info("x", T.FLOAT, [5, 4])],
    [h.make_tensor_value_info("y", T.FLOAT, [7, 8])],
    [scales],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([5, 4], np.float32)}, __file__)
# The output has floor(5 * 1.5) = 7 rows, and align_corners maps row i to i * (5 - 1) / (7 - 1)
# ("length_resized" is the output length): row 4 reads 2.67, rounded to input row 3. tract
# divides by 7.5 - 1 instead (the unrounded scaled length): row 4 reads 2.46 -> input row 2,
# so rows 4 and 5 of its output differ from ONNX Runtime's (the cubic and linear modes too).
