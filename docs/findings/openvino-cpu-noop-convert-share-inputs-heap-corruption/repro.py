"""OpenVINO's CPU plugin corrupts the heap (SIGSEGV, or glibc aborts with "malloc(): unaligned
tcache chunk") on a dynamic-shape model whose only op is a no-op Convert (f32 -> f32, or a
round trip f32 -> f64 -> f32), inferred repeatedly with share_inputs=True: the plugin removes
the Convert, leaving Input -> Output, and the zero-copy output then aliases a caller's
buffer that is gone by the next inference. Static shapes, share_inputs=False, and a plain
Parameter -> Result are fine.

torch.compile(backend="openvino") infers exactly this way (`torchdynamo/execute.py`:
share_inputs=True, share_outputs=True): `lambda q: q.to(torch.float64).to(torch.float32)`
called in a loop crashes the process. Found by dlcfuzz's torch_compile_openvino target (seed
6161 campaign: `crash:signal 6` / `signal 11`). Exit 1 while the bug is present, 0 when it is
not. Needs openvino and numpy.
"""
import subprocess
import sys

import openvino

print("release: openvino", openvino.__version__)
CODE = r"""
import numpy as np, openvino as ov, openvino.opset13 as ops
p = ops.parameter(ov.PartialShape([-1]), ov.Type.f32)
compiled = ov.Core().compile_model(ov.Model([ops.convert(p, ov.Type.f32)], [p]), "CPU")
request = compiled.create_infer_request()
for i in range(300):
    request.infer([np.arange(1000, dtype=np.float32) + i], share_inputs=True)
print("ok")
"""
run = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
if run.returncode != 0:
    print(f"reproduced: the process died (return code {run.returncode}):", run.stderr.strip()[-200:])
    sys.exit(1)
print("not reproduced")
