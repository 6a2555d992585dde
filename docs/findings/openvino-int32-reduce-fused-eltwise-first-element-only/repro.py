#!/usr/bin/env python3
"""OpenVINO CPU: an int32 ReduceSum over the last axes of a rank-3 input (keep_dims=false)
followed by Negative or Multiply computes only the first output element; every other one
is 0. float32, a rank-2 input, and Abs or Relu after the reduction are right, and so is the
core reference (ov.Model.evaluate). The CPU plugin fuses the eltwise into the Reduce node as
a post-op; for a non-f32 output those post-ops run as a separate subgraph (PR #24704), which
looks like where the rest of the output is lost. Found as ONNX ReduceSum(int32[7,1,8],
axes=[1,2], keepdims=0) -> Neg; built here with OpenVINO's opset API, so the script needs
only openvino and numpy. Exit status 1 while the bug shows."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

x = (np.arange(7 * 1 * 8, dtype=np.int32).reshape(7, 1, 8) % 9) - 4
axes = np.array([1, 2], np.int64)
print("release: openvino", ov.__version__)
wrong = False
for name, post in [("Negative", ops.negative), ("Multiply by 2", lambda r: ops.multiply(r, np.array(2, np.int32)))]:
    p = ops.parameter(list(x.shape), np.int32)
    model = ov.Model([post(ops.reduce_sum(p, axes, False))], [p])
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({0: x})[0]
    want = [ov.Tensor(np.zeros(7, np.int32))]
    model.evaluate(want, [ov.Tensor(x)])
    print(f"ReduceSum -> {name}: CPU {got.tolist()}, ov.Model.evaluate {want[0].data.tolist()}")
    wrong |= not np.array_equal(got, want[0].data)
sys.exit(1 if wrong else 0)
