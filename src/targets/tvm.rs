//! The TVM Relax targets (`tvm_llvm`, `tvm_cuda`): a pass plan ([`PassPlan`]) then a graph
//! recipe. The generated model is judged twice:
//! 1. the usual oracle on the plain build (import + `tvm.compile`'s own pipeline) against
//!    the libtorch reference, with kernel-mismatch localization ([`Pipeline::judge`]);
//! 2. the pass sequence applied before the build, compared with the plain build. A pass
//!    that raises an internal error is a crash finding signed by the pass; a mismatch is
//!    localized to the first prefix of the sequence whose build disagrees.

use super::hosted::{covered, host_failure, stage_failure, Run};
use super::{repro, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun, MODEL};
use crate::backend::python::request_timeout;
use crate::backend::tvm::{Build, BuildsFailed, Tvm};
use crate::emit::emit;
use crate::emit::onnx::OnnxModel;
use crate::gen::{Limits, TestCase};
use crate::ir::Tensor;
use crate::mutate::passes::PassPlan;
use crate::oracle::mismatch;
use crate::oracle::{
    compare_within, first_mismatch_by, tolerance, Finding, FindingKind, Skip, Verdict,
};
use crate::pipeline::{Pipeline, TestRun};
use crate::reduce::Edit;
use crate::reference::envelope::Envelope;
use std::path::Path;

const BACKEND: &str = "tvm";

/// A TVM test setup: the harness of the plain build and the backend for pass builds.
pub struct TvmHarness {
    info: &'static TargetInfo,
    /// Decoding, value search, reference and the plain build's oracle.
    pub pipeline: Pipeline,
    tvm: Tvm,
}

impl FuzzTarget for TvmHarness {
    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        crate::backend::Backend::version(&self.tvm)
    }

    fn reference_level(&self) -> &str {
        crate::backend::Backend::levels(&self.tvm)[0]
    }

    fn newest_env(&self) -> super::NewestEnv {
        super::NewestEnv::python_compilers(&self.version())
    }

    fn decode(&self, bytes: &[u8]) -> Option<TestCase> {
        let (_, rest) = PassPlan::split(bytes);
        Some(self.pipeline.prepare(rest))
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], inflight: Option<&Path>) -> TargetRun {
        self.test(bytes, edits, inflight)
    }

    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        let (plan, rest) = PassPlan::split(bytes);
        let Ok(case) = self.pipeline.prepare_edited(rest, edits) else {
            return (None, Vec::new());
        };
        let files = self.finding_files(&plan, &case, &emit(&case));
        (Some(case), files)
    }
}

/// `tvm_llvm`: TVM Relax for the CPU, plain and after a pass sequence.
pub fn build_llvm(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TvmHarness::llvm(config.limits())?))
}

/// The pattern target's name.
pub const PATTERNS_TARGET: &str = "tvm_llvm_patterns";

/// `tvm_llvm_patterns`: `tvm_llvm` on seed graphs with optimizer patterns spliced in (the
/// library [`TargetConfig::pattern_library`] names); after the pass header, the input holds
/// the splice header ([`PatternRecipe`](crate::mutate::patterns::recipe::PatternRecipe)).
pub fn build_llvm_patterns(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let library = config.required_pattern_library()?;
    let mut harness = TvmHarness::of(
        PATTERNS_TARGET,
        Tvm::llvm(request_timeout())?,
        config.limits(),
    )?;
    harness.pipeline = harness.pipeline.with_patterns(library);
    Ok(Box::new(harness))
}

/// `tvm_cuda`: TVM Relax for CUDA device 0; fails naming what is missing without one.
pub fn build_cuda(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TvmHarness::cuda(config.limits())?))
}

impl TvmHarness {
    /// TVM for the CPU (`llvm`) with its probed capabilities, or why the host cannot run it.
    pub fn llvm(limits: Limits) -> Result<TvmHarness, String> {
        Self::of("tvm_llvm", Tvm::llvm(request_timeout())?, limits)
    }

    /// TVM for CUDA device 0, or why not.
    pub fn cuda(limits: Limits) -> Result<TvmHarness, String> {
        Self::of("tvm_cuda", Tvm::cuda(request_timeout())?, limits)
    }

    fn of(name: &str, tvm: Tvm, limits: Limits) -> Result<TvmHarness, String> {
        Ok(TvmHarness {
            info: super::by_name(name)?,
            pipeline: Pipeline::probed(Box::new(tvm.clone()), limits),
            tvm,
        })
    }

    /// One test of `bytes` with reduction `edits` (the model goes to `inflight` first, when
    /// given): the verdict, the graph, the `tvm.relax` lines it covered, and (for a finding)
    /// the model and a standalone `repro.py` (plain build against the pass sequence).
    pub fn test(&self, bytes: &[u8], edits: &[Edit], inflight: Option<&Path>) -> TargetRun {
        covered(self.tvm.host(), || self.tested(bytes, edits, inflight))
    }

    fn tested(&self, bytes: &[u8], edits: &[Edit], inflight: Option<&Path>) -> TargetRun {
        let (plan, rest) = PassPlan::split(bytes);
        let run = match super::run_pipeline(&self.pipeline, rest, edits, inflight) {
            Ok(run) => run,
            Err(skipped) => return *skipped,
        };
        let verdict = match &run.verdict {
            Verdict::Pass if !plan.passes.is_empty() => match self.judge_passes(&run, &plan) {
                Verdict::Found(f) => Verdict::Found(Finding {
                    detail: format!("pass sequence [{}]\n{}", plan.passes.join(", "), f.detail),
                    ..f
                }),
                other => other,
            },
            other => other.clone(),
        };
        let artifacts = super::files_if_found(&verdict, || {
            self.finding_files(&plan, &run.case, &run.model)
        });
        TargetRun {
            fired: run.fired,
            model: Some(run.model.bytes),
            near_miss: run.near_miss,
            ..TargetRun::tested(verdict, run.case, artifacts)
        }
    }

