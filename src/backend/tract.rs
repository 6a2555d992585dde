//! tract (`tract-onnx`), in process: the typed model is the reference, the decluttered and the
//! optimized models are compared against it. Being pure Rust, tract is instrumented by
//! cargo fuzz, so its own code steers libFuzzer.
//!
//! tract can panic. By default a run is wrapped in `catch_unwind` and a panic becomes an
//! [`ErrorClass::Internal`] error whose message starts with `panic: `, so an in-process
//! campaign survives and files it as a crash finding. [`Tract::new_propagating_panics`] lets
//! the panic through instead, for fuzz targets, where libFuzzer reports it with its stack.

use super::{panic, Backend, BackendError, ErrorClass, Stage};
use crate::emit::onnx::OnnxModel;
use crate::ir::{Buffer, DType, Tensor, TensorType};
use std::sync::OnceLock;
use tract_onnx::prelude::{
    DatumType, Framework, InferenceFact, InferenceModel, InferenceModelExt, IntoRunnable,
    IntoTValue, TValue, TVec, Tensor as TractTensor, TractResult, TypedModel,
};
use tract_onnx::tract_hir::infer::Factoid;

/// tract's levels, the reference first: the plain typed model, the decluttered one, the
/// optimized one.
pub const LEVELS: [&str; 3] = ["typed", "decluttered", "optimized"];

/// Most elements a declared model input may have for [`Tract::load_only`] to process it.
pub const LOAD_MAX_ELEMENTS: usize = 4096;

/// The tract-onnx version this backend is built against (tract exposes no version constant;
/// a unit test checks this one against `Cargo.lock`).
pub const TRACT_VERSION: &str = "0.23.9";

/// The tract backend.
pub struct Tract {
    catch_panics: bool,
}

impl Default for Tract {
    fn default() -> Self {
        Self::new()
    }
}

/// The ONNX frontend with every op registered (built once: registering is not free).
fn onnx() -> &'static tract_onnx::Onnx {
    static ONNX: OnceLock<tract_onnx::Onnx> = OnceLock::new();
    ONNX.get_or_init(tract_onnx::onnx)
}

/// The tract datum type of a dtype.
pub fn datum_type(dtype: DType) -> DatumType {
    match dtype {
        DType::F16 => DatumType::F16,
        DType::F32 => DatumType::F32,
        DType::F64 => DatumType::F64,
        DType::I8 => DatumType::I8,
        DType::I16 => DatumType::I16,
        DType::I32 => DatumType::I32,
        DType::I64 => DatumType::I64,
        DType::U8 => DatumType::U8,
        DType::U16 => DatumType::U16,
        DType::U32 => DatumType::U32,
        DType::U64 => DatumType::U64,
        DType::Bool => DatumType::Bool,
    }
}

/// The dtype of a tract datum type, if dlcfuzz has it.
pub fn dtype_of(dt: DatumType) -> Option<DType> {
    DType::ALL.iter().copied().find(|d| datum_type(*d) == dt)
}

/// A dlcfuzz tensor as a tract tensor.
pub fn to_tract(t: &Tensor) -> TractResult<TractTensor> {
    macro_rules! arm {
        ($($v:ident),*) => {
            match &t.data { $(Buffer::$v(x) => TractTensor::from_shape(&t.shape, x),)* }
        };
    }
    arm!(F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool)
}

/// A tract tensor as a dlcfuzz tensor of `dtype`; fails when tract's datum type differs.
/// tract computes ONNX int64 as `TDim` (its symbolic integer) in places (`Cast` to int64
/// always does), so a concrete `TDim` tensor stands for `i64`.
pub fn from_tract(t: &TractTensor, dtype: DType) -> TractResult<Tensor> {
    if t.datum_type() == DatumType::TDim && dtype == DType::I64 {
        return from_tract(&*t.cast_to::<i64>()?, dtype);
    }
    if t.datum_type() != datum_type(dtype) {
        return Err(tract_onnx::prelude::TractError::msg(format!(
            "tract produced {:?} where the model declares {dtype}",
            t.datum_type()
        )));
    }
    let plain = t.try_as_plain_ram()?;
    macro_rules! arm {
        ($($v:ident: $t:ty),*) => {
            match dtype { $(DType::$v => Buffer::$v(plain.as_slice::<$t>()?.to_vec()),)* }
        };
    }
    let data = arm!(F16: half::f16, F32: f32, F64: f64, I8: i8, I16: i16, I32: i32, I64: i64,
        U8: u8, U16: u16, U32: u32, U64: u64, Bool: bool);
    Ok(Tensor {
        shape: t.shape().to_vec(),
        data,
    })
}

