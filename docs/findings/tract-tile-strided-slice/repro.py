#!/usr/bin/env python3
"""tract-onnx 0.23.9: Tile of a size-1 axis followed by a strided Slice breaks the declutter patch.

Writes the model(s) next to this script (onnx.checker full_check passes),
prints ONNX Runtime's output on dlcfuzz's pattern input as the reference, and names the
`dlcfuzz run-model` command that shows tract's typed / decluttered / optimized results.
Needs onnx, onnxruntime and numpy."""

import os
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))


def pattern(shape, dtype):
    """dlcfuzz run-model's input: element i is (7 i mod 11) - 3, negatives saturating to 0
    for unsigned types."""
    n = int(np.prod(shape)) if shape else 1
    v = np.array([(7 * i) % 11 - 3 for i in range(n)], dtype=np.float64)
    if np.issubdtype(dtype, np.unsignedinteger):
        v = np.maximum(v, 0)
    return v.astype(dtype).reshape(shape)


def save_and_reference(model, feeds):
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(HERE, "model.onnx")
    onnx.save(model, path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for i, out in enumerate(sess.run(None, feeds)):
        print(f"ONNX Runtime (reference) output {i}: shape {list(out.shape)}:", out.ravel()[:16])
    print("now run: dlcfuzz run-model --backend tract", path)


def i64(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)

graph = h.make_graph(
    [h.make_node("Tile", ["x", "r"], ["t"]), h.make_node("Slice", ["t", "s", "e", "a", "st"], ["y"])],
    "tile_slice",
    [h.make_tensor_value_info("x", T.FLOAT, [5, 1])],
    [h.make_tensor_value_info("y", T.FLOAT, [5, 2])],
    [i64("r", [1, 4]), i64("s", [0]), i64("e", [4]), i64("a", [1]), i64("st", [2])],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([5, 1], np.float32)})
# typed runs; declutter fails: "Pulling Downsample over MultiBroadcastTo: Trying to substitute
# a 5,2,F32 by 5,4,F32".
