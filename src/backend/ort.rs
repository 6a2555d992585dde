//! ONNX Runtime on CPU, loaded at run time (`ort` load-dynamic) from the pip wheel that
//! `scripts/setup.sh` installs.

use super::{Backend, BackendError, ErrorClass, Stage};
use crate::emit::onnx::OnnxModel;
use crate::ir::{Buffer, Tensor};
use ort::logging::{LogLevel, LoggerFunction};
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::{DynValue, Tensor as OrtTensor};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

/// ONNX Runtime's optimization levels, unoptimized first.
pub const LEVELS: [&str; 4] = ["disable", "basic", "extended", "all"];

/// ONNX Runtime CPU.
pub struct OrtCpu {
    env: &'static ort::environment::Environment,
}

fn environment() -> Result<&'static ort::environment::Environment, String> {
    static INIT: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    INIT.get_or_init(|| {
        let path = crate::paths::ort_dylib();
        if !path.exists() {
            return Err(format!(
                "ONNX Runtime {} library not found at {} (run `scripts/setup.sh --ort {}`, or set ORT_DYLIB_PATH to a libonnxruntime.so of release 1.31 or newer)",
                crate::paths::ort_version(),
                path.display(),
                crate::paths::ort_version()
            ));
        }
        let builder = ort::init_from(&path).map_err(|e| format!("loading {}: {e}", path.display()))?;
        // One global single-threaded pool without spinning: sessions then create no threads of
        // their own, which dominates the cost of the many small sessions a campaign makes.
        let pool = ort::environment::GlobalThreadPoolOptions::default()
            .with_intra_threads(1)
            .and_then(|p| p.with_inter_threads(1))
            .and_then(|p| p.with_spin_control(false))
            .map_err(|e| format!("configuring the ORT thread pool: {e}"))?;
        builder
            .with_name("dlcfuzz")
            .with_global_thread_pool(pool)
            .build()
            .map_err(|e| format!("creating the ORT environment: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The release of the loaded ONNX Runtime library, read from its build info
/// (`git-branch=rel-1.32.0`), else the configured [`crate::paths::ort_version`].
pub fn loaded_version() -> String {
    let info = ort::info();
    info.split(['=', ',', ' '])
        .find_map(|t| t.strip_prefix("rel-"))
        .map(str::to_string)
        .unwrap_or_else(crate::paths::ort_version)
}

impl OrtCpu {
    /// Loads ONNX Runtime (once per process). Fails with a message naming the missing library.
    pub fn new() -> Result<OrtCpu, String> {
        Ok(OrtCpu {
            env: environment()?,
        })
    }

    /// Loads untrusted ONNX bytes at the `all` level and, when every declared input is a
    /// tensor of a known dtype with a static shape of at most [`LOAD_MAX_ELEMENTS`] elements,
    /// runs the model once on ones (zeros would make integer `Div`/`Mod` undefined, and ORT
    /// traps on them). Errors are the model's problem, not findings; only a crash of the
    /// process is.
    pub fn load_only(&self, bytes: &[u8]) -> Result<(), BackendError> {
        // The `ort` crate unwraps some C API errors while it reads a session's input and
        // output types ("infallible: ... dim_values must be -1 (symbolic dimension) or
        // larger"): that panic is the binding's, and ONNX Runtime itself rejected the model.
        super::panic::catch(|| self.load_only_unguarded(bytes)).unwrap_or_else(|message| {
            Err(BackendError {
                class: ErrorClass::Rejected,
                stage: Stage::Compile,
                message: format!("the ort crate panicked on the model's types: {message}"),
            })
        })
    }

    fn load_only_unguarded(&self, bytes: &[u8]) -> Result<(), BackendError> {
        let mut session = self
            .session(bytes, LEVELS.len() - 1, None)
            .map_err(|e| backend_error(Stage::Compile, &e))?;
        let feeds: Option<Vec<(String, Tensor)>> = session
            .inputs()
            .iter()
            .map(|i| Some((i.name().to_string(), ones_input(i.dtype())?)))
            .collect();
        let Some(feeds) = feeds else {
            return Ok(());
        };
        let run = |e: ort::Error| backend_error(Stage::Run, &e);
        let values = feeds
            .iter()
            .map(|(name, t)| Ok((std::borrow::Cow::from(name.as_str()), to_ort(t)?.into())))
            .collect::<Result<Vec<(std::borrow::Cow<str>, ort::session::SessionInputValue)>, ort::Error>>()
            .map_err(run)?;
        session.run(values).map(drop).map_err(run)
    }

    /// Builds a session; with `logger`, the session logs at INFO level to it (ONNX Runtime
    /// reports each graph transformer's outcome at that level).
    fn session(
        &self,
        bytes: &[u8],
        level: usize,
        logger: Option<LoggerFunction>,
    ) -> Result<Session, ort::Error> {
        let opt = optimization_level(level);
        let recover =
            |e: ort::Error<ort::session::builder::SessionBuilder>| ort::Error::new(e.message());
        let mut builder = Session::builder(self.env)?
            .with_optimization_level(opt)
            .map_err(recover)?;
        builder = match logger {
            Some(logger) => builder
                .with_logger(logger)
                .map_err(recover)?
                .with_log_level(LogLevel::Info)
                .map_err(recover)?,
            None => builder.with_log_level(LogLevel::Fatal).map_err(recover)?,
        };
        builder
            // Planning a memory pattern pays off over many runs; a test runs each session once.
            .with_memory_pattern(false)
            .map_err(recover)?
            .commit_from_memory(bytes)
    }
}

impl OrtCpu {
    /// The model as ONNX Runtime rewrites it at `level` (its optimized-model dump), to see
    /// which rewrites a pattern triggered.
    pub fn optimized_model(&self, bytes: &[u8], level: usize) -> Result<Vec<u8>, String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static DUMPS: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "dlcfuzz-optimized-{}-{}.onnx",
            std::process::id(),
            DUMPS.fetch_add(1, Ordering::Relaxed)
        ));
        let opt = optimization_level(level);
        let message =
            |e: ort::Error<ort::session::builder::SessionBuilder>| e.message().to_string();
        Session::builder(self.env)
            .map_err(|e| e.to_string())?
            .with_optimization_level(opt)
            .map_err(message)?
            .with_log_level(LogLevel::Fatal)
            .map_err(message)?
            .with_optimized_model_path(&path)
            .map_err(message)?
            .commit_from_memory(bytes)
            .map_err(|e| e.to_string())?;
        let dumped = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()));
        let _ = std::fs::remove_file(&path);
        dumped
    }
}

