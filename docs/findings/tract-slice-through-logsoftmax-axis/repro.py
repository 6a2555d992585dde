#!/usr/bin/env python3
"""tract-onnx 0.23.9: a strided Slice along a LogSoftmax's axis. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [
        h.make_node("LogSoftmax", ["x"], ["l"], axis=-1),
        h.make_node("Slice", ["l", "starts", "ends", "axes", "steps"], ["y"]),
    ],
    "slice_after_logsoftmax",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 7])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 4])],
    # Every second element of the softmax axis, backwards: 6, 4, 2, 0.
    [i64("starts", [6]), i64("ends", [-8]), i64("axes", [1]), i64("steps", [-2])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([1, 7], np.float32)}, __file__)
# LogSoftmax normalizes over all seven elements; a slice taken after it must not change
# that normalization.
