//! The torch.compile targets (`torch_compile_cpu`, `torch_compile_cuda`): torch-surface
//! programs ([`SurfaceSource`]) with TorchProbe's mutations, rendered as plain Python
//! (closures, hoisted nested functions, writes through views, data-dependent `if`, loops,
//! comprehensions), run in the Python host: eager, then `torch.compile(backend="inductor")`
//! with Inductor's own settings. Oracle: compiled vs eager, judged by
//! [`crate::oracle::accuracy`] (a widened float64/int64 run and perturbed eager runs tell
//! bugs from rounding, undefined behaviour and ill-conditioned outputs); a different
//! output type or shape is always a finding. A mismatch is localized on the
//! eager → aot_eager → inductor ladder: when `aot_eager` matches eager, the bug is
//! Inductor's, else Dynamo's or AOT Autograd's.
//!
//! Input bytes: one mode byte, then the program plan and the generator's bytes. Each mode
//! takes a quarter of the bytes (two bits set): bits 0–1 `dynamic=True`; bits 2–3 backward
//! (gradients of a random-weighted sum of the outputs with respect to every float
//! parameter, compiled vs eager); bits 4–5, forward only: a batched `main` compiled once and
//! called with batch sizes 1 and 2 (a guard failure and a recompilation). Otherwise `main`
//! is compiled and called once. Each input packs [`COMPONENTS`] independent programs into
//! one compiled function (Inductor's cost per compilation is mostly fixed; each output
//! belongs to one program, so a finding is still attributed).

use super::compile_mode::{Compiler, Mode, Setting};
use super::hosted::{call, covered, stage_failure};
use super::surface::{
    first_wrong_clause, judge_against_eager, locate_first_wrong, run_dtypes, Judged, SurfaceSource,
    SurfaceTest, PERTURBATIONS,
};
use super::{repro, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun};
use crate::backend::python::frame::Frame;
use crate::backend::python::{coverage, request_timeout, runs, HostConfig, PythonHost, Run};
use crate::gen::{padded_head, TestCase};
use crate::ir::ScalarType;
use crate::mutate::program::render::{render, Dialect};
use crate::mutate::program::resolve::loops_as_comprehensions;
use crate::mutate::program::Var;
use crate::oracle::accuracy::error;
use crate::oracle::{Finding, FindingKind, Skip, Verdict};
use crate::reduce::program::Outline;
use crate::reduce::Edit;
use crate::torch::gen::Lacks;
use crate::torch::ops::table;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

/// The backend name in signatures.
const BACKEND: &str = "torch.compile";

/// The clause a finding's detail gains when writing its program's loop-filled buffers as
/// list comprehensions makes it go away (the known-upstream table matches on it).
pub const LOOP_FILLED_BUFFER_BLAME: &str =
    "gone with the loop-filled buffers written as list comprehensions";
