//! What every operator's evaluation reads and returns: one node's inputs, attributes and
//! output dtypes ([`Args`]), the error it may give ([`RefError`]), and the helpers that read
//! constant operands and attributes. [`super::apply`] builds the [`Args`]; each operator's
//! [`super::OpSpec::evaluate`] computes from them.

use crate::ir::DType;
use crate::ops::AttrValue;
use tch::{Kind, Tensor};

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

/// One node's inputs, attributes and output dtypes, as the operators' evaluations read them.
pub struct Args<'a> {
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

impl<'a> Args<'a> {
    /// The arguments of one `op` node: its named attributes, its inputs in ONNX order (`None`
    /// for an omitted optional one), each input's dtype and the output dtypes.
    pub fn new(
        op: &'a str,
        attrs: &'a [(String, AttrValue<i64>)],
        inputs: Vec<Option<Tensor>>,
        dtypes: Vec<Option<DType>>,
        out: &'a [DType],
    ) -> Self {
        Args {
            op,
            attrs,
            inputs,
            dtypes,
            out,
        }
    }

    /// The node's named attributes.
    pub fn attrs(&self) -> &[(String, AttrValue<i64>)] {
        self.attrs
    }

    /// Required input `i`.
    pub fn x(&self, i: usize) -> Result<&Tensor, RefError> {
        self.opt(i)
            .ok_or_else(|| RefError::Failed(format!("{}: input {i} is missing", self.op)))
    }

    /// How many inputs it has, omitted optional ones included (data inputs, then constant
    /// operands).
    pub fn arity(&self) -> usize {
        self.inputs.len()
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

    /// Input `i` read as integers, which the op requires (its `what`: shape, axes, ...).
    pub fn required_ints(&self, i: usize, what: &str) -> Result<Vec<i64>, RefError> {
        self.int_values(i)?
            .ok_or_else(|| self.fail(format!("{what} is required")))
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

/// The `string` attribute `name` among a node's named attributes, or `default`.
pub fn str_attr<'a>(
    attrs: &'a [(String, AttrValue<i64>)],
    name: &str,
    default: &'a str,
) -> &'a str {
    match attrs.iter().find(|(n, _)| n == name) {
        Some((_, AttrValue::Str(s))) => s,
        _ => default,
    }
}

/// The `int` attribute `name` among a node's named attributes, or `default`.
pub fn int_attr(attrs: &[(String, AttrValue<i64>)], name: &str, default: i64) -> i64 {
    match attrs.iter().find(|(n, _)| n == name) {
        Some((_, AttrValue::Int(v))) => *v,
        _ => default,
    }
}
