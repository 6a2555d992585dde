//! Layout ops, which rearrange or replicate elements without computing new ones: Reshape,
//! Flatten, Transpose, Squeeze, Unsqueeze, Expand and Tile.
//!
//! Shape-like operands (`shape`, `axes`, `repeats`) are int64 constant inputs, as ONNX takes
//! them since opset 13. Target dimensions are solver variables, so backward insertion can
//! match a wanted output shape.

use super::eval;
use super::eval::{Args, RefError};
use super::shape::broadcast;
use super::torch_form::{list, TorchForm, TorchWriter};
use super::{
    uniform_sigs, AttrCx, AttrValue, ConstInput, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor,
    MAX_RANK,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use tch::Tensor;

/// Largest dimension a solver variable for an output dim may take (the generator bounds
/// every output dim by the same value).
const MAX_DIM: i64 = 48;
/// Largest entry of an Expand target shape.
const MAX_EXPAND: i64 = 16;
/// Largest Tile repeat.
const MAX_REPEAT: i64 = 4;

/// The product of `dims` (1 for none).
pub(crate) fn product(dims: &[Int]) -> Int {
    dims.iter().fold(Int::from(1i64), |acc, d| acc * d)
}

/// Normalizes a possibly negative axis; `None` when out of `[-rank, rank)`.
pub(crate) fn axis_in(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    (-r..r).contains(&axis).then(|| {
        if axis < 0 {
            (axis + r) as usize
        } else {
            axis as usize
        }
    })
}

/// Writes axis `a` of a rank-`rank` tensor as ONNX allows: negative half of the time.
pub(crate) fn signed_axis(cx: &mut AttrCx, a: usize, rank: usize) -> i64 {
    if cx.flip() {
        a as i64 - rank as i64
    } else {
        a as i64
    }
}

/// `k` distinct axes of `0..n`, in the (unsorted) order a byte-drawn permutation gives.
pub(crate) fn distinct_axes(cx: &mut AttrCx, n: usize, k: usize) -> Vec<usize> {
    let mut p = cx.permutation(n);
    p.truncate(k.min(n));
    p
}

/// Constant values of an `ints` operand (axes, perms), `None` if one is symbolic.
fn const_values(v: &[Int]) -> Option<Vec<i64>> {
    v.iter().map(Int::as_const).collect()
}

/// Normalized, distinct axes from constant entries; `None` when one is symbolic, out of
/// range or repeated.
pub(crate) fn normalized_axes(v: &[Int], rank: usize) -> Option<Vec<usize>> {
    let axes = const_values(v)?
        .into_iter()
        .map(|a| axis_in(a, rank))
        .collect::<Option<Vec<_>>>()?;
    let mut sorted = axes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == axes.len()).then_some(axes)
}

/// A rank in `range` drawn from `u`.
fn rank_in(u: &mut Unstructured, range: RangeInclusive<usize>) -> usize {
    u.int_in_range(range.clone()).unwrap_or(*range.start())
}

// ---------------------------------------------------------------------------------------------

/// `Reshape(data, shape)`. Each target entry is a solver variable, or sometimes `0` (copy the
/// input dim at that index, `allowzero = 0`) or, for at most one entry, `-1` (inferred).
struct Reshape;

impl Reshape {
    /// Output dims and their constraints.
    fn infer(attrs: &SymAttrs, inputs: &[SymTensor]) -> (Vec<Bool>, Vec<Int>) {
        let x = &inputs[0];
        let shape = attrs.const_ints(0);
        let numel = product(&x.dims);
        let mut reqs = Vec::new();
        let mut inferred = None;
        let mut out: Vec<Int> = Vec::with_capacity(shape.len());
        for (j, s) in shape.iter().enumerate() {
            match s.as_const() {
                Some(0) => match x.dims.get(j) {
                    Some(d) => out.push(d.clone()),
                    None => {
                        reqs.push(Bool::from(false));
                        out.push(Int::from(1i64));
                    }
                },
                Some(-1) if inferred.is_none() => {
                    inferred = Some(j);
                    out.push(Int::from(1i64));
                }
                _ => out.push(s.clone()),
            }
        }
        match inferred {
            Some(j) => {
                let others = product(&out);
                reqs.push(numel.modulo(&others).eq(0i64));
                out[j] = &numel / others;
            }
            None => reqs.push(product(&out).eq(numel.clone())),
        }
        // With a known element count every target dim is one of its divisors: saying so
        // gives the solver a finite case split instead of bare non-linear arithmetic.
        if let Some(n) = numel.as_const() {
            let divisors: Vec<i64> = (1..=n.min(MAX_DIM)).filter(|k| n % k == 0).collect();
            for d in out.iter().filter(|d| d.as_const().is_none()) {
                reqs.push(Bool::or(divisors.iter().map(|k| d.eq(*k))));
            }
        }
        (reqs, out)
    }
}

