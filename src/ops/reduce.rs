//! Reductions and ops along one axis: the `Reduce*` family (opset 18 form, `axes` as an
//! `int64` input), `ArgMax`/`ArgMin`, `Softmax`/`LogSoftmax` and `CumSum`.

use super::accumulation::{self, Terms};
use super::eval;
use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::numeric;
use super::shape::norm_axis;
use super::torch_form::{list, TorchForm, TorchWriter};
use super::{
    uniform_sigs, AttrCx, AttrValue, ConstInput, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor,
    MAX_RANK,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use tch::{Kind, Tensor};

/// Types of most `Reduce*` ops (bfloat16 aside).
const REDUCE_TYPES: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
];

/// `ReduceMax` and `ReduceMin` also take 8-bit integers.
const MINMAX_TYPES: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::F64,
    DType::I8,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U32,
    DType::U64,
];

/// Ranks an axis-wise op accepts: at least one axis to work along.
const WITH_AXIS: RangeInclusive<usize> = 1..=MAX_RANK;

/// The input rank for backward insertion of an op that keeps dims, or drops up to `max_drop`
/// of them, to reach `out_rank`.
fn reducing_rank(out_rank: usize, max_drop: usize, u: &mut Unstructured) -> Option<Vec<usize>> {
    let lo = out_rank.max(1);
    let hi = (out_rank + max_drop).min(MAX_RANK);
    (lo <= hi).then(|| vec![u.int_in_range(lo..=hi).unwrap_or(lo)])
}

/// Chooses `keepdims` and the sorted axes (at most `max_axes`) an op reduces on an input of rank
/// `rank`. In backward insertion the rank drop to `cx.out_rank` decides: no drop keeps dims, a
/// drop of `k` reduces exactly `k` axes without keeping them.
fn keep_and_axes(cx: &mut AttrCx, rank: usize, max_axes: usize) -> (bool, Vec<usize>) {
    let most = max_axes.min(rank).max(1) as i64;
    let (keep, count) = match cx.out_rank {
        Some(out) if out < rank && rank - out <= max_axes => (false, rank - out),
        Some(out) if out == rank => (true, cx.pick(1, most) as usize),
        _ => {
            let keep = cx.flip();
            (keep, cx.pick(1, most) as usize)
        }
    };
    let mut axes: Vec<usize> = cx.permutation(rank).into_iter().take(count).collect();
    axes.sort_unstable();
    (keep, axes)
}

/// `axis`, negated (counted from the end) on a coin flip.
fn maybe_negative(cx: &mut AttrCx, axis: usize, rank: usize) -> Int {
    let a = axis as i64;
    Int::from(if cx.flip() { a - rank as i64 } else { a })
}

/// The `0`/`1` attribute value of a flag.
fn flag(b: bool) -> AttrValue<Int> {
    AttrValue::Int(Int::from(i64::from(b)))
}

/// A constant attribute expression as a number (specs only build constant ones here).
fn konst(e: &Int) -> i64 {
    e.as_const().expect("attribute is a constant")
}

/// `dims` with `axes` reduced: set to 1 when `keep`, removed otherwise.
fn reduce_dims(dims: &[Int], axes: &[usize], keep: bool) -> Vec<Int> {
    dims.iter()
        .enumerate()
        .filter_map(|(i, d)| match (axes.contains(&i), keep) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(Int::from(1i64)),
            (true, false) => None,
        })
        .collect()
}

/// A `Reduce*` op: `(data, axes)` with `keepdims`; `axes` is a constant operand.
struct Reduce {
    name: &'static str,
    types: &'static [DType],
    /// The torch function of the program lowering (`torch.sum`), if it has one.
    torch: Option<&'static str>,
}

