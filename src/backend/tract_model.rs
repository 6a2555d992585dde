//! tract's model pipeline for one test, below the backend ([`super::tract`]) and its pass
//! bisection ([`super::tract_bisect`]), which both build on it: parse ONNX bytes, fix the
//! input facts and type the model (the reference level), convert tensors both ways, run a
//! typed model, and classify tract's errors.

use super::{BackendError, ErrorClass, Stage};
use crate::emit::onnx::OnnxModel;
use crate::ir::{Buffer, DType, Tensor};
use std::sync::OnceLock;
use tract_onnx::prelude::{
    DatumType, Framework, InferenceFact, InferenceModel, InferenceModelExt, IntoRunnable,
    IntoTValue, TValue, TVec, Tensor as TractTensor, TractResult, TypedModel,
};
use tract_onnx::tract_hir::infer::Factoid;

/// tract's levels, the reference first: the plain typed model, the decluttered one, the
/// optimized one.
pub const LEVELS: [&str; 3] = ["typed", "decluttered", "optimized"];

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
pub enum Phase {
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

/// Turns a tract error of `phase` into a classified backend error.
pub fn error(phase: Phase) -> impl Fn(tract_onnx::prelude::TractError) -> BackendError {
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
pub fn parse(bytes: &[u8]) -> Result<InferenceModel, BackendError> {
    onnx()
        .model_for_read(&mut &bytes[..])
        .map_err(error(Phase::Analysis))
}

/// The elements of a declared input fact, when its dtype and shape are concrete and its
/// dims non-negative: `Some((dtype, shape, numel))`, the count saturating.
pub fn static_input(fact: &InferenceFact) -> Option<(DatumType, Vec<usize>, usize)> {
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

/// The plain typed model (level 0), with input facts fixed from `inputs`, and the inputs
/// as tract values in tract's input order.
pub fn typed(
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
pub fn execute(
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
