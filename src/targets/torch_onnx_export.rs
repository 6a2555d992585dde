//! The PyTorch ONNX exporter as a target (`torch_onnx_export`): a torch-surface program
//! ([`SurfaceSource`], with TorchProbe's mutations) → `torch.onnx.export` with the torch
//! wheel's defaults (the dynamo-based exporter in torch 2.9 and later) → the ONNX checker
//! with full shape inference → ONNX Runtime with every graph optimization disabled, against
//! torch eager. Findings:
//! - the exporter fails on a program eager runs (an exporter crash; missing conversions and
//!   `torch.export`'s documented limits, such as data-dependent control flow, are
//!   unsupported, not findings);
//! - the exported model fails the checker: an invalid model at its own opset, the
//!   exporter's (ONNX Runtime still runs it, and the finding says whether it matched eager);
//! - ONNX Runtime rejects or crashes on the model;
//! - an output differs from eager beyond rounding ([`judge_against_eager`]): localized with
//!   the `onnx` package's reference implementation on the same model: when it agrees with
//!   eager, ONNX Runtime is at fault; when it agrees with ONNX Runtime, the exporter.
//!
//! Input bytes: the program plan, then the generator's bytes (as `torch_compile_cpu` after
//! its mode byte). Rows the exporter has no conversion for are never drawn
//! ([`super::export_probe`]), and EMI conditions read shapes only (torch.export does not
//! trace data-dependent control flow).

use super::hosted::{call, covered, stage_failure};
use super::surface::{
    first_wrong_clause, judge_against_eager, locate_first_wrong, run_dtypes, Judged, SurfaceSource,
    SurfaceTest, PERTURBATIONS,
};
use super::{repro, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun};
use crate::backend::python::frame::Frame;
use crate::backend::python::{coverage, request_timeout, runs, HostConfig, PythonHost, Run};
use crate::gen::TestCase;
use crate::ir::{ScalarType, Tensor};
use crate::mutate::program::render::{render, Dialect};
use crate::mutate::program::Var;
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
    let host_config = HostConfig::local(request_timeout()).covering(coverage::TORCH);
    let mut host = PythonHost::new(host_config);
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
    source.lacks = super::export_probe::lacks(&host, &version("torch"));
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
        covered(&self.host, || self.tested(bytes, edits))
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

/// An invalid exported model whose checker error is an op on a type its schema does not
/// allow (`... has unsupported type: tensor(bfloat16)`) is signed by that type alone: the
/// exporter's one failure to cast or to raise the opset shows on every op, and each op is
/// not a bug of its own. The op stays in the detail.
fn by_type(verdict: Verdict) -> Verdict {
    let Verdict::Found(mut finding) = verdict else {
        return verdict;
    };
    let marker = "has unsupported type: tensor(";
    if let Some(at) = finding.detail.find(marker) {
        let rest = &finding.detail[at + marker.len()..];
        let ty: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        finding.signature = format!("crash:{BACKEND}:exporter:invalid-model:unsupported-type:{ty}");
    }
    Verdict::Found(finding)
}

/// The verdict on a model the ONNX checker rejected (`rejected`, a finding of the exporter:
/// the model is invalid at its own opset) that ONNX Runtime then ran, compared with eager
/// as `judged`. The blame stays with the exporter even when ONNX Runtime matches eager: a
/// runtime may follow torch where the opset's schema does not (MaxPool-12 with `ceil_mode`
/// counts windows that start in the right padding, torch does not), and another runtime
/// following the schema computes something else. The detail says which it was.
fn checker_verdict(rejected: Verdict, judged: &Result<Judged, Verdict>) -> Verdict {
    match by_type(rejected) {
        Verdict::Found(mut finding) => {
            let runs_right = matches!(judged, Ok(Judged::Agrees | Judged::Explained(_)));
            finding.detail = format!(
                "{}\nONNX Runtime runs the rejected model and {} eager.",
                finding.detail,
                if runs_right {
                    "matches"
                } else {
                    "does not match"
                }
            );
            Verdict::Found(finding)
        }
        other => other,
    }
}

