//! Backends: one file per compiler, one trait. A backend runs an emitted model at one of its
//! optimization levels and returns the outputs or a classified error.

pub mod capability;
pub mod faulty;
pub mod ort;
pub mod panic;
pub mod python;
pub mod torchscript;
pub mod tract;
pub mod tvm;

use crate::emit::onnx::OnnxModel;
use crate::ir::Tensor;
use serde::{Deserialize, Serialize};

/// How a backend failure is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorClass {
    /// The backend does not implement an op, dtype or attribute: never a finding.
    Unsupported,
    /// The backend rejected the model as invalid while loading it.
    Rejected,
    /// Anything else: an internal error, a failed assertion, a failed execution.
    Internal,
}

/// When a failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Loading / compiling (session creation, where optimizations run).
    Compile,
    /// Executing.
    Run,
}

/// A classified backend failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendError {
    /// Classification.
    pub class: ErrorClass,
    /// Where it happened.
    pub stage: Stage,
    /// The backend's message.
    pub message: String,
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} error at {:?}: {}",
            self.class, self.stage, self.message
        )
    }
}

/// A compiler under test.
pub trait Backend: Send + Sync {
    /// Short name (`ort`).
    fn name(&self) -> &'static str;
    /// Version string of the compiler.
    fn version(&self) -> String;
    /// Optimization levels, the reference (unoptimized) one first.
    fn levels(&self) -> &'static [&'static str];
    /// Compiles `model` at `levels()[level]` and runs it on `inputs` (in model-input order).
    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError>;

    /// Whether `model` compiles (and, unless the backend says otherwise, runs) at `level`:
    /// what capability probing asks. Backends whose full compile is slow may check less.
    fn probe(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<(), BackendError> {
        self.run(model, inputs, level).map(|_| ())
    }

    /// Like [`Backend::run`], and also appends to `fired` the names of the optimizations that
    /// changed the model while it compiled (ONNX Runtime's graph transformers, say). Backends
    /// that report no such events run plainly and leave `fired` alone.
    fn run_observed(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
        fired: &mut Vec<String>,
    ) -> Result<Vec<Tensor>, BackendError> {
        let _ = fired;
        self.run(model, inputs, level)
    }
}