/// How `repro.py` runs ONNX Runtime: one intra-op thread, the level by name, culprit
/// transformers disabled by name.
pub static PYTHON: super::PythonRunner = super::PythonRunner {
    import: "onnxruntime",
    version: "onnxruntime.__version__",
    python_path: crate::paths::deps_dir,
    newest: crate::paths::ORT_NEWEST,
    run: r#"LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
          "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}

def run(level, disabled=()):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
    return sess.run(None, FEEDS)
"#,
};

/// ONNX Runtime's optimization level for level index `level` of [`LEVELS`].
fn optimization_level(level: usize) -> GraphOptimizationLevel {
    match level {
        0 => GraphOptimizationLevel::Disable,
        1 => GraphOptimizationLevel::Level1,
        2 => GraphOptimizationLevel::Level2,
        _ => GraphOptimizationLevel::All,
    }
}

/// Most elements a declared input may have for [`OrtCpu::load_only`] to run the model.
pub const LOAD_MAX_ELEMENTS: usize = 4096;

/// The dtype of an ORT element type, if dlcfuzz has it.
fn dtype_of(ty: ort::value::TensorElementType) -> Option<crate::ir::DType> {
    use crate::ir::DType as D;
    use ort::value::TensorElementType as E;
    Some(match ty {
        E::Float16 => D::F16,
        E::Float32 => D::F32,
        E::Float64 => D::F64,
        E::Int8 => D::I8,
        E::Int16 => D::I16,
        E::Int32 => D::I32,
        E::Int64 => D::I64,
        E::Uint8 => D::U8,
        E::Uint16 => D::U16,
        E::Uint32 => D::U32,
        E::Uint64 => D::U64,
        E::Bool => D::Bool,
        _ => return None,
    })
}

/// A tensor of ones for a declared session input, when its type is one dlcfuzz has, its
/// shape static and its element count at most [`LOAD_MAX_ELEMENTS`].
fn ones_input(ty: &ort::value::ValueType) -> Option<Tensor> {
    let ort::value::ValueType::Tensor { ty, shape, .. } = ty else {
        return None;
    };
    let dims: Vec<usize> = shape
        .iter()
        .map(|d| usize::try_from(*d).ok())
        .collect::<Option<_>>()?;
    dims.iter()
        .try_fold(1usize, |n, d| n.checked_mul(*d))
        .filter(|n| *n <= LOAD_MAX_ELEMENTS)?;
    Some(Tensor::full(
        &crate::ir::TensorType::new(dtype_of(*ty)?, dims),
        1.0,
    ))
}

