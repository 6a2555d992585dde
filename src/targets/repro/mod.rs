//! Standalone `repro.py` scripts: those of ONNX models on a backend with a Python package
//! ([`model`]), and those of the Python-hosted targets below, which need only torch
//! (TorchScript, torch.compile) or tvm and onnx (TVM),
//! hold the inputs inline as little-endian hex, and fail (an assertion or the compiler's own
//! exception) while the bug is there.

pub mod model;

use super::compile_mode::{Compiler, Mode};
use crate::ir::{ScalarType, Tensor};
use std::fmt::Write;

/// `name = [...]`: numpy arrays rebuilt from hex.
fn inputs_literal(name: &str, inputs: &[&Tensor]) -> String {
    let mut out = format!("{name} = [\n");
    for t in inputs {
        let hex: String = t
            .data
            .to_le_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let _ = writeln!(
            out,
            "    np.frombuffer(bytes.fromhex(\"{hex}\"), dtype=np.dtype(\"{}\").newbyteorder(\"<\")).reshape({:?}).copy(),",
            t.data.dtype().numpy_name(),
            t.shape
        );
    }
    out.push_str("]\n");
    out
}

/// The end of every reproducer: runs `check()` and exits 1 when the bug shows (a mismatch,
/// or the compiler's own exception, printed without a traceback so that the newest-release
/// check can tell a live bug from a broken script), 0 when it does not. A native crash shows
/// as the process dying.
const VERDICT: &str = r#"

def verdict():
    import traceback
    try:
        check()
    except AssertionError as e:
        print("mismatch:", str(e).strip().splitlines()[:6])
        print("reproduced")
        sys.exit(1)
    except Exception as e:  # the compiler's own error is the bug
        print("".join(traceback.format_exception_only(type(e), e)).strip()[-2000:])
        print("reproduced")
        sys.exit(1)
    print("not reproduced")
    sys.exit(0)


verdict()
"#;

/// A torch.compile reproducer: `source` (defining `main`, with the `DT_*` type globals) on
/// `inputs` (carrier values and the torch types they are cast to), eager vs
/// `torch.compile` in `mode` (dynamic shapes; backward: gradients of a seeded random-weighted
/// sum of the outputs; recompile: a batched `main` on batch sizes 1 and 2; otherwise the
/// inputs at `weights` held as module parameters, as the campaign compiled them), each output
/// compared within its type's tolerance.
pub fn torch_compile(
    source: &str,
    inputs: &[(&Tensor, ScalarType)],
    weights: &[usize],
    mode: Mode,
    device: &str,
    compiler: Compiler,
) -> String {
    let py = |b: bool| if b { "True" } else { "False" };
    let values: Vec<&Tensor> = inputs.iter().map(|(t, _)| *t).collect();
    let types: Vec<&str> = inputs.iter().map(|(_, s)| s.torch_name()).collect();
    format!(
        r#""""torch.compile reproducer written by dlcfuzz: eager vs compiled, each output within
its type's tolerance. Usage: python3 repro.py [backend] ({backend} by default; aot_eager
tells the backend's bugs from Dynamo's and AOT Autograd's)."""
import contextlib
import json
import sys

import numpy as np
import torch
import torch._inductor.config

print("release: torch", torch.__version__)
# ---- the program
{source}
# ---- the inputs
{inputs}
TYPES = {types:?}
DYNAMIC, BACKWARD, RECOMPILE = {dynamic}, {backward}, {recompile}
# Inputs the compiled program holds as module parameters (a model's weights).
WEIGHTS = {weights:?}
# Inductor's configuration as the fuzzer compiled with it (mode, config patch, no_grad).
MODE, CONFIG, NO_GRAD = {compile_mode}, json.loads({config:?}), {no_grad}
{tolerance}
backend = sys.argv[1] if len(sys.argv) > 1 else "{backend}"
options = {options} if backend == "{backend}" else None
if backend != "inductor":
    MODE, CONFIG, NO_GRAD = None, {{}}, False
kwargs = dict(mode=MODE) if MODE else dict(options=options)
xs = [torch.from_numpy(a).to(getattr(torch, t)).to("{device}") for a, t in zip(arrays, TYPES)]


def run(fn):
    if not BACKWARD:
        return list(fn(*[x.clone() for x in xs]))
    leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in xs]
    outs = list(fn(*leaves))
    g = torch.Generator().manual_seed(0)
    terms = [(o.to(torch.float64) * torch.rand(o.shape, generator=g, dtype=torch.float64).to(o.device)).sum()
             for o in outs if o.is_floating_point() and o.requires_grad]
    wrt = [x for x in leaves if x.requires_grad]
    grads = torch.autograd.grad(sum(terms), wrt, allow_unused=True) if terms and wrt else [None] * len(wrt)
    return [o.detach() for o in outs] + [torch.zeros_like(x) if d is None else d for x, d in zip(wrt, grads)]


class Model(torch.nn.Module):
    """`main` with the inputs at WEIGHTS (ascending) held as parameters, called with the others."""

    def __init__(self):
        super().__init__()
        self.held = torch.nn.ParameterList([torch.nn.Parameter(xs[k], requires_grad=False) for k in WEIGHTS])

    def forward(self, *free):
        args = list(free)
        for k, weight in zip(WEIGHTS, self.held):
            args.insert(k, weight)
        return main(*args)


def batched(*xs):
    outs = [main(*[x[b] for x in xs]) for b in range(xs[0].shape[0])]
    return tuple(torch.stack([o[k] for o in outs]) for k in range(len(outs[0])))


def compare(name, want, got):
    for k, (w, g) in enumerate(zip(want, got)):
        assert g.dtype == w.dtype, f"{{name}}, output {{k}}: {{g.dtype}} where eager gives {{w.dtype}}"
        rtol, atol = TOLERANCE[str(w.dtype).replace("torch.", "")]
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                   msg=lambda m: f"{{name}}, output {{k}}: {{m}}")


