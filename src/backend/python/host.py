# dlcfuzz Python host: a persistent worker that runs torch.compile and TVM Relax for the Rust
# harness. Protocol (stdin -> requests, a private dup of stdout -> responses), each frame:
#   u32 LE header length, header JSON (UTF-8), u32 LE blob count, then per blob u64 LE length
#   and the raw bytes.
# Tensors travel as {"dtype": numpy name, "shape": [...], "blob": index}: raw little-endian
# buffers, no text round trip. Anything the compilers print goes to stderr (fd 1 is pointed
# there), so the protocol channel stays clean. A Python exception becomes an error record
# {"stage", "chain": [{"type", "message"}], "frames"}; the Rust side classifies it. A native
# crash kills this process: faulthandler prints the Python stack to stderr first.
import faulthandler
import json
import os
import struct
import sys
import traceback
import types

faulthandler.enable(file=sys.stderr, all_threads=False)
_PROTOCOL = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)
sys.stdout = sys.stderr
_REQUESTS = sys.stdin.buffer


def _read_exact(n):
    chunks, left = [], n
    while left:
        chunk = _REQUESTS.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame():
    head = _read_exact(4)
    if head is None:
        return None
    header = json.loads(_read_exact(struct.unpack("<I", head)[0]))
    (count,) = struct.unpack("<I", _read_exact(4))
    blobs = []
    for _ in range(count):
        (size,) = struct.unpack("<Q", _read_exact(8))
        blobs.append(_read_exact(size) if size else b"")
    return header, blobs


def write_frame(header, blobs):
    data = json.dumps(header).encode()
    parts = [struct.pack("<I", len(data)), data, struct.pack("<I", len(blobs))]
    for b in blobs:
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    _PROTOCOL.write(b"".join(parts))


class Blobs:
    """Outgoing blobs of one response."""

    def __init__(self):
        self.items = []

    def tensor(self, array):
        import numpy as np

        array = np.asarray(array, order="C")  # keeps 0-d arrays 0-d
        self.items.append(array.astype(array.dtype.newbyteorder("<")).tobytes())
        return {"dtype": str(array.dtype), "shape": list(array.shape), "blob": len(self.items) - 1}


def array_of(spec, blobs):
    import numpy as np

    return np.frombuffer(blobs[spec["blob"]], dtype=np.dtype(spec["dtype"]).newbyteorder("<")).reshape(
        spec["shape"]
    ).copy()


def _qualified(exc):
    t = type(exc)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def error_record(stage, exc):
    """The exception chain (outermost first) and the innermost exception's last frames."""
    chain, seen, e, inner = [], set(), exc, exc
    while e is not None and id(e) not in seen and len(chain) < 8:
        seen.add(id(e))
        chain.append({"type": _qualified(e), "message": str(e)[:4000]})
        inner = e
        e = e.__cause__ or e.__context__
    frames = []
    for f in traceback.extract_tb(inner.__traceback__)[-12:]:
        path = f.filename.replace(os.sep, "/")
        for root in ("/torch/", "/tvm/", "/tvm_ffi/", "/onnx/"):
            if root in path:
                path = root.strip("/") + "/" + path.split(root, 1)[1]
                break
        frames.append(f"{path}:{f.lineno}:{f.name}")
    return {"stage": stage, "chain": chain, "frames": frames}


class StageFailed(Exception):
    def __init__(self, record):
        super().__init__(record["stage"])
        self.record = record


