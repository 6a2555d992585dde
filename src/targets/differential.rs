//! The differential ONNX targets (`ort_cpu`, `ort_cpu_patterns`, `ort_cpu_mutated`, `tract`,
//! `openvino_cpu`, `openvino_cpu_patterns`, and the fault-injecting `faulty`): the
//! [`Pipeline`] of one backend as a [`FuzzTarget`].

use super::repro::model::repro_py;
use super::{Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun, MODEL};
use crate::backend::bisect::Culprits;
use crate::backend::faulty::Faulty;
use crate::backend::openvino::OpenVino;
use crate::backend::ort::OrtCpu;
#[cfg(feature = "tract")]
use crate::backend::tract::Tract;
use crate::emit::emit;
use crate::emit::onnx::OnnxModel;
use crate::gen::TestCase;
use crate::oracle::{Finding, Verdict};
use crate::pipeline::Pipeline;
use crate::reduce::Edit;
use crate::reference::envelope::Envelope;
use crate::reference::TorchReference;
use std::path::Path;

/// A differential target: its registry row and its pipeline.
pub struct Differential {
    info: &'static TargetInfo,
    /// The test pipeline (backend, menu, value search, reference, patterns, mutations).
    pub pipeline: Pipeline,
}

impl Differential {
    /// The target `name` over `pipeline`.
    pub fn new(name: &str, pipeline: Pipeline) -> Result<Differential, String> {
        Ok(Differential {
            info: super::by_name(name)?,
            pipeline,
        })
    }
}

impl Differential {
    /// A finding folder's files: the model, and a `repro.py` when the backend runs from a
    /// Python wheel.
    fn finding_files(
        &self,
        model: &OnnxModel,
        case: &TestCase,
        finding: &Finding,
        culprits: Option<&Culprits>,
        envelope: Option<&Envelope>,
    ) -> Artifacts {
        let mut files = vec![(MODEL.to_string(), model.bytes.clone())];
        if let Some(runner) = self.pipeline.backend.python_runner() {
            let levels = self.pipeline.backend.levels();
            let script = repro_py(runner, levels, model, case, finding, culprits, envelope);
            files.push(("repro.py".to_string(), script.into_bytes()));
        }
        files
    }
}

impl FuzzTarget for Differential {
    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        self.pipeline.backend.version()
    }

    fn reference_level(&self) -> &str {
        self.pipeline.backend.levels()[0]
    }

    fn decode(&self, bytes: &[u8]) -> Option<TestCase> {
        Some(self.pipeline.prepare(bytes))
    }

    fn newest_env(&self) -> super::NewestEnv {
        match self.pipeline.backend.python_runner() {
            Some(runner) => super::NewestEnv::of(runner),
            None => super::NewestEnv::onnx_runtime(),
        }
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], inflight: Option<&Path>) -> TargetRun {
        let run = match super::run_pipeline(&self.pipeline, bytes, edits, inflight) {
            Ok(run) => run,
            Err(skipped) => return *skipped,
        };
        let artifacts = match &run.verdict {
            Verdict::Found(f) => {
                self.finding_files(&run.model, &run.case, f, None, run.envelope.as_ref())
            }
            _ => Vec::new(),
        };
        TargetRun {
            fired: run.fired,
            model: Some(run.model.bytes),
            near_miss: run.near_miss,
            ..TargetRun::tested(run.verdict, run.case, artifacts)
        }
    }

    fn bisect(
        &self,
        dir: &Path,
        case: Option<&TestCase>,
        finding: &Finding,
    ) -> Option<Result<Culprits, String>> {
        let Some(case) = case else {
            return Some(Err("the reduced case no longer decodes".into()));
        };
        let model = emit(case);
        let inputs = Pipeline::inputs(case, &model);
        self.pipeline
            .backend
            .bisect(dir, &model, &inputs, &finding.level)
    }

    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        match self.pipeline.prepare_edited(bytes, edits) {
            Ok(case) => {
                let model = emit(&case);
                let files = vec![(MODEL.to_string(), model.bytes)];
                (Some(case), files)
            }
            Err(_) => (None, Vec::new()),
        }
    }

    fn artifacts(
        &self,
        bytes: &[u8],
        edits: &[Edit],
        finding: &Finding,
        culprits: Option<&Culprits>,
    ) -> (Option<TestCase>, Artifacts) {
        let Ok(case) = self.pipeline.prepare_edited(bytes, edits) else {
            return (None, Vec::new());
        };
        let model = emit(&case);
        let exact = TorchReference.judge(&case, &model).envelope;
        let files = self.finding_files(&model, &case, finding, culprits, exact.as_ref());
        (Some(case), files)
    }
}

