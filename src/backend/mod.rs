//! Backends: one file per compiler, one trait, one table. A backend runs an emitted ONNX
//! model at one of its optimization levels and returns the outputs or a classified error;
//! what differs between backends (levels, whether a standalone Python reproducer can run
//! it, whether culprit passes can be bisected) is a [`Backend`] method, and [`by_name`]
//! over [`BACKENDS`] is the only place a backend is named.

pub mod bisect;
pub mod capability;
pub mod faulty;
pub mod openvino;
pub mod ort;
pub mod panic;
pub mod python;
pub mod torchscript;
#[cfg(feature = "tract")]
pub mod tract;
#[cfg(feature = "tract")]
pub mod tract_bisect;
#[cfg(feature = "tract")]
pub mod tract_model;
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

    /// Whether capability probing must run in forked child processes: a compiler whose
    /// single-op models can kill the process (a segfault) or hang it. A triple that does is
    /// then recorded as broken, with how the child died, and probing goes on.
    fn probe_in_child(&self) -> bool {
        false
    }

    /// How a finding's standalone `repro.py` runs this compiler from its Python package
    /// (ONNX Runtime's wheel, OpenVINO's), or `None` when it cannot: with a runner, the
    /// campaign writes one with every finding and re-runs it on the newest release.
    fn python_runner(&self) -> Option<&'static PythonRunner> {
        None
    }

    /// The culprit optimizations of a finding at `level` of `model` on `inputs`, by
    /// bisection (ONNX Runtime: transformers disabled by name, by the script [`bisect`] writes
    /// into the finding folder `dir`; tract: its own pass lists, [`tract_bisect`]); `None` when
    /// nothing at `level` can be narrowed.
    fn bisect(
        &self,
        dir: &std::path::Path,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: &str,
    ) -> Option<Result<bisect::Culprits, String>> {
        let _ = (dir, model, inputs, level);
        None
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

    /// Given the optimizations that changed a model while it compiled at the top level
    /// (what [`Backend::run_observed`] appended there), which levels provably compile it to
    /// the very model the top level does: their outputs are then the top level's, and the
    /// oracle does not compile them again. `None` when the backend cannot tell (every level
    /// then runs, unoptimized first); a backend that can tell returns `Some` for any list,
    /// the empty one included.
    fn levels_like_top(&self, fired_at_top: &[String]) -> Option<Vec<bool>> {
        let _ = fired_at_top;
        None
    }

    /// Every optimization that compiling `model` at the highest level runs (ONNX Runtime's
    /// registered graph transformers), each with whether it changed the model, or `None` when
    /// the backend does not report them. What is not listed cannot fire in this build and
    /// session.
    fn optimization_log(&self, model: &OnnxModel) -> Option<Vec<(String, bool)>> {
        let _ = model;
        None
    }
}

/// How a standalone Python script runs a backend: what `repro.py` needs beyond the model,
/// the feeds and the judgement, which it shares across backends.
pub struct PythonRunner {
    /// The package to import (`onnxruntime`), and how the script names the compiler.
    pub import: &'static str,
    /// A Python expression for the release, printed first (`ort.__version__`).
    pub version: &'static str,
    /// The `PYTHONPATH` holding the package's newest release, where the campaign re-checks a
    /// finding.
    pub python_path: fn() -> std::path::PathBuf,
    /// The newest release's number.
    pub newest: &'static str,
    /// Python definitions of `run(level, disabled=())`: the outputs of `MODEL` on `FEEDS`
    /// compiled at the level named `level` (one of the backend's [`Backend::levels`]), with
    /// the optimizations named in `disabled` switched off where the compiler can.
    pub run: &'static str,
}

/// One row of [`BACKENDS`].
pub struct BackendInfo {
    /// The name targets and `--backend` use.
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Loads the backend, or says what is missing.
    pub build: fn() -> Result<Box<dyn Backend>, String>,
}

/// Every ONNX backend.
pub static BACKENDS: &[BackendInfo] = &[
    BackendInfo {
        name: "ort",
        summary: "ONNX Runtime CPU (the release DLCFUZZ_ORT_VERSION or ORT_DYLIB_PATH names; default the newest)",
        build: || Ok(Box::new(ort::OrtCpu::new()?)),
    },
    BackendInfo {
        name: "tract",
        summary: "tract, linked in (typed, decluttered, optimized); panics are caught as crash errors",
        build: tract_backend,
    },
    BackendInfo {
        name: "tvm",
        summary: "TVM Relax for llvm, in the Python host (scripts/setup.sh --python-compilers)",
        build: || Ok(Box::new(tvm::Tvm::llvm(python::request_timeout())?)),
    },
    BackendInfo {
        name: "openvino",
        summary: "OpenVINO CPU plugin through its C API (libopenvino_c of the wheel scripts/setup.sh --openvino installs, or DLCFUZZ_OPENVINO_LIB), at float32 inference precision",
        build: || Ok(Box::new(openvino::OpenVino::new()?)),
    },
    BackendInfo {
        name: "faulty",
        summary: "ONNX Runtime with injected segfaults, aborts, hangs and leaks (reliability tests; DLCFUZZ_ALLOW_FAULTS=1)",
        build: || Ok(Box::new(faulty::Faulty::new(Box::new(ort::OrtCpu::new()?))?)),
    },
];

/// What a target linked against tract says in a build without it.
pub const WITHOUT_TRACT: &str = "this dlcfuzz was built without tract (cargo feature `tract`, on by default; README's first command leaves it out to build faster): build with default features, e.g. `cargo build --release`";

/// tract, when this build links it.
fn tract_backend() -> Result<Box<dyn Backend>, String> {
    #[cfg(feature = "tract")]
    return Ok(Box::new(tract::Tract::new()));
    #[cfg(not(feature = "tract"))]
    Err(WITHOUT_TRACT.into())
}

/// Loads the backend called `name`, or says why not (an unknown name lists the known ones).
pub fn by_name(name: &str) -> Result<Box<dyn Backend>, String> {
    match BACKENDS.iter().find(|b| b.name == name) {
        Some(info) => (info.build)(),
        None => {
            let names: Vec<&str> = BACKENDS.iter().map(|b| b.name).collect();
            Err(format!(
                "unknown backend {name:?}; the backends are: {}",
                names.join(", ")
            ))
        }
    }
}

/// Runs the standalone model file `path` at every level of `backend` on the documented
/// pattern inputs: one JSON line per level with its outputs' shapes and first `show`
/// values, or its error (`dlcfuzz run-model`).
pub fn run_file(
    backend: &dyn Backend,
    path: &std::path::Path,
    show: usize,
) -> Result<Vec<serde_json::Value>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let (model, input_types) = crate::emit::read::read_model(bytes)?;
    let inputs: Vec<Tensor> = input_types
        .iter()
        .map(crate::emit::read::pattern_input)
        .collect();
    let feeds: Vec<&Tensor> = inputs.iter().collect();
    let level = |(level, name): (usize, &&str)| {
        let result = match backend.run(&model, &feeds, level) {
            Ok(outs) => {
                let outs: Vec<_> = outs
                    .iter()
                    .map(|t| {
                        let values: Vec<f64> = t.data.to_f64_vec().into_iter().take(show).collect();
                        serde_json::json!({ "shape": t.shape, "values": values })
                    })
                    .collect();
                serde_json::json!({ "outputs": outs })
            }
            Err(e) => serde_json::json!({ "error": e }),
        };
        serde_json::json!({ "level": name, "result": result })
    };
    Ok(backend.levels().iter().enumerate().map(level).collect())
}
