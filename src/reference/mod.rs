//! A reference interpreter for ONNX (opset 19) on libtorch eager, through `tch`.
//!
//! [`apply`] runs one ONNX node on `tch` tensors with ONNX semantics (broadcasting, integer
//! wrap-around, truncating integer division, half-to-even rounding, ...); [`evaluate`] and
//! [`TorchReference`] run a whole generated [`crate::ir::Graph`]. Float computations stay on
//! libtorch's autograd tape (no detaching, no round trips through host memory), so a value
//! search can differentiate through the reference.
//!
//! One file per concern, split by op family like [`crate::ops`]:
//! [`convert`] (dtypes ↔ libtorch carrier kinds), `numeric` (unsigned-aware integer helpers),
//! `unary`, `binary`, `misc`, `reduce`, `matmul`, `conv`, `norm`, `layout`, `slicing`,
//! `resize`, [`graph`] (graph evaluation), [`int8_activations`] (a documented precision
//! trade) and [`onnx_models`] (the check against the models the `onnx` package ships).
//!
//! `float16` nodes are computed in `float32` and rounded once per node, as numpy (and so the
//! ONNX reference implementation) does.

mod binary;
pub mod compare;
mod conv;
pub mod convert;
pub mod envelope;
pub mod fragile;
pub mod graph;
pub mod int8_activations;
mod layout;
mod matmul;
mod misc;
mod norm;
pub mod onnx_models;
pub mod precision;
mod quant;
mod reduce;
mod resize;
mod slicing;
pub mod torch_reference;
mod unary;

use crate::ir::DType;
use crate::ops::AttrValue;
use tch::{Kind, Tensor};

pub use convert::{from_tch, to_tch};
pub use graph::evaluate;
pub use torch_reference::TorchReference;

/// Why the reference could not compute something.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefError {
    /// An op type, attribute value or dtype the interpreter does not implement.
    #[error("unsupported by the reference: {0}")]
    Unsupported(String),
    /// libtorch (or the node's own inputs) made the computation fail.
    #[error("reference computation failed: {0}")]
    Failed(String),
}

impl From<tch::TchError> for RefError {
    fn from(e: tch::TchError) -> Self {
        RefError::Failed(e.to_string())
    }
}

/// The libtorch version the reference is linked against (read from the libtorch install at
/// build time), with the `tch` binding version.
pub fn version() -> String {
    format!(
        "libtorch {} (tch 0.26)",
        option_env!("DLCFUZZ_LIBTORCH_VERSION").unwrap_or("unknown")
    )
}

/// Every ONNX op type [`apply`] implements.
pub fn op_types() -> Vec<&'static str> {
    let unary = crate::ops::unary::table().iter().map(|u| u.name);
    let binary = crate::ops::binary::table().iter().map(|b| b.name);
    FAMILIES
        .iter()
        .flat_map(|(ops, _)| ops.iter().copied())
        .chain(unary)
        .chain(binary)
        .collect()
}

/// An op family: the op types it implements and its entry point.
type Family = (
    &'static [&'static str],
    fn(&Args) -> Result<Vec<Tensor>, RefError>,
);

const FAMILIES: &[Family] = &[
    (misc::OPS, misc::apply),
    (reduce::OPS, reduce::apply),
    (matmul::OPS, matmul::apply),
    (conv::OPS, conv::apply),
    (norm::OPS, norm::apply),
    (layout::OPS, layout::apply),
    (slicing::OPS, slicing::apply),
    (resize::OPS, resize::apply),
    (quant::OPS, quant::apply),
];

