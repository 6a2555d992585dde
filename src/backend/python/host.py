# dlcfuzz Python host: a persistent worker that runs torch.compile and TVM Relax for the Rust
# harness. Protocol (stdin -> requests, a private dup of stdout -> responses), each frame:
#   u32 LE header length, header JSON (UTF-8), u32 LE blob count, then per blob u64 LE length
#   and the raw bytes.
# Tensors travel as {"dtype": numpy name, "shape": [...], "blob": index}: raw little-endian
# buffers, no text round trip. Anything the compilers print goes to stderr (fd 1 is pointed
# there), so the protocol channel stays clean. A Python exception becomes an error record
# {"stage", "chain": [{"type", "message"}], "frames"}; the Rust side classifies it. A native
# crash kills this process: faulthandler prints the Python stack to stderr first.
# With DLCFUZZ_PY_COVERAGE_SCOPE set, the compilers' own modules are loaded with line probes,
# and every response carries the lines its request ran (see `_LineProbes`).
import faulthandler
import functools
import importlib.machinery
import json
import os
import struct
import sys
import time
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


def _bounded(message, limit=4000):
    """`message` cut to `limit` characters, its first line first and then its compiler
    `error:` lines: a C++ compile error's output can open with pages of warnings, and the
    error line is what names the bug."""
    if len(message) <= limit:
        return message
    first, _, rest = message.partition("\n")
    errors = "".join(line + "\n" for line in rest.splitlines() if " error: " in line)
    return (first + "\n" + errors[: limit // 2] + rest)[:limit]


def error_record(stage, exc):
    """The exception chain (outermost first) and the innermost exception's last frames."""
    chain, seen, e, inner = [], set(), exc, exc
    while e is not None and id(e) not in seen and len(chain) < 8:
        seen.add(id(e))
        chain.append({"type": _qualified(e), "message": _bounded(str(e))})
        inner = e
        e = e.__cause__ or e.__context__
    frames = []
    for f in traceback.extract_tb(inner.__traceback__)[-12:]:
        path = f.filename.replace(os.sep, "/")
        for root in ("/torch/", "/tvm/", "/tvm_ffi/", "/onnx/", "/onnxscript/", "/onnxruntime/"):
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
    import torch._functorch.config
    import torch._inductor.config as inductor_config

    torch._dynamo.config.suppress_errors = False
    torch._dynamo.config.recompile_limit = 64
    # Every test compiles: a graph served from Inductor's or AOT Autograd's on-disk cache
    # (shared by every campaign on the machine) skips the compiler under test, and a test
    # would then depend on what ran before it.
    inductor_config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    torch.set_num_threads(1)
    os.environ.setdefault(*_PATTERN_COUNTS_ENV)
    _watch_lowerings(torch)
    return torch


# What the compilers did during one request: names of the optimizations that fired
# (returned as the response's "fired" list, cleared per request by `handle`).
_FIRED = set()

# Inductor counts matches per pattern only while this variable is set; a value naming no
# node turns the counts on without its per-node debug logging (`_should_debug_node`).
_PATTERN_COUNTS_ENV = ("TORCHINDUCTOR_PATTERN_MATCH_DEBUG", "dlcfuzz:count-only")


# Counter categories whose keys name the program, not the compiler's work (the line a
# graph break resumes at, a matmul's shapes).
_PROGRAM_NAMED_COUNTERS = ("resumes", "aten_mm_info")


def _counter_snapshot(torch):
    """Every Dynamo/AOT Autograd/Inductor counter and every integer Inductor metric, by
    name: per-pattern matches as `pattern:NAME`, the rest as `CATEGORY:KEY` (a multi-line
    key, a graph break's explanation, by its first line)."""
    from torch._dynamo.utils import counters
    from torch._inductor import metrics

    snap = {}
    for category, keys in counters.items():
        if category in _PROGRAM_NAMED_COUNTERS:
            continue
        prefix = "pattern" if category.endswith("_pattern_matcher_per_pattern") else category
        for key, value in keys.items():
            first = str(key).split("\n", 1)[0]
            snap[f"{prefix}:{first}"[:160]] = value
    for name, value in vars(metrics).items():
        if type(value) is int and not name.startswith("_"):
            snap[f"metrics:{name}"] = value
    return snap


def _fired_between(before, after):
    """The counters that grew from `before` to `after`."""
    return {k for k, v in after.items() if v > before.get(k, 0)}


def _watch_lowerings(torch):
    """Once per host: every ATen op Inductor lowers is recorded as `lowering:OP`, or as
    `fallback:OP` when Inductor runs it as an ATen fallback kernel."""
    from torch._inductor import graph, lowering

    original = graph.GraphLowering.call_function
    if getattr(original, "dlcfuzz_watch", False):
        return

    def call_function(self, target, args, kwargs):
        result = original(self, target, args, kwargs)
        if isinstance(target, torch._ops.OpOverload):
            kind = "fallback" if target in lowering.fallbacks else "lowering"
            _FIRED.add(f"{kind}:{target.name()}")
        return result

    call_function.dlcfuzz_watch = True
    graph.GraphLowering.call_function = call_function


def _batched(main):
    """`entry(*xs)`: `main` on every slice along a leading batch axis, outputs stacked. One
    compiled `entry` called with two batch sizes exercises guards and recompilation."""
    import torch

    def entry(*xs):
        outs = [main(*[x[b] for x in xs]) for b in range(xs[0].shape[0])]
        return tuple(torch.stack([o[k] for o in outs]) for k in range(len(outs[0])))

    return entry


def _holding_weights(torch, main, xs, slots):
    """A module that holds the inputs at `slots` (ascending) as parameters (no gradient), as a
    model holds its trained state, and calls `main` with them in their places; and the other
    inputs, its arguments. Under freezing Inductor folds parameters as constants (weight
    prepacking, convolution fusions, binary folding), which it never does with arguments."""

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.held = torch.nn.ParameterList(
                [torch.nn.Parameter(xs[k], requires_grad=False) for k in slots])

        def forward(self, *free):
            args = list(free)
            for k, weight in zip(slots, self.held):
                args.insert(k, weight)
            return main(*args)

    return Model(), [x for k, x in enumerate(xs) if k not in slots]


def _define(source):
    """The program's module. A real module: Dynamo resolves a function's globals through
    sys.modules[__name__]."""
    module = types.ModuleType("dlcfuzz_program")
    module.__file__ = "dlcfuzz_program.py"
    sys.modules[module.__name__] = module
    stage("define", lambda: exec(compile(source, module.__file__, "exec"), module.__dict__))
    return module


def _widened(torch, dtype):
    if dtype == torch.bool:
        return dtype
    return torch.float64 if dtype.is_floating_point else torch.int64


def _inputs(torch, req, blobs, device, widen=False):
    """The parameters: carrier arrays cast to their torch types ("as"), or to the widened
    types (every float as float64, every integer as int64)."""
    xs = []
    for spec in req["inputs"]:
        x = torch.from_numpy(array_of(spec, blobs))
        x = x.to(getattr(torch, spec.get("as", str(x.dtype).replace("torch.", ""))))
        if widen:
            x = x.to(_widened(torch, x.dtype))
        xs.append(x.to(device))
    return xs


def _perturbed(torch, xs, seed, ulps):
    """Float parameters moved by up to `ulps` units of their type's epsilon (relative)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for x in xs:
        if x.is_floating_point():
            noise = torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1
            eps = torch.finfo(x.dtype).eps * ulps
            x = (x.to(torch.float64) * (1 + eps * noise.to(x.device))).to(x.dtype)
        out.append(x)
    return out


def _watch_gradients(torch, roots):
    """Hooks every node of the autograd graph behind `roots`; the returned list gets an
    entry when a gradient flowing into some node is not finite."""
    seen, stack, bad = set(), [r.grad_fn for r in roots], []

    def hook(grad_inputs, grad_outputs):
        if any(g is not None and not bool(torch.isfinite(g).all()) for g in grad_outputs):
            bad.append(True)

    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_hook(hook)
        stack.extend(n for n, _ in node.next_functions)
    return bad


def _run(torch, fn, xs, backward, seed, watch=False):
    """`fn(*xs)` as a list of outputs; with `backward`, followed by the gradients of a
    seeded random-weighted sum of the differentiable outputs with respect to every float
    parameter (zeros where unused). With `watch`, gradients are returned as NaN when one
    flowing through the program was not finite anywhere: a decomposition may then multiply
    that infinity by 0 where eager's kernel selects 0, so the test is non-finite, as a
    non-finite forward value makes it."""
    if not backward:
        return list(fn(*[x.clone() for x in xs]))
    leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in xs]
    outs = list(fn(*leaves))
    g = torch.Generator().manual_seed(seed)
    terms = []
    for o in outs:
        if o.is_floating_point() and o.requires_grad:
            w = torch.rand(o.shape, generator=g, dtype=torch.float64).to(o.device)
            terms.append((o.to(torch.float64) * w).sum())
    wrt = [x for x in leaves if x.requires_grad]
    grads = [None] * len(wrt)
    bad = []
    if terms and wrt:
        loss = sum(terms)
        if watch and loss.grad_fn is not None:
            bad = _watch_gradients(torch, [loss])
        grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    grads = [torch.zeros_like(x) if gr is None else gr for x, gr in zip(wrt, grads)]
    if bad:
        grads = [torch.full_like(gr, float("nan")) for gr in grads]
    return [o.detach() for o in outs] + [gr.detach() for gr in grads]


def _host(out, torch, ts):
    """Outputs as blobs (bfloat16, which numpy lacks, as float32) and their torch types."""
    specs, dtypes = [], []
    for t in ts:
        dtypes.append(str(t.dtype).replace("torch.", ""))
        t = t.detach().to("cpu")
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)
        specs.append(out.tensor(t.numpy()))
    return specs, dtypes


class _Runs:
    """The named runs of one response: outputs as blobs with their torch types, or the
    failed stage's error record, each with its duration."""

    def __init__(self, torch):
        self.torch, self.out, self.runs = torch, Blobs(), []

    def record(self, name, thunk):
        start = time.perf_counter()
        try:
            result = stage(name, thunk)
        except StageFailed as f:
            self.runs.append({"name": name, "error": f.record, "seconds": time.perf_counter() - start})
            return False
        specs, dtypes = _host(self.out, self.torch, result)
        seconds = time.perf_counter() - start
        self.runs.append({"name": name, "outputs": specs, "dtypes": dtypes, "seconds": seconds})
        return True

    def response(self):
        return {"runs": self.runs}, self.out


def _program(req, blobs):
    """torch, the program's module, its entry and its inputs, and the eager run recorded
    first ("eager"); then, per request, `widened`: eager with every float as float64 and
    every integer as int64 (the program's type globals rebound), and `perturbed`: eager on
    float parameters moved by a few ulps, once per seed. `backward` appends gradients.
    `None` as the entry when eager failed."""
    torch = stage("setup", _torch_setup)
    torch._dynamo.reset()
    runs = _Runs(torch)
    device = req.get("device", "cpu")
    module = _define(req["source"])
    main = module.__dict__[req.get("entry", "main")]
    xs = _inputs(torch, req, blobs, device)
    backward = bool(req.get("backward"))
    seed = int(req.get("seed", 0))
    if not runs.record("eager", lambda: _run(torch, main, xs, backward, seed, watch=True)):
        return torch, runs, None, xs
    if req.get("widened"):
        wide = _inputs(torch, req, blobs, device, widen=True)
        saved = {k: v for k, v in module.__dict__.items() if k.startswith("DT_")}
        for k, v in saved.items():
            module.__dict__[k] = _widened(torch, v)
        # Integers promoted to floats (sigmoid of an int64) take the default dtype: float64
        # too, or the "exact" run computes those in float32 like eager.
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            runs.record("widened", lambda: _run(torch, main, wide, backward, seed))
        finally:
            torch.set_default_dtype(default)
            module.__dict__.update(saved)
    for k, ulps in enumerate(req.get("perturbed", [])):
        moved = _perturbed(torch, xs, seed + 1 + k, ulps)
        runs.record(f"perturbed{k}", lambda: _run(torch, main, moved, backward, seed))
    return torch, runs, main, xs


def _forget_openvino_options():
    """OpenVINO's torch.compile backend keeps the options of its last `aot_autograd` compile
    in a module global and applies them to every later compile in the process (a
    non-`aot_autograd` compile then silently falls back to Inductor; docs/findings row 67):
    cleared before each compile, so that every test compiles with its own options."""
    try:
        from openvino.frontend.pytorch.torchdynamo import backend as openvino_backend
    except ImportError:
        return
    if isinstance(getattr(openvino_backend, "openvino_options", None), dict):
        openvino_backend.openvino_options = {}


def torch_program(req, blobs):
    """Runs a torch program: eager and the conditioning runs of `_program`; then, with
    `compile` ({backend, options, dynamic, batches, config, mode, no_grad}): torch.compile of
    `main` (with the backend's `options`, or its `mode`) called once (no batches) or of a
    batched `main` on each batch size, Inductor's `config` patched, under `torch.no_grad()`
    when `no_grad`. `weights` (input positions, sent only for a forward test compiled once):
    `main` in a module that holds those inputs as parameters."""
    torch, runs, main, xs = _program(req, blobs)
    spec = req.get("compile")
    if main is not None and spec:
        import contextlib

        import torch._inductor.config as inductor_config

        backward, seed = bool(req.get("backward")), int(req.get("seed", 0))
        backend = spec.get("backend", "inductor")
        batches = spec.get("batches", [])
        fn, args = (_batched(main) if batches else main), xs
        if req.get("weights"):
            fn, args = _holding_weights(torch, main, xs, req["weights"])
        if backend == "openvino":
            _forget_openvino_options()
        # torch.compile takes a mode or options, not both.
        mode = {"mode": spec["mode"]} if spec.get("mode") else {}
        compiled = torch.compile(fn, backend=backend, dynamic=bool(spec.get("dynamic")),
                                 options=None if mode else spec.get("options") or None, **mode)
        # Inductor compiles on the first call: the patch must cover the calls.
        patch = spec.get("config") or {}
        grad = torch.no_grad() if spec.get("no_grad") else contextlib.nullcontext()
        before = _counter_snapshot(torch)
        with grad, inductor_config.patch(patch) if patch else contextlib.nullcontext():
            if not batches:
                runs.record(f"compile:{backend}", lambda: _run(torch, compiled, args, backward, seed))
            for batch in batches:
                stacked = [torch.stack([x] * batch) for x in xs]
                name = f"compile:{backend}:batch{batch}"
                if not runs.record(name, lambda: [r[batch - 1] for r in compiled(*stacked)]):
                    break
        _FIRED.update(_fired_between(before, _counter_snapshot(torch)))
    return runs.response()


def _exportable(torch, main, xs):
    """An nn.Module whose forward takes tensors named x0, x1, ... (the exporter names the
    ONNX inputs after them) and calls `main`. numpy, and so ONNX Runtime's Python API, has
    no bfloat16: bfloat16 parameters come in as float32 and are cast inside, bfloat16
    outputs leave as float32 (both exact), so the computation stays bfloat16."""
    names = ", ".join(f"x{k}" for k in range(len(xs)))
    types = [x.dtype for x in xs]

    def call(*args):
        outs = main(*[a.to(t) for a, t in zip(args, types)])
        return tuple(o.to(torch.float32) if o.dtype == torch.bfloat16 else o for o in outs)

    scope = {"call": call}
    exec(f"def forward(self, {names}):\n    return call({names})\n", scope)
    return type("Program", (torch.nn.Module,), {"forward": scope["forward"]})()


def _fed(torch, xs):
    """The exported model's arguments: bfloat16 as float32."""
    return [x.to(torch.float32) if x.dtype == torch.bfloat16 else x for x in xs]


def _onnx_feed(session_inputs, xs):
    """ONNX Runtime's feed: each model input by its name (x<k>), else by position."""
    feed = {}
    for pos, i in enumerate(session_inputs):
        k = int(i.name[1:]) if i.name[:1] == "x" and i.name[1:].isdigit() else pos
        feed[i.name] = xs[k].detach().cpu().numpy()
    return feed


def _like(torch, results, eager_dtypes):
    """ONNX results as tensors, those eager gives as bfloat16 cast back (exact)."""
    out = []
    for k, r in enumerate(results):
        t = torch.from_numpy(r)
        if k < len(eager_dtypes) and eager_dtypes[k] == "bfloat16" and t.dtype == torch.float32:
            t = t.to(torch.bfloat16)
        out.append(t)
    return out


_ONNX_TO_TORCH = {
    "float": "float32", "double": "float64", "float16": "float16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "bool": "bool",
}


@functools.lru_cache(maxsize=1)
def _ort_cpu_kernels():
    """ONNX Runtime's CPU kernel definitions by (domain, op type), read once per host."""
    import onnxruntime.capi._pybind_state as C

    kernels = {}
    for k in C.get_all_opkernel_def():
        if k.provider == "CPUExecutionProvider":
            kernels.setdefault((k.domain or "", k.op_name), []).append(k)
    return kernels


def _ort_cpu_types(model, data):
    """The element types (torch names) ONNX Runtime's CPU kernel table registers, at the
    model's opsets, for every op of `model`'s graph (local functions inlined) that reads the data: whose first input
    has element type `data` (a torch name: the probed row's argument type; ops on masks,
    indices or shapes say nothing about the data's types); float16 always, since ONNX
    Runtime casts float16 ops without a kernel to float32 itself. None when no such op is
    in the table."""
    import onnx
    import onnx.inliner

    kernels = _ort_cpu_kernels()
    # The exporter writes some rows as local functions (hardswish calls HardSigmoid, mish
    # Softplus): inlined, their ops are read like the graph's own.
    model = onnx.inliner.inline_local_functions(model)
    graph = onnx.shape_inference.infer_shapes(model).graph
    typed = {v.name: v.type.tensor_type.elem_type for v in [*graph.input, *graph.value_info, *graph.output]}
    typed.update({t.name: t.data_type for t in graph.initializer})
    onnx_name = {torch: onnx_ for onnx_, torch in _ONNX_TO_TORCH.items()}[data]
    data = getattr(onnx.TensorProto, onnx_name.upper())
    opsets = {o.domain or "": o.version for o in model.opset_import}
    handled = None
    for n in graph.node:
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        if not n.input or typed.get(n.input[0]) != data:
            continue
        for op in _kernel_ops(kernels, domain, n.op_type, opsets.get(domain)):
            types = _kernel_types(kernels, op, opsets.get(domain))
            names = {_ONNX_TO_TORCH[t] for t in types if t in _ONNX_TO_TORCH} | {"float16"}
            handled = names if handled is None else handled & names
    return None if handled is None else sorted(handled)


def _kernel_ops(kernels, domain, op_type, version):
    """The ops ONNX Runtime runs for `op_type` on its data: the op itself when its CPU kernel
    table has it, else (an ONNX function such as HardSwish or Mish, which ONNX Runtime
    expands at load) the ops of the function body that read the function's first input."""
    if (domain, op_type) in kernels:
        return [(domain, op_type)]
    import onnx.defs

    try:
        schema = onnx.defs.get_schema(op_type, version or onnx.defs.onnx_opset_version(), domain)
    except Exception:  # noqa: BLE001 - not an ONNX op: nothing to learn
        return []
    if not schema.has_function:
        return []
    body = schema.function_body
    first = body.input[0] if body.input else None
    return [(domain, m.op_type) for m in body.node if m.input and m.input[0] == first and (domain, m.op_type) in kernels]


def _kernel_types(kernels, op, version):
    """The element types (ONNX names) ONNX Runtime's CPU kernels of `op` take at opset
    `version`."""
    types = set()
    for k in kernels[op]:
        low, high = k.version_range
        if version is None or low <= version <= high:
            for listed in k.type_constraints.values():
                types.update(t[len("tensor("):-1] for t in listed if t.startswith("tensor("))
    return types


def torch_onnx_export(req, blobs):
    """A torch program through the PyTorch ONNX exporter: eager (and the conditioning runs
    of `_program`), then `torch.onnx.export` with the wheel's defaults ("export"), the ONNX
    checker with full shape inference ("check", recorded only when it fails), and ONNX
    Runtime with every graph optimization disabled ("ort"); with `reference`, the `onnx` package's reference
    implementation on the same model ("onnx-reference"). The exported model comes back as
    the response's `model` blob."""
    torch, runs, main, xs = _program(req, blobs)
    if main is None or not req.get("export", True):
        return runs.response()
    import onnx
    import onnxruntime as ort

    fed = _fed(torch, xs)
    eager_dtypes = runs.runs[0]["dtypes"]

    def export():
        program = torch.onnx.export(_exportable(torch, main, xs), tuple(fed))
        return program.model_proto

    try:
        data = stage("export", export).SerializeToString()
    except StageFailed as f:
        runs.runs.append({"name": "export", "error": f.record})
        return runs.response()
    # A model the checker rejects still goes to ONNX Runtime: when it runs and matches
    # eager, the checker's shape inference is the one at odds with the spec.
    try:
        stage("check", lambda: onnx.checker.check_model(onnx.load_from_string(data), full_check=True))
    except StageFailed as f:
        runs.runs.append({"name": "check", "error": f.record})
    header, out = runs.response()
    out.items.append(data)
    header["model"] = len(out.items) - 1
    if req.get("kernel_types"):
        header["ort_types"] = _ort_cpu_types(onnx.load_from_string(data), req["kernel_types"])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1

    def onnx_runtime():
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        results = session.run(None, _onnx_feed(session.get_inputs(), fed))
        return _like(torch, results, eager_dtypes)

    runs.record("ort", onnx_runtime)
    if req.get("reference"):
        import numpy as np
        from onnx.reference import ReferenceEvaluator

        def reference():
            evaluator = ReferenceEvaluator(onnx.load_from_string(data))
            inputs = [type("I", (), {"name": n})() for n in evaluator.input_names]
            results = evaluator.run(None, _onnx_feed(inputs, fed))
            return _like(torch, [np.asarray(r) for r in results], eager_dtypes)

        runs.record("onnx-reference", reference)
    return header, out


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


# ------------------------------------------------------------------------------ coverage

# Modules Dynamo traces into rather than running (torch 2.15's trace_rules inline lists):
# never probed, so that Dynamo never sees a probe in the code it compiles.
_DYNAMO_INLINED = (
    "torch._dynamo.external_utils", "torch._dynamo._trace_wrapped_higher_order_op",
    "torch._dynamo.compiled_autograd", "torch._dynamo.comptime", "torch._dynamo.polyfills",
    "torch._dynamo.test_case", "torch._functorch.apis", "torch._functorch.deprecated",
    "torch._functorch._aot_autograd.subclass_parametrization",
    "torch._functorch.autograd_function", "torch._functorch.eager_transforms",
    "torch._functorch.functional_call", "torch._functorch.pyfunctorch", "torch._functorch.vmap",
    "torch._inductor.test_operators",
)
# Bump when the instrumentation changes: cached instrumented code of another version is stale.
_PROBES_VERSION = 1


def _within(name, packages):
    return any(name == p or name.startswith(p + ".") for p in packages)


class _LineProbes:
    """Line coverage of the compilers' own Python code at a few percent of a compile.

    Any trace function (sys.settrace, coverage.py's C tracer) puts CPython 3.11 into its
    tracing mode, which runs *all* Python code unspecialized: measured, +57 % on the Python
    side of an Inductor compile with nothing traced. So instead, the modules of the scope
    (DLCFUZZ_PY_COVERAGE_SCOPE: path prefixes such as "torch/_inductor/", read at start-up,
    before anything imports them) are compiled from source with one probe before each
    statement, `__dlcfuzz_lines__[k] = 1`, where `__dlcfuzz_lines__` is the module's own hit
    list and k the statement's line's index in it; everything else runs untouched. Line
    numbers, file names and the source are unchanged (tracebacks, inspect and Dynamo's
    file-based rules see the original); docstrings and __future__ imports stay first. The
    instrumented code is cached (marshal) under DLCFUZZ_PY_COVERAGE_CACHE, keyed by the
    source's digest, Python's version and _PROBES_VERSION.

    Each request clears every hit list first, and its response returns the lines hit
    meanwhile, as the header {"files": [paths from the prefix on], "lines": [count per
    file], "blob": index} and one blob of u32 LE line numbers, file by file."""

    NAME = "__dlcfuzz_lines__"

    def __init__(self, prefixes, cache):
        self.prefixes = tuple(prefixes)
        self.packages = tuple(p.strip("/").replace("/", ".") for p in self.prefixes)
        self.cache = cache
        self.files = {}  # path from the prefix on -> (lines, hit list)
        # Code of a probed module run with other globals finds this sink (as large as the
        # largest hit list) among the builtins.
        self.sink = []
        import builtins

        setattr(builtins, self.NAME, self.sink)

    def find_spec(self, fullname, path, target=None):
        """A meta path finder: the scope's source modules get a probing loader."""
        if not _within(fullname, self.packages) or _within(fullname, _DYNAMO_INLINED):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _ProbingLoader(spec.loader.name, spec.loader.path, self)
        return spec

    def relative(self, path):
        path = path.replace(os.sep, "/")
        for prefix in self.prefixes:
            at = path.rfind("/" + prefix)
            if at >= 0:
                return path[at + 1:]
        return path

    def instrumented(self, path, source):
        """The probed code of `source` and the line of each probe index, from the cache
        when there."""
        import hashlib
        import marshal

        key = (sys.version, _PROBES_VERSION, hashlib.sha256(source).hexdigest())
        stored = None
        if self.cache:
            name = hashlib.sha256(path.encode()).hexdigest()[:32] + ".bin"
            stored = os.path.join(self.cache, name)
            try:
                with open(stored, "rb") as f:
                    cached_key, lines, code = marshal.load(f)
                if cached_key == key:
                    return code, lines
            except (OSError, EOFError, ValueError, TypeError):
                pass
        code, lines = self.compile(source, path)
        if stored:
            try:
                os.makedirs(self.cache, exist_ok=True)
                partial = f"{stored}.{os.getpid()}"
                with open(partial, "wb") as f:
                    marshal.dump((key, lines, code), f)
                os.replace(partial, stored)
            except OSError:
                pass
        return code, lines

    def compile(self, source, path):
        import ast

        tree = ast.parse(source, path)
        index, lines = {}, []

        def probe(stmt):
            k = index.get(stmt.lineno)
            if k is None:
                k = index[stmt.lineno] = len(lines)
                lines.append(stmt.lineno)
            target = ast.Subscript(ast.Name(self.NAME, ast.Load()), ast.Constant(k), ast.Store())
            return ast.copy_location(ast.Assign([target], ast.Constant(1)), stmt)

        def stays_first(k, stmt):
            docstring = k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str)
            return docstring or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__")

        for node in list(ast.walk(tree)):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(node, field, None)
                if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                    probed = []
                    for k, stmt in enumerate(body):
                        if not stays_first(k, stmt):
                            probed.append(probe(stmt))
                        probed.append(stmt)
                    setattr(node, field, probed)
        return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True), lines

    def hit_list(self, path, lines):
        """The hit list of a module just loaded from `path`."""
        hits = [0] * len(lines)
        self.files[self.relative(path)] = (lines, hits)
        self.sink.extend([0] * (len(hits) - len(self.sink)))
        return hits

    def clear(self):
        for _, hits in self.files.values():
            hits[:] = bytes(len(hits))

    def attach(self, response, out):
        """Adds the lines hit since `clear` to the response."""
        import itertools

        files, counts, blob = [], [], []
        for rel in sorted(self.files):
            lines, hits = self.files[rel]
            covered = sorted(itertools.compress(lines, hits))
            if covered:
                files.append(rel)
                counts.append(len(covered))
                blob.append(struct.pack(f"<{len(covered)}I", *covered))
        out.items.append(b"".join(blob))
        response["coverage"] = {"files": files, "lines": counts, "blob": len(out.items) - 1}


