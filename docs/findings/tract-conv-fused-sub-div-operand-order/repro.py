#!/usr/bin/env python3
"""tract-onnx 0.23.9: `Sub(b, Conv(x, w))` fused into the Conv as `Conv + b`. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [
        h.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[2]),
        # The Conv is the second (subtrahend) operand; Div(b, c) fails the same way.
        h.make_node("Sub", ["b", "c"], ["y"]),
    ],
    "sub_from_conv",
    [
        h.make_tensor_value_info("x", T.FLOAT, [1, 1, 3]),
        h.make_tensor_value_info("w", T.FLOAT, [1, 1, 2]),
        h.make_tensor_value_info("b", T.FLOAT, [1, 1, 1]),
    ],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 2])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
feeds = {n: pattern(s, np.float32) for n, s in [("x", [1, 1, 3]), ("w", [1, 1, 2]), ("b", [1, 1, 1])]}
save_and_reference(model, feeds, __file__)
# x = [-3, 4, 0], w = [-3, 4], b = -3: Conv gives [25, -12], so b - Conv is [-28, 9].
# tract's declutter folds the Sub into the Conv's bias (bias := b - bias) but keeps the kernel,
# so the decluttered and optimized levels compute Conv + b = [22, -15].
