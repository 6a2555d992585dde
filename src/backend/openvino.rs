//! OpenVINO's CPU plugin, through its C API: `libopenvino_c` from the `openvino` wheel
//! (`scripts/setup.sh --openvino` puts it in `.deps/openvino`), loaded at run time by the
//! `openvino` crate. Models are read from memory by the ONNX frontend and compiled by the CPU
//! plugin.
//!
//! OpenVINO has no per-pass switch; its levels are the documented CPU properties that change
//! what the plugin does to the converted model (see [`LEVELS`]). Every level runs at
//! `INFERENCE_PRECISION_HINT=f32`: on a CPU with `avx512_bf16` or AMX the default is bf16,
//! a documented precision trade, not a bug (CPU device page, "Floating-point data types
//! specifics": <https://docs.openvino.ai/2024/openvino-workflow/running-inference/inference-devices-and-modes/cpu-device.html>).
//!
//! The same page lists the plugin's internal precisions: f32 (bf16, f16) for floats and i32
//! for integers (plus quantized u8/i8). Float64 and the other integer types are therefore
//! computed in another type by design ([`NARROWED`]), so [`OpenVino::probe`] reports ops that
//! read them as unsupported and the generator never draws them.

use super::{Backend, BackendError, ErrorClass, Stage};
use crate::emit::onnx::OnnxModel;
use crate::ir::{Buffer, DType, Tensor, TensorType};
use openvino::{Core, DeviceType, Dimension, ElementType, PartialShape, RwPropertyKey, Shape};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Mutex;

/// The levels, from the least to the most transformation:
/// - `accuracy`: `EXECUTION_MODE_HINT=ACCURACY`, snippets (the plugin's JIT subgraph code
///   generator) and low-precision transformations off: the closest to the model as the
///   frontend converted it;
/// - `performance`: the default pipeline (`PERFORMANCE`, snippets and low-precision
///   transformations on);
/// - `dynamic`: the same with every input dimension dynamic, so that the plugin compiles
///   shape-agnostic kernels and infers shapes at run time.
///
/// (`SNIPPETS_MODE=IGNORE_CALLBACK` is no level: it skips the plugin's check of which ops
/// snippets can emit, and its failures say so.)
pub const LEVELS: &[&str] = &["accuracy", "performance", "dynamic"];

/// The CPU properties of each level of [`LEVELS`]; every level also gets [`COMMON`]. Every
/// level sets the same keys: properties stay on the core from one compile to the next.
const LEVEL_PROPERTIES: [&[(&str, &str)]; 3] = [
    &[
        ("EXECUTION_MODE_HINT", "ACCURACY"),
        ("SNIPPETS_MODE", "DISABLE"),
        ("LP_TRANSFORMS_MODE", "NO"),
    ],
    PERFORMANCE,
    PERFORMANCE,
];

/// The default pipeline's properties.
const PERFORMANCE: &[(&str, &str)] = &[
    ("EXECUTION_MODE_HINT", "PERFORMANCE"),
    ("SNIPPETS_MODE", "ENABLE"),
    ("LP_TRANSFORMS_MODE", "YES"),
];

/// How long an inference may take, in milliseconds (the campaign's own per-test timeout
/// stops a hang long before).
const WAIT_MS: i64 = 24 * 3600 * 1000;

/// The level whose inputs are made dynamic.
const DYNAMIC: usize = 2;

/// Properties of every level: float32 inference precision (see the module text), one stream
/// and one thread (a campaign runs one test per core), no pinning.
const COMMON: &[(&str, &str)] = &[
    ("INFERENCE_PRECISION_HINT", "f32"),
    ("NUM_STREAMS", "1"),
    ("INFERENCE_NUM_THREADS", "1"),
    ("ENABLE_CPU_PINNING", "NO"),
];