/// True when tract's message says it lacks an op, a dtype or an attribute value. Matched on
/// the whole context chain: tract wraps the root cause in "Failed analyse for node ..." etc.
pub fn is_unsupported(message: &str) -> bool {
    const MARKERS: [&str; 11] = [
        "unimplemented",
        "not implemented",
        "not supported",
        "unsupported",
        "does not support",
        "can not be made a typedop",
        "is not a number",
        "is not float-like",
        "is not signed",
        "doesn't implement",
        "is not copy",
    ];
    let lower = message.to_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
}

/// Which part of a run failed, for classification.
#[derive(Clone, Copy)]
enum Phase {
    /// Parsing the protobuf, building nodes, type and shape analysis: tract judges the model.
    Analysis,
    /// Decluttering, optimizing, planning.
    Transform,
    /// Executing the plan.
    Execute,
}

/// Classifies a tract failure by phase and message.
fn classify(phase: Phase, message: &str) -> ErrorClass {
    match phase {
        _ if is_unsupported(message) => ErrorClass::Unsupported,
        Phase::Analysis => ErrorClass::Rejected,
        Phase::Transform | Phase::Execute => ErrorClass::Internal,
    }
}

/// Most characters kept of a tract message (some embed whole node protobufs).
const MESSAGE_CHARS: usize = 2000;

fn error(phase: Phase) -> impl Fn(tract_onnx::prelude::TractError) -> BackendError {
    move |e| {
        // `{:#}` prints the whole context chain, outermost first.
        let message: String = format!("{e:#}").chars().take(MESSAGE_CHARS).collect();
        BackendError {
            class: classify(phase, &message),
            stage: match phase {
                Phase::Execute => Stage::Run,
                _ => Stage::Compile,
            },
            message,
        }
    }
}

/// Parses ONNX bytes into tract's inference model.
fn parse(bytes: &[u8]) -> Result<InferenceModel, BackendError> {
    onnx()
        .model_for_read(&mut &bytes[..])
        .map_err(error(Phase::Analysis))
}

/// The elements of a declared input fact, when its dtype and shape are concrete and its
/// dims non-negative: `Some((dtype, shape, numel))`, the count saturating.
fn static_input(fact: &InferenceFact) -> Option<(DatumType, Vec<usize>, usize)> {
    let dt = fact.datum_type.concretize()?;
    let shape: Vec<usize> = fact
        .shape
        .concretize()?
        .iter()
        .map(|d| d.as_i64().and_then(|v| usize::try_from(v).ok()))
        .collect::<Option<_>>()?;
    let numel = shape.iter().fold(1usize, |n, d| n.saturating_mul(*d));
    Some((dt, shape, numel))
}

impl Tract {
    /// tract with panics caught and reported as internal errors.
    pub fn new() -> Tract {
        Tract { catch_panics: true }
    }

    /// tract with panics propagating to the caller (for fuzz targets: libFuzzer reports them).
    pub fn new_propagating_panics() -> Tract {
        Tract {
            catch_panics: false,
        }
    }

    /// Runs `f`, turning a panic into an internal error at `stage` unless panics propagate.
    fn guard<T>(
        &self,
        stage: Stage,
        f: impl FnOnce() -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        if !self.catch_panics {
            return f();
        }
        panic::catch(f).unwrap_or_else(|message| {
            Err(BackendError {
                class: ErrorClass::Internal,
                stage,
                message,
            })
        })
    }