def check():
    eager = run(main)
    grad = torch.no_grad() if NO_GRAD else contextlib.nullcontext()
    with grad, torch._inductor.config.patch(CONFIG):
        if RECOMPILE:
            compiled = torch.compile(batched, backend=backend, dynamic=DYNAMIC, **kwargs)
            for batch in (1, 2):
                result = compiled(*[torch.stack([x] * batch) for x in xs])
                compare(f"batch {{batch}}", eager, [r[batch - 1] for r in result])
        elif WEIGHTS:
            compiled = torch.compile(Model(), backend=backend, dynamic=DYNAMIC, **kwargs)
            compare("compiled", eager, run(lambda *a: compiled(*[a[k] for k in range(len(a)) if k not in WEIGHTS])))
        else:
            compare("compiled", eager, run(torch.compile(main, backend=backend, dynamic=DYNAMIC, **kwargs)))
{verdict}"#,
        inputs = inputs_literal("arrays", &values),
        dynamic = py(mode.dynamic),
        backward = py(mode.backward),
        recompile = py(mode.recompile),
        weights = if mode.weights_as_parameters() {
            weights
        } else {
            &[]
        },
        compile_mode = mode
            .setting
            .compile_mode()
            .map_or("None".to_string(), |m| format!("{m:?}")),
        config = mode.setting.config().to_string(),
        no_grad = py(mode.setting.no_grad()),
        tolerance = tolerance_literal(),
        verdict = VERDICT,
        backend = compiler.backend(),
        options = compiler.python_options(mode),
    )
}

/// `TOLERANCE = {...}`: every torch type's `(rtol, atol)`, as the campaign's first check.
fn tolerance_literal() -> String {
    let tolerances: Vec<String> = ScalarType::ALL
        .iter()
        .map(|s| {
            let (r, a) = s.tolerance();
            format!("\"{}\": ({r:e}, {a:e})", s.torch_name())
        })
        .collect();
    format!("TOLERANCE = {{{}}}", tolerances.join(", "))
}

/// A PyTorch ONNX exporter reproducer: `source` (defining `main`) on `inputs`, exported by
/// `torch.onnx.export` with the wheel's defaults, checked by the ONNX checker and run by
/// ONNX Runtime with graph optimizations disabled, each output compared with eager within
/// its type's tolerance. Needs torch, onnxscript (the exporter's dependency), onnx and
/// onnxruntime.
pub fn torch_onnx_export(source: &str, inputs: &[(&Tensor, ScalarType)]) -> String {
    let values: Vec<&Tensor> = inputs.iter().map(|(t, _)| *t).collect();
    let types: Vec<&str> = inputs.iter().map(|(_, s)| s.torch_name()).collect();
    format!(
        r#""""torch.onnx.export reproducer written by dlcfuzz: the program exported with the
wheel's default exporter, checked, and run by ONNX Runtime (no graph optimizations) against
torch eager, each output within its type's tolerance."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch

print("release: torch", torch.__version__, "onnxruntime", ort.__version__)
# ---- the program
{source}
# ---- the inputs
{inputs}
TYPES = {types:?}
{tolerance}
xs = [torch.from_numpy(a).to(getattr(torch, t)) for a, t in zip(arrays, TYPES)]


# numpy has no bfloat16: such parameters enter the model as float32 and are cast inside,
# such outputs leave it as float32 (both exact).
fed = [x.float() if x.dtype == torch.bfloat16 else x for x in xs]


class Program(torch.nn.Module):
    def forward(self, *args):
        outs = main(*[a.to(x.dtype) for a, x in zip(args, xs)])
        return tuple(o.float() if o.dtype == torch.bfloat16 else o for o in outs)


def check():
    eager = list(main(*[x.clone() for x in xs]))
    exported = torch.onnx.export(Program(), tuple(fed))
    model = exported.model_proto
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {{i.name: x.numpy() for i, x in zip(session.get_inputs(), fed)}}
    got = session.run(None, feed)
    assert len(got) == len(eager), f"{{len(got)}} outputs, eager has {{len(eager)}}"
    for k, (w, g) in enumerate(zip(eager, got)):
        g = torch.from_numpy(np.asarray(g))
        g = g.to(torch.bfloat16) if w.dtype == torch.bfloat16 else g
        assert g.dtype == w.dtype, f"output {{k}}: {{g.dtype}} where eager gives {{w.dtype}}"
        rtol, atol = TOLERANCE[str(w.dtype).replace("torch.", "")]
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                   msg=lambda m: f"output {{k}}: {{m}}")
{verdict}"#,
        inputs = inputs_literal("arrays", &values),
        tolerance = tolerance_literal(),
        verdict = VERDICT,
    )
}

