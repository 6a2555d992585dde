//! The PyTorch ONNX exporter as a target (`torch_onnx_export`): a torch-surface program
//! ([`SurfaceSource`], with TorchProbe's mutations) → `torch.onnx.export` with the torch
//! wheel's defaults (the dynamo-based exporter in torch 2.9 and later) → the ONNX checker
//! with full shape inference → ONNX Runtime with every graph optimization disabled, against
//! torch eager. Findings:
//! - the exporter fails on a program eager runs (an exporter crash; missing conversions and
//!   `torch.export`'s documented limits, such as data-dependent control flow, are
//!   unsupported, not findings);
//! - the exported model fails the checker (an invalid model: the exporter's);
//! - ONNX Runtime rejects or crashes on the model;
//! - an output differs from eager beyond rounding ([`judge_against_eager`]): localized with
//!   the `onnx` package's reference implementation on the same model: when it agrees with
//!   eager, ONNX Runtime is at fault; when it agrees with ONNX Runtime, the exporter.
//!
//! Input bytes: the program plan, then the generator's bytes (as `torch_compile_cpu` after
//! its mode byte). Rows the exporter has no conversion for are never drawn
//! ([`super::export_probe`]), and EMI conditions read shapes only (torch.export does not
//! trace data-dependent control flow).

use super::hosted::{call, stage_failure};
use super::surface::{
    judge_against_eager, run_dtypes, Judged, SurfaceSource, SurfaceTest, PERTURBATIONS,
};
use super::{repro, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun};
use crate::backend::python::frame::Frame;
use crate::backend::python::{request_timeout, runs, HostConfig, PythonHost, Run};
use crate::gen::TestCase;
use crate::ir::{ScalarType, Tensor};
use crate::mutate::program::render::{render, Dialect};
use crate::oracle::accuracy::error;
use crate::oracle::{Finding, FindingKind, Skip, Verdict};
use crate::reduce::program::Outline;
use crate::reduce::Edit;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Mutex;

/// The backend name in signatures.
const BACKEND: &str = "torch.onnx.export";
/// Independent programs packed into one export (each output belongs to one).
pub const COMPONENTS: usize = 2;

/// The exporter target.
pub struct OnnxExportHarness {
    info: &'static TargetInfo,
    source: SurfaceSource,
    /// torch's and ONNX Runtime's versions in the Python host.
    versions: String,
    host: Mutex<PythonHost>,
}

/// `torch_onnx_export`: torch eager vs the exported model on ONNX Runtime (CPU).
pub fn build(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let mut host = PythonHost::new(HostConfig::local(request_timeout()));
    let versions = host.versions(&["torch", "onnxruntime", "onnxscript"])?;
    for module in ["torch", "onnxruntime", "onnxscript"] {
        if versions[module].is_null() {
            return Err(format!(
                "the Python host cannot import {module} ({}): run `scripts/setup.sh --python-compilers`",
                versions[format!("{module}_error")].as_str().unwrap_or("not installed")
            ));
        }
    }
    let version = |m: &str| versions[m].as_str().unwrap_or("?").to_string();
    let host = Mutex::new(host);
    let mut source = SurfaceSource::new(config.max_nodes, COMPONENTS);
    source.shape_conditions = true;
    source.excluded = super::export_probe::unexportable(&host, &version("torch"));
    Ok(Box::new(OnnxExportHarness {
        info: super::by_name("torch_onnx_export")?,
        source,
        versions: format!(
            "torch.onnx.export (torch {}) + ONNX Runtime {}",
            version("torch"),
            version("onnxruntime")
        ),
        host,
    }))
}

impl FuzzTarget for OnnxExportHarness {
    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        self.versions.clone()
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

    fn capabilities(&self) -> Option<String> {
        Some(self.source.capabilities())
    }

    fn outline(&self, bytes: &[u8]) -> Option<Outline> {
        Some(self.source.outline(bytes))
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], _inflight: Option<&Path>) -> TargetRun {
        let test = match self
            .source
            .program(&self.host, BACKEND, "cpu", bytes, edits)
        {
            Ok(t) => t,
            Err(verdict) => return TargetRun::bare(verdict),
        };
        let (verdict, model) = self.judge(&test);
        let artifacts =
            super::files_if_found(&verdict, || self.finding_files(&test, model.clone()));
        TargetRun {
            artifacts,
            model,
            programs: test.components(),
            ..TargetRun::bare(verdict)
        }
    }

    /// Eager runs in the Python host for the profile (as the test did); the exporter does
    /// not: `model.onnx` is written by the test that found the bug.
    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        match self
            .source
            .program(&self.host, BACKEND, "cpu", bytes, edits)
        {
            Ok(test) => (None, self.finding_files(&test, None)),
            Err(_) => (None, Vec::new()),
        }
    }
}