impl OnnxExportHarness {
    /// One test of `bytes` with reduction `edits`: the verdict and, for a finding, the
    /// program, the exported model and `repro.py`.
    fn tested(&self, bytes: &[u8], edits: &[Edit]) -> TargetRun {
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
            program_ops: test.ops.clone(),
            ..TargetRun::bare(verdict)
        }
    }

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
        let rejected = named.iter().find_map(|(n, r)| match r {
            Run::Failed(e) if n == "check" => Some(e),
            _ => None,
        });
        let Some((index, (name, run))) = named.iter().enumerate().skip(1).last() else {
            let verdict = Verdict::Skipped(Skip::Invalid("no export run".into()));
            return (verdict, model);
        };
        let outputs = match (run, rejected) {
            (Run::Outputs(o), _) => o,
            // The checker rejected the model and ONNX Runtime cannot run it either.
            (Run::Failed(_), Some(check)) if name == "ort" => {
                return (by_type(stage_failure(BACKEND, "check", check)), model)
            }
            (Run::Failed(e), _) if name == "ort" && contested_output_padding(e) => {
                let reason = "spec-ambiguous: ConvTranspose output_padding not below its stride (ONNX Runtime rejects it, torch and the ONNX text's other reading allow it below the dilation)";
                return (Verdict::Skipped(Skip::Explained(reason.into())), model);
            }
            (Run::Failed(e), _) => return (stage_failure(BACKEND, name, e), model),
        };
        let conditioning = || {
            let extra = json!({"export": false, "widened": true, "perturbed": PERTURBATIONS});
            call(&self.host, BACKEND, &self.request(test, &source, extra))
        };
        let got_types = run_dtypes(&response, index);
        let tolerances = test.tolerances(&types);
        let judged = judge_against_eager(
            &eager,
            &types,
            &tolerances,
            outputs,
            &got_types,
            conditioning,
        );
        if let Some(check) = rejected {
            return (
                checker_verdict(stage_failure(BACKEND, "check", check), &judged),
                model,
            );
        }
        let verdict = match judged {
            Err(verdict) => verdict,
            Ok(Judged::Agrees) => Verdict::Pass,
            Ok(Judged::Explained(reasons)) => Verdict::Skipped(Skip::Explained(reasons)),
            Ok(Judged::Wrong { what, k, detail }) => {
                // The exported model declares its outputs' types and count: a different one
                // is the exporter's whatever runs it.
                let component = match what {
                    "dtype" | "arity" => "exporter",
                    _ => self.localize(test, &source, outputs, &types, k),
                };
                let first = match what {
                    "value" => self.first_wrong_row(test, k),
                    _ => None,
                };
                let row = first.as_ref().map_or(test.producer(k), |(row, _)| row);
                Verdict::Found(Finding {
                    kind: FindingKind::Inconsistency,
                    level: "ort".into(),
                    signature: format!("inconsistency:{BACKEND}:{component}:{what}:{row}"),
                    detail: format!(
                        "ONNX Runtime on the exported model against eager: {detail}{}",
                        first_wrong_clause(test, first.as_ref(), k)
                    ),
                    blame: None,
                })
            }
        };
        (verdict, model)
    }

    /// The row whose value first goes wrong on output `k`'s path, exported and run by ONNX
    /// Runtime with that path's values as outputs ([`locate_first_wrong`]).
    fn first_wrong_row(&self, test: &SurfaceTest, k: usize) -> Option<(&'static str, Var)> {
        let send = |exposed: &SurfaceTest, source: &str| {
            call(
                &self.host,
                BACKEND,
                &self.request(exposed, source, json!({})),
            )
            .ok()
        };
        locate_first_wrong(test, k, send, |name| name == "ort")
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
        let scalar = test
            .tolerances(types)
            .get(k)
            .copied()
            .unwrap_or(ScalarType::F32);
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
            (
                super::LIVE_OPS.to_string(),
                test.live_ops().join("\n").into_bytes(),
            ),
        ];
        if let Some(model) = model {
            files.push((super::MODEL.to_string(), model));
        }
        files
    }
}

/// Whether ONNX Runtime rejected a `ConvTranspose` whose `output_padding` is not below its
/// stride. The operator text says each value "must be less than the corresponding
/// stride/dilation dimension", which reads as "below the stride" (ONNX Runtime) or "below
/// the stride or the dilation" (torch, which exports such a program): a contested reading,
/// judged not a bug (`docs/findings/README.md`), so never a finding.
fn contested_output_padding(error: &crate::backend::python::classify::PyError) -> bool {
    let detail = error.detail();
    detail.contains("output_padding") && detail.contains("may be too large for stride")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejected_model_stays_the_exporters_and_says_how_onnx_runtime_ran_it() {
        let rejected = || {
            Verdict::Found(Finding {
                kind: FindingKind::Crash,
                level: "check".into(),
                signature: "crash:torch.onnx.export:exporter:invalid-model:ShapeInferenceError"
                    .into(),
                detail: "Inferred shape and existing shape differ".into(),
                blame: None,
            })
        };
        let found = |v: Verdict| match v {
            Verdict::Found(f) => f,
            other => panic!("{other:?}"),
        };
        let right = found(checker_verdict(rejected(), &Ok(Judged::Agrees)));
        assert!(
            right.signature.contains("exporter:invalid-model"),
            "{}",
            right.signature
        );
        assert!(right
            .detail
            .ends_with("ONNX Runtime runs the rejected model and matches eager."));
        let wrong = Ok(Judged::Wrong {
            what: "value",
            k: 0,
            detail: String::new(),
        });
        let wrong = found(checker_verdict(rejected(), &wrong));
        assert!(
            wrong.detail.ends_with("does not match eager."),
            "{}",
            wrong.detail
        );
    }

    #[test]
    fn invalid_models_from_an_unsupported_type_share_one_signature_per_type() {
        let found = |detail: &str| {
            Verdict::Found(Finding {
                kind: FindingKind::Crash,
                level: "check".into(),
                signature: format!("crash:x:{detail}"),
                detail: detail.into(),
                blame: None,
            })
        };
        let signature = |v: Verdict| match v {
            Verdict::Found(f) => f.signature,
            other => panic!("{other:?}"),
        };
        let cos = signature(by_type(found(
            "(op_type:Cos): input typestr: T, has unsupported type: tensor(bfloat16)",
        )));
        let conv = signature(by_type(found(
            "(op_type:Conv): X typestr: T, has unsupported type: tensor(bfloat16)",
        )));
        assert_eq!(cos, conv);
        assert!(cos.ends_with("unsupported-type:bfloat16"), "{cos}");
        let relu = signature(by_type(found(
            "(op_type:Relu): X typestr: T, has unsupported type: tensor(uint8)",
        )));
        assert!(relu.ends_with("unsupported-type:uint8"), "{relu}");
        assert_eq!(
            signature(by_type(found("Concat: inconsistent type"))),
            "crash:x:Concat: inconsistent type"
        );
    }
}