impl OpSpec for Reshape {
    /// Its `shape` attribute became operand 1 in opset 5.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["shape"])
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let size = x.size();
        let shape = a.required_ints(1, "shape")?;
        Ok(vec![
            x.f_reshape(reshape_target(a, &size, &shape)?.as_slice())?
        ])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        Some(TorchWriter::new(|cx| {
            let shape = list(cx.out_shape.iter().map(|d| *d as i64));
            Ok(TorchForm::whole(
                format!("torch.reshape({{0}}, {shape})"),
                false,
            ))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Reshape"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        _out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        Some(vec![rank_in(u, 1..=MAX_RANK)])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let in_rank = inputs[0].rank();
        let out_rank = cx
            .out_rank
            .unwrap_or_else(|| cx.pick(1, MAX_RANK as i64) as usize);
        let inferred =
            (out_rank > 0 && cx.pick(0, 3) == 0).then(|| cx.pick(0, out_rank as i64 - 1) as usize);
        let shape = (0..out_rank)
            .map(|j| {
                if Some(j) == inferred {
                    Int::from(-1i64)
                } else if j < in_rank && cx.pick(0, 5) == 0 {
                    Int::from(0i64)
                } else {
                    cx.var(&format!("reshape.d{j}"), 1, MAX_DIM)
                }
            })
            .collect();
        SymAttrs {
            consts: vec![ConstInput::Ints(shape)],
            ..SymAttrs::default()
        }
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        Self::infer(attrs, inputs).0
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![Self::infer(attrs, inputs).1]
    }
}

// ---------------------------------------------------------------------------------------------

/// `Flatten(x, axis)`: `[prod(d[..axis]), prod(d[axis..])]`, axis in `[-r, r]`.
struct Flatten;

impl OpSpec for Flatten {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let size = x.size();
        let rank = size.len();
        let axis = a.int("axis", 1);
        let axis = if axis < 0 { axis + rank as i64 } else { axis };
        if !(0..=rank as i64).contains(&axis) {
            return Err(a.fail(format!("axis {axis}")));
        }
        let outer: i64 = size[..axis as usize].iter().product();
        let inner: i64 = size[axis as usize..].iter().product();
        Ok(vec![x.f_reshape([outer, inner])?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Flatten"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank == 2).then(|| vec![rank_in(u, 1..=MAX_RANK)])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let r = inputs[0].rank();
        let a = cx.pick(0, r as i64) as usize;
        let axis = if a < r {
            signed_axis(cx, a, r)
        } else {
            a as i64
        };
        let mut attrs = SymAttrs::default();
        attrs.set("axis", AttrValue::Int(Int::from(axis)));
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let r = inputs[0].rank() as i64;
        let ok = attrs
            .int("axis")
            .as_const()
            .is_some_and(|a| (-r..=r).contains(&a));
        vec![Bool::from(ok)]
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let dims = &inputs[0].dims;
        let r = dims.len() as i64;
        let a = attrs.int("axis").as_const().unwrap_or(0);
        let a = (if a < 0 { a + r } else { a }).clamp(0, r) as usize;
        vec![vec![product(&dims[..a]), product(&dims[a..])]]
    }
}

// ---------------------------------------------------------------------------------------------

/// `Transpose(x, perm)`; `perm` is sometimes omitted (then the dims reverse).
struct Transpose;

impl Transpose {
    fn perm(attrs: &SymAttrs, rank: usize) -> Option<Vec<usize>> {
        match attrs.get("perm") {
            None => Some((0..rank).rev().collect()),
            Some(AttrValue::Ints(p)) => {
                let nonnegative = p.iter().all(|a| a.as_const().is_some_and(|a| a >= 0));
                normalized_axes(p, rank).filter(|q| nonnegative && q.len() == rank)
            }
            Some(_) => None,
        }
    }
}

impl OpSpec for Transpose {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let perm = a
            .ints("perm")
            .unwrap_or_else(|| (0..x.dim() as i64).rev().collect());
        Ok(vec![x.f_permute(perm.as_slice())?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        Some(TorchWriter::new(|cx| {
            let perm = match cx.named("perm") {
                Some(AttrValue::Ints(p)) => p.clone(),
                _ => (0..cx.input_ranks[0] as i64).rev().collect(),
            };
            let template = format!("torch.permute({{0}}, {})", list(perm));
            Ok(TorchForm::whole(template, false))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Transpose"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        if cx.pick(0, 4) != 0 {
            let perm = cx
                .permutation(inputs[0].rank())
                .into_iter()
                .map(Int::from)
                .collect();
            attrs.set("perm", AttrValue::Ints(perm));
        }
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        vec![Bool::from(Self::perm(attrs, inputs[0].rank()).is_some())]
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let dims = &inputs[0].dims;
        match Self::perm(attrs, dims.len()) {
            Some(p) => vec![p.iter().map(|a| dims[*a].clone()).collect()],
            None => vec![dims.clone()],
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// `Squeeze(x, axes)`: removes size-1 axes. The axes input is omitted only when every dim
/// is known (then all size-1 dims go).
struct Squeeze;

impl OpSpec for Squeeze {
    /// Its `axes` attribute became operand 1 in opset 13.
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

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let size = x.size();
        let rank = size.len();
        let axes: Vec<usize> = match a.int_values(1)? {
            Some(axes) => axes
                .iter()
                .map(|v| eval::norm_axis(*v, rank))
                .collect::<Result<_, _>>()?,
            None => (0..rank).filter(|d| size[*d] == 1).collect(),
        };
        if axes.iter().any(|d| size[*d] != 1) {
            return Err(a.fail("squeezing a dim that is not 1"));
        }
        let keep: Vec<i64> = (0..rank)
            .filter(|d| !axes.contains(d))
            .map(|d| size[d])
            .collect();
        Ok(vec![x.f_reshape(keep.as_slice())?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Squeeze"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank < MAX_RANK).then(|| vec![rank_in(u, out_rank + 1..=MAX_RANK)])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let dims = &inputs[0].dims;
        let r = dims.len();
        let all_known = dims.iter().all(|d| d.as_const().is_some());
        let axes: Vec<usize> = match cx.out_rank {
            Some(o) => distinct_axes(cx, r, r.saturating_sub(o).max(1)),
            None => {
                let ones: Vec<usize> = (0..r)
                    .filter(|i| dims[*i].as_const().is_none_or(|d| d == 1))
                    .collect();
                if all_known && (ones.is_empty() || cx.pick(0, 3) == 0) {
                    return SymAttrs {
                        consts: vec![ConstInput::Absent],
                        ..SymAttrs::default()
                    };
                }
                if ones.is_empty() {
                    vec![cx.pick(0, r as i64 - 1) as usize]
                } else {
                    let k = cx.pick(1, ones.len() as i64) as usize;
                    distinct_axes(cx, ones.len(), k)
                        .into_iter()
                        .map(|i| ones[i])
                        .collect()
                }
            }
        };
        let axes = axes
            .into_iter()
            .map(|a| Int::from(signed_axis(cx, a, r)))
            .collect();
        SymAttrs {
            consts: vec![ConstInput::Ints(axes)],
            ..SymAttrs::default()
        }
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let dims = &inputs[0].dims;
        match &attrs.consts[0] {
            ConstInput::Ints(axes) => match normalized_axes(axes, dims.len()) {
                Some(axes) if !axes.is_empty() => axes.iter().map(|a| dims[*a].eq(1i64)).collect(),
                _ => vec![Bool::from(false)],
            },
            _ => vec![Bool::from(dims.iter().all(|d| d.as_const().is_some()))],
        }
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let dims = &inputs[0].dims;
        let keep: Vec<bool> = match &attrs.consts[0] {
            ConstInput::Ints(axes) => {
                let axes = normalized_axes(axes, dims.len()).unwrap_or_default();
                (0..dims.len()).map(|i| !axes.contains(&i)).collect()
            }
            _ => dims.iter().map(|d| d.as_const() != Some(1)).collect(),
        };
        vec![dims
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(d, _)| d.clone())
            .collect()]
    }
}

// ---------------------------------------------------------------------------------------------

/// `Unsqueeze(x, axes)`: inserts size-1 axes; axes index the output.
struct Unsqueeze;

impl OpSpec for Unsqueeze {
    /// Its `axes` attribute became operand 1 in opset 13.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["axes"])
    }

    /// Its axes come as constant operand 0 and index the output's rank.
    fn pin_roles(&self) -> super::pattern_roles::PinRoles {
        super::pattern_roles::PinRoles {
            axes_operand: true,
            axes_index_output: true,
            ..Default::default()
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let size = x.size();
        let axes = a.required_ints(1, "axes")?;
        let out_rank = size.len() + axes.len();
        let axes: Vec<usize> = axes
            .iter()
            .map(|v| eval::norm_axis(*v, out_rank))
            .collect::<Result<_, _>>()?;
        let mut rest = size.iter();
        let shape: Vec<i64> = (0..out_rank)
            .map(|d| {
                if axes.contains(&d) {
                    1
                } else {
                    rest.next().copied().unwrap_or(1)
                }
            })
            .collect();
        Ok(vec![x.f_reshape(shape.as_slice())?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Unsqueeze"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![0..=MAX_RANK - 1]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank >= 1).then(|| vec![rank_in(u, 0..=out_rank - 1)])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let r = inputs[0].rank();
        let out_rank = match cx.out_rank {
            Some(o) => o.max(r + 1),
            None => r + cx.pick(1, (MAX_RANK.max(r + 1) - r) as i64) as usize,
        };
        let axes = distinct_axes(cx, out_rank, out_rank - r);
        let axes = axes
            .into_iter()
            .map(|a| Int::from(signed_axis(cx, a, out_rank)))
            .collect();
        SymAttrs {
            consts: vec![ConstInput::Ints(axes)],
            ..SymAttrs::default()
        }
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let axes = attrs.const_ints(0);
        let out_rank = inputs[0].rank() + axes.len();
        vec![Bool::from(
            !axes.is_empty() && normalized_axes(&axes, out_rank).is_some(),
        )]
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let axes = attrs.const_ints(0);
        let out_rank = inputs[0].rank() + axes.len();
        let axes = normalized_axes(&axes, out_rank).unwrap_or_default();
        let mut rest = inputs[0].dims.iter();
        let out = (0..out_rank)
            .map(|i| {
                if axes.contains(&i) {
                    Int::from(1i64)
                } else {
                    rest.next().cloned().unwrap_or(Int::from(1i64))
                }
            })
            .collect();
        vec![out]
    }
}

// ---------------------------------------------------------------------------------------------

/// `Expand(x, shape)`: bidirectional (numpy) broadcast of `x` against `shape`.
struct Expand;

impl OpSpec for Expand {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let size = x.size();
        let shape = a.required_ints(1, "shape")?;
        let out = broadcast_shapes(&size, &shape)
            .ok_or_else(|| a.fail(format!("{size:?} does not broadcast to {shape:?}")))?;
        Ok(vec![x.f_expand(out.as_slice(), false)?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Expand"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        let lower = out_rank > 0 && u.ratio(1u8, 3u8).unwrap_or(false);
        Some(vec![out_rank - usize::from(lower)])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let r = inputs[0].rank();
        let shape_rank = match cx.out_rank {
            // The output rank is max(r, shape rank): a shorter shape only when x has it all.
            Some(o) if r == o && o > 0 => cx.pick(1, o as i64) as usize,
            Some(o) => o,
            None => cx.pick(1, MAX_RANK as i64) as usize,
        };
        let shape = (0..shape_rank)
            .map(|i| cx.var(&format!("expand.s{i}"), 1, MAX_EXPAND))
            .collect();
        SymAttrs {
            consts: vec![ConstInput::Ints(shape)],
            ..SymAttrs::default()
        }
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        broadcast(&[&inputs[0].dims, &attrs.const_ints(0)]).0
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![broadcast(&[&inputs[0].dims, &attrs.const_ints(0)]).1]
    }
}

// ---------------------------------------------------------------------------------------------

/// `Tile(x, repeats)`: output dim i is `d[i] * repeats[i]`.
struct Tile;

impl OpSpec for Tile {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let reps = a.required_ints(1, "repeats")?;
        if reps.len() != x.dim() {
            return Err(a.fail("repeats must have one entry per dim"));
        }
        Ok(vec![x.f_repeat(reps.as_slice())?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Tile"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let reps = (0..inputs[0].rank())
            .map(|i| cx.var(&format!("tile.r{i}"), 1, MAX_REPEAT))
            .collect();
        SymAttrs {
            consts: vec![ConstInput::Ints(reps)],
            ..SymAttrs::default()
        }
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        vec![Bool::from(attrs.const_ints(0).len() == inputs[0].rank())]
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let reps = attrs.const_ints(0);
        let one = Int::from(1i64);
        let reps = reps.iter().chain(std::iter::repeat(&one));
        vec![inputs[0]
            .dims
            .iter()
            .zip(reps)
            .map(|(d, r)| d * r)
            .collect()]
    }
}

/// The layout family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![
        Box::new(Reshape),
        Box::new(Flatten),
        Box::new(Transpose),
        Box::new(Squeeze),
        Box::new(Unsqueeze),
        Box::new(Expand),
        Box::new(Tile),
    ]
}

/// The numpy broadcast of two shapes; `None` when they do not broadcast.
fn broadcast_shapes(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let dim = |s: &[i64]| {
                if i + s.len() >= rank {
                    s[i + s.len() - rank]
                } else {
                    1
                }
            };
            match (dim(a), dim(b)) {
                (x, y) if x == y || y == 1 => Some(x),
                (1, y) => Some(y),
                _ => None,
            }
        })
        .collect()
}

/// The target shape of `Reshape`: `0` copies the input dim (unless `allowzero`), one `-1` is
/// inferred.
fn reshape_target(a: &Args, input: &[i64], shape: &[i64]) -> Result<Vec<i64>, RefError> {
    let allow_zero = a.int("allowzero", 0) != 0;
    let mut out: Vec<i64> = shape
        .iter()
        .enumerate()
        .map(|(j, s)| match s {
            0 if !allow_zero => input
                .get(j)
                .copied()
                .ok_or_else(|| a.fail("a 0 entry past the input rank")),
            s => Ok(*s),
        })
        .collect::<Result<_, _>>()?;
    let numel: i64 = input.iter().product();
    let inferred: Vec<usize> = (0..out.len()).filter(|j| out[*j] == -1).collect();
    match inferred.as_slice() {
        [] => {}
        [j] => {
            let known: i64 = out.iter().filter(|d| **d != -1).product();
            if known == 0 || numel % known != 0 {
                return Err(a.fail("the -1 entry cannot be inferred"));
            }
            out[*j] = numel / known;
        }
        _ => return Err(a.fail("more than one -1 entry")),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::*;
    use crate::ops::DEFAULT_CLASS;
    use crate::sym::vars::VarTable;

    fn ints(v: &[i64]) -> ConstInput<Int> {
        ConstInput::Ints(v.iter().map(|x| Int::from(*x)).collect())
    }

    fn with_consts(c: ConstInput<Int>) -> SymAttrs {
        SymAttrs {
            consts: vec![c],
            ..SymAttrs::default()
        }
    }

    #[test]
    fn reshape_reads_zero_and_minus_one_like_onnx() {
        let x = [tensor(&[2, 3, 4])];
        let a = with_consts(ints(&[0, -1, 2]));
        assert!(all_true(&Reshape.requires(&a, &x)));
        assert_eq!(consts(&Reshape.type_transfer(&a, &x)[0]), vec![2, 6, 2]);
        let bad = with_consts(ints(&[5, -1]));
        assert!(Reshape
            .requires(&bad, &x)
            .iter()
            .any(|r| r.as_const() == Some(false)));
        let wrong_count = with_consts(ints(&[4, 7]));
        assert!(!all_true(&Reshape.requires(&wrong_count, &x)));
    }

    #[test]
    fn squeeze_unsqueeze_flatten_transpose_shapes() {
        let x = [tensor(&[3, 1, 4, 1])];
        let sq = with_consts(ints(&[-1, 1]));
        assert!(all_true(&Squeeze.requires(&sq, &x)));
        assert_eq!(consts(&Squeeze.type_transfer(&sq, &x)[0]), vec![3, 4]);
        assert!(!all_true(&Squeeze.requires(&with_consts(ints(&[0])), &x)));
        assert_eq!(
            consts(&Squeeze.type_transfer(&with_consts(ConstInput::Absent), &x)[0]),
            vec![3, 4]
        );

        let un = with_consts(ints(&[-1, 0]));
        assert_eq!(
            consts(&Unsqueeze.type_transfer(&un, &[tensor(&[3, 4])])[0]),
            vec![1, 3, 4, 1]
        );

        let mut fl = SymAttrs::default();
        fl.set("axis", AttrValue::Int(Int::from(-1i64)));
        assert_eq!(consts(&Flatten.type_transfer(&fl, &x)[0]), vec![12, 1]);

        assert_eq!(
            consts(&Transpose.type_transfer(&SymAttrs::default(), &x)[0]),
            vec![1, 4, 1, 3]
        );
        let mut tr = SymAttrs::default();
        tr.set(
            "perm",
            AttrValue::Ints([2i64, 0, 3, 1].into_iter().map(Int::from).collect()),
        );
        assert_eq!(
            consts(&Transpose.type_transfer(&tr, &x)[0]),
            vec![4, 3, 1, 1]
        );
    }

    #[test]
    fn expand_broadcasts_both_ways_and_tile_multiplies() {
        let x = [tensor(&[3, 1])];
        let e = with_consts(ints(&[2, 1, 5]));
        assert!(all_true(&Expand.requires(&e, &x)));
        assert_eq!(consts(&Expand.type_transfer(&e, &x)[0]), vec![2, 3, 5]);
        assert!(!all_true(&Expand.requires(&with_consts(ints(&[2, 5])), &x)));
        let tile = with_consts(ints(&[2, 4]));
        assert_eq!(consts(&Tile.type_transfer(&tile, &x)[0]), vec![6, 4]);
    }

    #[test]
    fn backward_reshape_solves_for_a_wanted_shape() {
        // Both wanted dims fit a leaf dim, so every form of the target entries (variable,
        // `0` copy, `-1`) is satisfiable.
        for seed in 0..16u8 {
            let bytes: Vec<u8> = (0..64u8)
                .map(|i| i.wrapping_mul(37).wrapping_add(seed.wrapping_mul(101)))
                .collect();
            let mut u = Unstructured::new(&bytes);
            let mut vars = VarTable::default();
            let dims = (0..3)
                .map(|i| vars.fresh(format!("d{i}"), 1, 8, &mut u))
                .collect();
            let x = SymTensor {
                dtype: DType::F32,
                dims,
            };
            let sig = Sig::uniform(DType::F32, 1);
            let mut cx = AttrCx {
                u: &mut u,
                vars: &mut vars,
                sig: &sig,
                class: DEFAULT_CLASS,
                out_rank: Some(2),
            };
            let attrs = Reshape.attrs(&mut cx, std::slice::from_ref(&x));
            let out = Reshape.type_transfer(&attrs, std::slice::from_ref(&x));
            let mut reqs = Reshape.requires(&attrs, std::slice::from_ref(&x));
            reqs.push(out[0][0].eq(6i64));
            reqs.push(out[0][1].eq(4i64));
            let env = vars
                .solve(&reqs)
                .unwrap_or_else(|| panic!("unsolved: {:?}", attrs.consts));
            let n: i64 = x.dims.iter().map(|d| d.eval(&env).unwrap()).product();
            assert_eq!(n, 24);
        }
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;

    #[test]
    fn reshape_copies_zero_entries_and_infers_minus_one() {
        let x = f32s(&[0.0; 24], &[2, 3, 4]);
        let y = run1(
            "Reshape",
            &[],
            vec![Some(x), Some(i64s(&[0, -1, 2], &[3]))],
            DType::F32,
        );
        assert_eq!(y.size(), vec![2, 6, 2]);
    }

    #[test]
    fn expand_broadcasts_both_ways_and_squeeze_defaults_to_ones() {
        let x = f32s(&[1.0, 2.0, 3.0], &[3, 1]);
        let y = run1(
            "Expand",
            &[],
            vec![Some(x), Some(i64s(&[2, 1, 4], &[3]))],
            DType::F32,
        );
        assert_eq!(y.size(), vec![2, 3, 4]);
        let z = run1(
            "Squeeze",
            &[],
            vec![Some(f32s(&[1.0, 2.0], &[1, 2, 1]))],
            DType::F32,
        );
        assert_eq!(z.size(), vec![2]);
        let u = run1(
            "Unsqueeze",
            &[],
            vec![Some(f32s(&[1.0, 2.0], &[2])), Some(i64s(&[-1, 0], &[2]))],
            DType::F32,
        );
        assert_eq!(u.size(), vec![1, 2, 1]);
        let t = run1(
            "Transpose",
            &[],
            vec![Some(f32s(&[0.0; 6], &[1, 2, 3]))],
            DType::F32,
        );
        assert_eq!(t.size(), vec![3, 2, 1]);
        let f = run1(
            "Flatten",
            &[("axis", AttrValue::Int(-1))],
            vec![Some(f32s(&[0.0; 6], &[1, 2, 3]))],
            DType::F32,
        );
        assert_eq!(f.size(), vec![2, 3]);
    }
}
