#!/usr/bin/env python3
"""ONNX Runtime 1.31.1 CPU: the transpose optimizer mishandles Pad's optional `axes` input.

x[3, 5] -> Transpose(perm=[1, 0]) -> Pad(pads=[2, 0], axes=[0]) -> Transpose(perm=[1, 0]).
ORT_DISABLE_ALL gives shape [3, 7]. At ORT_ENABLE_BASIC the optimizer pushes the Transposes
through the Pad and rewrites the pads with a Gather it inserts, but it permutes them as if
`pads` covered every axis: the Gather then indexes out of bounds and the run fails
("indices element out of data bounds"). In larger graphs the same rewrite silently produces
wrong shapes or a broadcast failure in a later node.
Also on 1.32.0. Bisected culprit: TransposeOptimizer (the level-1 instance; disabling it
alone fixes it).
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def build(with_axes):
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Pad", ["t", "pads", "", "axes"] if with_axes else ["t", "pads_all"], ["p"], mode="constant"),
        helper.make_node("Transpose", ["p"], ["y"], perm=[1, 0]),
    ]
    inits = [
        numpy_helper.from_array(np.array([2, 0], np.int64), "pads"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([2, 0, 0, 0], np.int64), "pads_all"),
    ]
    graph = helper.make_graph(
        nodes, "transpose_pad_axes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 7])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


x = np.random.default_rng(0).random((3, 5), dtype=np.float32)
L = ort.GraphOptimizationLevel
print("onnxruntime", ort.__version__)
bug = False
for with_axes in [True, False]:
    ref = None
    for name, level, disabled in [("ORT_DISABLE_ALL", L.ORT_DISABLE_ALL, ()),
                                  ("ORT_ENABLE_BASIC", L.ORT_ENABLE_BASIC, ()),
                                  ("BASIC - TransposeOptimizer", L.ORT_ENABLE_BASIC, ("TransposeOptimizer",))]:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.log_severity_level = 4
        try:
            y = ort.InferenceSession(build(with_axes), so, providers=["CPUExecutionProvider"],
                                     disabled_optimizers=list(disabled)).run(None, {"x": x})[0]
            ok = ref is None or (y.shape == ref.shape and np.array_equal(y, ref))
            ref = y if ref is None else ref
            print(f"axes input: {with_axes!s:5} {name:27}: shape {y.shape}{'' if ok else ' DIFFERENT'}")
        except Exception as e:
            ok = False
            print(f"axes input: {with_axes!s:5} {name:27}: FAILS {str(e).splitlines()[0][-110:]}")
        if name == "ORT_ENABLE_BASIC" and not ok:
            bug = True
if bug:
    print("BUG present: the transpose optimizer mishandles Pad's axes input at ORT_ENABLE_BASIC")
    sys.exit(1)
print("not reproduced: ORT_ENABLE_BASIC agrees with ORT_DISABLE_ALL")