def stage(name, fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - every compiler exception is data here
        raise StageFailed(error_record(name, exc)) from None


# ---------------------------------------------------------------------------- torch.compile

def _torch_setup():
    import torch
    import torch._dynamo
    import torch._inductor.config as inductor_config

    inductor_config.compile_threads = 1
    torch._dynamo.config.suppress_errors = False
    torch._dynamo.config.recompile_limit = 64
    torch.set_num_threads(1)
    return torch


def _batched(main):
    """`entry(*xs)`: `main` on every slice along a leading batch axis, outputs stacked. One
    compiled `entry` called with two batch sizes exercises guards and recompilation."""
    import torch

    def entry(*xs):
        outs = [main(*[x[b] for x in xs]) for b in range(xs[0].shape[0])]
        return tuple(torch.stack([o[k] for o in outs]) for k in range(len(outs[0])))

    return entry


def torch_compile(req, blobs):
    """Eager `main` once, then `torch.compile(entry, backend, dynamic)` on each batch size."""
    torch = stage("setup", _torch_setup)
    torch._dynamo.reset()
    out = Blobs()
    device = req.get("device", "cpu")
    # A real module: Dynamo resolves a function's globals through sys.modules[__name__].
    module = types.ModuleType("dlcfuzz_program")
    module.__file__ = "dlcfuzz_program.py"
    sys.modules[module.__name__] = module
    source = req["source"]
    stage("define", lambda: exec(compile(source, module.__file__, "exec"), module.__dict__))
    main = module.__dict__[req.get("entry", "main")]
    xs = [torch.from_numpy(array_of(t, blobs)).to(device) for t in req["inputs"]]

    def host(ts):
        return [out.tensor(t.detach().to("cpu").numpy()) for t in ts]

    runs = []
    try:
        eager = stage("eager", lambda: main(*[x.clone() for x in xs]))
    except StageFailed as f:
        return {"runs": [{"name": "eager", "error": f.record}]}, out
    runs.append({"name": "eager", "outputs": host(eager)})
    backend = req.get("backend", "inductor")
    compiled = torch.compile(_batched(main), backend=backend, dynamic=bool(req.get("dynamic")))
    for batch in req.get("batches", [1, 2]):
        name = f"{backend}:batch{batch}"
        stacked = [torch.stack([x] * batch) for x in xs]
        try:
            result = stage(f"compile:{backend}", lambda: compiled(*stacked))
        except StageFailed as f:
            runs.append({"name": name, "error": f.record})
            break
        runs.append({"name": name, "outputs": host([r[batch - 1] for r in result])})
    return {"runs": runs}, out


# ------------------------------------------------------------------------------------ TVM

def _tvm_pass(name):
    from tvm import relax

    t = relax.transform
    special = {
        "DeadCodeElimination": lambda: t.DeadCodeElimination(["main"]),
        "ToMixedPrecision": lambda: t.ToMixedPrecision(out_dtype="float32"),
        "AlterOpImpl": lambda: t.AlterOpImpl({}, {}),
    }
    return special[name]() if name in special else getattr(t, name)()


def _tvm_build_run(mod, inputs, target):
    import tvm
    from tvm import relax

    executable = stage("build", lambda: tvm.compile(mod, target=target))
    device = tvm.cuda(0) if target.startswith("cuda") else tvm.cpu(0)
    vm = stage("load", lambda: relax.VirtualMachine(executable, device))
    args = [tvm.runtime.tensor(a, device) for a in inputs]
    result = stage("run", lambda: vm["main"](*args))
    if hasattr(result, "numpy") or _is_shape(result):
        result = [result]
    return [_host_array(r) for r in result]


def _is_shape(value):
    return type(value).__name__ in ("Shape", "ShapeTuple")


def _host_array(value):
    """A VM output as numpy: tensors by `numpy()`, shape values (an ONNX `Shape` output) as
    int64 vectors."""
    import numpy as np

    if _is_shape(value):
        return np.array(list(value), dtype=np.int64)
    return value.numpy()


def tvm_run(req, blobs):
    """Imports the ONNX model once, then per build: the pass sequence (none for `plain`),
    `tvm.compile` and the Relax VM."""
    out = Blobs()
    import onnx
    import tvm  # noqa: F401
    from tvm.relax.frontend.onnx import from_onnx

    model = onnx.load_from_string(blobs[req["model"]])
    inputs = [array_of(t, blobs) for t in req["inputs"]]
    shapes = {name: list(a.shape) for name, a in zip(req["input_names"], inputs)}
    target = req.get("target", "llvm")
    try:
        imported = stage("import", lambda: from_onnx(model, shape_dict=shapes))
    except StageFailed as f:
        return {"runs": [{"name": "import", "error": f.record}]}, out
    runs = []
    for build in req["builds"]:
        mod = imported
        try:
            for p in build["passes"]:
                mod = stage(f"pass:{p}", lambda: _tvm_pass(p)(mod))
            outputs = _tvm_build_run(mod, inputs, target) if build.get("compile", True) else []
        except StageFailed as f:
            runs.append({"name": build["name"], "error": f.record})
            continue
        runs.append({"name": build["name"], "outputs": [out.tensor(o) for o in outputs]})
    return {"runs": runs}, out


# ---------------------------------------------------------------------------------- misc

def hello(req, blobs):
    versions = {"python": sys.version.split()[0]}
    for module in req.get("modules", []):
        try:
            versions[module] = __import__(module).__version__
            if module == "torch":
                import torch

                versions["torch_cuda"] = torch.cuda.is_available()
            if module == "tvm":
                import tvm

                versions["tvm_cuda"] = bool(tvm.cuda(0).exist)
        except Exception as exc:  # noqa: BLE001
            versions[module] = None
            versions[module + "_error"] = f"{type(exc).__name__}: {exc}"
    return {"versions": versions}, Blobs()


def fault(req, blobs):
    """Planted outcomes for the classification tests (needs DLCFUZZ_ALLOW_FAULTS=1)."""
    if os.environ.get("DLCFUZZ_ALLOW_FAULTS") != "1":
        raise RuntimeError("fault requests need DLCFUZZ_ALLOW_FAULTS=1")
    kind = req["kind"]
    if kind == "segfault":
        import ctypes

        ctypes.string_at(0)
    if kind == "hang":
        import time

        time.sleep(3600)

    def planted():
        if kind == "internal":
            raise AssertionError("planted internal compiler error: invariant violated")
        if kind == "unsupported":
            raise NotImplementedError("planted: operator not supported")
        raise ValueError(f"unknown fault {kind}")

    try:
        stage("compile:planted", planted)
    except StageFailed as f:
        return {"runs": [{"name": "planted", "error": f.record}]}, Blobs()


HANDLERS = {"hello": hello, "torch_compile": torch_compile, "tvm_run": tvm_run, "fault": fault}


def serve():
    while True:
        frame = read_frame()
        if frame is None:
            return
        header, blobs = frame
        try:
            response, out = HANDLERS[header["op"]](header, blobs)
            response["ok"] = True
            write_frame(response, out.items)
        except Exception as exc:  # noqa: BLE001 - a failing request must not end the host
            write_frame({"ok": False, "error": error_record("host", exc)}, [])


serve()
