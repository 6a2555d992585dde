//! TVM Relax through the Python host: `tvm.relax.frontend.onnx.from_onnx`, an optional
//! sequence of Relax passes, `tvm.compile(target=...)` and the Relax VM.
//!
//! As a [`Backend`] TVM has one level, `plain` (import, then `tvm.compile`'s own pipeline),
//! so the usual oracle compares it with the libtorch reference, localizes kernel mismatches
//! and probes capabilities; [`Tvm::builds`] runs several pass sequences on one import for
//! the pass-sequence oracle of the `tvm_*` targets. Every request collects the line coverage
//! of `tvm.relax` ([`coverage::TVM`]).

use super::python::classify::{PyError, PyOutcome};
use super::python::frame::Frame;
use super::python::{coverage, runs, HostConfig, PythonHost, Run};
use super::{Backend, BackendError, ErrorClass, Stage};
use crate::emit::onnx::OnnxModel;
use crate::ir::Tensor;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One build of an imported model: a name and the passes applied before `tvm.compile`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// Run name in the response.
    pub name: String,
    /// Relax pass names, in order.
    pub passes: Vec<String>,
}

/// Why [`Tvm::builds`] produced no runs.
#[derive(Clone, Debug)]
pub enum BuildsFailed {
    /// The host died or hung.
    Host(super::python::HostFailure),
    /// The ONNX import failed.
    Import(PyError),
    /// The host could not serve the request.
    Protocol(String),
}

/// TVM on one target, sharing one Python host between clones.
#[derive(Clone)]
pub struct Tvm {
    host: Arc<Mutex<PythonHost>>,
    target: &'static str,
    version: String,
}

impl Tvm {
    /// TVM compiling for the CPU (`llvm`), or why the host cannot import it.
    pub fn llvm(timeout: Duration) -> Result<Tvm, String> {
        Self::on("llvm", timeout)
    }

    /// TVM compiling for CUDA device 0, or why not.
    pub fn cuda(timeout: Duration) -> Result<Tvm, String> {
        Self::on("cuda", timeout)
    }

    fn on(target: &'static str, timeout: Duration) -> Result<Tvm, String> {
        let mut host = PythonHost::new(HostConfig::local(timeout).covering(coverage::TVM));
        let versions = host.versions(&["tvm", "onnx"])?;
        if target == "cuda" && versions["tvm_cuda"].as_bool() != Some(true) {
            return Err(
                "tvm_cuda needs a CUDA device, and TVM sees none (tvm.cuda(0).exist is false)"
                    .into(),
            );
        }
        Ok(Tvm {
            host: Arc::new(Mutex::new(host)),
            target,
            version: format!("tvm {} ({target})", versions["tvm"].as_str().unwrap_or("?")),
        })
    }

    /// The compilation target (`llvm`, `cuda`).
    pub fn target(&self) -> &'static str {
        self.target
    }

    /// The Python host every clone shares (it keeps the covered lines of `tvm.relax`).
    pub fn host(&self) -> &Mutex<PythonHost> {
        &self.host
    }

    /// Imports `model` once and runs every build on `inputs`.
    pub fn builds(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        builds: &[Build],
    ) -> Result<Vec<(String, Run)>, BuildsFailed> {
        self.request(model, inputs, builds, true)
    }

    /// Imports `model` and applies `build`'s passes without compiling (no outputs).
    fn passes_only(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        build: Build,
    ) -> Result<Vec<(String, Run)>, BuildsFailed> {
        self.request(model, inputs, &[build], false)
    }

    fn request(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        builds: &[Build],
        compile: bool,
    ) -> Result<Vec<(String, Run)>, BuildsFailed> {
        let mut frame = Frame::new(json!({}));
        let blob = frame.blob(model.bytes.clone());
        let specs: Vec<_> = inputs.iter().map(|t| frame.tensor(t)).collect();
        let names: Vec<&str> = model.inputs.iter().map(|(_, n)| n.as_str()).collect();
        let builds: Vec<_> = builds
            .iter()
            .map(|b| json!({"name": b.name, "passes": b.passes, "compile": compile}))
            .collect();
        frame.header = json!({
            "op": "tvm_run",
            "model": blob,
            "inputs": specs,
            "input_names": names,
            "target": self.target,
            "builds": builds,
        });
        let response = self
            .host
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .call(&frame)
            .map_err(BuildsFailed::Host)?;
        if response.header["ok"].as_bool() != Some(true) {
            return Err(BuildsFailed::Protocol(response.header["error"].to_string()));
        }
        let runs = runs(&response).map_err(BuildsFailed::Protocol)?;
        match runs.as_slice() {
            [(name, Run::Failed(e))] if name == "import" => Err(BuildsFailed::Import(e.clone())),
            _ => Ok(runs),
        }
    }
}

/// A Python failure as a backend error: unsupported stays unsupported; the stage decides
/// compile vs run; the message leads with the component.
pub fn backend_error(error: &PyError) -> BackendError {
    let stage = match error.stage.as_str() {
        "run" | "load" => Stage::Run,
        _ => Stage::Compile,
    };
    let class = match error.outcome() {
        PyOutcome::Unsupported => ErrorClass::Unsupported,
        PyOutcome::Environment => panic!(
            "the Python host's environment is broken ({}): run `scripts/setup.sh --python-compilers`",
            error.headline()
        ),
        PyOutcome::Internal { .. } => ErrorClass::Internal,
    };
    BackendError {
        class,
        stage,
        message: format!("[{}] {}", error.component(), error.headline()),
    }
}

impl Backend for Tvm {
    fn name(&self) -> &'static str {
        "tvm"
    }

    fn version(&self) -> String {
        self.version.clone()
    }

    fn levels(&self) -> &'static [&'static str] {
        &["plain"]
    }

    /// Imports and legalizes (`LegalizeOps`) without code generation: where TVM's frontend
    /// and operator coverage end. A full build per probe would take ten minutes here.
    fn probe(&self, model: &OnnxModel, inputs: &[&Tensor], _: usize) -> Result<(), BackendError> {
        let check = Build {
            name: "check".into(),
            passes: vec!["LegalizeOps".into()],
        };
        self.outputs_of(model, inputs, check, false).map(|_| ())
    }

    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        assert_eq!(level, 0, "TVM has one level");
        let plain = Build {
            name: "plain".into(),
            passes: Vec::new(),
        };
        self.outputs_of(model, inputs, plain, true)
    }
}

impl Tvm {
    /// The outputs of one build (none when `compile` is false: passes only).
    fn outputs_of(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        build: Build,
        compile: bool,
    ) -> Result<Vec<Tensor>, BackendError> {
        let internal = |stage, message: String| BackendError {
            class: ErrorClass::Internal,
            stage,
            message,
        };
        let result = if compile {
            self.builds(model, inputs, &[build])
        } else {
            self.passes_only(model, inputs, build)
        };
        match result {
            Ok(runs) => match runs.into_iter().next() {
                Some((_, Run::Outputs(o))) => Ok(o),
                Some((_, Run::Failed(e))) => Err(backend_error(&e)),
                None => Err(internal(Stage::Compile, "no run in the response".into())),
            },
            Err(BuildsFailed::Import(e)) => Err(backend_error(&e)),
            Err(BuildsFailed::Host(f)) => Err(internal(
                Stage::Compile,
                format!("[host] {f} at {}", f.site()),
            )),
            Err(BuildsFailed::Protocol(p)) => Err(internal(Stage::Compile, format!("[host] {p}"))),
        }
    }
}