/// `ort_cpu`: a generated model through ONNX Runtime CPU at every optimization level.
pub fn build_ort(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let pipeline = Pipeline::probed(Box::new(OrtCpu::new()?), config.limits());
    Ok(Box::new(Differential::new("ort_cpu", pipeline)?))
}

/// `ort_cpu_patterns`: like `ort_cpu`, with optimizer patterns (OATest) spliced into each
/// seed graph: the library `config` names, else the file `DLCFUZZ_PATTERNS` names (written by
/// `dlcfuzz patterns extract`), else the built-in one. The input starts with the splice
/// header ([`PatternRecipe`](crate::mutate::patterns::recipe::PatternRecipe)).
pub fn build_ort_patterns(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let library = config.required_pattern_library()?;
    let pipeline =
        Pipeline::probed(Box::new(OrtCpu::new()?), config.limits()).with_patterns(library);
    Ok(Box::new(Differential::new(PATTERNS_TARGET, pipeline)?))
}

/// The pattern target's name.
pub const PATTERNS_TARGET: &str = "ort_cpu_patterns";

/// `ort_cpu_mutated`: HirFuzz on ONNX Runtime CPU. The input starts with a mutation header
/// ([`Mutations`](crate::mutate::levels::Mutations)): at constraint level 1 the generated
/// model goes through function, If and Loop rewrites and must agree with the original at
/// every level; at level 0 one constraint is broken as well and only an internal assertion
/// (or a crash) is a finding.
pub fn build_ort_mutated(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let pipeline = Pipeline::probed(Box::new(OrtCpu::new()?), config.limits()).with_mutations();
    Ok(Box::new(Differential::new("ort_cpu_mutated", pipeline)?))
}

/// `tract`: a generated model through tract typed, decluttered and optimized. Under
/// libFuzzer tract's panics propagate (reported with their stack); elsewhere they are crash
/// findings. Capabilities are always probed with panics caught.
#[cfg(feature = "tract")]
pub fn build_tract(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let pipeline = Pipeline::probed(Box::new(Tract::new()), config.limits());
    let pipeline = if config.propagate_panics {
        pipeline.with_backend(Box::new(Tract::new_propagating_panics()))
    } else {
        pipeline
    };
    Ok(Box::new(Differential::new("tract", pipeline)?))
}

/// `tract` in a build without tract: says so.
#[cfg(not(feature = "tract"))]
pub fn build_tract(_config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Err(crate::backend::WITHOUT_TRACT.into())
}

/// `openvino_cpu`: a generated model through OpenVINO's ONNX frontend and CPU plugin at
/// every level of [`crate::backend::openvino::LEVELS`].
pub fn build_openvino(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let pipeline = Pipeline::probed(Box::new(OpenVino::new()?), config.limits());
    Ok(Box::new(Differential::new("openvino_cpu", pipeline)?))
}

/// `openvino_cpu_patterns`: `openvino_cpu` on seed graphs with the optimizer patterns of
/// `ort_cpu_patterns` spliced in; OpenVINO's common transformations fuse many of the same
/// subgraphs (GELU, layer and group normalization, attention, Conv-Add and MatMul-Add).
pub fn build_openvino_patterns(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let library = config.required_pattern_library()?;
    let pipeline =
        Pipeline::probed(Box::new(OpenVino::new()?), config.limits()).with_patterns(library);
    Ok(Box::new(Differential::new(
        OPENVINO_PATTERNS_TARGET,
        pipeline,
    )?))
}

/// OpenVINO's pattern target's name.
pub const OPENVINO_PATTERNS_TARGET: &str = "openvino_cpu_patterns";

/// `faulty`: ONNX Runtime's menu and pipeline over the fault-injecting wrapper (reliability
/// tests; refuses to exist without `DLCFUZZ_ALLOW_FAULTS=1`).
pub fn build_faulty(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let faulty = Faulty::new(Box::new(OrtCpu::new()?))?;
    let pipeline =
        Pipeline::probed(Box::new(OrtCpu::new()?), config.limits()).with_backend(Box::new(faulty));
    Ok(Box::new(Differential::new("faulty", pipeline)?))
}