impl OpSpec for Reduce {
    /// Its `axes` attribute became operand 1 (opset 13 for `ReduceSum`, 18 for the others).
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["axes"])
    }

    /// Its axes come as constant operand 0.
    fn pin_roles(&self) -> super::pattern_roles::PinRoles {
        super::pattern_roles::PinRoles {
            axes_operand: true,
            ..Default::default()
        }
    }

    fn accumulated_terms(&self, node: &Terms) -> f64 {
        // The reduced share of the input (axes come as a constant operand).
        let x = node.size(0);
        match node.constant_ints() {
            Some(axes) if !axes.is_empty() => {
                axes.iter().map(|d| x[node.axis(*d)] as f64).product()
            }
            _ if node.int("noop_with_empty_axes", 0) != 0 => 1.0,
            _ => accumulation::product(&x),
        }
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        // ReduceLogSumExp on integers: `log(sum(exp(x)))` is not an integer, and the operator
        // text never says how it (or each `exp`) becomes one; kernels truncate each term,
        // truncate the result or round it.
        if self.name == "ReduceLogSumExp" && !node.float_input() {
            return Ok(Some(
                "ReduceLogSumExp: rounding of an integer result is unspecified",
            ));
        }
        // Every partial result is bounded by the op on magnitudes (a product's on
        // max(|x|, 1)); ReduceL2's by its sum of squares.
        let (bound, magnitude): (&'static str, fn(Tensor) -> Tensor) = match self.name {
            "ReduceProd" => (self.name, |m| m.clamp_min(1.0)),
            "ReduceL2" => ("ReduceSumSquare", |m| m),
            _ => (self.name, |m| m),
        };
        fragility::accumulation_overflow(self.rounding(), bound, magnitude, node)
    }

    fn ambiguous(&self, node: &NodeValues) -> fragility::Verdict {
        match self.name {
            "ReduceLogSumExp" => fragility::exp_leaves_normal_range(node),
            // ReduceL2 and ReduceMean on integers: sqrt and a division form a fractional
            // value and the operator texts never say how it becomes an integer (truncation
            // and rounding are both in use).
            "ReduceL2" | "ReduceMean" if node.in_dtype().is_int() => Ok(Some(
                "ReduceL2/ReduceLogSum/ReduceMean: rounding of an integer result is unspecified",
            )),
            _ => Ok(None),
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![reduce(a)?])
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        let f = self.torch?;
        Some(TorchWriter::new(move |cx| {
            let keep = cx.int("keepdims", 1) != 0;
            let axes = match cx.ints(0) {
                Some(axes) if !axes.is_empty() => axes.to_vec(),
                _ => (0..cx.input_ranks[0] as i64).collect(),
            };
            if axes.is_empty() {
                return Err("reduction of a scalar".into());
            }
            let keep = if keep { "True" } else { "False" };
            let template = format!("{f}({{0}}, {}, {keep})", list(axes));
            Ok(TorchForm::whole(template, true))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        match self.name {
            "ReduceMax" | "ReduceMin" => RoundingClass::Correct,
            "ReduceL2" | "ReduceLogSumExp" => RoundingClass::ElementaryAccumulating,
            _ => RoundingClass::Accumulating,
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(self.types, 1)
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WITH_AXIS]
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        reducing_rank(out_rank, MAX_RANK, u)
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let rank = inputs[0].rank();
        let (keep, axes) = keep_and_axes(cx, rank, rank);
        let axes = axes
            .into_iter()
            .map(|a| maybe_negative(cx, a, rank))
            .collect();
        let mut attrs = SymAttrs::default();
        attrs.set("keepdims", flag(keep));
        attrs.consts.push(ConstInput::Ints(axes));
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let rank = inputs[0].rank();
        let axes: Vec<usize> = attrs
            .const_ints(0)
            .iter()
            .map(|a| norm_axis(konst(a), rank))
            .collect();
        vec![reduce_dims(
            &inputs[0].dims,
            &axes,
            konst(&attrs.int("keepdims")) == 1,
        )]
    }
}

/// `ArgMax`/`ArgMin`: one axis, `keepdims`, `select_last_index`; `int64` output.
struct Arg {
    name: &'static str,
}

impl OpSpec for Arg {
    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        if !node.float_input() {
            return Ok(false);
        }
        // A near-tie between the two largest (smallest) along the axis.
        let x = node.double(0);
        let mx = node.margin_of(0, &x);
        let axis = norm_axis(node.int("axis", 0), x.dim()) as i64;
        if x.size()[axis as usize] < 2 {
            return Ok(false);
        }
        let largest = self.name == "ArgMax";
        let (top, _) = x.f_topk(2, axis, largest, true)?;
        let gap = (top.select(axis, 0) - top.select(axis, 1)).abs();
        // Twice the widest margin along the axis: both contenders may move.
        let widest = mx.broadcast_to(x.size()).f_amax([axis].as_slice(), false)?;
        Ok(fragility::any(&gap.le_tensor(&(widest * 2.0))))
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        fragility::nan_to_integer(node)
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![arg(a)?])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        DType::numeric()
            .into_iter()
            .map(|t| Sig::new(vec![t], vec![DType::I64]))
            .collect()
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WITH_AXIS]
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        reducing_rank(out_rank, 1, u)
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let rank = inputs[0].rank();
        let (keep, axes) = keep_and_axes(cx, rank, 1);
        let axis = maybe_negative(cx, axes[0], rank);
        let last = cx.flip();
        let mut attrs = SymAttrs::default();
        attrs.set("axis", AttrValue::Int(axis));
        attrs.set("keepdims", flag(keep));
        attrs.set("select_last_index", flag(last));
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let axis = norm_axis(konst(&attrs.int("axis")), inputs[0].rank());
        vec![reduce_dims(
            &inputs[0].dims,
            &[axis],
            konst(&attrs.int("keepdims")) == 1,
        )]
    }
}

