#!/usr/bin/env python3
"""OpenVINO CPU, dynamic inputs: ReduceL1(int32 x[5,1,1,4], axes=[-2], keepdims=0) -> Expand to
[1,2,1] (result [5,2,4]) runs right with static inputs; with the input made dynamic the run
fails ("[CPU] Multiply node with name 'y' Appending node has failed due to scales data size
inconsistency": the Expand, lowered to a broadcasting Multiply, is fused into the Reduce as a
post-op) or, inside a longer graph, gives wrong values (0 where 4 is exact, as the campaign
found it). float32 with static inputs is right. Needs only openvino and numpy.
Exit status 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov

HERE = os.path.dirname(os.path.abspath(__file__))
x = (np.arange(20).reshape(5, 1, 1, 4) % 7 - 3).astype(np.int32)
want = np.broadcast_to(np.abs(x).sum(axis=2), (5, 2, 4))
print("release: openvino", ov.__version__)
bad = False
for dynamic in (False, True):
    core = ov.Core()
    model = core.read_model(os.path.join(HERE, "model.onnx"))
    if dynamic:
        model.reshape({0: ov.PartialShape([-1] * 4)})
    try:
        got = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({0: x})[0]
        ok = got.shape == want.shape and np.array_equal(got, want)
        verdict = "right" if ok else f"WRONG {got.ravel()[:8]} (expected {want.ravel()[:8]})"
    except Exception as e:  # noqa: BLE001
        ok, verdict = False, "FAILS: " + str(e).strip().splitlines()[-1][:200]
    bad |= not ok
    print("dynamic" if dynamic else "static ", verdict)
sys.exit(1 if bad else 0)