/// Classifies an ORT error message and code.
pub fn classify(stage: Stage, code: ort::ErrorCode, message: &str) -> ErrorClass {
    let unsupported = code == ort::ErrorCode::NotImplemented
        || message.contains("NOT_IMPLEMENTED")
        || message.contains("Could not find an implementation")
        || message.contains("not implemented")
        || message.contains("is not supported");
    if unsupported {
        ErrorClass::Unsupported
    } else if stage == Stage::Compile
        && matches!(
            code,
            ort::ErrorCode::InvalidGraph
                | ort::ErrorCode::InvalidProtobuf
                | ort::ErrorCode::InvalidArgument
        )
    {
        ErrorClass::Rejected
    } else {
        ErrorClass::Internal
    }
}

fn backend_error(stage: Stage, e: &ort::Error) -> BackendError {
    BackendError {
        class: classify(stage, e.code(), e.message()),
        stage,
        message: e.message().to_string(),
    }
}

fn to_ort(t: &Tensor) -> Result<DynValue, ort::Error> {
    let shape: Vec<i64> = t.shape.iter().map(|d| *d as i64).collect();
    macro_rules! arm {
        ($($v:ident),*) => {
            match &t.data {
                $(Buffer::$v(x) => OrtTensor::from_array((shape, x.clone()))?.into_dyn(),)*
            }
        };
    }
    Ok(arm!(
        F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool
    ))
}

fn from_ort(v: &DynValue, like: crate::ir::DType) -> Result<Tensor, ort::Error> {
    use crate::ir::DType as D;
    macro_rules! arm {
        ($($v:ident: $t:ty),*) => {
            match like {
                $(D::$v => {
                    let (shape, data) = v.try_extract_tensor::<$t>()?;
                    Tensor { shape: shape.iter().map(|d| *d as usize).collect(), data: Buffer::$v(data.to_vec()) }
                })*
            }
        };
    }
    Ok(
        arm!(F16: half::f16, F32: f32, F64: f64, I8: i8, I16: i16, I32: i32, I64: i64, U8: u8, U16: u16, U32: u32, U64: u64, Bool: bool),
    )
}

impl Backend for OrtCpu {
    fn name(&self) -> &'static str {
        "ort"
    }

    fn version(&self) -> String {
        format!("onnxruntime {} (CPU)", loaded_version())
    }

    fn levels(&self) -> &'static [&'static str] {
        &LEVELS
    }

    fn python_runner(&self) -> Option<&'static super::PythonRunner> {
        Some(&PYTHON)
    }

    fn bisect(
        &self,
        dir: &std::path::Path,
        _model: &OnnxModel,
        _inputs: &[&Tensor],
        level: &str,
    ) -> Option<Result<super::bisect::Culprits, String>> {
        // Nothing is optimized at `disable`; `process` is a dead process, not a level.
        (level != LEVELS[0] && level != "process").then(|| super::bisect::bisect(dir, level))
    }

    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        let session = self
            .session(&model.bytes, level, None)
            .map_err(|e| backend_error(Stage::Compile, &e))?;
        execute(session, model, inputs)
    }

    fn run_observed(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
        fired: &mut Vec<String>,
    ) -> Result<Vec<Tensor>, BackendError> {
        // The top level runs every lower level's transformers first, in the same order, so
        // its log names every transformer that fires on this model: logging at INFO (each
        // line through the Rust logger) only there saves a quarter of the sessions' time.
        if level + 1 < LEVELS.len() {
            return self.run(model, inputs, level);
        }
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = Arc::clone(&log);
        let logger: LoggerFunction = Arc::new(move |_level, _category, _id, _location, message| {
            if let Some(name) = modified_transformer(message) {
                sink.lock().expect("logger lock").push(name.to_string());
            }
        });
        let session = self.session(&model.bytes, level, Some(logger));
        fired.append(&mut log.lock().expect("logger lock"));
        execute(
            session.map_err(|e| backend_error(Stage::Compile, &e))?,
            model,
            inputs,
        )
    }

    fn optimization_log(&self, model: &OnnxModel) -> Option<Vec<(String, bool)>> {
        let log = self.transformer_log(&model.bytes, LEVELS.len() - 1).ok()?;
        let mut outcomes: BTreeMap<String, bool> = BTreeMap::new();
        for (name, modified) in log {
            *outcomes.entry(name).or_default() |= modified;
        }
        Some(outcomes.into_iter().collect())
    }

    fn levels_like_top(&self, fired_at_top: &[String]) -> Option<Vec<bool>> {
        let stages = self.stages().as_ref().ok()?;
        let top = LEVELS.len() - 1;
        // The highest level at which one of the fired transformers runs: every level from
        // there up compiles the same graph. A name no level's log showed could run anywhere.
        let highest = fired_at_top
            .iter()
            .map(|name| stages.highest_level(name).unwrap_or(top))
            .max()
            .unwrap_or(0);
        Some((0..LEVELS.len()).map(|level| level >= highest).collect())
    }
}

