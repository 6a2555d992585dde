#!/usr/bin/env python3
"""ONNX Runtime CPU (1.31.1 and 1.32.0): the EliminateSlice rewrite rule (level basic) removes a
strided Slice whose optional `axes` input is omitted, as if it were a no-op.

Main model, on a graph input (the only constants are the Slice's starts/ends/steps):
  x[4, 3] -> Abs -> Slice(starts=[0], ends=[INT64_MAX], steps=[3], axes omitted) -> Neg -> y
The Slice keeps rows 0 and 3, so y is [2, 3]. ORT_DISABLE_ALL gives [2, 3]; ORT_ENABLE_BASIC
gives [4, 3] (all rows, i.e. the Slice is gone). Disabling only "EliminateSlice" fixes it;
disabling "ConstantFolding" does not. With axes=[0] given explicitly both levels agree, which
fits the rule checking `steps` only when `axes` is present (inferred from behaviour; the ORT
source was not read for this).
The rule only fires where the Slice can be removed from the graph: it needs a producer node in
front (here Abs) and a consumer after it (here Neg). With the Slice's output as the graph
output, or the Slice reading the graph input or an initializer directly, basic is right.

The campaign's original form is also checked: an initializer w[4, 3] -> Squeeze (no axes) ->
the same Slice -> Tile([1, 2]); basic gives [4, 6] instead of [2, 6] (the folder name comes
from the first, wrong, guess that constant folding loses the stride).
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

L = ort.GraphOptimizationLevel
INT64_MAX = int(np.iinfo(np.int64).max)


def slice_inits():
    return [
        helper.make_tensor("starts", TensorProto.INT64, [1], [0]),
        helper.make_tensor("ends", TensorProto.INT64, [1], [INT64_MAX]),
        helper.make_tensor("axes", TensorProto.INT64, [1], [0]),
        helper.make_tensor("steps", TensorProto.INT64, [1], [3]),
    ]


def finish(nodes, inputs, out_shape, inits):
    graph = helper.make_graph(nodes, "strided_slice", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


def abs_slice_neg(with_axes=False, consumer=True):
    """x -> Abs -> Slice(steps=3) [-> Neg] -> y, on a graph input."""
    sl_out = "s" if consumer else "y"
    nodes = [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("Slice", ["a", "starts", "ends", "axes" if with_axes else "", "steps"], [sl_out]),
    ]
    if consumer:
        nodes.append(helper.make_node("Neg", ["s"], ["y"]))
    return finish(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])], [2, 3], slice_inits())


def squeeze_slice_tile():
    """The campaign's constant chain: w -> Squeeze -> Slice(steps=3) -> Tile([1, 2])."""
    inits = slice_inits() + [
        helper.make_tensor("w", TensorProto.FLOAT, [4, 3], [float(i) for i in range(12)]),
        helper.make_tensor("reps", TensorProto.INT64, [2], [1, 2]),
    ]
    nodes = [
        helper.make_node("Squeeze", ["w"], ["sq"]),
        helper.make_node("Slice", ["sq", "starts", "ends", "", "steps"], ["sl"]),
        helper.make_node("Tile", ["sl", "reps"], ["y"]),
    ]
    return finish(nodes, [], [2, 6], inits)


def run(model, feeds, level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


x = -np.arange(12, dtype=np.float32).reshape(4, 3)
expected = -np.abs(x)[0::3]  # rows 0 and 3
print("onnxruntime", ort.__version__)
print("expected (numpy) shape", expected.shape, expected.tolist())

cases = [
    ("Abs -> Slice -> Neg, axes omitted", abs_slice_neg(), {"x": x}, expected),
    ("Abs -> Slice -> Neg, axes=[0]", abs_slice_neg(with_axes=True), {"x": x}, expected),
    ("Abs -> Slice = graph output", abs_slice_neg(consumer=False), {"x": x}, np.abs(x)[0::3]),
    ("w -> Squeeze -> Slice -> Tile", squeeze_slice_tile(), {},
     np.tile(np.arange(12, dtype=np.float32).reshape(4, 3)[0::3], [1, 2])),
]
variants = [("ORT_DISABLE_ALL", L.ORT_DISABLE_ALL, ()),
            ("ORT_ENABLE_BASIC", L.ORT_ENABLE_BASIC, ()),
            ("BASIC - EliminateSlice", L.ORT_ENABLE_BASIC, ("EliminateSlice",)),
            ("BASIC - ConstantFolding", L.ORT_ENABLE_BASIC, ("ConstantFolding",))]
bug = False
for name, model, feeds, want in cases:
    for vname, level, disabled in variants:
        y = run(model, feeds, level, disabled)
        ok = y.shape == want.shape and np.array_equal(y, want)
        if vname == "ORT_ENABLE_BASIC" and not ok and name.endswith("axes omitted"):
            bug = True
        print(f"{name:34} {vname:24} shape {y.shape}  {'ok' if ok else 'WRONG'}")

if bug:
    print("BUG present: EliminateSlice drops a strided Slice (axes omitted) at ORT_ENABLE_BASIC")
    sys.exit(1)
print("not reproduced: ORT_ENABLE_BASIC keeps the Slice's stride")
