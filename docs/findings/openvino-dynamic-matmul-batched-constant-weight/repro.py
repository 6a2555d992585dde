#!/usr/bin/env python3
"""OpenVINO CPU: a MatMul whose B is a constant with batch dimensions ([5,3,4]) and whose A has
fewer or unit batch dimensions fails once the inputs are dynamic (Model.reshape to [-1, ...]),
while the same model with static inputs runs right:
- A [2,3] (rank 2): compile fails, "Can't create dummy inputs if argument shapes ranks are
  not equal" (dnnl_matmul_primitive.cpp);
- A [1,2,3]: the run fails ("FullyConnected ... Descriptor's shape {5, 0 - ?, 4} is
  incompatible with provided dimensions: {1, 2, 4}"), or, with INFERENCE_NUM_THREADS=1,
  silently returns an empty [5, 0, 4] result.
ONNX MatMul broadcasts like numpy.matmul: the result is [5, 2, 4] in both cases.
Needs only openvino and numpy. Exit status 1 while the bug shows."""
import os, sys
import numpy as np
import openvino as ov

HERE = os.path.dirname(os.path.abspath(__file__))
w = (np.arange(60).reshape(5, 3, 4) % 7 - 3).astype(np.float32)
print("release: openvino", ov.__version__)
bad = False
for name, shape in (("model_rank2.onnx", (2, 3)), ("model_batch1.onnx", (1, 2, 3))):
    a = (np.arange(np.prod(shape)).reshape(shape) % 5 - 2).astype(np.float32)
    expected = np.matmul(a, w)
    for dynamic in (False, True):
        for props in ({"INFERENCE_PRECISION_HINT": "f32"}, {"INFERENCE_NUM_THREADS": "1"}, {}):
            core = ov.Core()
            model = core.read_model(os.path.join(HERE, name))
            if dynamic:
                model.reshape({0: ov.PartialShape([-1] * len(shape))})
            try:
                got = list(core.compile_model(model, "CPU", props).infer_new_request({0: a}).values())[0]
                ok = got.shape == expected.shape and np.allclose(got, expected, rtol=1e-2, atol=1e-2)
                verdict = "right" if ok else f"WRONG shape {got.shape} (expected {expected.shape})"
            except Exception as e:  # noqa: BLE001
                ok, verdict = False, "FAILS: " + str(e).strip().splitlines()[-1][:160]
            bad |= dynamic and not ok
            print(f"A{list(shape)} {'dynamic' if dynamic else 'static '} {props or 'defaults'}: {verdict}")
sys.exit(1 if bad else 0)