class _ProbingLoader(importlib.machinery.SourceFileLoader):
    """Loads a module of the coverage scope with line probes (see `_LineProbes`)."""

    def __init__(self, fullname, path, probes):
        super().__init__(fullname, path)
        self.probes = probes

    def exec_module(self, module):
        path = self.get_filename(module.__name__)
        code, lines = self.probes.instrumented(path, self.get_data(path))
        module.__dict__[_LineProbes.NAME] = self.probes.hit_list(path, lines)
        exec(code, module.__dict__)


def _install_probes():
    """The line probes of DLCFUZZ_PY_COVERAGE_SCOPE (comma-separated), or None."""
    scope = [p for p in os.environ.get("DLCFUZZ_PY_COVERAGE_SCOPE", "").split(",") if p]
    if not scope:
        return None
    probes = _LineProbes(scope, os.environ.get("DLCFUZZ_PY_COVERAGE_CACHE"))
    sys.meta_path.insert(0, probes)
    return probes


_PROBES = _install_probes()


def handle(header, blobs):
    """The response to one request, with the lines it hit when the host has probes and the
    optimizations that fired during it."""
    if _PROBES is not None:
        _PROBES.clear()
    _FIRED.clear()
    response, out = HANDLERS[header["op"]](header, blobs)
    if _PROBES is not None:
        _PROBES.attach(response, out)
    if _FIRED:
        response["fired"] = sorted(_FIRED)
    return response, out


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
    if req.get("inductor_cxx"):
        # Only when asked: importing Inductor costs a second of start-up.
        try:
            from torch._inductor import cpp_builder

            versions["inductor_cxx"] = cpp_builder.get_cpp_compiler()
        except Exception as exc:  # noqa: BLE001
            versions["inductor_cxx"] = None
            versions["inductor_cxx_error"] = f"{type(exc).__name__}: {exc}"
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
        if kind == "compile_error_after_warnings":
            warnings = "".join(f"cpp_prefix.h:{k}: warning: planted\n" for k in range(400))
            raise RuntimeError(
                "C++ compile error\n" + warnings + "k.cpp:1:1: error: no matching function for call to 'planted()'\n"
            )
        raise ValueError(f"unknown fault {kind}")

    try:
        stage("compile:planted", planted)
    except StageFailed as f:
        return {"runs": [{"name": "planted", "error": f.record}]}, Blobs()


HANDLERS = {
    "hello": hello,
    "torch_program": torch_program,
    "torch_onnx_export": torch_onnx_export,
    "tvm_run": tvm_run,
    "fault": fault,
}


def serve():
    while True:
        frame = read_frame()
        if frame is None:
            return
        header, blobs = frame
        try:
            response, out = handle(header, blobs)
            response["ok"] = True
            write_frame(response, out.items)
        except Exception as exc:  # noqa: BLE001 - a failing request must not end the host
            write_frame({"ok": False, "error": error_record("host", exc)}, [])


serve()