impl OnnxExportHarness {
    fn request(&self, test: &SurfaceTest, source: &str, extra: Value) -> Frame {
        let mut extra = extra;
        extra["op"] = json!("torch_onnx_export");
        test.request(source, "cpu", extra)
    }

    /// The verdict, and the exported model when there is one.
    fn judge(&self, test: &SurfaceTest) -> (Verdict, Option<Vec<u8>>) {
        let source = render(&test.program, Dialect::Python);
        let response = match call(&self.host, BACKEND, &self.request(test, &source, json!({}))) {
            Ok(r) => r,
            Err(verdict) => return (verdict, None),
        };
        let model = response.header["model"]
            .as_u64()
            .and_then(|k| response.blobs.get(k as usize).cloned());
        let named = match runs(&response) {
            Ok(r) => r,
            Err(e) => {
                return (
                    Verdict::Skipped(Skip::Invalid(format!("host response: {e}"))),
                    model,
                )
            }
        };
        let eager = match named.first() {
            Some((_, Run::Outputs(o))) => o.clone(),
            Some((_, Run::Failed(e))) => {
                return (
                    Verdict::Skipped(Skip::Invalid(format!("eager: {}", e.headline()))),
                    model,
                )
            }
            None => {
                return (
                    Verdict::Skipped(Skip::Invalid("no eager run".into())),
                    model,
                )
            }
        };
        let types = run_dtypes(&response, 0);
        let Some((index, (name, run))) = named.iter().enumerate().skip(1).last() else {
            return (
                Verdict::Skipped(Skip::Invalid("no export run".into())),
                model,
            );
        };
        let outputs = match run {
            Run::Failed(e) => return (stage_failure(BACKEND, name, e), model),
            Run::Outputs(o) => o,
        };
        let conditioning = || {
            let extra = json!({"export": false, "widened": true, "perturbed": PERTURBATIONS});
            call(&self.host, BACKEND, &self.request(test, &source, extra))
        };
        let verdict = match judge_against_eager(
            &eager,
            &types,
            outputs,
            &run_dtypes(&response, index),
            conditioning,
        ) {
            Err(verdict) => verdict,
            Ok(Judged::Agrees) => Verdict::Pass,
            Ok(Judged::Explained(reasons)) => Verdict::Skipped(Skip::Explained(reasons)),
            Ok(Judged::Wrong { what, k, detail }) => {
                let component = self.localize(test, &source, outputs, &types, k);
                Verdict::Found(Finding {
                    kind: FindingKind::Inconsistency,
                    level: "ort".into(),
                    signature: format!(
                        "inconsistency:{BACKEND}:{component}:{what}:{}",
                        test.producer(k)
                    ),
                    detail: format!("ONNX Runtime on the exported model against eager: {detail}"),
                    blame: None,
                })
            }
        };
        (verdict, model)
    }

    /// Who is at fault for output `k`: `onnxruntime` when the `onnx` reference
    /// implementation on the same model agrees with eager, `exporter` when it agrees with
    /// ONNX Runtime, else `unlocalized`.
    fn localize(
        &self,
        test: &SurfaceTest,
        source: &str,
        ort: &[Tensor],
        types: &[Option<ScalarType>],
        k: usize,
    ) -> &'static str {
        let Ok(response) = call(
            &self.host,
            BACKEND,
            &self.request(test, source, json!({"reference": true})),
        ) else {
            return "unlocalized";
        };
        let Ok(named) = runs(&response) else {
            return "unlocalized";
        };
        let reference = named.iter().find_map(|(n, r)| match r {
            Run::Outputs(o) if n == "onnx-reference" => o.get(k).cloned(),
            _ => None,
        });
        let eager = match named.first() {
            Some((_, Run::Outputs(o))) => o.get(k).cloned(),
            _ => None,
        };
        let scalar = types.get(k).copied().flatten().unwrap_or(ScalarType::F32);
        let near = |a: &Tensor, b: &Tensor| error(a, b, scalar) <= 1.0;
        match (reference, eager, ort.get(k)) {
            (Some(r), Some(e), _) if near(&r, &e) => "onnxruntime",
            (Some(r), _, Some(o)) if near(&r, o) => "exporter",
            _ => "unlocalized",
        }
    }

    /// A finding folder's files: the program, the exported model (when the export ran), a
    /// standalone `repro.py`, the mutations.
    fn finding_files(&self, test: &SurfaceTest, model: Option<Vec<u8>>) -> Artifacts {
        let source = render(&test.program, Dialect::Python);
        let repro = repro::torch_onnx_export(&source, &test.inputs());
        let mut files = vec![
            ("program.py".to_string(), source.into_bytes()),
            ("repro.py".to_string(), repro.into_bytes()),
            (
                "mutations.txt".to_string(),
                test.applied.join("\n").into_bytes(),
            ),
            ("ops.txt".to_string(), test.ops.join("\n").into_bytes()),
        ];
        if let Some(model) = model {
            files.push((super::MODEL.to_string(), model));
        }
        files
    }
}
