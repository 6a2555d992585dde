#!/usr/bin/env python3
"""OpenVINO CPU: an integer Divide fused into an int32 Reduce node rounds the quotient to
nearest (ties to even) instead of dividing as integers. ReduceSum(x) / 7 with a sum of 102
gives 15 (102/7 = 14.57); truncation (ONNX Div: "For integer inputs, the result is computed
using truncating division (rounding toward zero)") and floor (OpenVINO's Divide with
m_pythondiv=true, which the ONNX frontend emits) both give 14, and so do ov.Model.evaluate
and the same Divide when it is not fused (e.g. when the Reduce output is also a model
output). Every reduction kind (Sum, Max, Min, Prod, L1, Mean, SumSquare) and both values of
m_pythondiv do it. Consistent with the plugin's Reduce post kernel as read in a 2024 copy of
src/plugins/intel_cpu/src/nodes/reduce.cpp: the round-toward-zero added by PR #25483 runs
before the post-ops (apply_post_ops), and the store after them skips it ("necessary rounding
has already been done") and converts with cvtps2dq, which rounds to nearest.
Part 1 runs model.onnx (ONNX ReduceSumSquare(x, axes=[-1], keepdims=1) -> Div(., 7), the
fuzzer's reduced model); part 2 builds ReduceSum -> Divide with OpenVINO's opset API.
Needs only openvino and numpy. Exit status 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = os.path.dirname(os.path.abspath(__file__))
core = ov.Core()
CFG = {"INFERENCE_PRECISION_HINT": "f32"}
print("release: openvino", ov.__version__)
wrong = False

# Part 1: the ONNX model. x = [-2, 5, 3, -8]: sum of squares 102, 102 / 7 = 14.57 -> 14.
x = np.array([-2, 5, 3, -8], np.int32)
got = core.compile_model(core.read_model(os.path.join(HERE, "model.onnx")), "CPU", CFG)({0: x})[0]
print(f"ONNX ReduceSumSquare -> Div(7) on {x.tolist()}: CPU {got.tolist()}, expected [14]")
wrong |= got.tolist() != [14]

# Part 2: opset API, ReduceSum over axis 1 of int32[n, 2] (second column 0) then Divide by 4.
vals = np.array([102, -6, -5, 6, 10, 7, -7], np.int32)
xx = np.stack([vals, np.zeros_like(vals)], axis=1)
p = ops.parameter(list(xx.shape), np.int32)
model = ov.Model([ops.divide(ops.reduce_sum(p, np.array([1], np.int64), False), np.array(4, np.int32))], [p])
cm = core.compile_model(model, "CPU", CFG)
got = cm({0: xx})[0]
ref = [ov.Tensor(np.zeros(len(vals), np.int32))]
model.evaluate(ref, [ov.Tensor(xx)])
trunc = (np.sign(vals) * (np.abs(vals) // 4)).astype(np.int32)
floor = vals // 4
fused = [o.get_rt_info()["originalLayersNames"].astype(str) for o in cm.get_runtime_model().get_ordered_ops()
         if o.get_rt_info()["layerType"].astype(str) == "Reduce"]
print(f"opset ReduceSum -> Divide(4), sums {vals.tolist()}  (CPU node: {fused})")
print(f"  CPU              {got.tolist()}")
print(f"  ov.Model.evaluate{ref[0].data.tolist()}  (floor, m_pythondiv=true)")
print(f"  truncation       {trunc.tolist()}")
print(f"  round-half-even  {np.rint(vals / 4).astype(int).tolist()}")
bad = ~((got == trunc) | (got == floor))
print("  elements equal to neither floor nor truncation:", np.nonzero(bad)[0].tolist())
wrong |= bool(bad.any())

print("reproduced" if wrong else "not reproduced")
sys.exit(1 if wrong else 0)
