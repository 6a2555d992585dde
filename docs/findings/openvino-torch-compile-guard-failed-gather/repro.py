#!/usr/bin/env python3
"""torch.compile(backend="openvino"): a one-statement program, torch.gather(x, -2, index),
fails in Dynamo with "AssertionError: Guard failed on the same frame it was created. This is
a bug ... name 'input1' is not defined". The same program compiles and runs with
backend="aot_eager" and with Inductor, and in eager. Found by dlcfuzz's
torch_compile_openvino target (80 tests of a 30-minute campaign). Needs torch and openvino.
Exit status 1 while the bug shows."""
import sys
import torch
import openvino
import openvino.torch  # noqa: F401  (registers the backend)


def main(index, x):
    return torch.gather(x, -2, index)


print("release: torch", torch.__version__, "openvino", openvino.__version__)
index = torch.tensor([[2, 0], [1, 3], [2, 1]])
x = torch.randn(5, 3)
want = main(index, x)
for backend in ("aot_eager", "openvino"):
    torch._dynamo.reset()
    options = {"device": "CPU", "config": {"INFERENCE_PRECISION_HINT": "f32"}} if backend == "openvino" else None
    try:
        got = torch.compile(main, backend=backend, options=options)(index, x)
        print(backend, "ok" if torch.equal(got, want) else f"wrong: {got}")
    except Exception as e:  # noqa: BLE001
        print(backend, "fails:", type(e).__name__, str(e).splitlines()[0][:200])
        if backend == "openvino":
            sys.exit(1)
sys.exit(0)