/// `Softmax`/`LogSoftmax` along one axis: the output has the input's shape.
struct Normalize {
    name: &'static str,
    /// The torch function of the program lowering (`torch.softmax`), if it has one.
    torch: Option<&'static str>,
}

impl OpSpec for Normalize {
    /// Before opset 13 it coerced its input to 2-D at `axis`.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm {
            coerced_to_2d_before: Some(13),
            ..Default::default()
        }
    }

    fn accumulated_terms(&self, node: &Terms) -> f64 {
        node.along(node.int("axis", -1))
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let axis = eval::norm_axis(a.int("axis", -1), x.dim())? as i64;
        Ok(vec![if self.name == "Softmax" {
            x.f_softmax(axis, None::<Kind>)?
        } else {
            x.f_log_softmax(axis, None::<Kind>)?
        }])
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        let f = self.torch?;
        Some(TorchWriter::new(move |cx| {
            let axis = cx.int("axis", -1);
            Ok(TorchForm::whole(format!("{f}({{0}}, {axis})"), true))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::ElementaryAccumulating
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::FLOATS, 1)
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WITH_AXIS]
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let axis = cx.axis(inputs[0].rank(), true);
        let mut attrs = SymAttrs::default();
        attrs.set("axis", AttrValue::Int(Int::from(axis)));
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// `CumSum(x, axis)` (opset 14): the running sum along `axis` (a 0-D constant operand),
/// `exclusive` (each position sums the ones before it) and `reverse` (from the end). An
/// accumulation: integer sums wrap in the dtype (signed overflow is undefined, as for every
/// accumulating op).
struct CumSum;

impl CumSum {
    /// The normalized axis of a node.
    fn axis(a: &Args, rank: usize) -> Result<i64, RefError> {
        let axis = a
            .int_values(1)?
            .and_then(|v| v.first().copied())
            .ok_or_else(|| a.fail("axis is required"))?;
        Ok(eval::norm_axis(axis, rank)? as i64)
    }
}

impl OpSpec for CumSum {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        // The longest running sum: the whole axis.
        match node.constant_ints().and_then(|a| a.first().copied()) {
            Some(axis) => node.along(axis),
            None => 1.0,
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let axis = Self::axis(a, x.dim())?;
        let reverse = a.int("reverse", 0) != 0;
        let x = if reverse {
            x.f_flip([axis])?
        } else {
            x.shallow_clone()
        };
        // Integers sum in int64 (libtorch's choice); the final wrap puts them back in the
        // dtype, which is ONNX's wrap-around.
        let mut y = x.f_cumsum(axis, None::<Kind>)?;
        if a.int("exclusive", 0) != 0 {
            // Shift by one along the axis, a zero first: no subtraction, no cancellation.
            let n = y.size()[axis as usize];
            let first = y.f_narrow(axis, 0, 1)?.f_zeros_like()?;
            y = Tensor::f_cat(&[first, y.f_narrow(axis, 0, n - 1)?], axis)?;
        }
        Ok(vec![if reverse { y.f_flip([axis])? } else { y }])
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        Some(TorchWriter::new(|cx| {
            let Some(ConstInput::Scalar(_, axis)) = cx.attrs.consts.first() else {
                return Err("CumSum without a constant axis".into());
            };
            if cx.int("exclusive", 0) != 0 {
                return Err("an exclusive CumSum is no single torch call".into());
            }
            let d = *axis as i64;
            let call = if cx.int("reverse", 0) != 0 {
                format!("torch.flip(torch.cumsum(torch.flip({{0}}, [{d}]), {d}), [{d}])")
            } else {
                format!("torch.cumsum({{0}}, {d})")
            };
            Ok(TorchForm::whole(call, true))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "CumSum"
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(REDUCE_TYPES, 1)
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WITH_AXIS]
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let axis = cx.axis(inputs[0].rank(), true);
        let mut attrs = SymAttrs::default();
        for flag in ["exclusive", "reverse"] {
            if cx.flip() {
                attrs.set(flag, AttrValue::Int(Int::from(1i64)));
            }
        }
        attrs
            .consts
            .push(ConstInput::Scalar(DType::I64, axis as f64));
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// The reduction family, in registry order.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    let reduce = |name, types| {
        Box::new(Reduce {
            name,
            types,
            torch: None,
        }) as Box<dyn OpSpec>
    };
    let lowered = |name, torch| {
        let types = REDUCE_TYPES;
        Box::new(Reduce {
            name,
            types,
            torch: Some(torch),
        }) as Box<dyn OpSpec>
    };
    vec![
        lowered("ReduceSum", "torch.sum"),
        lowered("ReduceMean", "torch.mean"),
        reduce("ReduceMax", MINMAX_TYPES),
        reduce("ReduceMin", MINMAX_TYPES),
        reduce("ReduceProd", REDUCE_TYPES),
        reduce("ReduceL1", REDUCE_TYPES),
        reduce("ReduceL2", REDUCE_TYPES),
        reduce("ReduceLogSumExp", REDUCE_TYPES),
        reduce("ReduceSumSquare", REDUCE_TYPES),
        Box::new(Arg { name: "ArgMax" }),
        Box::new(Arg { name: "ArgMin" }),
        Box::new(Normalize {
            name: "Softmax",
            torch: Some("torch.softmax"),
        }),
        Box::new(Normalize {
            name: "LogSoftmax",
            torch: None,
        }),
        Box::new(CumSum),
    ]
}

/// The axes a `Reduce*` node reduces (sorted, distinct); `None` for the no-op case.
fn reduce_axes(a: &Args, rank: usize) -> Result<Option<Vec<i64>>, RefError> {
    let given = a.int_values(1)?.unwrap_or_default();
    if given.is_empty() {
        if a.int("noop_with_empty_axes", 0) != 0 {
            return Ok(None);
        }
        return Ok(Some((0..rank as i64).collect()));
    }
    let mut axes = given
        .iter()
        .map(|x| eval::norm_axis(*x, rank).map(|v| v as i64))
        .collect::<Result<Vec<_>, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    Ok(Some(axes))
}

/// The sum over `axes` (integers wrap in `dtype`).
fn sum(x: &Tensor, axes: &[i64], keep: bool, dtype: DType) -> Result<Tensor, RefError> {
    if axes.is_empty() {
        return Ok(x.shallow_clone());
    }
    let s = x.f_sum_dim_intlist(axes, keep, None::<Kind>)?;
    if dtype.is_int() {
        super::carrier::wrap(&s, dtype)
    } else {
        Ok(s)
    }
}

/// Runs a `Reduce*` op.
fn reduce(a: &Args) -> Result<Tensor, RefError> {
    let x = a.x(0)?;
    let dtype = a.dtype(0);
    let keep = a.int("keepdims", 1) != 0;
    let Some(axes) = reduce_axes(a, x.dim())? else {
        return Ok(x.shallow_clone());
    };
    let float = x.is_floating_point();
    let count: i64 = axes.iter().map(|d| x.size()[*d as usize]).product();
    let order = |t: &Tensor| numeric::ordered(t, dtype);
    Ok(match a.op {
        "ReduceSum" => sum(x, &axes, keep, dtype)?,
        "ReduceSumSquare" => sum(&x.f_mul(x)?, &axes, keep, dtype)?,
        "ReduceL1" if dtype.is_unsigned() => sum(x, &axes, keep, dtype)?,
        "ReduceL1" => sum(&x.f_abs()?, &axes, keep, dtype)?,
        "ReduceL2" if float => sum(&x.f_mul(x)?, &axes, keep, dtype)?.f_sqrt()?,
        "ReduceL2" => {
            let squares = sum(&x.f_mul(x)?, &axes, keep, dtype)?;
            numeric::to_double(&squares, dtype)?.f_sqrt()?.f_trunc()?
        }
        "ReduceMean" if float => {
            if axes.is_empty() {
                x.shallow_clone()
            } else {
                x.f_mean_dim(axes.as_slice(), keep, None::<Kind>)?
            }
        }
        "ReduceMean" => {
            let s = sum(x, &axes, keep, dtype)?;
            numeric::int_div(&s, &s.f_full_like(count)?, dtype)?
        }
        "ReduceMax" | "ReduceMin" if axes.is_empty() => x.shallow_clone(),
        "ReduceMax" => order(&order(x)?.f_amax(axes.as_slice(), keep)?)?,
        "ReduceMin" => order(&order(x)?.f_amin(axes.as_slice(), keep)?)?,
        "ReduceProd" => {
            let mut p = x.shallow_clone();
            for axis in axes.iter().rev() {
                p = p.f_prod_dim_int(*axis, keep, None::<Kind>)?;
            }
            if dtype.is_int() {
                super::carrier::wrap(&p, dtype)?
            } else {
                p
            }
        }
        "ReduceLogSumExp" if float => {
            if axes.is_empty() {
                x.shallow_clone()
            } else {
                x.f_logsumexp(axes.as_slice(), keep)?
            }
        }
        "ReduceLogSumExp" => {
            let d = numeric::to_double(x, dtype)?;
            if axes.is_empty() {
                d
            } else {
                d.f_logsumexp(axes.as_slice(), keep)?.f_trunc()?
            }
        }
        other => return Err(RefError::Unsupported(other.to_string())),
    })
}

/// `ArgMax`/`ArgMin`: the first index of the extreme value, or the last one with
/// `select_last_index`.
fn arg(a: &Args) -> Result<Tensor, RefError> {
    let x = numeric::ordered(a.x(0)?, a.dtype(0))?;
    let keep = a.int("keepdims", 1) != 0;
    let axis = eval::norm_axis(a.int("axis", 0), x.dim())? as i64;
    let last = a.int("select_last_index", 0) != 0;
    let pick = |t: &Tensor| -> Result<Tensor, RefError> {
        Ok(if a.op == "ArgMax" {
            t.f_argmax(axis, keep)?
        } else {
            t.f_argmin(axis, keep)?
        })
    };
    if last {
        let d = x.size()[axis as usize];
        let flipped = pick(&x.f_flip([axis])?)?;
        Ok(flipped.f_neg()?.f_add_scalar(d - 1)?)
    } else {
        pick(&x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::*;
    use crate::ops::DEFAULT_CLASS;
    use crate::sym::vars::VarTable;

    fn reduce_attrs(axes: &[i64], keep: bool) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        attrs.set("keepdims", flag(keep));
        attrs.consts.push(ConstInput::Ints(
            axes.iter().map(|a| Int::from(*a)).collect(),
        ));
        attrs
    }

    #[test]
    fn reduce_keeps_or_drops_negative_and_positive_axes() {
        let x = [tensor(&[2, 3, 4])];
        let sum = Reduce {
            name: "ReduceSum",
            types: REDUCE_TYPES,
            torch: None,
        };
        assert_eq!(
            consts(&sum.type_transfer(&reduce_attrs(&[-1, 0], false), &x)[0]),
            vec![3]
        );
        assert_eq!(
            consts(&sum.type_transfer(&reduce_attrs(&[-1, 0], true), &x)[0]),
            vec![1, 3, 1]
        );
        assert_eq!(
            consts(&sum.type_transfer(&reduce_attrs(&[0, 1, 2], false), &x)[0]),
            Vec::<i64>::new()
        );
    }

    #[test]
    fn argmax_drops_its_axis_and_outputs_int64() {
        let arg = Arg { name: "ArgMax" };
        assert!(arg.sigs().iter().all(|s| s.outputs == vec![DType::I64]));
        let mut attrs = SymAttrs::default();
        attrs.set("axis", AttrValue::Int(Int::from(-2i64)));
        attrs.set("keepdims", flag(false));
        assert_eq!(
            consts(&arg.type_transfer(&attrs, &[tensor(&[2, 3, 4])])[0]),
            vec![2, 4]
        );
    }

    #[test]
    fn backward_attrs_reach_the_wanted_rank() {
        for spec in specs() {
            let sig = spec.sigs()[0].clone();
            for out_rank in 0..=MAX_RANK {
                for seed in 0..16u8 {
                    let bytes: Vec<u8> = (0..64u8)
                        .map(|i| i.wrapping_mul(37).wrapping_add(seed * 11))
                        .collect();
                    let mut u = Unstructured::new(&bytes);
                    let Some(ranks) = spec.infer_input_types(&sig, out_rank, &mut u) else {
                        // Only an op that keeps its input's rank and takes no rank-0
                        // input has no way to reach rank 0.
                        assert!(
                            out_rank == 0 && !spec.input_ranks(&sig)[0].contains(&0),
                            "{}",
                            spec.name()
                        );
                        continue;
                    };
                    let dims: Vec<i64> = (0..ranks[0] as i64).map(|i| i + 2).collect();
                    let x = [tensor(&dims)];
                    let mut vars = VarTable::default();
                    let mut cx = AttrCx {
                        u: &mut u,
                        vars: &mut vars,
                        sig: &sig,
                        class: DEFAULT_CLASS,
                        out_rank: Some(out_rank),
                    };
                    let attrs = spec.attrs(&mut cx, &x);
                    assert_eq!(
                        spec.type_transfer(&attrs, &x)[0].len(),
                        out_rank,
                        "{}",
                        spec.name()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;

    #[test]
    fn cumsum_is_inclusive_exclusive_and_reversible_along_its_axis() {
        let x = || Some(f32s(&[1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0], &[2, 4]));
        let axis = || Some(i64s(&[-1], &[]));
        let run = |exclusive: i64, reverse: i64| {
            let attrs = [
                ("exclusive", AttrValue::Int(exclusive)),
                ("reverse", AttrValue::Int(reverse)),
            ];
            values(&run1("CumSum", &attrs, vec![x(), axis()], DType::F32))
        };
        assert_eq!(run(0, 0), [1., 3., 6., 10., 10., 30., 60., 100.]);
        assert_eq!(run(1, 0), [0., 1., 3., 6., 0., 10., 30., 60.]);
        assert_eq!(run(0, 1), [10., 9., 7., 4., 100., 90., 70., 40.]);
        assert_eq!(run(1, 1), [9., 7., 4., 0., 90., 70., 40., 0.]);
        // Along the first axis, and integers wrap in their dtype.
        let rows = values(&run1(
            "CumSum",
            &[],
            vec![x(), Some(i64s(&[0], &[]))],
            DType::F32,
        ));
        assert_eq!(rows, [1., 2., 3., 4., 11., 22., 33., 44.]);
        let big = Some(tch::Tensor::from_slice(&[i32::MAX, 1]));
        let wrapped = run1("CumSum", &[], vec![big, Some(i64s(&[0], &[]))], DType::I32);
        assert_eq!(values(&wrapped), [f64::from(i32::MAX), f64::from(i32::MIN)]);
    }

    #[test]
    fn reduce_axes_input_keepdims_and_noop() {
        let x = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let axes = Some(i64s(&[-1], &[1]));
        let keep0 = [("keepdims", AttrValue::Int(0))];
        let s = run1(
            "ReduceSum",
            &keep0,
            vec![
                Some(x.shallow_clone()),
                axes.as_ref().map(tch::Tensor::shallow_clone),
            ],
            DType::F32,
        );
        assert_eq!((s.size(), values(&s)), (vec![2], vec![6.0, 15.0]));
        let m = run1(
            "ReduceMean",
            &[],
            vec![Some(x.shallow_clone()), axes],
            DType::F32,
        );
        assert_eq!((m.size(), values(&m)), (vec![2, 1], vec![2.0, 5.0]));
        let all = run1(
            "ReduceMax",
            &keep0,
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!((all.size(), values(&all)), (vec![], vec![6.0]));
        let noop = run1(
            "ReduceProd",
            &[("noop_with_empty_axes", AttrValue::Int(1))],
            vec![Some(x.shallow_clone()), Some(i64s(&[], &[0]))],
            DType::F32,
        );
        assert_eq!(noop.size(), vec![2, 3]);
        let l2 = run1(
            "ReduceL2",
            &keep0,
            vec![Some(f32s(&[3.0, 4.0], &[2]))],
            DType::F32,
        );
        assert_eq!(values(&l2), vec![5.0]);
    }

    #[test]
    fn integer_mean_truncates_and_keeps_the_reduced_shape() {
        let all = run1(
            "ReduceMean",
            &[("keepdims", AttrValue::Int(0))],
            vec![Some(i64s(&[-7, 0, 1, 2], &[2, 2]))],
            DType::I64,
        );
        assert_eq!((all.size(), values(&all)), (vec![], vec![-1.0]));
        let x = i64s(&[-7, 0, 1, 2], &[2, 2]);
        let m = run1(
            "ReduceMean",
            &[("keepdims", AttrValue::Int(0))],
            vec![Some(x), Some(i64s(&[1], &[1]))],
            DType::I64,
        );
        assert_eq!(values(&m), vec![-3.0, 1.0]);
    }

    #[test]
    fn argmax_ties_pick_first_or_last() {
        let x = f32s(&[1.0, 3.0, 3.0, 0.0], &[1, 4]);
        let first = run1(
            "ArgMax",
            &[("axis", AttrValue::Int(1))],
            vec![Some(x.shallow_clone())],
            DType::I64,
        );
        assert_eq!((first.size(), values(&first)), (vec![1, 1], vec![1.0]));
        let last = run1(
            "ArgMax",
            &[
                ("axis", AttrValue::Int(-1)),
                ("keepdims", AttrValue::Int(0)),
                ("select_last_index", AttrValue::Int(1)),
            ],
            vec![Some(x.shallow_clone())],
            DType::I64,
        );
        assert_eq!((last.size(), values(&last)), (vec![1], vec![2.0]));
        let min_last = run1(
            "ArgMin",
            &[
                ("axis", AttrValue::Int(0)),
                ("select_last_index", AttrValue::Int(1)),
            ],
            vec![Some(f32s(&[2.0, 1.0, 1.0], &[3]))],
            DType::I64,
        );
        assert_eq!(values(&min_last), vec![2.0]);
    }
}
