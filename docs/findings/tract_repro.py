"""Shared helpers of the tract findings' repro scripts: dlcfuzz's pattern input, and saving a
model next to its script with ONNX Runtime's unoptimized output as the reference."""

import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper as nh


def pattern(shape, dtype):
    """dlcfuzz run-model's input: element i is (7 i mod 11) - 3, negatives saturating to 0
    for unsigned types."""
    n = int(np.prod(shape)) if shape else 1
    v = np.array([(7 * i) % 11 - 3 for i in range(n)], dtype=np.float64)
    if np.issubdtype(dtype, np.unsignedinteger):
        v = np.maximum(v, 0)
    return v.astype(dtype).reshape(shape)


def save_and_reference(model, feeds, here):
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(here, "model.onnx")
    onnx.save(model, path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for i, out in enumerate(sess.run(None, feeds)):
        print(f"ONNX Runtime (reference) output {i}: shape {list(out.shape)}:", out.ravel()[:16])
    print("now run: dlcfuzz run-model --backend tract", path)


def i64(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)
