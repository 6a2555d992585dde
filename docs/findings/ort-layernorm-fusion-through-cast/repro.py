#!/usr/bin/env python3
"""dlcfuzz finding: crash:basic:This is an invalid model. Type Error: Type 'tensor(N)' of input parameter (N_N) of operator (LayerNormalization) in node (N_Mul/LayerNormFusion/) is invalid.
Runs model.onnx with optimizations disabled and at level 'basic', and compares.
Reproduces on ONNX Runtime 1.31.1, not on 1.32.0. Exits 1 when the bug is present, 0 when not."""
import base64, os, sys
import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
FEEDS = {
    "x33": np.frombuffer(base64.b64decode('BQAAAAAAAAAFAAAAAAAAAAMAAAAAAAAAAwAAAAAAAAAHAAAAAAAAAAQAAAAAAAAAAgAAAAAAAAABAAAAAAAAAA=='), dtype=np.uint64).reshape([8]),
    "x22": np.frombuffer(base64.b64decode('AABAPg=='), dtype=np.float32).reshape([1]),
    "x20": np.frombuffer(base64.b64decode('AAA0vw=='), dtype=np.float32).reshape([1]),
    "x16": np.frombuffer(base64.b64decode('rMUnNw=='), dtype=np.float32).reshape([]),
    "x13": np.frombuffer(base64.b64decode('AAAAQA=='), dtype=np.float32).reshape([]),
    "x4": np.frombuffer(base64.b64decode('AgAAAAAAAAABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAACAAAAAAAAAAUAAAAAAAAA'), dtype=np.uint64).reshape([6]),
}

# Culprit transformers from bisect.py (empty: not bisected).
CULPRITS = ["LayerNormFusionL1"]

def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(HERE, "model.onnx"), so, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
    return sess.run(None, FEEDS)

def failure(ref, level, disabled=()):
    try:
        got = run(level, disabled)
    except Exception as e:  # the optimized level fails where the reference runs
        return f"FAILURE: {e}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if r.shape != g.shape or not np.allclose(r.astype(np.float64), g.astype(np.float64), rtol=1e-3, atol=1e-3, equal_nan=True):
            diff = np.max(np.abs(r.astype(np.float64) - g.astype(np.float64))) if r.shape == g.shape else (r.shape, g.shape)
            return f"MISMATCH in output {i}: max abs diff {diff}"
    return None

def main():
    print("onnxruntime", ort.__version__)
    ref = run(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    found = failure(ref, level)
    if found is None:
        print("not reproduced: outputs agree (ONNX Runtime", ort.__version__ + ")")
        return 0
    print("at level basic:", found)
    if CULPRITS:
        again = failure(ref, level, CULPRITS)
        print("with the culprits", CULPRITS, "disabled:", again or "the failure is gone")
    print("BUG present: LayerNormFusion fuses through Cast(uint64 -> float) (ONNX Runtime", ort.__version__ + ")")
    return 1

if __name__ == "__main__":
    sys.exit(main())