/// Independent programs packed into one compilation (each output belongs to one).
pub const COMPONENTS: usize = 3;
/// Inductor config switches tried, in order, on an Inductor finding: the first that makes
/// it go away names the optimization at fault (`torch._inductor.config.patch` keys, as
/// JSON). Each costs one compilation.
pub const INDUCTOR_SWITCHES: [(&str, &str); 6] = [
    ("pattern matcher", r#"{"pattern_matcher": false}"#),
    (
        "fusion",
        r#"{"max_fusion_size": 1, "epilogue_fusion": false, "aggressive_fusion": false}"#,
    ),
    ("vectorization", r#"{"cpp.simdlen": 1}"#),
    ("split reductions", r#"{"split_reductions": false}"#),
    (
        "loop reordering",
        r#"{"reorder_for_locality": false, "loop_ordering_after_fusion": false}"#,
    ),
    ("cpp_wrapper", r#"{"cpp_wrapper": true}"#),
];

/// A torch.compile test setup.
pub struct TorchCompileHarness {
    info: &'static TargetInfo,
    /// The backend under test.
    pub compiler: Compiler,
    /// Where programs come from.
    pub source: SurfaceSource,
    /// `cpu` or `cuda`.
    pub device: &'static str,
    /// torch's version in the Python host.
    pub torch_version: String,
    host: Mutex<PythonHost>,
    /// Seconds and calls per host run kind (`compile:eager`, `compile:inductor`, ...).
    timings: Mutex<BTreeMap<String, (f64, usize)>>,
}

impl FuzzTarget for TorchCompileHarness {
    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        format!("torch.compile (torch {})", self.torch_version)
    }

    fn reference_level(&self) -> &str {
        "eager"
    }

    fn newest_env(&self) -> super::NewestEnv {
        super::NewestEnv::python_compilers(&self.version())
    }

    fn decode(&self, _bytes: &[u8]) -> Option<TestCase> {
        None
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], _inflight: Option<&Path>) -> TargetRun {
        self.test(bytes, edits)
    }

    fn timings(&self) -> Option<Value> {
        let timings = self.timings.lock().unwrap_or_else(|p| p.into_inner());
        Some(json!(timings
            .iter()
            .map(|(k, (s, n))| (k.clone(), json!({"seconds": s, "runs": n})))
            .collect::<serde_json::Map<String, Value>>()))
    }

    fn capabilities(&self) -> Option<String> {
        Some(self.source.capabilities())
    }

    fn outline(&self, bytes: &[u8]) -> Option<Outline> {
        let (_, rest) = padded_head::<1>(bytes);
        Some(self.source.outline(rest))
    }

    /// The program as tested needs the eager profile (EMI conditions read profiled values,
    /// a reduction's cuts feed eager values), so this runs eager in the Python host, never
    /// the compiler; when eager cannot run, the files of the unprofiled, unedited program.
    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        let ([m], rest) = padded_head::<1>(bytes);
        let test = match self
            .source
            .program(&self.host, BACKEND, self.device, rest, edits)
        {
            Ok(test) => test,
            Err(_) => {
                let (plan, generated) = self.source.decode(rest);
                let mut test = SurfaceTest::from(generated);
                test.applied = plan.apply(&mut test.program);
                test
            }
        };
        (None, self.finding_files(&test, Mode::of(m, self.compiler)))
    }
}

/// `torch_compile_cpu`: eager vs `torch.compile` (Inductor, C++) on the CPU.
pub fn build_cpu(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TorchCompileHarness::on("cpu", config.max_nodes)?))
}

/// `torch_compile_openvino`: eager vs `torch.compile(backend="openvino")` on the CPU. No row
/// reads float64: OpenVINO's CPU plugin computes it in float32 by design (its internal
/// precisions are f32, bf16 and f16), so float64 results are off eager's by that alone.
pub fn build_openvino(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let mut harness = TorchCompileHarness::with(Compiler::OpenVino, "cpu", config.max_nodes)?;
    let narrower: BTreeSet<ScalarType> = ScalarType::ALL
        .into_iter()
        .filter(|s| *s != ScalarType::F64)
        .collect();
    harness.source.lacks = Lacks {
        rows: BTreeSet::new(),
        types: table()
            .iter()
            .map(|op| (op.name, narrower.clone()))
            .collect(),
    };
    Ok(Box::new(harness))
}

/// `torch_compile_cuda`: eager vs `torch.compile` (Inductor, Triton) on CUDA device 0; fails
/// naming what is missing when torch sees no CUDA device.
pub fn build_cuda(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TorchCompileHarness::on("cuda", config.max_nodes)?))
}

impl TorchCompileHarness {
    /// torch.compile on `device` (`cpu`: Inductor's C++ backend; `cuda`: Triton) with
    /// programs of at most `max_ops` operators, or why the host cannot run it.
    pub fn on(device: &'static str, max_ops: usize) -> Result<TorchCompileHarness, String> {
        Self::with(Compiler::Inductor, device, max_ops)
    }

    /// torch.compile with `compiler` on `device`, programs of at most `max_ops` operators.
    pub fn with(
        compiler: Compiler,
        device: &'static str,
        max_ops: usize,
    ) -> Result<TorchCompileHarness, String> {
        let config = HostConfig::local(request_timeout()).covering(coverage::TORCH);
        let mut host = PythonHost::new(config);
        let versions = host.versions(&["torch"])?;
        if compiler == Compiler::OpenVino {
            host.versions(&["openvino"]).map_err(|e| format!(
                "torch_compile_openvino needs the openvino package beside torch in .deps/python (scripts/setup.sh --python-compilers installs it): {e}"
            ))?;
        }
        if device == "cuda" && versions["torch_cuda"].as_bool() != Some(true) {
            return Err("torch_compile_cuda needs a CUDA device, and torch in the Python host sees none (torch.cuda.is_available() is false)".into());
        }
        if device == "cpu" && compiler == Compiler::Inductor {
            host.inductor_cxx().map_err(|e| format!(
                "torch_compile_cpu needs the C++ compiler Inductor builds its kernels with (g++, or $CXX), and the Python host finds none ({e}); a fuzzing cluster's runner image needs g++ installed"
            ))?;
        }
        let name = match compiler {
            Compiler::Inductor => format!("torch_compile_{device}"),
            Compiler::OpenVino => "torch_compile_openvino".to_string(),
        };
        Ok(TorchCompileHarness {
            info: super::by_name(&name)?,
            compiler,
            source: SurfaceSource::new(max_ops, COMPONENTS),
            device,
            torch_version: versions["torch"].as_str().unwrap_or("?").to_string(),
            host: Mutex::new(host),
            timings: Mutex::new(BTreeMap::new()),
        })
    }