/// Which graph transformers ONNX Runtime runs at which optimization level, read from its own
/// log: a session at each level on a model that nothing rewrites logs each transformer once
/// per run, so a name logged more often at level `l` than at `l - 1` runs in level `l`'s
/// stage (required transformers run at every level, `disable` included).
struct Stages {
    /// Per level of [`LEVELS`], the names that run in its stage.
    introduced: Vec<BTreeSet<String>>,
}

impl Stages {
    /// Probes the stages on a one-node model.
    fn probe(ort: &OrtCpu) -> Result<Stages, String> {
        let case = crate::gen::TestCase::decode(
            &[0u8; 64],
            &crate::gen::Menu::everything(),
            &crate::gen::Limits::exact(1),
        );
        let model = crate::emit::onnx::emit_plain(&case);
        let mut previous: BTreeMap<String, usize> = BTreeMap::new();
        let mut introduced = Vec::new();
        for level in 0..LEVELS.len() {
            let log = ort
                .transformer_log(&model.bytes, level)
                .map_err(|e| format!("probing ONNX Runtime's optimization stages: {e}"))?;
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for (name, _) in log {
                *counts.entry(name).or_default() += 1;
            }
            introduced.push(
                counts
                    .iter()
                    .filter(|(name, n)| previous.get(*name).is_none_or(|p| *n > p))
                    .map(|(name, _)| name.clone())
                    .collect(),
            );
            previous = counts;
        }
        Ok(Stages { introduced })
    }

    /// The highest level whose stage runs transformer `name`, if any level's does.
    fn highest_level(&self, name: &str) -> Option<usize> {
        self.introduced
            .iter()
            .rposition(|names| names.contains(name))
    }
}

impl OrtCpu {
    /// Every transformer outcome, in order, of compiling `bytes` at `level`: `(name,
    /// modified)` per `GraphTransformer <Name> modified: <0|1>` line of the session's log.
    fn transformer_log(
        &self,
        bytes: &[u8],
        level: usize,
    ) -> Result<Vec<(String, bool)>, ort::Error> {
        let log: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
        let sink = Arc::clone(&log);
        let logger: LoggerFunction = Arc::new(move |_level, _category, _id, _location, message| {
            if let Some((name, modified)) = transformer_outcome(message) {
                sink.lock()
                    .expect("logger lock")
                    .push((name.to_string(), modified));
            }
        });
        self.session(bytes, level, Some(logger))?;
        let log = std::mem::take(&mut *log.lock().expect("logger lock"));
        Ok(log)
    }

    /// ONNX Runtime's optimization stages, probed once per process.
    fn stages(&self) -> &'static Result<Stages, String> {
        static STAGES: OnceLock<Result<Stages, String>> = OnceLock::new();
        STAGES.get_or_init(|| Stages::probe(self))
    }
}

/// The transformer named by an ONNX Runtime log line `GraphTransformer <Name> modified: 1 …`,
/// when it says the transformer changed the graph.
pub fn modified_transformer(message: &str) -> Option<&str> {
    let (name, modified) = transformer_outcome(message)?;
    modified.then_some(name)
}

/// The transformer a `GraphTransformer <Name> modified: <0|1> …` log line names, and whether
/// it changed the graph.
fn transformer_outcome(message: &str) -> Option<(&str, bool)> {
    let rest = message.strip_prefix("GraphTransformer ")?;
    let (name, outcome) = rest.split_once(" modified: ")?;
    Some((name, outcome.starts_with('1')))
}

/// Runs a compiled session on `inputs` and converts its outputs to the model's output types.
fn execute(
    mut session: Session,
    model: &OnnxModel,
    inputs: &[&Tensor],
) -> Result<Vec<Tensor>, BackendError> {
    let feeds = model
        .inputs
        .iter()
        .zip(inputs)
        .map(|((_, name), t)| Ok((std::borrow::Cow::from(name.clone()), to_ort(t)?.into())))
        .collect::<Result<Vec<(std::borrow::Cow<str>, ort::session::SessionInputValue)>, ort::Error>>()
        .map_err(|e| backend_error(Stage::Run, &e))?;
    let outputs = session
        .run(feeds)
        .map_err(|e| backend_error(Stage::Run, &e))?;
    model
        .outputs
        .iter()
        .zip(&model.output_types)
        .map(|((_, name), ty)| {
            from_ort(&outputs[name.as_str()], ty.dtype).map_err(|e| backend_error(Stage::Run, &e))
        })
        .collect()
}