/// Element types the CPU plugin computes in another type by design: its internal precisions
/// are f32 (bf16, f16) for floats and i32 for integers, u8/i8 only in quantized operations
/// (the CPU device page's "Supported Inference Data Types"). Float64 is computed in float32,
/// 64-bit integers in int32, and 8- and 16-bit integers in int32 and converted back, so that
/// overflow saturates instead of wrapping: ops reading these types are not generated.
pub const NARROWED: &[DType] = &[
    DType::F64,
    DType::I64,
    DType::U64,
    DType::U32,
    DType::I16,
    DType::U16,
    DType::I8,
    DType::U8,
];

/// The wheel release `scripts/setup.sh --openvino` installs.
pub const NEWEST: &str = "2026.4.1";

/// The C library to load: `DLCFUZZ_OPENVINO_LIB`, else the one in the wheel under
/// `.deps/openvino` (named `libopenvino_c.so.<release digits>`; the crate's finder only
/// looks for an unversioned name, which the wheel does not ship).
pub fn library() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("DLCFUZZ_OPENVINO_LIB") {
        return Ok(PathBuf::from(path));
    }
    let libs = crate::paths::openvino_dir().join("openvino").join("libs");
    library_named(&libs, "libopenvino_c.so").ok_or_else(|| {
        format!(
            "OpenVINO's C library (libopenvino_c.so.*) not found in {} (run `scripts/setup.sh --openvino`, or set DLCFUZZ_OPENVINO_LIB to a libopenvino_c.so of release 2025.1 or newer)",
            libs.display()
        )
    })
}

/// Loads the hwloc that sits beside OpenVINO's C library into the process's global scope,
/// before OpenVINO loads it. oneTBB's `tbbbind` (the CPU plugin asks it for NUMA nodes) loads
/// hwloc in a lookup scope of its own, where `free` is glibc's: under the `dlcfuzz` binary's
/// mimalloc (`override`, see `src/bin/dlcfuzz.rs`) hwloc then frees mimalloc's memory with
/// glibc's `free`, and the process aborts (`free(): invalid pointer`) at the first compile.
/// Loaded globally first, hwloc binds the process's allocator and `tbbbind` reuses it. Nothing
/// to do when there is no hwloc beside the library (another OpenVINO build).
fn load_hwloc_globally(openvino_c: &std::path::Path) {
    let hwloc = openvino_c
        .parent()
        .and_then(|libs| library_named(libs, "libhwloc.so"));
    if let Some(hwloc) = hwloc {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: loading hwloc runs its initializers, which have no preconditions; it stays
        // loaded for the life of the process (OpenVINO uses it until exit).
        if let Ok(library) = unsafe { Library::open(Some(&hwloc), RTLD_NOW | RTLD_GLOBAL) } {
            std::mem::forget(library);
        }
    }
}

/// The shared library in `dir` whose file name starts with `prefix` (the wheel versions its
/// libraries: `libopenvino_c.so.2641`, `libhwloc.so.15`).
fn library_named(dir: &std::path::Path, prefix: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix))
    })
}

/// OpenVINO CPU: one `Core`, given a level's properties before each compile (cores share
/// the CPU plugin, so a core per level would not keep them apart).
pub struct OpenVino {
    core: Mutex<Core>,
    version: String,
}

impl OpenVino {
    /// Loads the C library and creates the core, or says what is missing.
    pub fn new() -> Result<OpenVino, String> {
        let path = library()?;
        load_hwloc_globally(&path);
        openvino_sys::library::load_from(&path)
            .map_err(|e| format!("loading OpenVINO from {}: {e}", path.display()))?;
        let version = openvino::version().build_number;
        let core = Core::new().map_err(|e| format!("OpenVINO core: {e}"))?;
        Ok(OpenVino {
            core: Mutex::new(core),
            version,
        })
    }