/// Runs one ONNX node. `inputs` are all the node's inputs in ONNX order (data inputs, then
/// constant operands such as axes, pads or shapes), `None` for an omitted optional input; each
/// tensor is in the carrier kind of its dtype (see [`convert`]). Returns one tensor per entry
/// of `output_dtypes`, in their carriers.
///
/// Input dtypes are read from the tensors' kinds. An `Int64` (`Int`) tensor is taken as
/// `i64` (`i32`) unless an output dtype is an unsigned type carried by the same kind (`u32`
/// or `u64` for `Int64`, `u16` for `Int`): then it is read as that type. Ops whose unsigned
/// inputs give a signed or boolean output (comparisons, `Cast`, `ArgMax`) are only exact on
/// `u64` values from 2^63 up through [`apply_typed`], which takes the dtypes explicitly.
pub fn apply(
    op_type: &str,
    attrs: &[(String, AttrValue<i64>)],
    inputs: &[Option<Tensor>],
    output_dtypes: &[DType],
) -> Result<Vec<Tensor>, RefError> {
    let dtypes: Vec<Option<DType>> = inputs
        .iter()
        .map(|t| {
            let kind = t.as_ref()?.kind();
            let unsigned = output_dtypes
                .iter()
                .find(|d| d.is_unsigned() && convert::carrier(**d) == kind && kind != Kind::Uint8);
            unsigned.copied().or_else(|| convert::dtype_of_kind(kind))
        })
        .collect();
    apply_typed(op_type, attrs, inputs, &dtypes, output_dtypes)
}

