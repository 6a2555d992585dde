#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: PadFusion folds a constant Pad into MaxPool's pads without checking
that the result stays smaller than the kernel.

x[1, 1, 4, 4] -> Pad(pads=[0, 0, 0, 0, 0, 0, 1, 0], constant) -> MaxPool(kernel_shape=[1, 2]).
ORT_DISABLE_ALL runs it. At ORT_ENABLE_BASIC the fused MaxPool has an end pad of 1 on an axis
whose kernel is 1, and session creation fails in PoolAttributes with "Pad should be smaller
than kernel". (A Pad whose value is not the pool's identity would also change results, but
here ORT simply rejects its own rewrite.)
Reproduces on 1.31.1, not on 1.32.0 (which runs the model at basic with the same result).
Bisected culprit: the PadFusion rewrite rule, whose disabled_optimizers name is "Pad_Fusion"
(disabled_optimizers silently ignores unknown names, and "PadFusion" changes nothing).
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
    helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[1, 2]),
]
graph = helper.make_graph(
    nodes, "pad_maxpool",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5, 3])],
    [numpy_helper.from_array(np.array([0, 0, 0, 0, 0, 0, 1, 0], np.int64), "pads")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
onnx.checker.check_model(model, full_check=True)
x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
L = ort.GraphOptimizationLevel


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 4
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"],
                                disabled_optimizers=list(disabled))
    return sess.run(None, {"x": x})[0]


print("onnxruntime", ort.__version__)
ref = run(L.ORT_DISABLE_ALL)
print("ORT_DISABLE_ALL        shape", ref.shape)
bug = False
for name, level, disabled in [("ORT_ENABLE_BASIC", L.ORT_ENABLE_BASIC, ()),
                              ("BASIC - Pad_Fusion", L.ORT_ENABLE_BASIC, ("Pad_Fusion",))]:
    try:
        y = run(level, disabled)
        ok = np.array_equal(y, ref)
        print(f"{name:22} shape {y.shape} {'same values' if ok else 'DIFFERENT values'}")
    except Exception as e:
        ok = False
        print(f"{name:22} FAILS", str(e).splitlines()[0][-100:])
    if not disabled:
        bug = not ok
if bug:
    print("BUG present: PadFusion gives MaxPool pads larger than the kernel at ORT_ENABLE_BASIC")
    sys.exit(1)
print("not reproduced: ORT_ENABLE_BASIC agrees with ORT_DISABLE_ALL")