    /// Compiles `model` at `level`: properties, read, (dynamic inputs), compile. Also gives
    /// the read model's input names, one per graph input in graph order (the ONNX frontend
    /// may rename one: an input feeding an `Identity` or `Dropout` takes that node's output
    /// name, openvinotoolkit/openvino#21615).
    fn compile(
        &self,
        model: &OnnxModel,
        level: usize,
    ) -> Result<(openvino::CompiledModel, Vec<String>), BackendError> {
        let compile = |e: String| failure(Stage::Compile, e);
        let mut core = self.core.lock().unwrap_or_else(|p| p.into_inner());
        for (key, value) in COMMON.iter().chain(LEVEL_PROPERTIES[level].iter()) {
            core.set_property(
                &DeviceType::CPU,
                &RwPropertyKey::Other(Cow::Borrowed(key)),
                value,
            )
            .map_err(|e| compile(format!("CPU property {key}={value}: {e}")))?;
        }
        let mut read = core
            .read_model_from_buffer(&model.bytes, None)
            .map_err(|e| compile(format!("reading the ONNX model: {e}")))?;
        if level == DYNAMIC {
            // OpenVINO's reshape re-infers every shape; where a static-only construct refuses
            // dynamic dimensions (its message is not kept by the C API), the model has no
            // dynamic form to test.
            make_dynamic(&mut read).map_err(|e| BackendError {
                class: ErrorClass::Unsupported,
                stage: Stage::Compile,
                message: format!("OpenVINO cannot make these inputs dynamic: {}", e.kind),
            })?;
        }
        let read_names = (0..read.get_inputs_len().map_err(|e| compile(e.to_string()))?)
            .map(|i| read.get_input_by_index(i)?.get_name())
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| compile(e.to_string()))?;
        let compiled = core
            .compile_model(&read, DeviceType::CPU)
            .map_err(|e| compile(e.to_string()))?;
        Ok((compiled, read_names))
    }
}

/// Every dimension of every input of `model` made dynamic (the rank stays).
fn make_dynamic(model: &mut openvino::Model) -> Result<(), openvino::InferenceError> {
    let mut shapes = Vec::new();
    for i in 0..model.get_inputs_len()? {
        let rank = model.get_input_by_index(i)?.get_partial_shape()?.get_rank();
        let rank = rank.get_max();
        if rank == 0 {
            // A scalar has no dimension to make dynamic (and the C API refuses rank 0).
            continue;
        }
        let dims = vec![Dimension::new(-1, -1); rank as usize];
        shapes.push((i, PartialShape::new(rank, &dims)?));
    }
    let pairs: Vec<(usize, &PartialShape)> = shapes.iter().map(|(i, s)| (*i, s)).collect();
    model.reshape_by_port_indexes(&pairs)
}

/// OpenVINO's element type of `dtype`.
fn element_type(dtype: DType) -> ElementType {
    match dtype {
        DType::F16 => ElementType::F16,
        DType::F32 => ElementType::F32,
        DType::F64 => ElementType::F64,
        DType::I8 => ElementType::I8,
        DType::I16 => ElementType::I16,
        DType::I32 => ElementType::I32,
        DType::I64 => ElementType::I64,
        DType::U8 => ElementType::U8,
        DType::U16 => ElementType::U16,
        DType::U32 => ElementType::U32,
        DType::U64 => ElementType::U64,
        DType::Bool => ElementType::Boolean,
    }
}

/// Whether OpenVINO's message says it lacks an op, an element type or an attribute value.
pub fn is_unsupported(message: &str) -> bool {
    const SAYS: &[&str] = &[
        "does not support the following ONNX operations",
        "not supported",
        "Unsupported",
        "unsupported",
        "NotImplemented",
        "not implemented",
        "doesn't support",
    ];
    SAYS.iter().any(|s| message.contains(s))
}

/// A failure at `stage` classified by its message.
fn failure(stage: Stage, message: String) -> BackendError {
    let class = if is_unsupported(&message) {
        ErrorClass::Unsupported
    } else {
        ErrorClass::Internal
    };
    BackendError {
        class,
        stage,
        message,
    }
}