/// [`apply`] with the dtype of every present input given (`None` for absent ones).
pub fn apply_typed(
    op_type: &str,
    attrs: &[(String, AttrValue<i64>)],
    inputs: &[Option<Tensor>],
    input_dtypes: &[Option<DType>],
    output_dtypes: &[DType],
) -> Result<Vec<Tensor>, RefError> {
    let unary = crate::ops::unary::declared(op_type);
    let binary = crate::ops::binary::declared(op_type);
    let family = match FAMILIES.iter().find(|(ops, _)| ops.contains(&op_type)) {
        Some((_, family)) => Some(family),
        None if unary.is_some() || binary.is_some() => None,
        None => return Err(RefError::Unsupported(format!("op type {op_type}"))),
    };
    if input_dtypes.len() != inputs.len() {
        return Err(RefError::Failed(format!(
            "{op_type}: {} inputs but {} input dtypes",
            inputs.len(),
            input_dtypes.len()
        )));
    }
    // float16 is computed in float32 and rounded once, when the outputs are wrapped below.
    let inputs = inputs
        .iter()
        .map(|t| match t {
            Some(t) if t.kind() == Kind::Half => t.f_to_kind(Kind::Float).map(Some),
            Some(t) => Ok(Some(t.shallow_clone())),
            None => Ok(None),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let args = Args {
        op: op_type,
        attrs,
        inputs,
        dtypes: input_dtypes.to_vec(),
        out: output_dtypes,
    };
    let outs = match (family, unary, binary) {
        (Some(family), _, _) => family(&args)?,
        (None, Some(row), _) => unary::apply(row, &args)?,
        (None, None, Some(row)) => binary::apply(row, &args)?,
        (None, None, None) => unreachable!("unknown op types returned above"),
    };
    if outs.len() < output_dtypes.len() {
        return Err(RefError::Failed(format!(
            "{op_type}: computed {} outputs, {} wanted",
            outs.len(),
            output_dtypes.len()
        )));
    }
    outs.iter()
        .zip(output_dtypes)
        .map(|(t, d)| convert::wrap(t, *d))
        .collect()
}

/// Calls `f` with the [`Args`] of one node (inputs as given, no float16 widening): for
/// analyses that read a node's attributes and shapes the way its op family does.
pub(crate) fn with_args<R>(
    op_type: &str,
    attrs: &[(String, AttrValue<i64>)],
    inputs: Vec<Option<Tensor>>,
    dtypes: Vec<Option<DType>>,
    out: &[DType],
    f: impl FnOnce(&Args) -> R,
) -> R {
    f(&Args {
        op: op_type,
        attrs,
        inputs,
        dtypes,
        out,
    })
}

/// One node's inputs, attributes and output dtypes, as the op families read them.
pub(crate) struct Args<'a> {
    /// ONNX op type.
    pub op: &'a str,
    attrs: &'a [(String, AttrValue<i64>)],
    /// Inputs, float16 already widened to float32.
    inputs: Vec<Option<Tensor>>,
    /// Dtype of each input.
    dtypes: Vec<Option<DType>>,
    /// Output dtypes.
    pub out: &'a [DType],
}

impl Args<'_> {
    /// Required input `i`.
    pub fn x(&self, i: usize) -> Result<&Tensor, RefError> {
        self.opt(i)
            .ok_or_else(|| RefError::Failed(format!("{}: input {i} is missing", self.op)))
    }

    /// Optional input `i`.
    pub fn opt(&self, i: usize) -> Option<&Tensor> {
        self.inputs.get(i).and_then(Option::as_ref)
    }

    /// Every present input.
    pub fn present(&self) -> Vec<&Tensor> {
        self.inputs.iter().flatten().collect()
    }

    /// The dtype of input `i` (the first output's when unknown).
    pub fn dtype(&self, i: usize) -> DType {
        self.dtypes
            .get(i)
            .copied()
            .flatten()
            .unwrap_or(self.out.first().copied().unwrap_or(DType::F32))
    }

    /// The dtype of output 0.
    pub fn out0(&self) -> DType {
        self.out.first().copied().unwrap_or(DType::F32)
    }

    fn attr(&self, name: &str) -> Option<&AttrValue<i64>> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The `int` attribute `name`, or `default`.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        int_attr(self.attrs, name, default)
    }

    /// The `float` attribute `name`, or `default`.
    pub fn float(&self, name: &str, default: f32) -> f64 {
        match self.attr(name) {
            Some(AttrValue::Float(v)) => f64::from(*v),
            Some(AttrValue::Int(v)) => *v as f64,
            _ => f64::from(default),
        }
    }

    /// The `ints` attribute `name`, if present.
    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name) {
            Some(AttrValue::Ints(v)) => Some(v.clone()),
            _ => None,
        }
    }

    /// The `string` attribute `name`, or `default`.
    pub fn string(&self, name: &str, default: &str) -> String {
        match self.attr(name) {
            Some(AttrValue::Str(s)) => s.clone(),
            _ => default.to_string(),
        }
    }

    /// Input `i` read as integers (an axes, pads or shape operand); `None` when absent.
    pub fn int_values(&self, i: usize) -> Result<Option<Vec<i64>>, RefError> {
        self.opt(i).map(int_values).transpose()
    }

    /// Input `i` read as floats (a scales operand); `None` when absent.
    pub fn float_values(&self, i: usize) -> Result<Option<Vec<f64>>, RefError> {
        self.opt(i).map(float_values).transpose()
    }

    /// An error naming this op.
    pub fn fail(&self, what: impl std::fmt::Display) -> RefError {
        RefError::Failed(format!("{}: {what}", self.op))
    }

    /// An unsupported-feature error naming this op.
    pub fn unsupported(&self, what: impl std::fmt::Display) -> RefError {
        RefError::Unsupported(format!("{}: {what}", self.op))
    }
}

/// The elements of an integer tensor (a constant operand), flattened.
pub(crate) fn int_values(t: &Tensor) -> Result<Vec<i64>, RefError> {
    let t = t.f_detach()?.f_to_kind(Kind::Int64)?.f_contiguous()?;
    let n = t.numel();
    let mut v = vec![0i64; n];
    t.f_copy_data(&mut v, n)?;
    Ok(v)
}

/// The elements of a tensor as `f64` (a scales operand), flattened.
pub(crate) fn float_values(t: &Tensor) -> Result<Vec<f64>, RefError> {
    let t = t.f_detach()?.f_to_kind(Kind::Double)?.f_contiguous()?;
    let n = t.numel();
    let mut v = vec![0f64; n];
    t.f_copy_data(&mut v, n)?;
    Ok(v)
}

/// Normalizes a possibly negative axis against `rank`; an error when out of range.
pub(crate) fn norm_axis(axis: i64, rank: usize) -> Result<usize, RefError> {
    let r = rank as i64;
    if (-r..r).contains(&axis) {
        Ok(if axis < 0 { axis + r } else { axis } as usize)
    } else {
        Err(RefError::Failed(format!(
            "axis {axis} out of range for rank {rank}"
        )))
    }
}