    /// One test of `bytes`: the verdict, the Python lines it covered and, for a finding,
    /// the program and `repro.py`.
    pub fn test(&self, bytes: &[u8], edits: &[Edit]) -> TargetRun {
        covered(&self.host, || self.tested(bytes, edits))
    }

    fn tested(&self, bytes: &[u8], edits: &[Edit]) -> TargetRun {
        let ([m], rest) = padded_head::<1>(bytes);
        let mode = Mode::of(m, self.compiler);
        let test = match self
            .source
            .program(&self.host, BACKEND, self.device, rest, edits)
        {
            Ok(t) => t,
            Err(verdict) => return TargetRun::bare(verdict),
        };
        let verdict = self.judge(&test, mode);
        let artifacts = super::files_if_found(&verdict, || self.finding_files(&test, mode));
        TargetRun {
            artifacts,
            programs: test.components(),
            program_ops: test.ops.clone(),
            ..TargetRun::bare(verdict)
        }
    }

    /// A finding folder's files: the program, a standalone `repro.py`, the mutations.
    fn finding_files(&self, test: &SurfaceTest, mode: Mode) -> Artifacts {
        let source = render(&test.program, Dialect::Python);
        let repro = repro::torch_compile(
            &source,
            &test.inputs(),
            &test.weight_slots(),
            mode,
            self.device,
            self.compiler,
        );
        vec![
            ("program.py".to_string(), source.into_bytes()),
            ("repro.py".to_string(), repro.into_bytes()),
            (
                "mutations.txt".to_string(),
                test.applied.join("\n").into_bytes(),
            ),
            ("ops.txt".to_string(), test.ops.join("\n").into_bytes()),
            (
                super::LIVE_OPS.to_string(),
                test.live_ops().join("\n").into_bytes(),
            ),
        ]
    }

    /// [`call`], adding the response's run times to the timings (the phase `what` tells
    /// the profile and conditioning requests from the compile one).
    fn timed_call(&self, what: &str, request: &Frame) -> Result<Frame, Verdict> {
        let response = call(&self.host, BACKEND, request)?;
        let mut timings = self.timings.lock().unwrap_or_else(|p| p.into_inner());
        for run in response.header["runs"].as_array().into_iter().flatten() {
            let name = run["name"].as_str().unwrap_or("?");
            let key = if name == "eager" {
                format!("{what}:eager")
            } else {
                format!("{name} ({what})")
            };
            let entry = timings.entry(key).or_default();
            entry.0 += run["seconds"].as_f64().unwrap_or(0.0);
            entry.1 += 1;
        }
        Ok(response)
    }

    fn request(&self, test: &SurfaceTest, source: &str, mode: Mode, extra: Value) -> Frame {
        let mut extra = extra;
        extra["backward"] = json!(mode.backward);
        if mode.weights_as_parameters() {
            extra["weights"] = json!(test.weight_slots());
        }
        test.request(source, self.device, extra)
    }

    /// The compile spec of `backend` in `mode` with Inductor `config` patched: the backend
    /// under test gets its options, the others (`aot_eager`) none.
    fn compile_spec(&self, mode: Mode, backend: &str, config: &Value) -> Value {
        let options = if backend == self.compiler.backend() {
            self.compiler.options(mode)
        } else {
            Value::Null
        };
        mode.compile(backend, &options, config)
    }