/// An input tensor for OpenVINO. The C API's shape constructor refuses rank 0, so a scalar
/// is made as a one-element vector and then given the empty shape.
fn to_openvino(t: &Tensor) -> Result<openvino::Tensor, String> {
    let dims: Vec<i64> = t.shape.iter().map(|d| *d as i64).collect();
    let made = if dims.is_empty() { &[1][..] } else { &dims[..] };
    let shape = Shape::new(made).map_err(|e| format!("input shape {dims:?}: {e}"))?;
    let mut tensor =
        openvino::Tensor::new(element_type(t.data.dtype()), &shape).map_err(|e| e.to_string())?;
    let bytes = t.data.to_le_bytes();
    let raw = tensor.get_raw_data_mut().map_err(|e| e.to_string())?;
    if raw.len() != bytes.len() {
        return Err(format!(
            "OpenVINO allocated {} bytes for a {}-byte input",
            raw.len(),
            bytes.len()
        ));
    }
    raw.copy_from_slice(&bytes);
    if dims.is_empty() {
        let mut unused = 0i64;
        let scalar = openvino_sys::ov_shape_t {
            rank: 0,
            dims: &mut unused,
        };
        // SAFETY: the tensor is alive and ours; a rank-0 shape has as many elements (one) as
        // the vector it was made as, so the buffer stays; `dims` is never read at rank 0.
        let status =
            unsafe { openvino_sys::ov_tensor_set_shape(tensor.as_c_ptr().cast_mut(), scalar) };
        if status != openvino_sys::ov_status_e::OK {
            return Err(format!("a rank-0 input: {status:?}"));
        }
    }
    Ok(tensor)
}

/// An output tensor of declared type `declared`; OpenVINO keeps the model's output types,
/// so another type is an error. The C API cannot describe a rank-0 shape (its shape
/// functions refuse rank 0), so a scalar's shape is the declared one.
fn from_openvino(t: &openvino::Tensor, declared: &TensorType) -> Result<Tensor, String> {
    let dtype = declared.dtype;
    let ty = t.get_element_type().map_err(|e| e.to_string())?;
    if ty != element_type(dtype) {
        return Err(format!(
            "OpenVINO produced {ty:?} where the model declares {dtype}"
        ));
    }
    let shape: Vec<usize> = match t.get_shape() {
        Ok(shape) => shape.get_dimensions().iter().map(|d| *d as usize).collect(),
        Err(_) if declared.shape.is_empty() => Vec::new(),
        Err(e) => return Err(format!("output shape: {e}")),
    };
    let raw = t.get_raw_data().map_err(|e| e.to_string())?;
    let data = Buffer::from_le_bytes(dtype, raw).ok_or_else(|| {
        format!(
            "OpenVINO output of {} bytes is no {dtype} tensor",
            raw.len()
        )
    })?;
    Ok(Tensor { shape, data })
}

/// How `repro.py` runs OpenVINO: the same properties per level (the `dynamic` level reshapes
/// every input to dynamic dimensions); OpenVINO has no switch per transformation.
pub static PYTHON: super::PythonRunner = super::PythonRunner {
    import: "openvino",
    version: "openvino.__version__",
    python_path: crate::paths::openvino_dir,
    newest: NEWEST,
    run: r#"COMMON = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1", "INFERENCE_NUM_THREADS": "1", "ENABLE_CPU_PINNING": "NO"}
PERFORMANCE = {"EXECUTION_MODE_HINT": "PERFORMANCE", "SNIPPETS_MODE": "ENABLE", "LP_TRANSFORMS_MODE": "YES"}
LEVELS = {"accuracy": {"EXECUTION_MODE_HINT": "ACCURACY", "SNIPPETS_MODE": "DISABLE", "LP_TRANSFORMS_MODE": "NO"},
          "performance": PERFORMANCE, "dynamic": PERFORMANCE}

def run(level, disabled=()):
    import openvino as ov
    core = ov.Core()
    model = core.read_model(MODEL)
    if level == "dynamic":
        model.reshape({i: ov.PartialShape([-1] * len(p.get_partial_shape())) for i, p in enumerate(model.inputs)})
    compiled = core.compile_model(model, "CPU", {**COMMON, **LEVELS[level]})
    request = compiled.create_infer_request()
    # OpenVINO drops an input no output depends on and may rename a kept one (one feeding an
    # Identity or Dropout takes its output's name, openvinotoolkit/openvino#21615): each kept
    # input is fed from its place among the read model's inputs, which follow the graph's
    # live inputs (all of them when none was dropped).
    # A compiled model that kept every read input keeps their order (not always the name each
    # reports: a renamed tensor has two); one that dropped some is matched by name.
    read = [p.any_name for p in model.inputs]
    names = list(FEEDS) if len(read) == len(FEEDS) else [n for n in FEEDS if n in LIVE]
    if len(compiled.inputs) == len(read):
        feeds = {k: FEEDS[n] for k, n in enumerate(names)}
    else:
        feeds = {k: FEEDS[names[read.index(p.any_name)]] for k, p in enumerate(compiled.inputs)}
    # Started and waited for: with one inference thread the synchronous infer() drops the
    # CPU plugin's exceptions (and returns empty outputs).
    request.start_async(feeds)
    request.wait()
    return [np.array(request.get_output_tensor(i).data) for i in range(len(compiled.outputs))]
"#,
};

