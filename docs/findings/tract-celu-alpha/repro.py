#!/usr/bin/env python3
"""tract-onnx 0.23.9: Celu's alpha. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [h.make_node("Celu", ["x"], ["y"], alpha=2.0)],
    "celu",
    [h.make_tensor_value_info("x", T.FLOAT, [4])],
    [h.make_tensor_value_info("y", T.FLOAT, [4])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([4], np.float32)}, __file__)
# Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); x = -3, alpha = 2 gives
# 2 * (exp(-1.5) - 1) = -1.5537.
