#!/usr/bin/env python3
"""OpenVINO CPU: Convert(i32 -> u32 or u64) of a constant gives 2147483647 for every negative
value and for INT32_MIN, where OpenVINO's own Convert-1 specification says the result is the
value congruent modulo 2^N (int32 -1 -> uint32 4294967295). The same Convert on a Parameter
is right (PR #32389 made the CPU node wrap), and so is the core reference (Convert.evaluate).
The folded constant reads as if its u32 value had been narrowed to i32 by saturation, the
mechanism of issue #35891 (an int64 ConstantOfShape value clamped to INT32_MAX). Found as an
ONNX Cast(to=UINT32/UINT64) of a weight; built here with OpenVINO's opset API, so the script
needs only openvino and numpy. Exit status 1 while the bug shows."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

x = np.array([-3, 8, -1, 0, 2147483647, -2147483648], np.int32)
print("release: openvino", ov.__version__)
config = {"INFERENCE_PRECISION_HINT": "f32"}
wrong = False
for target, dtype in [(ov.Type.u32, np.uint32), (ov.Type.u64, np.uint64)]:
    want = x.astype(dtype)  # two's complement, modulo 2^N: Convert-1's rule
    folded = ops.convert(ops.constant(x), target)
    reference = [ov.Tensor(target, ov.Shape([x.size]))]
    folded.evaluate(reference, [ov.Tensor(x)])
    got = ov.Core().compile_model(ov.Model([folded], []), "CPU", config)({})[0]
    p = ops.parameter([x.size], np.int32)
    fed = ov.Core().compile_model(ov.Model([ops.convert(p, target)], [p]), "CPU", config)({0: x})[0]
    print(f"{dtype.__name__}: expected {want.tolist()}")
    print(f"  Convert.evaluate        {reference[0].data.tolist()}")
    print(f"  CPU, constant input     {got.tolist()}")
    print(f"  CPU, the same as input  {fed.tolist()}")
    wrong |= not np.array_equal(got, want)
sys.exit(1 if wrong else 0)