/// A TVM reproducer for `model.onnx` beside it: the plain build against the build after
/// `passes`.
pub fn tvm(passes: &[String], input_names: &[String], inputs: &[&Tensor], target: &str) -> String {
    format!(
        r#""""TVM Relax reproducer written by dlcfuzz: model.onnx (beside this file) imported
with from_onnx, built plain and after the pass sequence, for {target}."""
import os
import sys

import numpy as np
import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

print("release: tvm", tvm.__version__)
MODEL = onnx.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx"))
PASSES = {passes:?}
NAMES = {input_names:?}
{inputs}

def make(name):
    t = relax.transform
    special = {{
        "DeadCodeElimination": lambda: t.DeadCodeElimination(["main"]),
        "ToMixedPrecision": lambda: t.ToMixedPrecision(out_dtype="float32"),
        "AlterOpImpl": lambda: t.AlterOpImpl({{}}, {{}}),
    }}
    return special[name]() if name in special else getattr(t, name)()


def build_and_run(passes):
    mod = from_onnx(MODEL, shape_dict={{n: list(a.shape) for n, a in zip(NAMES, arrays)}})
    for p in passes:
        print("applying", p)
        mod = make(p)(mod)
    device = tvm.cuda(0) if "{target}".startswith("cuda") else tvm.cpu(0)
    vm = relax.VirtualMachine(tvm.compile(mod, target="{target}"), device)
    out = vm["main"](*[tvm.runtime.tensor(a, device) for a in arrays])
    out = out if isinstance(out, (list, tuple)) or not hasattr(out, "numpy") else [out]
    return [np.asarray(list(o)) if not hasattr(o, "numpy") else o.numpy() for o in out]


def check():
    plain = build_and_run([])
    with_passes = build_and_run(PASSES)
    for k, (a, b) in enumerate(zip(plain, with_passes)):
        np.testing.assert_allclose(b, a, atol=1e-3, rtol=1e-3, err_msg=f"output {{k}}")
{verdict}"#,
        inputs = inputs_literal("arrays", inputs),
        verdict = VERDICT,
    )
}

/// A TorchScript reproducer: `source` (TorchScript, defining `main`) compiled with libtorch's
/// name resolution (`torch.f` is the ATen operator f), run under the plain interpreter and then three times under
/// the optimizing profiling executor (the third run uses the optimized plan), each against
/// `expected` (libtorch eager on the original graph).
pub fn torchscript(source: &str, inputs: &[&Tensor], expected: &[Tensor], device: &str) -> String {
    format!(
        r#""""TorchScript reproducer written by dlcfuzz: the program below compiled by the JIT, run
plain and under the optimizing profiling executor, against the eager results (EXPECTED)."""
import sys

import numpy as np
import torch

print("release: torch", torch.__version__)
SOURCE = '''
{source}
'''
{inputs}
{expected}
xs = [torch.from_numpy(a).to("{device}") for a in arrays]
MODES = [("jit-plain", False, 1), ("jit-optimized", True, 3)]


def compile_like_libtorch(source):
    """The source compiled as dlcfuzz's C++ harness compiles it (torch::jit::compile), where
    `torch.f` names the ATen operator f (torch.elu, torch.softplus, ...): Python's own
    resolver would look f up in the torch module instead."""
    cu = torch._C.CompilationUnit()
    cu.define(source, lambda name: torch.ops.aten if name == "torch" else None)
    return cu.find_function("main")


def check():
    for name, optimize, runs in MODES:
        torch._C._set_graph_executor_optimize(optimize)
        torch._C._jit_set_profiling_executor(optimize)
        main = compile_like_libtorch(SOURCE)
        for run in range(1, runs + 1):
            got = main(*[x.clone() for x in xs])
            got = got if isinstance(got, tuple) else (got,)
            for k, (want, g) in enumerate(zip(expected, got)):
                torch.testing.assert_close(g.cpu(), torch.from_numpy(want), atol=1e-3, rtol=1e-3,
                                           msg=lambda m: f"{{name}}#{{run}}, output {{k}}: {{m}}")
{verdict}"#,
        inputs = inputs_literal("arrays", inputs),
        expected = inputs_literal("expected", &expected.iter().collect::<Vec<_>>()),
        verdict = VERDICT,
    )
}