impl Backend for OpenVino {
    fn name(&self) -> &'static str {
        "openvino"
    }

    fn version(&self) -> String {
        format!("openvino {} (CPU)", self.version)
    }

    fn levels(&self) -> &'static [&'static str] {
        LEVELS
    }

    fn probe_in_child(&self) -> bool {
        true
    }

    fn python_runner(&self) -> Option<&'static super::PythonRunner> {
        Some(&PYTHON)
    }

    fn probe(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<(), BackendError> {
        if let Some(t) = inputs.iter().find(|t| NARROWED.contains(&t.data.dtype())) {
            return Err(BackendError {
                class: ErrorClass::Unsupported,
                stage: Stage::Compile,
                message: format!(
                    "OpenVINO's CPU plugin computes {} in a narrower type by design",
                    t.data.dtype()
                ),
            });
        }
        self.run(model, inputs, level).map(|_| ())
    }

    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        let execute = |e: String| failure(Stage::Run, e);
        let (mut compiled, read_names) = self.compile(model, level)?;
        let mut request = compiled
            .create_infer_request()
            .map_err(|e| failure(Stage::Compile, e.to_string()))?;
        let kept = (0..compiled
            .get_input_size()
            .map_err(|e| failure(Stage::Compile, e.to_string()))?)
            .map(|k| compiled.get_input_by_index(k)?.get_name())
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| failure(Stage::Compile, e.to_string()))?;
        let names: Vec<&str> = model.inputs.iter().map(|(_, n)| n.as_str()).collect();
        // The read model has one input per graph input some output depends on (all of them
        // when it kept every one), in graph order.
        let read_from: Vec<usize> = if read_names.len() == names.len() {
            (0..names.len()).collect()
        } else {
            let live = crate::emit::read::live_input_names(&model.bytes).unwrap_or_default();
            (0..names.len())
                .filter(|g| live.iter().any(|l| l == names[*g]))
                .collect()
        };
        let feeds = feed_order(&read_names, &kept, &read_from).ok_or_else(|| BackendError {
            class: ErrorClass::Unsupported,
            stage: Stage::Run,
            message: format!(
                "cannot tell which graph inputs {names:?} (read as {read_names:?}) feed the compiled inputs {kept:?}"
            ),
        })?;
        for (k, g) in feeds.into_iter().enumerate() {
            let tensor = to_openvino(inputs[g]).map_err(execute)?;
            request
                .set_input_tensor_by_index(k, &tensor)
                .map_err(|e| execute(format!("input {}: {e}", names[g])))?;
        }
        // Started and waited for, not `infer()`: with one inference thread the synchronous
        // call drops an exception the CPU plugin throws, returns empty outputs, and leaves
        // the failed task queued for the next model's infer to run on a freed request
        // (docs/findings/openvino-cpu-sigsegv-after-one-earlier-model); the asynchronous
        // path reports the error.
        request
            .infer_async()
            .and_then(|()| request.wait(WAIT_MS))
            .map_err(|e| execute(e.to_string()))?;
        model
            .output_types
            .iter()
            .enumerate()
            .map(|(i, ty)| {
                let t = request
                    .get_output_tensor_by_index(i)
                    .map_err(|e| execute(format!("output {i}: {e}")))?;
                from_openvino(&t, ty).map_err(execute)
            })
            .collect()
    }
}