    /// Eager vs compiled.
    fn judge(&self, test: &SurfaceTest, mode: Mode) -> Verdict {
        let source = render(&test.program, Dialect::Python);
        let request = self.request(
            test,
            &source,
            mode,
            json!({"compile": self.compile_spec(mode, self.compiler.backend(), &json!({}))}),
        );
        let response = match self.timed_call(&mode.label(), &request) {
            Ok(r) => r,
            Err(verdict) => return verdict,
        };
        let named = match runs(&response) {
            Ok(r) => r,
            Err(e) => return Verdict::Skipped(Skip::Invalid(format!("host response: {e}"))),
        };
        let eager = match named.first() {
            Some((_, Run::Outputs(o))) => o.clone(),
            // Eager ran this program forward in the profile: what fails now is autograd (an
            // op without a derivative, a saved value overwritten in place).
            Some((_, Run::Failed(e))) if mode.backward => {
                return Verdict::Skipped(Skip::Unsupported(format!(
                    "backward: eager cannot differentiate the program: {}",
                    e.headline()
                )))
            }
            Some((_, Run::Failed(e))) => {
                return Verdict::Skipped(Skip::Invalid(format!("eager: {}", e.headline())))
            }
            None => return Verdict::Skipped(Skip::Invalid("no eager run".into())),
        };
        // A gradient that is not finite somewhere along eager's backward pass (the host
        // returns NaN gradients then): `0 · inf` is left to each implementation.
        if mode.backward && eager.iter().any(|t| !t.is_finite()) {
            return Verdict::Skipped(Skip::NonFinite);
        }
        let types = run_dtypes(&response, 0);
        let tolerances = test.tolerances(&types);
        for (index, (name, run)) in named.iter().enumerate().skip(1) {
            let outputs = match run {
                Run::Failed(e) => {
                    let verdict = stage_failure(BACKEND, name, e);
                    return match verdict {
                        Verdict::Found(mut f) if e.component() == "inductor" => {
                            f.detail = format!(
                                "{}{}\n{}",
                                self.switch(test, mode, name, None),
                                self.setting_blame(test, mode, name, None),
                                f.detail
                            );
                            Verdict::Found(f)
                        }
                        other => other,
                    };
                }
                Run::Outputs(o) => o,
            };
            let conditioning = || {
                let extra = json!({"widened": true, "perturbed": PERTURBATIONS});
                self.timed_call("condition", &self.request(test, &source, mode, extra))
            };
            match judge_against_eager(
                &eager,
                &types,
                &tolerances,
                outputs,
                &run_dtypes(&response, index),
                conditioning,
            ) {
                Err(verdict) => return verdict,
                Ok(Judged::Agrees) => continue,
                Ok(Judged::Explained(reasons)) => {
                    return Verdict::Skipped(Skip::Explained(reasons))
                }
                Ok(Judged::Wrong { what, k, detail }) => {
                    return self.finding(test, mode, name, what, k, detail)
                }
            }
        }
        Verdict::Pass
    }

    /// A finding on output `k` of run `name`, localized on the eager → aot_eager → inductor
    /// ladder and, for Inductor's, to the first config switch that makes it go away (as an
    /// Inductor crash is, in `judge`).
    fn finding(
        &self,
        test: &SurfaceTest,
        mode: Mode,
        name: &str,
        what: &str,
        k: usize,
        detail: String,
    ) -> Verdict {
        let component = if self.agrees_with(test, mode, name, Some(k), "aot_eager", &json!({})) {
            self.compiler.backend()
        } else {
            "dynamo-or-aot"
        };
        // Inductor elides float16/bfloat16 round trips unless `emulate_precision_casts` is
        // set, which makes it round as eager does: documented behaviour (pytorch/pytorch
        // issue 183761), not a bug, when that alone makes the difference go away.
        let low_precision = test
            .program
            .types
            .values()
            .any(|t| matches!(t.scalar, ScalarType::F16 | ScalarType::BF16));
        let emulated = json!({"emulate_precision_casts": true});
        if component == "inductor"
            && low_precision
            && self.agrees_with(test, mode, name, Some(k), "inductor", &emulated)
        {
            return Verdict::Skipped(Skip::Explained(
                "precision: Inductor's elided float16/bfloat16 casts (agrees with eager under emulate_precision_casts)".into(),
            ));
        }
        let detail = if component == "inductor" {
            format!(
                "{detail}; {}{}",
                self.switch(test, mode, name, Some(k)),
                self.setting_blame(test, mode, name, Some(k))
            )
        } else {
            detail
        };
        let first = match what {
            "value" => self.first_wrong_row(test, mode, name, k),
            _ => None,
        };
        let detail = format!(
            "{detail}{}{}",
            self.buffer_blame(test, mode, name, k),
            first_wrong_clause(test, first.as_ref(), k)
        );
        let row = first.as_ref().map_or(test.producer(k), |(row, _)| row);
        Verdict::Found(Finding {
            kind: FindingKind::Inconsistency,
            level: name.to_string(),
            signature: format!(
                "inconsistency:{BACKEND}:{component}:{}:{what}:{row}",
                mode.label(),
            ),
            detail: format!("{name} against eager: {detail}"),
            blame: None,
        })
    }

