#!/usr/bin/env python3
"""tract-onnx 0.23.9: a float64 GridSample is computed in float32. Usage and helpers:
../tract_repro.py. The reference is computed here in float64 (ONNX Runtime's CPU GridSample
has no float64 kernel, and onnx.reference's knows only GridSample-20's mode names): with
align_corners the grid's x in [-1, 1] maps to pixel (x + 1) / 2 * (W - 1), and bilinear
sampling of one row with border padding is linear interpolation clamped at the ends."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, nh, np, pattern  # noqa: E402,F401
import onnx  # noqa: E402

# Four pixels (the pattern input -3, 4, 0, 7), sampled at x = 0.1, -0.3 and 0.7 (y = 0).
grid = nh.from_array(np.array([0.1, 0.0, -0.3, 0.0, 0.7, 0.0]).reshape(1, 1, 3, 2), "grid")
graph = h.make_graph(
    [h.make_node("GridSample", ["x", "grid"], ["y"], mode="bilinear", padding_mode="border", align_corners=1)],
    "gridsample_f64",
    [h.make_tensor_value_info("x", T.DOUBLE, [1, 1, 1, 4])],
    [h.make_tensor_value_info("y", T.DOUBLE, [1, 1, 1, 3])],
    [grid],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
onnx.save(model, path)
x = pattern([1, 1, 1, 4], np.float64)
row = x.ravel()
pixels = (nh.to_array(grid)[0, 0, :, 0] + 1.0) / 2.0 * (len(row) - 1)
want = np.interp(pixels, np.arange(len(row), dtype=np.float64), row)
np.set_printoptions(precision=17)
print("reference (float64, numpy) output 0:", want.ravel())
print("now run: dlcfuzz run-model --backend tract", path)
# tract gives values off in the 8th digit at every level (typed, decluttered, optimized):
# tract-core's GridSample::eval casts X and the grid to f32 and casts the f32 result back.