    /// A finding folder's files: the model and a standalone `repro.py` (plain build against
    /// the pass sequence).
    fn finding_files(&self, plan: &PassPlan, case: &TestCase, model: &OnnxModel) -> Artifacts {
        let inputs = Pipeline::inputs(case, model);
        let names: Vec<String> = model.inputs.iter().map(|(_, n)| n.clone()).collect();
        let script = repro::tvm(&plan.passes, &names, &inputs, self.tvm.target());
        vec![
            (MODEL.to_string(), model.bytes.clone()),
            ("repro.py".to_string(), script.into_bytes()),
        ]
    }

    /// The pass sequence's build against the plain one.
    fn judge_passes(&self, run: &TestRun, plan: &PassPlan) -> Verdict {
        let inputs = Pipeline::inputs(&run.case, &run.model);
        let builds = [
            Build {
                name: "plain".into(),
                passes: Vec::new(),
            },
            Build {
                name: "passes".into(),
                passes: plan.passes.clone(),
            },
        ];
        let runs = match self.tvm.builds(&run.model, &inputs, &builds) {
            Ok(r) => r,
            Err(failure) => return failed(failure),
        };
        let outputs = |r: &Run| match r {
            Run::Outputs(o) => Ok(o.clone()),
            Run::Failed(e) => Err(e.clone()),
        };
        let plain = match runs.first().map(|(_, r)| outputs(r)) {
            Some(Ok(o)) => o,
            _ => return Verdict::Skipped(Skip::Invalid("the plain build failed on rerun".into())),
        };
        let fragile = &run.fragile();
        let with_passes = match runs.get(1).map(|(_, r)| outputs(r)) {
            Some(Ok(o)) => o,
            Some(Err(e)) => return stage_failure(BACKEND, "passes", &e),
            None => return Verdict::Skipped(Skip::Invalid("no pass build in the response".into())),
        };
        let envelope = run.envelope.as_ref();
        let Some(detail) = self.differs(&plain, &with_passes, fragile, envelope, plan) else {
            return Verdict::Pass;
        };
        let culprit = self.culprit(run, &inputs, plan, &plain, fragile);
        Verdict::Found(Finding {
            kind: FindingKind::Inconsistency,
            level: "passes".into(),
            signature: format!(
                "inconsistency:{BACKEND}:pass:{culprit}:{}",
                run.case.op_types()
            ),
            detail: format!(
                "passes [{}] against the plain build: {detail}",
                plan.passes.join(", ")
            ),
            blame: None,
        })
    }

    /// The first mismatch of a pass build, with float16 tolerances when a pass of `plan`
    /// changes numerics on purpose. With the reference's precision `envelope`, a pass build
    /// is wrong only where it strays from the exact result farther than rounding explains
    /// and the plain build does not (or both stray, differently).
    fn differs(
        &self,
        plain: &[Tensor],
        got: &[Tensor],
        fragile: &[bool],
        envelope: Option<&Envelope>,
        plan: &PassPlan,
    ) -> Option<String> {
        if !plan.lossy() {
            let Some(env) = envelope else {
                return mismatch(plain, got, fragile);
            };
            return match (env.deviation(plain), env.deviation(got)) {
                (_, None) => None,
                (Some(_), Some(_)) if env.all_agree(plain, got) => None,
                (_, Some((k, d))) => Some(format!("output {k}: {d}")),
            };
        }
        let loose = tolerance(crate::ir::DType::F16);
        first_mismatch_by(plain, got, fragile, |w, g| compare_within(w, g, loose))
            .map(|(k, d)| format!("output {k}: {d}"))
    }

    /// The pass whose addition first makes a prefix of `plan` disagree with the plain build
    /// (all prefixes are built on one import); `unlocalized` when none does on rerun.
    fn culprit(
        &self,
        run: &TestRun,
        inputs: &[&Tensor],
        plan: &PassPlan,
        plain: &[Tensor],
        fragile: &[bool],
    ) -> String {
        let builds: Vec<Build> = (1..=plan.passes.len())
            .map(|n| Build {
                name: format!("prefix{n}"),
                passes: plan.prefix(n),
            })
            .collect();
        let Ok(runs) = self.tvm.builds(&run.model, inputs, &builds) else {
            return "unlocalized".into();
        };
        runs.iter()
            .zip(&builds)
            .find_map(|((_, r), b)| match r {
                Run::Outputs(o) => self
                    .differs(
                        plain,
                        o,
                        fragile,
                        run.envelope.as_ref(),
                        &PassPlan {
                            passes: b.passes.clone(),
                        },
                    )
                    .map(|_| b.passes.last().cloned().unwrap_or_default()),
                Run::Failed(_) => None,
            })
            .unwrap_or_else(|| "unlocalized".into())
    }
}

/// The verdict when the pass builds produced no runs.
fn failed(failure: BuildsFailed) -> Verdict {
    match failure {
        BuildsFailed::Host(f) => host_failure(BACKEND, &f),
        BuildsFailed::Import(e) => Verdict::Skipped(Skip::Invalid(format!(
            "the import failed on rerun: {}",
            e.headline()
        ))),
        BuildsFailed::Protocol(p) => Verdict::Skipped(Skip::Invalid(format!("host: {p}"))),
    }
}
