//! The model-loading targets (`ort_load`, `tract_load`): the input is an untrusted ONNX file.
//! Load errors are expected; only a crash (a panic, a dead process, a sanitizer report) is a
//! finding. The input is not a graph recipe, so these findings are kept as found (no
//! reduction).

use super::{FuzzTarget, TargetConfig, TargetInfo, TargetRun, MODEL};
use crate::backend::ort::OrtCpu;
#[cfg(feature = "tract")]
use crate::backend::tract::Tract;
use crate::backend::{Backend, BackendError};
use crate::gen::TestCase;
use crate::oracle::{normalize_message, Finding, FindingKind, Skip, Verdict};
use crate::reduce::Edit;
use std::path::Path;

/// The backend a load target feeds.
enum Loader {
    Ort(OrtCpu),
    #[cfg(feature = "tract")]
    Tract(Tract),
}

/// A load target.
pub struct Load {
    info: &'static TargetInfo,
    loader: Loader,
}

impl Load {
    fn backend(&self) -> &dyn Backend {
        match &self.loader {
            Loader::Ort(b) => b,
            #[cfg(feature = "tract")]
            Loader::Tract(b) => b,
        }
    }

    /// Loads (and, when small and static, runs once) the untrusted model `bytes`.
    pub fn load(&self, bytes: &[u8]) -> Result<(), BackendError> {
        match &self.loader {
            Loader::Ort(b) => b.load_only(bytes),
            #[cfg(feature = "tract")]
            Loader::Tract(b) => b.load_only(bytes),
        }
    }
}

/// The verdict on loading an untrusted file: a caught panic is a crash finding (tract's
/// panics are caught unless they propagate to libFuzzer); any other error is a clean
/// rejection, an invalid test.
fn verdict(result: Result<(), BackendError>) -> Verdict {
    match result {
        Ok(()) => Verdict::Pass,
        Err(e) if e.message.starts_with("panic: ") => Verdict::Found(Finding {
            kind: FindingKind::Crash,
            level: "load".into(),
            signature: format!("crash:load:{}", normalize_message(&e.message)),
            detail: e.message,
            blame: None,
        }),
        Err(e) => Verdict::Skipped(Skip::Invalid(e.message)),
    }
}

impl FuzzTarget for Load {
    fn files(&self, bytes: &[u8], _edits: &[Edit]) -> (Option<TestCase>, super::Artifacts) {
        (None, vec![(MODEL.to_string(), bytes.to_vec())])
    }

    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        self.backend().version()
    }

    fn reference_level(&self) -> &str {
        "load"
    }

    fn decode(&self, _bytes: &[u8]) -> Option<TestCase> {
        None
    }

    fn run(&self, bytes: &[u8], _edits: &[Edit], inflight: Option<&Path>) -> TargetRun {
        if let Some(dir) = inflight {
            let _ = std::fs::write(dir.join(MODEL), bytes);
        }
        let verdict = verdict(self.load(bytes));
        let artifacts = match verdict {
            Verdict::Found(_) => vec![(MODEL.to_string(), bytes.to_vec())],
            _ => Vec::new(),
        };
        TargetRun {
            artifacts,
            ..TargetRun::bare(verdict)
        }
    }
}

/// `ort_load`: ONNX Runtime session creation (all optimizations) from the bytes, then one run
/// on ones when the declared inputs are static and small.
pub fn build_ort(_config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(Load {
        info: super::by_name("ort_load")?,
        loader: Loader::Ort(OrtCpu::new()?),
    }))
}

/// `tract_load`: tract parses, analyses and optimizes the bytes, then runs the model once on
/// ones when its declared inputs are static and small. Under libFuzzer panics propagate.
#[cfg(feature = "tract")]
pub fn build_tract(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    let tract = if config.propagate_panics {
        Tract::new_propagating_panics()
    } else {
        Tract::new()
    };
    Ok(Box::new(Load {
        info: super::by_name("tract_load")?,
        loader: Loader::Tract(tract),
    }))
}

/// `tract_load` in a build without tract: says so.
#[cfg(not(feature = "tract"))]
pub fn build_tract(_config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Err(crate::backend::WITHOUT_TRACT.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{ErrorClass, Stage};

    #[test]
    fn panics_are_findings_and_other_errors_rejections() {
        let error = |message: &str| BackendError {
            class: ErrorClass::Internal,
            stage: Stage::Compile,
            message: message.into(),
        };
        assert!(matches!(verdict(Ok(())), Verdict::Pass));
        assert!(matches!(
            verdict(Err(error("panic: index out of bounds (at x.rs:1)"))),
            Verdict::Found(_)
        ));
        assert!(matches!(
            verdict(Err(error("protobuf decode error"))),
            Verdict::Skipped(Skip::Invalid(_))
        ));
    }
}
