//! The torch.compile targets (`torch_compile_cpu`, `torch_compile_cuda`): TorchProbe programs
//! ([`ProgramSource`]) rendered as plain Python (closures, hoisted nested functions, writes
//! through views, data-dependent `if`, loops, comprehensions), run in the Python host:
//! eager once, then one `torch.compile(backend="inductor", dynamic=…)` function on a batch of
//! one and a batch of two (a guard failure and a recompilation). Oracle: compiled vs eager;
//! eager itself must match libtorch eager on the original graph (else the test is invalid).
//! A mismatch is localized by rerunning with `backend="aot_eager"`: when that matches eager,
//! the bug is Inductor's, else Dynamo's or AOT Autograd's.
//!
//! Input bytes: one mode byte (bit 0: `dynamic=True`), then the program plan and the graph
//! recipe.

use super::hosted::{call, runs, stage_failure, Run};
use super::program::{ProgramSource, ProgramTest};
use super::{repro, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun};
use crate::backend::python::frame::Frame;
use crate::backend::python::{request_timeout, HostConfig, PythonHost};
use crate::gen::{padded_head, Limits, TestCase};
use crate::ir::Tensor;
use crate::mutate::program::render::{render, Dialect, ENTRY};
use crate::oracle::{Finding, FindingKind, Skip, Verdict};
use crate::reduce::Edit;
use serde_json::json;
use std::path::Path;
use std::sync::Mutex;

/// The backend name in signatures.
const BACKEND: &str = "torch.compile";
/// Batch sizes each compiled function is called with, in order.
pub const BATCHES: [usize; 2] = [1, 2];

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

    fn decode(&self, bytes: &[u8]) -> Option<TestCase> {
        let (_, rest) = padded_head::<1>(bytes);
        Some(self.source.prepare(rest).1)
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], _inflight: Option<&Path>) -> TargetRun {
        self.test(bytes, edits)
    }

    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        let ([mode], rest) = padded_head::<1>(bytes);
        match self.source.program(rest, edits) {
            Ok(test) => {
                let source = render(&test.program, Dialect::Python);
                let files = self.finding_files(&test, source, mode & 1 == 1);
                (Some(test.case), files)
            }
            Err(_) => (None, Vec::new()),
        }
    }
}

/// `torch_compile_cpu`: eager vs `torch.compile` (Inductor, C++) on the CPU.
pub fn build_cpu(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TorchCompileHarness::cpu(config.limits())?))
}

/// `torch_compile_cuda`: eager vs `torch.compile` (Inductor, Triton) on CUDA device 0; fails
/// naming what is missing when torch sees no CUDA device.
pub fn build_cuda(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TorchCompileHarness::cuda(config.limits())?))
}

/// A torch.compile test setup.
pub struct TorchCompileHarness {
    info: &'static TargetInfo,
    /// Where programs come from.
    pub source: ProgramSource,
    /// `cpu` or `cuda`.
    pub device: &'static str,
    /// torch's version in the Python host.
    pub torch_version: String,
    host: Mutex<PythonHost>,
}

impl TorchCompileHarness {
    /// torch.compile on the CPU (Inductor's C++ backend), or why the host cannot run it.
    pub fn cpu(limits: Limits) -> Result<TorchCompileHarness, String> {
        Self::on("cpu", limits)
    }

    /// torch.compile on CUDA device 0 (Triton), or why not.
    pub fn cuda(limits: Limits) -> Result<TorchCompileHarness, String> {
        Self::on("cuda", limits)
    }

    fn on(device: &'static str, limits: Limits) -> Result<TorchCompileHarness, String> {
        let mut host = PythonHost::new(HostConfig::local(request_timeout()));
        let versions = host.versions(&["torch"])?;
        if device == "cuda" && versions["torch_cuda"].as_bool() != Some(true) {
            return Err("torch_compile_cuda needs a CUDA device, and torch in the Python host sees none (torch.cuda.is_available() is false)".into());
        }
        Ok(TorchCompileHarness {
            info: super::by_name(&format!("torch_compile_{device}"))?,
            source: ProgramSource::new(limits),
            device,
            torch_version: versions["torch"].as_str().unwrap_or("?").to_string(),
            host: Mutex::new(host),
        })
    }

    /// The outputs of `source` run eagerly in the host (no compilation), or why it failed.
    pub fn eager(&self, source: &str, test: &ProgramTest) -> Result<Vec<Tensor>, String> {
        let mut request = self.request(source, test, false, "inductor");
        request.header["batches"] = json!([]);
        let response = call(&self.host, BACKEND, &request).map_err(|v| format!("{v:?}"))?;
        match runs(&response)?.into_iter().next() {
            Some((_, Run::Outputs(o))) => Ok(o),
            Some((_, Run::Failed(e))) => Err(e.detail()),
            None => Err("no eager run".into()),
        }
    }