/// The `int` attribute `name` among a node's named attributes, or `default`.
pub fn int_attr(attrs: &[(String, AttrValue<i64>)], name: &str, default: i64) -> i64 {
    match attrs.iter().find(|(n, _)| n == name) {
        Some((_, AttrValue::Int(v))) => *v,
        _ => default,
    }
}

/// Shared helpers for the op-family unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A float32 tensor of `shape` from `values`.
    pub fn f32s(values: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(values).reshape(shape)
    }

    /// An int64 tensor of `shape` from `values`.
    pub fn i64s(values: &[i64], shape: &[i64]) -> Tensor {
        Tensor::from_slice(values).reshape(shape)
    }

    /// Runs `op` with one output of `dtype` and returns it.
    pub fn run1(
        op: &str,
        attrs: &[(&str, AttrValue<i64>)],
        inputs: Vec<Option<Tensor>>,
        dtype: DType,
    ) -> Tensor {
        let attrs: Vec<(String, AttrValue<i64>)> = attrs
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        let mut outs = apply(op, &attrs, &inputs, &[dtype]).unwrap_or_else(|e| panic!("{op}: {e}"));
        outs.remove(0)
    }

    /// Shallow copies of `inputs` (tensors are not `Clone`).
    pub fn dup(inputs: &[Option<Tensor>]) -> Vec<Option<Tensor>> {
        inputs
            .iter()
            .map(|t| t.as_ref().map(Tensor::shallow_clone))
            .collect()
    }

    /// The elements of `t` as `f64`, flattened.
    pub fn values(t: &Tensor) -> Vec<f64> {
        float_values(t).expect("readable")
    }

    /// A generated 5-node case whose values are all of `dtype`, varied by `seed`.
    pub fn case_of(seed: u8, dtype: DType) -> crate::gen::TestCase {
        use crate::gen::{Limits, Menu};
        let only: std::collections::BTreeSet<DType> = [dtype].into_iter().collect();
        let menu = Menu::everything().swarm(u128::MAX, &only);
        let bytes: Vec<u8> = (0..700u32)
            .map(|i| (i.wrapping_mul(97) ^ (u32::from(seed) * 6151)) as u8)
            .collect();
        crate::gen::TestCase::decode(&bytes, &menu, &Limits::exact(5))
    }

    /// Every value of `case` as the reference computes it (the declared precision).
    pub fn declared(case: &crate::gen::TestCase) -> precision::Values {
        let leaves = case
            .values
            .iter()
            .map(|(n, t)| (*n, convert::to_tch(t)))
            .collect();
        tch::no_grad(|| graph::evaluate(&case.graph, &leaves)).expect("the reference runs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::registry;

    #[test]
    fn every_registry_op_type_is_implemented() {
        let ours = op_types();
        let missing: Vec<&str> = registry()
            .iter()
            .map(|s| s.op_type())
            .filter(|op| !ours.contains(op))
            .collect();
        assert!(missing.is_empty(), "not implemented: {missing:?}");
        let mut dedup = ours.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), ours.len(), "an op type is in two families");
    }

    #[test]
    fn unknown_ops_are_unsupported_and_libtorch_errors_are_failures() {
        let x = Some(Tensor::from_slice(&[1.0f32, 2.0]));
        assert!(matches!(
            apply(
                "NoSuchOp",
                &[],
                &testing::dup(std::slice::from_ref(&x)),
                &[DType::F32]
            ),
            Err(RefError::Unsupported(_))
        ));
        let y = Some(Tensor::from_slice(&[1.0f32, 2.0, 3.0]));
        assert!(matches!(
            apply("Add", &[], &[x, y], &[DType::F32]),
            Err(RefError::Failed(_))
        ));
    }

    #[test]
    fn version_names_libtorch() {
        assert!(version().starts_with("libtorch 2."), "{}", version());
    }
}
