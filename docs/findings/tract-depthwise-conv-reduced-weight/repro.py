#!/usr/bin/env python3
"""tract-onnx 0.23.9: a depthwise Conv whose weight is a ReduceSum over axis 1. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [
        # Summing over the size-1 axis changes no value: w equals w0.
        h.make_node("ReduceSum", ["w0", "axes"], ["w"], keepdims=1),
        h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[4], group=7),
    ],
    "depthwise_conv_reduced_weight",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 7, 8]), h.make_tensor_value_info("w0", T.FLOAT, [7, 1, 4])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 7, 5])],
    [i64("axes", [-2])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(
    model, {"x": pattern([1, 7, 8], np.float32), "w0": pattern([7, 1, 4], np.float32)}, __file__
)
# Channel 0 (the first five values) comes out right at every level. From channel 1 on,
# tract's optimized DepthWise reads channel c's taps at w.ravel()[c:c+4] instead of
# [4c:4c+4] (values 5-9: -10, 11, 32, 9, 74 instead of -11, 4, 30, 1, 60). The
# ReduceSum's output carries stride 1 on its size-1 axis, and DepthWise takes that
# axis's stride as the per-channel kernel stride.