    /// The model at `level`, with input facts fixed from `inputs`, and the inputs as tract
    /// values in tract's input order.
    fn compile(
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<(TypedModel, TVec<TValue>), BackendError> {
        let (typed, feeds) = Self::typed(model, inputs)?;
        let transform = error(Phase::Transform);
        let typed = match level {
            0 => typed,
            1 => typed.into_decluttered().map_err(transform)?,
            _ => typed.into_optimized().map_err(transform)?,
        };
        Ok((typed, feeds))
    }

    /// The plain typed model (level 0), with input facts fixed from `inputs`, and the inputs
    /// as tract values in tract's input order.
    pub(super) fn typed(
        model: &OnnxModel,
        inputs: &[&Tensor],
    ) -> Result<(TypedModel, TVec<TValue>), BackendError> {
        let mut m = parse(&model.bytes)?;
        let analysis = error(Phase::Analysis);
        let outlets = m.input_outlets().map_err(&analysis)?.to_vec();
        let mut feeds = TVec::new();
        for (ix, outlet) in outlets.iter().enumerate() {
            let name = &m.node(outlet.node).name;
            let t = model
                .inputs
                .iter()
                .position(|(_, n)| n == name)
                .map(|i| inputs[i])
                .ok_or_else(|| BackendError {
                    class: ErrorClass::Internal,
                    stage: Stage::Compile,
                    message: format!("tract sees an input {name:?} the model does not declare"),
                })?;
            let fact = InferenceFact::dt_shape(datum_type(t.data.dtype()), &*t.shape);
            m.set_input_fact(ix, fact).map_err(&analysis)?;
            feeds.push(to_tract(t).map_err(error(Phase::Execute))?.into_tvalue());
        }
        let typed = m.into_typed().map_err(&analysis)?;
        Ok((typed, feeds))
    }

    /// Runs a compiled model and converts its outputs to the model's declared types.
    pub(super) fn execute(
        model: &OnnxModel,
        typed: TypedModel,
        feeds: TVec<TValue>,
    ) -> Result<Vec<Tensor>, BackendError> {
        let execute = error(Phase::Execute);
        let outputs = typed
            .into_runnable()
            .map_err(error(Phase::Transform))?
            .run(feeds)
            .map_err(&execute)?;
        if outputs.len() != model.output_types.len() {
            return Err(BackendError {
                class: ErrorClass::Internal,
                stage: Stage::Run,
                message: format!(
                    "tract returned {} outputs, the model declares {}",
                    outputs.len(),
                    model.output_types.len()
                ),
            });
        }
        outputs
            .iter()
            .zip(&model.output_types)
            .map(|(o, ty)| from_tract(o, ty.dtype).map_err(&execute))
            .collect()
    }

    /// Loads untrusted ONNX bytes, optimizes the model and, when every declared input has a
    /// concrete dtype dlcfuzz knows and a concrete shape, runs it once on ones (zeros would
    /// make integer `Div`/`Mod` panic in tract by design). Models that declare an input of
    /// more than [`LOAD_MAX_ELEMENTS`] elements are skipped (`Ok`) to bound the work.
    pub fn load_only(&self, bytes: &[u8]) -> Result<(), BackendError> {
        self.guard(Stage::Compile, || {
            let m = parse(bytes)?;
            let analysis = error(Phase::Analysis);
            let mut ones: Option<TVec<TValue>> = Some(TVec::new());
            for ix in 0..m.input_outlets().map_err(&analysis)?.len() {
                match static_input(m.input_fact(ix).map_err(&analysis)?) {
                    Some((_, _, n)) if n > LOAD_MAX_ELEMENTS => return Ok(()),
                    Some((dt, shape, _)) => {
                        let t = dtype_of(dt).map(|d| Tensor::full(&TensorType::new(d, shape), 1.0));
                        match (ones.as_mut(), t) {
                            (Some(feeds), Some(t)) => {
                                feeds.push(to_tract(&t).map_err(&analysis)?.into_tvalue())
                            }
                            _ => ones = None,
                        }
                    }
                    None => ones = None,
                }
            }
            let optimized = m.into_optimized().map_err(error(Phase::Transform))?;
            if let Some(feeds) = ones {
                let plan = optimized.into_runnable().map_err(error(Phase::Transform))?;
                plan.run(feeds).map_err(error(Phase::Execute))?;
            }
            Ok(())
        })
    }
}

impl Backend for Tract {
    fn name(&self) -> &'static str {
        "tract"
    }

