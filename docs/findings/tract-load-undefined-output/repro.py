#!/usr/bin/env python3
"""tract-onnx 0.23.9 panics instead of returning an error when a graph output names a value
that nothing defines: `outlets_by_name[&*output.name]` in tract-onnx src/model.rs (line 187)
indexes a HashMap, "no entry found for key". The model is invalid (onnx.checker rejects it,
shown below), so the right answer is a load error; a panic aborts any caller without
catch_unwind. Writes model.onnx next to itself; then run
`dlcfuzz replay --target tract_load model.onnx` (a caught panic is a crash finding)."""
import os

import onnx
from onnx import TensorProto as T, helper as h

graph = h.make_graph(
    [h.make_node("Neg", ["x"], ["y"])],
    "undefined_output",
    [h.make_tensor_value_info("x", T.FLOAT, [2])],
    [h.make_tensor_value_info("z", T.FLOAT, [2])],  # nothing produces "z"
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
onnx.save(model, path)
try:
    onnx.checker.check_model(model, full_check=True)
    print("onnx.checker accepts the model")
except onnx.checker.ValidationError as e:
    print("onnx.checker rejects it (expected: the model is invalid):", str(e).splitlines()[0])
print("now run: dlcfuzz replay --target tract_load", path)