    /// The request running `source` eagerly and compiled with `backend`.
    fn request(&self, source: &str, test: &ProgramTest, dynamic: bool, backend: &str) -> Frame {
        let mut frame = Frame::new(json!({}));
        let inputs: Vec<_> = test.inputs().into_iter().map(|t| frame.tensor(t)).collect();
        frame.header = json!({
            "op": "torch_compile",
            "source": source,
            "entry": ENTRY,
            "inputs": inputs,
            "device": self.device,
            "backend": backend,
            "dynamic": dynamic,
            "batches": BATCHES,
        });
        frame
    }

    /// One test of `bytes` with reduction `edits`: the verdict, the graph, and (for a
    /// finding) the Python program and a standalone `repro.py`.
    pub fn test(&self, bytes: &[u8], edits: &[Edit]) -> TargetRun {
        let ([mode], rest) = padded_head::<1>(bytes);
        let dynamic = mode & 1 == 1;
        let test = match self.source.program(rest, edits) {
            Ok(t) => t,
            Err(skip) => return TargetRun::bare(Verdict::Skipped(skip)),
        };
        let source = render(&test.program, Dialect::Python);
        let verdict = self.judge(&source, &test, dynamic);
        let artifacts =
            super::files_if_found(&verdict, || self.finding_files(&test, source, dynamic));
        TargetRun::tested(verdict, test.case, artifacts)
    }

    /// A finding folder's files: the program, a standalone `repro.py`, the mutations.
    fn finding_files(&self, test: &ProgramTest, source: String, dynamic: bool) -> Artifacts {
        let repro = repro::torch_compile(&source, &test.inputs(), dynamic, self.device);
        vec![
            ("program.py".to_string(), source.into_bytes()),
            ("repro.py".to_string(), repro.into_bytes()),
            (
                "mutations.txt".to_string(),
                test.applied.join("\n").into_bytes(),
            ),
        ]
    }

    /// Eager vs compiled on `source`.
    fn judge(&self, source: &str, test: &ProgramTest, dynamic: bool) -> Verdict {
        let request = self.request(source, test, dynamic, "inductor");
        let response = match call(&self.host, BACKEND, &request) {
            Ok(r) => r,
            Err(verdict) => return verdict,
        };
        let runs = match runs(&response) {
            Ok(r) => r,
            Err(e) => return Verdict::Skipped(Skip::Invalid(format!("host response: {e}"))),
        };
        let mut runs = runs.into_iter();
        let eager = match runs.next() {
            Some((_, Run::Outputs(o))) => o,
            Some((_, Run::Failed(e))) => {
                return Verdict::Skipped(Skip::Invalid(format!("eager: {}", e.headline())))
            }
            None => return Verdict::Skipped(Skip::Invalid("no eager run".into())),
        };
        if let Some(detail) = test.deviation(&test.expected, &eager) {
            return Verdict::Skipped(Skip::Invalid(format!(
                "eager Python differs from the graph reference: {detail}"
            )));
        }
        for (name, run) in runs {
            let outputs = match run {
                Run::Failed(e) => return stage_failure(BACKEND, &name, &e),
                Run::Outputs(o) => o,
            };
            if let Some(detail) = test.deviation(&eager, &outputs) {
                let component = self.localize(source, test, dynamic, &name, &eager);
                let mode = if dynamic { "dynamic" } else { "static" };
                return Verdict::Found(Finding {
                    kind: FindingKind::Inconsistency,
                    level: name.clone(),
                    signature: format!("inconsistency:{BACKEND}:{component}:{mode}:{}", test.ops),
                    detail: format!("{name} against eager: {detail}"),
                    blame: None,
                });
            }
        }
        Verdict::Pass
    }

    /// Which component a mismatch of run `name` belongs to: `inductor` when `aot_eager`
    /// (Dynamo and AOT Autograd without Inductor) matches eager on the same call, else
    /// `dynamo-or-aot`; `unlocalized` when the rerun fails.
    fn localize(
        &self,
        source: &str,
        test: &ProgramTest,
        dynamic: bool,
        name: &str,
        eager: &[Tensor],
    ) -> &'static str {
        let request = self.request(source, test, dynamic, "aot_eager");
        let Ok(response) = call(&self.host, BACKEND, &request) else {
            return "unlocalized";
        };
        let Ok(runs) = runs(&response) else {
            return "unlocalized";
        };
        let same_call = name.replacen("inductor", "aot_eager", 1);
        match runs.iter().find(|(n, _)| *n == same_call) {
            Some((_, Run::Outputs(o))) if test.deviation(eager, o).is_none() => "inductor",
            Some((_, Run::Outputs(_))) => "dynamo-or-aot",
            _ => "unlocalized",
        }
    }
}