    fn version(&self) -> String {
        format!("tract-onnx {TRACT_VERSION}")
    }

    fn levels(&self) -> &'static [&'static str] {
        &LEVELS
    }

    fn bisect(
        &self,
        _dir: &std::path::Path,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: &str,
    ) -> Option<Result<super::bisect::Culprits, String>> {
        let level = LEVELS.iter().position(|l| *l == level).filter(|l| *l > 0)?;
        Some(super::tract_bisect::culprits(model, inputs, level))
    }

    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        self.run_observed(model, inputs, level, &mut Vec::new())
    }

    /// tract logs no rewrites, but what a level compiled the model to shows them: every
    /// distinct op of the decluttered or optimized model is reported as
    /// `<level>:<op name>` (`optimized:OptMatMulPack`, `decluttered:EinSum`), the
    /// operators tract's passes chose for this model.
    fn run_observed(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
        fired: &mut Vec<String>,
    ) -> Result<Vec<Tensor>, BackendError> {
        let (typed, feeds) = self.guard(Stage::Compile, || Self::compile(model, inputs, level))?;
        if level > 0 {
            let ops: std::collections::BTreeSet<String> = typed
                .nodes()
                .iter()
                .map(|n| n.op.name().to_string())
                .collect();
            fired.extend(ops.into_iter().map(|op| format!("{}:{op}", LEVELS[level])));
        }
        self.guard(Stage::Run, || Self::execute(model, typed, feeds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::{pb, tensor_proto, value_info, IR_VERSION, OPSET};
    use crate::ir::ValueRef;
    use petgraph::stable_graph::NodeIndex;
    use prost::Message;

    fn f32s(shape: Vec<usize>, v: Vec<f32>) -> Tensor {
        Tensor {
            shape,
            data: Buffer::F32(v),
        }
    }

    /// A model `y = nodes(x, w)` with input `x`, initializers `w`, and output `y` of type `out`;
    /// each node is (op type, inputs, output).
    fn model(
        x: &TensorType,
        initializers: &[(&str, &Tensor)],
        nodes: &[(&str, &[&str], &str)],
        out: &TensorType,
    ) -> OnnxModel {
        let graph = pb::GraphProto {
            name: Some("unit".into()),
            input: vec![value_info("x", x)],
            output: vec![value_info("y", out)],
            initializer: initializers
                .iter()
                .map(|(n, t)| tensor_proto(n, t))
                .collect(),
            node: nodes
                .iter()
                .map(|(op, inputs, output)| pb::NodeProto {
                    op_type: Some(op.to_string()),
                    input: inputs.iter().map(|s| s.to_string()).collect(),
                    output: vec![output.to_string()],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let proto = pb::ModelProto {
            ir_version: Some(IR_VERSION),
            opset_import: vec![pb::OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(OPSET),
            }],
            graph: Some(graph),
            ..Default::default()
        };
        OnnxModel {
            bytes: proto.encode_to_vec(),
            inputs: vec![(NodeIndex::new(0), "x".into())],
            outputs: vec![(
                ValueRef {
                    node: NodeIndex::new(1),
                    output: 0,
                },
                "y".into(),
            )],
            output_types: vec![out.clone()],
        }
    }

    #[test]
    fn the_version_constant_is_the_locked_tract_onnx() {
        let lock = include_str!("../../Cargo.lock");
        let entry = format!("name = \"tract-onnx\"\nversion = \"{TRACT_VERSION}\"");
        assert!(
            lock.contains(&entry),
            "Cargo.lock resolves another tract-onnx than {TRACT_VERSION}: update TRACT_VERSION"
        );
    }

    #[test]
    fn every_dtype_round_trips_through_tract_tensors() {
        for dtype in DType::ALL {
            let t = Tensor {
                shape: vec![2, 2],
                data: Buffer::from_f64(dtype, &[0.0, 1.0, 2.0, 3.0]),
            };
            let tt = to_tract(&t).unwrap();
            assert_eq!(tt.datum_type(), datum_type(dtype), "{dtype}");
            assert_eq!(tt.shape(), &[2, 2]);
            assert_eq!(dtype_of(tt.datum_type()), Some(dtype));
            assert_eq!(from_tract(&tt, dtype).unwrap(), t, "{dtype}");
        }
        let f = to_tract(&f32s(vec![1], vec![1.0])).unwrap();
        assert!(
            from_tract(&f, DType::F64).is_err(),
            "a dtype mismatch is an error"
        );
    }

    #[test]
    fn add_then_relu_runs_at_every_level() {
        let ty = TensorType::new(DType::F32, vec![2, 3]);
        let w = f32s(vec![3], vec![1.0, -1.0, 0.5]);
        let m = model(
            &ty,
            &[("w", &w)],
            &[("Add", &["x", "w"], "s"), ("Relu", &["s"], "y")],
            &ty,
        );
        let x = f32s(vec![2, 3], vec![-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]);
        let expected = f32s(vec![2, 3], vec![0.0, 0.0, 0.0, 1.0, 0.0, 2.5]);
        let tract = Tract::new();
        assert_eq!(tract.levels().len(), 3);
        for (level, name) in LEVELS.iter().enumerate() {
            let out = tract.run(&m, &[&x], level).unwrap();
            assert_eq!(out, vec![expected.clone()], "level {name}");
        }
    }

    #[test]
    fn an_unknown_op_is_unsupported() {
        let ty = TensorType::new(DType::F32, vec![4]);
        let m = model(&ty, &[], &[("DlcfuzzNoSuchOp", &["x"], "y")], &ty);
        let x = f32s(vec![4], vec![0.0; 4]);
        let e = Tract::new().run(&m, &[&x], 0).unwrap_err();
        assert_eq!(e.class, ErrorClass::Unsupported, "{e}");
        assert_eq!(e.stage, Stage::Compile);
    }

    /// tract 0.23 reaches `unimplemented!` for a string initializer stored as raw bytes.
    fn panicking_model() -> Vec<u8> {
        let ty = TensorType::new(DType::F32, vec![1]);
        let mut m = model(&ty, &[], &[("Identity", &["x"], "y")], &ty);
        let mut proto = pb::ModelProto::decode(m.bytes.as_slice()).unwrap();
        let graph = proto.graph.as_mut().unwrap();
        graph.initializer.push(pb::TensorProto {
            name: Some("s".into()),
            dims: vec![1],
            data_type: Some(8),
            raw_data: Some(b"abcd".to_vec()),
            ..Default::default()
        });
        m.bytes = proto.encode_to_vec();
        m.bytes
    }

    #[test]
    fn panics_are_caught_or_propagated_as_asked() {
        let bytes = panicking_model();
        let e = Tract::new().load_only(&bytes).unwrap_err();
        assert_eq!(e.class, ErrorClass::Internal);
        assert!(e.message.starts_with("panic: "), "{}", e.message);
        let propagated = std::panic::catch_unwind(|| {
            let _ = Tract::new_propagating_panics().load_only(&bytes);
        });
        assert!(propagated.is_err(), "the panic reaches the caller");
    }

    #[test]
    fn load_only_accepts_valid_models_and_rejects_garbage() {
        let ty = TensorType::new(DType::F32, vec![2, 3]);
        let m = model(&ty, &[], &[("Relu", &["x"], "y")], &ty);
        assert_eq!(Tract::new().load_only(&m.bytes), Ok(()));
        let e = Tract::new().load_only(b"\xff\xff not a model").unwrap_err();
        assert_eq!(e.class, ErrorClass::Rejected, "{e}");
        assert!(is_unsupported("Failed analyse: Add does not support Bool"));
        assert!(!is_unsupported("Impossible to unify Int32 with Float32"));
    }
}
