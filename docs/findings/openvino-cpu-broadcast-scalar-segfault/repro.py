"""OpenVINO's CPU plugin segfaults in compile_model on Parameter(f32, []) -> Broadcast(target
shape = Constant i64 []) -> Result. The graph is valid (Broadcast-3: `target_shape` is the
output shape; [] is a scalar, and OpenVINO infers output shape []); i32 targets, numpy and
bidirectional modes, Broadcast-1, f16/i32 data all crash; no property avoids it
(INFERENCE_PRECISION_HINT, SNIPPETS_MODE=DISABLE, EXECUTION_MODE_HINT=ACCURACY, one thread).
Any op before or after it (the no-op Broadcast is then eliminated) or a target of [1] is fine.
From gdb: a read of element -1 of an empty vector during compile_model (Broadcast::
prepareParams -> TileBroadcastCommon with rank-0 dims). The GPU plugin fixed the same case in
2022 (openvinotoolkit/openvino PR #14744).

Through torch.compile(backend="openvino"): `lambda s, x: (s.expand([]), torch.exp(x))` on a
0-d `s`. Found by dlcfuzz's torch_compile_openvino target (seed 6161 campaign, while judging
`value:Mish`). Exit 1 while the bug is present, 0 when it is not. Needs openvino and numpy.
"""
import subprocess
import sys

import openvino

print("release: openvino", openvino.__version__)
CODE = r"""
import numpy as np, openvino as ov, openvino.opset13 as ops
p = ops.parameter([], np.float32)
model = ov.Model([ops.broadcast(p, ops.constant(np.array([], np.int64)))], [p])
compiled = ov.Core().compile_model(model, "CPU")
print(float(compiled(np.array(0.7, np.float32))[0]))
"""
run = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
if run.returncode < 0:
    print(f"reproduced: compile_model died with signal {-run.returncode}")
    sys.exit(1)
print("not reproduced:", run.stdout.strip(), run.stderr.strip()[-300:])
