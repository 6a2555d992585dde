#!/usr/bin/env python3
"""ONNX Runtime 1.32.0 (CPU) segfaults while creating a session at ORT_ENABLE_ALL for a
two-node float16 model: Transpose(perm=[1, 2, 0]) -> MatMul with a constant float16 weight.

Found by dlcfuzz (`bench feedback --target ort_cpu --seed 2`, guided side), reduced from 9
nodes by `dlcfuzz reduce`. Every level below ORT_ENABLE_ALL loads and runs the model; the
crash needs all three of MatmulTransposeFusion, FuseFp16InitializerToFp32NodeTransformer and
NchwcTransformer (disabling any one of them, alone, avoids it). float32, perm=[0, 2, 1] and a
rank-3 weight do not crash. Needs onnx, onnxruntime and numpy. Exit 1 when the bug shows.
"""
import os
import subprocess
import sys

import numpy as np


def model_bytes(weight_shape=(5, 3, 8, 5)):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones(weight_shape, dtype=np.float16), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0]),
            helper.make_node("MatMul", ["t", "w"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [8, 3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [5, 3, 2, 5])],
        initializer=[w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


def child(level, disabled):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    sess = ort.InferenceSession(
        model_bytes(),
        so,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=[disabled] if disabled else None,
    )
    x = np.linspace(-1, 1, 48, dtype=np.float16).reshape(8, 3, 2)
    y = sess.run(None, {"x": x})[0]
    expected = np.matmul(x.astype(np.float32).transpose(1, 2, 0), np.ones((5, 3, 8, 5), np.float32))
    assert np.allclose(y.astype(np.float32), expected, atol=1e-2), "wrong result"


def run(level, disabled=""):
    p = subprocess.run(
        [sys.executable, __file__, "--child", level, disabled], capture_output=True, text=True
    )
    if p.returncode < 0:
        return f"DIED with signal {-p.returncode}"
    return "ok" if p.returncode == 0 else f"FAILED: {p.stderr.strip().splitlines()[-1:]}"


def main():
    import onnxruntime as ort

    print("onnxruntime", ort.__version__)
    crashed = False
    for level in ["ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL"]:
        outcome = run(level)
        crashed |= outcome.startswith("DIED")
        print(f"{level}: {outcome}")
    for culprit in ["MatmulTransposeFusion", "FuseFp16InitializerToFp32NodeTransformer", "NchwcTransformer"]:
        print(f"ORT_ENABLE_ALL without {culprit}: {run('ORT_ENABLE_ALL', culprit)}")
    print("reproduced" if crashed else "not reproduced")
    return 1 if crashed else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