/// Which graph input feeds each input the compiled model kept, in the compiled model's order.
/// OpenVINO drops a graph input that no output depends on, so the compiled model's indices
/// need not follow the graph's; the read model's inputs are the graph inputs `read_from`
/// (in graph order). A compiled model that kept every read input keeps their order, though
/// not always the name each reports (a tensor renamed after the Identity it fed has two
/// names, and either may be the one given): it is fed by position. One that dropped some is
/// matched by name. `None` when a kept name is not among the read ones, names repeat, or the
/// read model has another number of inputs.
fn feed_order(read: &[String], kept: &[String], read_from: &[usize]) -> Option<Vec<usize>> {
    if read.len() != read_from.len() {
        return None;
    }
    if kept.len() == read.len() {
        return Some(read_from.to_vec());
    }
    let order: Vec<usize> = kept
        .iter()
        .map(|name| read.iter().position(|r| r == name).map(|i| read_from[i]))
        .collect::<Option<_>>()?;
    let mut distinct = order.clone();
    distinct.sort_unstable();
    distinct.dedup();
    (distinct.len() == order.len()).then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kept_input_is_fed_from_its_place_in_the_read_model() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Graph inputs x3, x1, x0, x2: x1 renamed after the Dropout it feeds.
        let read = names(&["x3", "t6_0", "x0", "x2"]);
        let all = [0, 1, 2, 3];
        assert_eq!(
            feed_order(&read, &names(&["t6_0", "x0", "x2"]), &all),
            Some(vec![1, 2, 3])
        );
        assert_eq!(feed_order(&read, &read, &all), Some(vec![0, 1, 2, 3]));
        // Every read input kept, one reported under its other name: fed by position.
        let renamed = names(&["x3", "x1", "x0", "x2"]);
        assert_eq!(feed_order(&read, &renamed, &all), Some(vec![0, 1, 2, 3]));
        // x3 dropped at read time (no output depends on it): the read inputs are the live ones.
        let live = names(&["t6_0", "x0"]);
        assert_eq!(feed_order(&live, &live, &[1, 2]), Some(vec![1, 2]));
        // A name the read model does not have, a repeated one, a count that does not fit.
        assert_eq!(feed_order(&read, &names(&["x1"]), &all), None);
        assert_eq!(feed_order(&read, &names(&["x0", "x0"]), &all), None);
        assert_eq!(feed_order(&read, &names(&["x0"]), &[0, 1]), None);
    }

    #[test]
    fn every_level_has_its_properties_here_and_in_the_reproducer() {
        assert_eq!(LEVELS.len(), LEVEL_PROPERTIES.len());
        for (level, properties) in LEVELS.iter().zip(LEVEL_PROPERTIES) {
            assert!(PYTHON.run.contains(&format!("\"{level}\"")), "{level}");
            for (key, value) in COMMON.iter().chain(properties.iter()) {
                assert!(
                    PYTHON.run.contains(&format!("\"{key}\": \"{value}\"")),
                    "{key}"
                );
            }
        }
    }

    #[test]
    fn every_dtype_has_an_element_type_of_its_own() {
        let mut seen: Vec<ElementType> = DType::ALL.iter().map(|d| element_type(*d)).collect();
        seen.sort_by_key(|t| format!("{t:?}"));
        seen.dedup();
        assert_eq!(seen.len(), DType::ALL.len());
    }

    #[test]
    fn frontend_and_plugin_refusals_are_unsupported() {
        assert!(is_unsupported(
            "OpenVINO does not support the following ONNX operations: Det"
        ));
        assert!(!is_unsupported(
            "Check 'axis < rank' failed at src/core/shape_util.cpp"
        ));
    }
}
