#!/usr/bin/env python3
"""tract-onnx 0.23.9: Selu without attributes uses alpha = 1.67326 and gamma = 1.0507 instead of
the spec's defaults 1.67326319217681884765625 and 1.05070102214813232421875 (tract-onnx
src/ops/nn/mod.rs, `selu`), so every result is off by about 1e-6 relative: far beyond float64
rounding, about 8 float32 ulps. ONNX Runtime has no float64 Selu kernel, so the reference
here is onnx's own evaluator. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, np, onnx, pattern  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

graph = h.make_graph(
    [h.make_node("Selu", ["x"], ["y"])],
    "selu",
    [h.make_tensor_value_info("x", T.DOUBLE, [6])],
    [h.make_tensor_value_info("y", T.DOUBLE, [6])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
onnx.save(model, path)
x = pattern([6], np.float64)
print("onnx reference evaluator:", ReferenceEvaluator(model).run(None, {"x": x})[0].tolist())
print("now run: dlcfuzz run-model --backend tract --show 6", path)
# Reference: [-1.6705687, 4.2028041, 0.0, 7.3549072, 3.1521031, -1.1113307] (x = [-3, 4, 0, 7, 3, -1]);
# tract at every level: [-1.6705638, 4.2027998, 0.0, 7.3548996, 3.1520998, -1.1113275].