    /// The row whose value first goes wrong on output `k`'s path, compiled and run as run
    /// `name` was with that path's values as outputs ([`locate_first_wrong`]).
    fn first_wrong_row(
        &self,
        test: &SurfaceTest,
        mode: Mode,
        name: &str,
        k: usize,
    ) -> Option<(&'static str, Var)> {
        let spec = self.compile_spec(mode, self.compiler.backend(), &json!({}));
        let send = |exposed: &SurfaceTest, source: &str| {
            let request = self.request(exposed, source, mode, json!({"compile": spec}));
            self.timed_call("localize", &request).ok()
        };
        locate_first_wrong(test, k, send, |run| run == name)
    }

    /// For a program that fills buffers in for-loops (operator resolution's loop form):
    /// whether the finding on output `k` of run `name` goes away with every such loop
    /// written as a list comprehension (the same values, no writes into a buffer), said as a
    /// clause for its detail (empty when there is no loop or it stays). A compiler that loses
    /// writes into a buffer shows through many ops at once; this names the cause.
    fn buffer_blame(&self, test: &SurfaceTest, mode: Mode, name: &str, k: usize) -> String {
        let mut rewritten = test.clone();
        if !loops_as_comprehensions(&mut rewritten.program) {
            return String::new();
        }
        let backend = self.compiler.backend();
        match self.agrees_with(&rewritten, mode, name, Some(k), backend, &json!({})) {
            true => format!("; {LOOP_FILLED_BUFFER_BLAME}"),
            false => String::new(),
        }
    }

    /// Which of [`INDUCTOR_SWITCHES`] makes an Inductor finding on output `k` (`None`: a
    /// failure of the compile) of run `name` go away, said as a sentence for its detail.
    fn switch(&self, test: &SurfaceTest, mode: Mode, name: &str, k: Option<usize>) -> String {
        let gone = INDUCTOR_SWITCHES.iter().find(|(_, patch)| {
            let config = serde_json::from_str(patch).expect("switch JSON");
            self.agrees_with(test, mode, name, k, "inductor", &config)
        });
        match gone {
            Some((switch, patch)) => format!("gone with Inductor's {switch} switched ({patch})"),
            None => "no Inductor switch tried makes it go away".to_string(),
        }
    }

    /// For a test compiled under a [`Setting`] other than the default: whether the finding
    /// on output `k` (`None`: a failed compile) of run `name` goes away under the default,
    /// said as a clause for its detail (empty for the default setting).
    fn setting_blame(
        &self,
        test: &SurfaceTest,
        mode: Mode,
        name: &str,
        k: Option<usize>,
    ) -> String {
        let Some(label) = mode.setting.label() else {
            return String::new();
        };
        let default = Mode {
            setting: Setting::Default,
            ..mode
        };
        if self.agrees_with(test, default, name, k, "inductor", &json!({})) {
            format!("; gone under the default configuration: the {label} setting is at fault")
        } else {
            format!("; also under the default configuration, not only with {label}")
        }
    }

    /// Whether `backend` with Inductor `config` patched runs the same call as run `name`
    /// and, for an output `k`, agrees with eager on it (same type, within tolerance);
    /// `false` when the rerun fails.
    fn agrees_with(
        &self,
        test: &SurfaceTest,
        mode: Mode,
        name: &str,
        k: Option<usize>,
        backend: &str,
        config: &Value,
    ) -> bool {
        let source = render(&test.program, Dialect::Python);
        let request = self.request(
            test,
            &source,
            mode,
            json!({"compile": self.compile_spec(mode, backend, config)}),
        );
        let Ok(response) = self.timed_call("localize", &request) else {
            return false;
        };
        let Ok(named) = runs(&response) else {
            return false;
        };
        let same_call = name.replacen(self.compiler.backend(), backend, 1);
        let types = run_dtypes(&response, 0);
        let (Some((_, Run::Outputs(eager))), Some((index, (_, Run::Outputs(o))))) = (
            named.first(),
            named.iter().enumerate().find(|(_, (n, _))| *n == same_call),
        ) else {
            return false;
        };
        let Some(k) = k else {
            return true;
        };
        let scalar = test
            .tolerances(&types)
            .get(k)
            .copied()
            .unwrap_or(ScalarType::F32);
        run_dtypes(&response, index) == types
            && match (o.get(k), eager.get(k)) {
                (Some(a), Some(b)) => error(a, b, scalar) <= 1.0,
                _ => false,
            }
    }
}
