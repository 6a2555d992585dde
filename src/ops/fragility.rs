//! What an operator declares about the values no comparison may judge, and the helpers those
//! declarations share. The fragility walk (`reference::fragile`) asks each op node's
//! operator three questions, for the values the reference computed:
//!
//! - [`super::OpSpec::near_jump`]: does an input lie within rounding distance (its *margin*)
//!   of a discontinuity of the output? (By default: of the edge of its declared domain,
//!   [`super::OpSpec::finite`].)
//! - [`super::OpSpec::undefined`]: does the ONNX specification leave the result undefined
//!   here? (By default: an integer accumulation that may leave its type's range.)
//! - [`super::OpSpec::ambiguous`]: does the specification admit more than one reading here
//!   (operator text, function body, `onnx.reference` and backend tests disagree)?
//!
//! Each rule cites the sentence (or the silence) it rests on, beside the operator it is about.

use super::apply::apply_typed;
use super::eval::{Args, RefError};
use super::numeric::{self, int_range};
use super::validity::{Domain, Finite};
use super::{ConcreteAttrs, RoundingClass};
use crate::ir::DType;
use tch::{Kind, Tensor};

/// A rule's answer: `Some(rule)` names why the node's values are not judged.
pub type Verdict = Result<Option<&'static str>, RefError>;

/// The exact (`f64`) result of an integer op from its exact inputs, for the signed-overflow
/// rule.
pub type Exact = fn(&[Tensor]) -> Tensor;

/// A rule an operator row declares (an element-wise row's `undefined` or `ambiguous`).
pub type Rule = fn(&NodeValues) -> Verdict;

/// One op node for the values computed, as an operator's rules read it.
pub struct NodeValues<'a> {
    /// Its attributes and constant operands.
    pub attrs: &'a ConcreteAttrs,
    /// Its data inputs' values, in their dtypes' carriers.
    pub inputs: Vec<&'a Tensor>,
    /// Their dtypes.
    pub dtypes: Vec<DType>,
    /// Their shapes.
    pub shapes: Vec<&'a [usize]>,
    /// Output 0's dtype.
    pub out_dtype: DType,
    /// How many outputs it has.
    pub outputs: usize,
    /// The margin of data input `i` at its values (as `f64`): how far rounding alone can
    /// move them.
    pub margin: &'a dyn Fn(usize, &Tensor) -> Tensor,
    /// Calls a reading with the node's evaluation arguments (data inputs and constant
    /// operands), as its evaluation reads them (built only when a rule asks).
    pub with_args: &'a dyn Fn(ArgsReader),
}

/// What [`NodeValues::with_args`] calls with the node's evaluation arguments.
pub type ArgsReader<'r> = &'r mut dyn FnMut(&Args);

impl NodeValues<'_> {
    /// Whether input 0 is a float (rounding moves only floats: integer inputs are exact).
    pub fn float_input(&self) -> bool {
        self.dtypes.first().is_some_and(|d| d.is_float())
    }

    /// The dtype of input 0.
    pub fn in_dtype(&self) -> DType {
        self.dtypes[0]
    }

    /// Input `i` as `f64` (a float's value; the carrier's for an integer).
    pub fn double(&self, i: usize) -> Tensor {
        self.inputs[i].to_kind(Kind::Double)
    }

    /// Input `i`'s margin at its `f64` values `x`.
    pub fn margin_of(&self, i: usize, x: &Tensor) -> Tensor {
        (self.margin)(i, x)
    }

    /// Input `i`'s exact value as `f64` (unsigned carriers read as their values).
    pub fn exact(&self, i: usize) -> Result<Tensor, RefError> {
        Ok(numeric::to_double(self.inputs[i], self.dtypes[i])?)
    }

    /// The `int` attribute `name`, or `default`.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        super::eval::int_attr(&self.attrs.named, name, default)
    }

    /// Runs `reading` on the node's evaluation arguments.
    pub fn reads<R>(
        &self,
        reading: impl FnOnce(&Args) -> Result<R, RefError>,
    ) -> Result<R, RefError> {
        let mut reading = Some(reading);
        let mut answer = None;
        (self.with_args)(&mut |args| {
            if let Some(reading) = reading.take() {
                answer = Some(reading(args));
            }
        });
        answer.unwrap_or_else(|| {
            Err(RefError::Failed(
                "the node's arguments were not read".into(),
            ))
        })
    }
}

/// Whether any element of a boolean tensor is set.
pub fn any(t: &Tensor) -> bool {
    t.any().int64_value(&[]) != 0
}

/// Whether some element of `x` lies within `margin` of a multiple of 1 offset by `offset`
/// (the integers: offset 0; the halves: offset 0.5).
pub fn near_grid(x: &Tensor, margin: &Tensor, offset: f64) -> bool {
    let shifted = x - offset;
    let distance = (&shifted - shifted.round()).abs();
    any(&distance.le_tensor(margin))
}

/// Whether some element of `t` lies outside `dtype`'s range.
pub fn outside(t: &Tensor, dtype: DType) -> bool {
    let (lo, hi) = int_range(dtype);
    any(&t.lt(lo)) || any(&t.gt(hi))
}

/// How far input 0's elements `x` lie from the edge of the domain an op declares (`None`
/// for a declaration without an edge on input 0: growth, a divisor in another slot).
pub fn edge_distance(finite: Finite, x: &Tensor) -> Option<Tensor> {
    match finite {
        Finite::Domain {
            domain: Domain::Positive | Domain::NonZero,
            ..
        }
        | Finite::Power => Some(x.abs()),
        Finite::Domain {
            domain: Domain::Symmetric,
            ..
        } => Some((x.abs() - 1.0).abs()),
        Finite::Domain {
            domain: Domain::AboveOne,
            ..
        } => Some((x - 1.0).abs()),
        Finite::Growth(_) | Finite::Divisor { .. } => None,
    }
}

