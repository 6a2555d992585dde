"""Shared helpers of the tract findings' repro scripts (`python3 <finding>/repro.py`).

Each script builds its reduced model, checks it (onnx.checker full_check), writes it next to
itself as model.onnx, prints ONNX Runtime's unoptimized output on dlcfuzz's pattern input as
the reference, and names the `dlcfuzz run-model` command that shows tract's typed,
decluttered and optimized results. Needs onnx, onnxruntime and numpy."""

import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: F401


def pattern(shape, dtype):
    """dlcfuzz run-model's input: element i is (7 i mod 11) - 3, negatives saturating to 0
    for unsigned types."""
    n = int(np.prod(shape)) if shape else 1
    v = np.array([(7 * i) % 11 - 3 for i in range(n)], dtype=np.float64)
    if np.issubdtype(dtype, np.unsignedinteger):
        v = np.maximum(v, 0)
    return v.astype(dtype).reshape(shape)


def save_and_reference(model, feeds, script):
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(os.path.dirname(os.path.abspath(script)), "model.onnx")
    onnx.save(model, path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for i, out in enumerate(sess.run(None, feeds)):
        print(f"ONNX Runtime (reference) output {i}: shape {list(out.shape)}:", out.ravel()[:16])
    print("now run: dlcfuzz run-model --backend tract", path)


def i64(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)