/// The default jump rule: a float input 0 within its margin of its declared domain's edge
/// (a value computed by cancellation can land on either side: `Sqrt(a - b)` with a ≈ b is 0
/// in one compiler and NaN in another). `None` when the declaration has no edge on input 0.
pub fn near_domain_edge(finite: Option<Finite>, node: &NodeValues) -> Option<bool> {
    if !node.float_input() {
        return Some(false);
    }
    let x = node.double(0);
    let distance = edge_distance(finite?, &x)?;
    Some(any(&distance.le_tensor(&node.margin_of(0, &x))))
}

/// NaN has no integer image: Cast's "undefined if OOR" (NaN is in no range),
/// QuantizeLinear's formula (its saturation bounds infinities, not NaN), and the index of a
/// maximum or minimum (ArgMax and ArgMin say nothing of NaN). A value search that could not
/// make every value finite leaves such NaNs in place.
pub fn nan_to_integer(node: &NodeValues) -> Verdict {
    let converts = node.float_input() && node.out_dtype.is_int();
    Ok((converts && any(&node.exact(0)?.isnan()))
        .then_some("NaN converted to an integer: no value is defined"))
}

/// Signed overflow: the arithmetic operators do not say what overflow gives, and the C++ of
/// every kernel (and LLVM's `nsw` arithmetic) leaves signed overflow undefined. Unsigned
/// arithmetic is modular in C++ and agrees with Cast's "discard higher bits". `exact` is the
/// op's exact result from its exact inputs.
pub fn signed_overflow(node: &NodeValues, exact: Exact) -> Verdict {
    let dtype = node.in_dtype();
    if !dtype.is_int() || dtype.is_unsigned() {
        return Ok(None);
    }
    let inputs = (0..node.inputs.len())
        .map(|i| node.exact(i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(outside(&exact(&inputs), dtype).then_some("signed integer overflow"))
}

/// Accumulation overflow on integers (a kernel may accumulate in a wider type, saturate or
/// wrap, so an intermediate that leaves the type's range is left open): the bound is the op
/// `bound_op` on magnitudes (each input's `|x|` through `magnitude`), which bounds every
/// partial sum or product a kernel may form. Nothing for an op that does not accumulate or a
/// float input.
pub fn accumulation_overflow(
    rounding: RoundingClass,
    bound_op: &'static str,
    magnitude: fn(Tensor) -> Tensor,
    node: &NodeValues,
) -> Verdict {
    if !rounding.accumulates() || !node.in_dtype().is_int() {
        return Ok(None);
    }
    let mut bounded: Vec<Option<Tensor>> = Vec::new();
    let mut dtypes: Vec<Option<DType>> = Vec::new();
    for (i, d) in node.dtypes.iter().enumerate() {
        bounded.push(Some(magnitude(node.exact(i)?.abs())));
        dtypes.push(Some(if d.is_int() { DType::F64 } else { *d }));
    }
    let (consts, const_dtypes) = constant_operands(node)?;
    bounded.extend(consts);
    dtypes.extend(const_dtypes);
    let outs = vec![DType::F64; node.outputs.min(1)];
    let bound = apply_typed(bound_op, &node.attrs.named, &bounded, &dtypes, &outs)?.remove(0);
    Ok(outside(&bound, node.out_dtype).then_some("integer accumulation overflow"))
}

/// The node's constant operands (after its data inputs) and their dtypes, `None` for absent
/// ones.
fn constant_operands(node: &NodeValues) -> Result<ConstantOperands, RefError> {
    node.reads(|a| {
        Ok((node.inputs.len()..a.arity())
            .map(|i| match a.opt(i) {
                Some(t) => (Some(t.shallow_clone()), Some(a.dtype(i))),
                None => (None, None),
            })
            .unzip())
    })
}

/// Constant operands and their dtypes.
type ConstantOperands = (Vec<Option<Tensor>>, Vec<Option<DType>>);

/// The range of `x` whose `exp(x)` is a finite normal number in `dtype` (the logarithms of
/// its smallest normal and largest value).
fn exp_range(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (6.103_515_625e-5f64.ln(), 65504f64.ln()),
        DType::F32 => ((f32::MIN_POSITIVE as f64).ln(), (f32::MAX as f64).ln()),
        _ => (f64::MIN_POSITIVE.ln(), f64::MAX.ln()),
    }
}

/// Softplus-1's function body is log(exp(x) + 1) and ReduceLogSumExp-18's is
/// log(ReduceSum(exp(x))): a kernel that follows the body overflows to inf, or loses its
/// digits to subnormals, where exp(x) leaves the type's normal range; a stable kernel
/// (max-shifted) does not. Both are admissible.
pub fn exp_leaves_normal_range(node: &NodeValues) -> Verdict {
    if !node.float_input() {
        return Ok(None);
    }
    let (low, high) = exp_range(node.in_dtype());
    let x = node.double(0);
    Ok((any(&x.gt(high)) || any(&x.lt(low))).then_some(
        "Softplus/ReduceLogSumExp: exp(x) leaves the normal range inside the spec's function body",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_checks() {
        let m = Tensor::from(1e-3f64);
        assert!(near_grid(
            &Tensor::from_slice(&[0.3f64, 2.0000001]),
            &m,
            0.0
        ));
        assert!(!near_grid(&Tensor::from_slice(&[0.3f64, 2.4]), &m, 0.0));
        assert!(near_grid(&Tensor::from_slice(&[1.5f64]), &m, 0.5));
        assert!(!near_grid(&Tensor::from_slice(&[1.0f64]), &m, 0.5));
    }
}
