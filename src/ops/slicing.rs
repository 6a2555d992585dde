//! Ops that select, join or pad parts of tensors: Concat, Split, Slice, Pad, Gather and
//! Trilu (Resize, registered with them, is [`super::resize`]).

use super::eval;
use super::eval::{Args, RefError};
use super::layout::{axis_in, distinct_axes, normalized_axes, signed_axis};
use super::{
    uniform_sigs, AttrCx, AttrValue, ConstInput, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor,
    MAX_RANK,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use tch::{Kind, Tensor};

/// Largest dimension a solver variable for an output dim may take (the generator bounds
/// every output dim by the same value).
const MAX_DIM: i64 = 48;

/// The normalized `axis` attribute, `None` when out of range.
fn axis_attr(attrs: &SymAttrs, rank: usize) -> Option<usize> {
    attrs.int("axis").as_const().and_then(|a| axis_in(a, rank))
}

/// Sets the `axis` attribute to a byte-drawn axis of a rank-`rank` tensor.
fn set_axis(cx: &mut AttrCx, attrs: &mut SymAttrs, rank: usize) {
    let a = cx.axis(rank, true);
    attrs.set("axis", AttrValue::Int(Int::from(a)));
}

/// `dims` with entry `axis` replaced by `d`.
fn with_dim(dims: &[Int], axis: usize, d: Int) -> Vec<Int> {
    let mut out = dims.to_vec();
    out[axis] = d;
    out
}

/// The sum of `items`.
fn sum<'a>(items: impl IntoIterator<Item = &'a Int>) -> Int {
    items.into_iter().fold(Int::from(0i64), |acc, d| acc + d)
}

// ---------------------------------------------------------------------------------------------

/// `Concat(x0, x1[, x2], axis)`: equal ranks, equal dims off the axis.
struct Concat;

impl OpSpec for Concat {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let axis = eval::norm_axis(a.int("axis", 0), a.x(0)?.dim())?;
        Ok(vec![Tensor::f_cat(&a.present(), axis as i64)?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn torch_form(&self) -> Option<super::torch_form::TorchWriter<'_>> {
        Some(super::torch_form::TorchWriter::new(|cx| {
            let axis = cx.int("axis", 0);
            let parts: Vec<String> = (0..cx.input_ranks.len())
                .map(|k| format!("{{{k}}}"))
                .collect();
            let template = format!("torch.cat([{}], {axis})", parts.join(", "));
            Ok(super::torch_form::TorchForm::whole(template, true))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Concat"
    }
    fn sigs(&self) -> Vec<Sig> {
        DType::ALL
            .iter()
            .flat_map(|t| [Sig::uniform(*t, 2), Sig::uniform(*t, 3)])
            .collect()
    }
    fn input_ranks(&self, sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK; sig.inputs.len()]
    }
    fn infer_input_types(
        &self,
        sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank >= 1).then(|| vec![out_rank; sig.inputs.len()])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        set_axis(cx, &mut attrs, inputs[0].rank());
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let r = inputs[0].rank();
        let Some(axis) = axis_attr(attrs, r) else {
            return vec![Bool::from(false)];
        };
        if inputs.iter().any(|x| x.rank() != r) {
            return vec![Bool::from(false)];
        }
        let mut reqs = Vec::new();
        for x in &inputs[1..] {
            for (i, (a, b)) in inputs[0].dims.iter().zip(&x.dims).enumerate() {
                if i != axis {
                    reqs.push(a.eq(b));
                }
            }
        }
        reqs
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let r = inputs[0].rank();
        match axis_attr(attrs, r) {
            Some(axis) if inputs.iter().all(|x| x.rank() == r) => {
                vec![with_dim(
                    &inputs[0].dims,
                    axis,
                    sum(inputs.iter().map(|x| &x.dims[axis])),
                )]
            }
            _ => vec![inputs[0].dims.clone()],
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// `Split(x, split, axis)` into 2 or 3 outputs. Class `split` gives the sizes as an int64
/// input; class `num_outputs` uses the opset-18 attribute (equal chunks of `ceil(d / n)`, the
/// last one smaller).
struct Split;

impl Split {
    /// Number of outputs, read back from the attributes.
    fn n(attrs: &SymAttrs) -> usize {
        match (attrs.get("num_outputs"), attrs.consts.first()) {
            (Some(AttrValue::Int(n)), _) => n.as_const().unwrap_or(2).clamp(2, 3) as usize,
            (_, Some(ConstInput::Ints(s))) => s.len().max(1),
            _ => 2,
        }
    }

    /// The size of each output along the axis, and their constraints.
    fn sizes(attrs: &SymAttrs, d: &Int, n: usize) -> (Vec<Bool>, Vec<Int>) {
        match attrs.consts.first() {
            Some(ConstInput::Ints(split)) => {
                let ok = Bool::from(split.len() == n);
                (vec![ok, sum(split).eq(d)], split.clone())
            }
            _ => {
                let chunk = (d + (n as i64 - 1)) / (n as i64);
                let last = d - &chunk * (n as i64 - 1);
                let mut sizes = vec![chunk; n - 1];
                sizes.push(last.clone());
                (vec![last.ge(1i64)], sizes)
            }
        }
    }
}

impl OpSpec for Split {
    /// Its `split` attribute became operand 1 in opset 13.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["split"])
    }

    /// Its split sizes are drawn from the extent along its axis.
    fn pin_roles(&self) -> super::pattern_roles::PinRoles {
        super::pattern_roles::PinRoles {
            axis_derives: true,
            ..Default::default()
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let axis = eval::norm_axis(a.int("axis", 0), x.dim())?;
        let d = x.size()[axis];
        let sizes = match a.int_values(1)? {
            Some(s) => s,
            None => {
                let n = match a.int("num_outputs", 0) {
                    0 => a.out.len() as i64,
                    n => n,
                }
                .max(1);
                let chunk = (d + n - 1) / n;
                (0..n).map(|i| chunk.min(d - chunk * i).max(0)).collect()
            }
        };
        if sizes.iter().sum::<i64>() != d {
            return Err(a.fail(format!("split sizes {sizes:?} do not sum to {d}")));
        }
        Ok(x.f_split_with_sizes(sizes.as_slice(), axis as i64)?)
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Split"
    }
    fn sigs(&self) -> Vec<Sig> {
        DType::ALL
            .iter()
            .flat_map(|t| (2..=3).map(move |n| Sig::new(vec![*t], vec![*t; n])))
            .collect()
    }
    fn classes(&self) -> Vec<&'static str> {
        vec!["split", "num_outputs"]
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank >= 1).then(|| vec![out_rank])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let n = cx.sig.outputs.len();
        let mut attrs = SymAttrs {
            class: cx.class.into(),
            ..SymAttrs::default()
        };
        set_axis(cx, &mut attrs, inputs[0].rank());
        if cx.class == "num_outputs" {
            attrs.set("num_outputs", AttrValue::Int(Int::from(n)));
        } else {
            let split = (0..n)
                .map(|i| cx.var(&format!("split.s{i}"), 1, MAX_DIM))
                .collect();
            attrs.consts.push(ConstInput::Ints(split));
        }
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let dims = &inputs[0].dims;
        match axis_attr(attrs, dims.len()) {
            Some(axis) => Self::sizes(attrs, &dims[axis], Self::n(attrs)).0,
            None => vec![Bool::from(false)],
        }
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let dims = &inputs[0].dims;
        let n = Self::n(attrs);
        match axis_attr(attrs, dims.len()) {
            Some(axis) => {
                let sizes = Self::sizes(attrs, &dims[axis], n).1;
                sizes.into_iter().map(|s| with_dim(dims, axis, s)).collect()
            }
            None => vec![dims.clone(); n],
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// Exceeds every dimension (output dims are at most [`MAX_DIM`]), so that
/// `max(-d, min(0, SIGN_SCALE * v))` is `-d` exactly when `v < 0` and `0` otherwise.
const SIGN_SCALE: i64 = 2 * MAX_DIM;

/// ONNX's reading of a start or end index `v` on an axis of size `d`: a negative index counts
/// from the end, then the result is clamped to `[lo, hi]`. Stays linear in `v` and `d`.
fn onnx_index(v: &Int, d: &Int, lo: Int, hi: Int) -> Int {
    let adjusted = match v.as_const() {
        // Clamp constants first: values beyond ±SIGN_SCALE clamp the same way and cannot
        // overflow when `d` is added.
        Some(c) if c < 0 => d + c.max(-SIGN_SCALE),
        Some(c) => Int::from(c.min(SIGN_SCALE)),
        None => {
            let minus_d_if_negative = (v * SIGN_SCALE).min(0i64).max(Int::from(0i64) - d);
            v - minus_d_if_negative
        }
    };
    adjusted.max(lo).min(hi)
}

/// `Slice(x, starts, ends, axes, steps)`. Starts and ends are solver variables (non-negative
/// or negative indices) or out-of-range constants that ONNX clamps; steps are drawn from the
/// bytes, negative ones included. The output length follows ONNX's clamping rules exactly.
struct Slice;

impl Slice {
    /// Per-axis output lengths: (requires, output dims).
    fn infer(attrs: &SymAttrs, inputs: &[SymTensor]) -> (Vec<Bool>, Vec<Int>) {
        let dims = &inputs[0].dims;
        let r = dims.len();
        let fail = || (vec![Bool::from(false)], dims.clone());
        let (starts, ends) = (attrs.const_ints(0), attrs.const_ints(1));
        let k = starts.len();
        let axes = match attrs.consts.get(2) {
            Some(ConstInput::Ints(a)) => normalized_axes(a, r),
            _ => Some((0..k).collect()),
        };
        let steps = match attrs.consts.get(3) {
            Some(ConstInput::Ints(s)) => s.iter().map(Int::as_const).collect::<Option<Vec<_>>>(),
            _ => Some(vec![1; k]),
        };
        let (Some(axes), Some(steps)) = (axes, steps) else {
            return fail();
        };
        let lengths_agree = [ends.len(), axes.len(), steps.len()]
            .iter()
            .all(|n| *n == k);
        if k == 0 || k > r || !lengths_agree || steps.contains(&0) {
            return fail();
        }
        let mut out = dims.clone();
        let mut reqs = Vec::new();
        for i in 0..k {
            let d = &dims[axes[i]];
            let step = steps[i];
            let len = if step > 0 {
                let s = onnx_index(&starts[i], d, Int::from(0i64), d.clone());
                let e = onnx_index(&ends[i], d, Int::from(0i64), d.clone());
                ((e - s + (step - 1)) / step).max(0i64)
            } else {
                let q = -step;
                // A negative start below -dims[i]: the Slice text clamps it "into [0, dims[i]-1]
                // for negative stepping" (one element at index 0), while onnx.reference (numpy
                // slicing) returns nothing. The spec disagrees with its own reference there,
                // and compilers follow either, so such starts are never generated.
                if starts[i].as_const().is_none_or(|c| c < 0) {
                    reqs.push((&starts[i] + d).ge(0i64));
                }
                let s = onnx_index(&starts[i], d, Int::from(0i64), d - 1i64);
                let e = onnx_index(&ends[i], d, Int::from(-1i64), d - 1i64);
                ((s - e + (q - 1)) / q).max(0i64)
            };
            reqs.push(len.ge(1i64));
            out[axes[i]] = len;
        }
        (reqs, out)
    }

    /// A start or end entry: a non-negative index, a negative index, or (`far`) an
    /// out-of-range constant that clamps to the `toward_end` or start side.
    fn index(cx: &mut AttrCx, name: &str, toward_end: bool) -> Int {
        match cx.pick(0, 5) {
            0 => {
                let i = cx.pick(0, 2) as usize;
                let far = if toward_end {
                    [i64::MAX, MAX_DIM + 5, 1000]
                } else {
                    [i64::MIN, -MAX_DIM - 5, -1000]
                };
                Int::from(far[i])
            }
            1 | 2 => cx.var(&format!("{name}.neg"), -MAX_DIM - 1, -1),
            _ => cx.var(name, 0, MAX_DIM),
        }
    }
}

impl OpSpec for Slice {
    /// Its `starts`, `ends` and `axes` attributes became operands 1-3 in opset 10.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["starts", "ends", "axes"])
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![slice(a, a.x(0)?)?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Slice"
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
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank >= 1).then(|| vec![out_rank])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let r = inputs[0].rank();
        let k = cx.pick(1, r as i64) as usize;
        let axes = distinct_axes(cx, r, k);
        let (mut starts, mut ends, mut steps) = (Vec::new(), Vec::new(), Vec::new());
        for (i, _) in axes.iter().enumerate() {
            let step: i64 = [1, 1, 1, 2, 3, -1, -1, -2, -3][cx.pick(0, 8) as usize];
            starts.push(Self::index(cx, &format!("slice.start{i}"), step < 0));
            ends.push(Self::index(cx, &format!("slice.end{i}"), step > 0));
            steps.push(step);
        }
        let mut consts = vec![ConstInput::Ints(starts), ConstInput::Ints(ends)];
        let in_order = axes.iter().enumerate().all(|(i, a)| i == *a);
        let omit_steps = steps.iter().all(|s| *s == 1) && cx.flip();
        consts.push(if in_order && cx.flip() {
            ConstInput::Absent
        } else {
            ConstInput::Ints(
                axes.iter()
                    .map(|a| Int::from(signed_axis(cx, *a, r)))
                    .collect(),
            )
        });
        if !omit_steps {
            consts.push(ConstInput::Ints(steps.into_iter().map(Int::from).collect()));
        }
        SymAttrs {
            consts,
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

/// `Pad(x, pads, constant_value, axes)`, one class per mode. Negative pads (cropping) only in
/// `constant` mode; `reflect` needs every pad below the dim. `wrap` takes pads larger than the
/// dim (ONNX Runtime 1.31 agrees with the reference there).
struct Pad;

impl Pad {
    /// The padded axes (normalized) and their (begin, end) pads.
    fn parts(attrs: &SymAttrs, rank: usize) -> Option<Vec<(usize, Int, Int)>> {
        let pads = attrs.const_ints(0);
        let axes = match attrs.consts.get(2) {
            Some(ConstInput::Ints(a)) => normalized_axes(a, rank)?,
            _ => (0..rank).collect(),
        };
        if pads.len() != 2 * axes.len() {
            return None;
        }
        let k = axes.len();
        Some(
            axes.iter()
                .enumerate()
                .map(|(i, a)| (*a, pads[i].clone(), pads[k + i].clone()))
                .collect(),
        )
    }
}

impl OpSpec for Pad {
    /// Its `pads` and `value` attributes became operands 1 and 2 in opset 11.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["pads", "value"])
    }

    /// Its class is its `mode` (ONNX's default: `constant`).
    fn class_of_node(&self, node: &super::pattern_roles::NodeView) -> Option<String> {
        Some(node.string("mode").unwrap_or("constant").into())
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![pad(a, a.x(0)?)?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Pad"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn classes(&self) -> Vec<&'static str> {
        vec!["constant", "reflect", "edge", "wrap"]
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank >= 1).then(|| vec![out_rank])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let r = inputs[0].rank();
        let dtype = cx.sig.inputs[0];
        let constant = cx.class == "constant";
        let mut attrs = SymAttrs {
            class: cx.class.into(),
            ..SymAttrs::default()
        };
        attrs.set("mode", AttrValue::Str(cx.class.into()));
        let axes = if cx.pick(0, 2) == 0 {
            let count = cx.pick(1, r as i64) as usize;
            Some(distinct_axes(cx, r, count))
        } else {
            None
        };
        let k = axes.as_ref().map_or(r, Vec::len);
        let lo = if constant && cx.pick(0, 3) == 0 {
            -2
        } else {
            0
        };
        let begins: Vec<Int> = (0..k)
            .map(|i| cx.var(&format!("pad.b{i}"), lo, 4))
            .collect();
        let ends: Vec<Int> = (0..k)
            .map(|i| cx.var(&format!("pad.e{i}"), lo, 4))
            .collect();
        attrs
            .consts
            .push(ConstInput::Ints(begins.into_iter().chain(ends).collect()));
        let value = if constant && cx.flip() {
            let v = cx.float(-3.0, 3.0) as f64;
            let v = match dtype {
                DType::Bool => f64::from(u8::from(v > 0.0)),
                d if d.is_unsigned() => v.abs().round(),
                d if d.is_int() => v.round(),
                _ => v,
            };
            ConstInput::Scalar(dtype, v)
        } else {
            ConstInput::Absent
        };
        attrs.consts.push(value);
        if let Some(axes) = axes {
            attrs.consts.push(ConstInput::Ints(
                axes.into_iter()
                    .map(|a| Int::from(signed_axis(cx, a, r)))
                    .collect(),
            ));
        }
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let dims = &inputs[0].dims;
        let Some(parts) = Self::parts(attrs, dims.len()) else {
            return vec![Bool::from(false)];
        };
        let mut reqs = Vec::new();
        for (a, b, e) in parts {
            let d = &dims[a];
            match attrs.class.as_str() {
                "constant" => {
                    // Crop at most d - 1 from either side.
                    reqs.push((d + &b).ge(1i64));
                    reqs.push((d + &e).ge(1i64));
                    reqs.push((d + &b + &e).ge(1i64));
                }
                "reflect" => {
                    reqs.extend([b.ge(0i64), e.ge(0i64), b.lt(d), e.lt(d)]);
                }
                _ => reqs.extend([b.ge(0i64), e.ge(0i64)]),
            }
        }
        reqs
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let mut out = inputs[0].dims.clone();
        for (a, b, e) in Self::parts(attrs, out.len()).unwrap_or_default() {
            out[a] = &out[a] + &b + &e;
        }
        vec![out]
    }
}

// ---------------------------------------------------------------------------------------------

/// `Gather(data, indices, axis)`; the indices are a constant of symbolic shape with values in
/// `[-d, d)`, `d` the size of the gathered axis.
struct Gather;

impl OpSpec for Gather {
    /// Its index bounds are drawn from the extent along its axis.
    fn pin_roles(&self) -> super::pattern_roles::PinRoles {
        super::pattern_roles::PinRoles {
            axis_derives: true,
            ..Default::default()
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let axis = eval::norm_axis(a.int("axis", 0), x.dim())?;
        let d = x.size()[axis];
        let idx = a.x(1)?.f_to_kind(Kind::Int64)?;
        let idx = idx.f_add(&idx.f_lt(0)?.f_to_kind(Kind::Int64)?.f_mul_scalar(d)?)?;
        let picked = x.f_index_select(axis as i64, &idx.f_reshape([-1])?)?;
        let mut shape = x.size()[..axis].to_vec();
        shape.extend(idx.size());
        shape.extend(&x.size()[axis + 1..]);
        Ok(vec![picked.f_reshape(shape.as_slice())?])
    }

    fn moves_data(&self) -> bool {
        true
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Gather"
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
        // Output rank = data rank - 1 + indices rank, indices rank in 0..=3.
        let lo = out_rank.saturating_sub(2).max(1);
        let hi = (out_rank + 1).min(MAX_RANK);
        (lo <= hi).then(|| vec![u.int_in_range(lo..=hi).unwrap_or(hi)])
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let r = inputs[0].rank();
        let q = match cx.out_rank {
            Some(o) => (o + 1).saturating_sub(r),
            None => cx.pick(0, (MAX_RANK + 1 - r).min(3) as i64) as usize,
        };
        let mut attrs = SymAttrs::default();
        let axis = cx.axis(r, true);
        attrs.set("axis", AttrValue::Int(Int::from(axis)));
        let shape = (0..q)
            .map(|i| cx.var(&format!("gather.i{i}"), 1, 8))
            .collect();
        let bound = axis_in(axis, r).map_or(Int::from(1i64), |a| inputs[0].dims[a].clone());
        attrs.consts.push(ConstInput::Indices {
            shape,
            bound,
            seed: cx.seed(),
        });
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let r = inputs[0].rank();
        let q = match &attrs.consts[0] {
            ConstInput::Indices { shape, .. } => shape.len(),
            _ => return vec![Bool::from(false)],
        };
        vec![Bool::from(
            axis_attr(attrs, r).is_some() && r + q <= MAX_RANK + 1,
        )]
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let dims = &inputs[0].dims;
        match (axis_attr(attrs, dims.len()), &attrs.consts[0]) {
            (Some(a), ConstInput::Indices { shape, .. }) => {
                vec![dims[..a]
                    .iter()
                    .chain(shape)
                    .chain(&dims[a + 1..])
                    .cloned()
                    .collect()]
            }
            _ => vec![dims.clone()],
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// `Trilu(x, k, upper)`; `k` is an optional int64 scalar.
struct Trilu;

impl OpSpec for Trilu {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let k = a
            .int_values(1)?
            .and_then(|v| v.first().copied())
            .unwrap_or(0);
        Ok(vec![if a.int("upper", 1) != 0 {
            x.f_triu(k)?
        } else {
            x.f_tril(k)?
        }])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Trilu"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![2..=MAX_RANK]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank >= 2).then(|| vec![out_rank])
    }
    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        let upper = cx.flip();
        attrs.set("upper", AttrValue::Int(Int::from(i64::from(upper))));
        if cx.pick(0, 3) != 0 {
            let k = cx.pick(-4, 4);
            attrs.consts.push(ConstInput::Scalar(DType::I64, k as f64));
        }
        attrs
    }
    fn requires(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        vec![Bool::from(inputs[0].rank() >= 2)]
    }
    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// The slicing family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![
        Box::new(Concat),
        Box::new(Split),
        Box::new(Slice),
        Box::new(Pad),
        Box::new(Gather),
        Box::new(Trilu),
        Box::new(super::resize::Resize),
    ]
}

/// Selects `indices` along `axis`.
fn select(x: &Tensor, axis: usize, indices: &[i64]) -> Result<Tensor, RefError> {
    let idx = Tensor::f_from_slice(indices)?;
    Ok(x.f_index_select(axis as i64, &idx)?)
}

/// The source index of output position `p` (from `-begin`) on an axis of size `d` in a
/// non-constant pad mode.
fn pad_source(mode: &str, p: i64, d: i64) -> i64 {
    match mode {
        "edge" => p.clamp(0, d - 1),
        "wrap" => p.rem_euclid(d),
        _ if d == 1 => 0,
        _ => {
            // reflect: mirror without repeating the edge, period 2 (d - 1).
            let period = 2 * (d - 1);
            let q = p.rem_euclid(period);
            if q < d {
                q
            } else {
                period - q
            }
        }
    }
}

/// `Pad(x, pads, constant_value, axes)` in any mode; negative pads crop.
fn pad(a: &Args, x: &Tensor) -> Result<Tensor, RefError> {
    let size = x.size();
    let rank = size.len();
    let pads = a.required_ints(1, "pads")?;
    let axes: Vec<usize> = match a.int_values(3)? {
        Some(axes) => axes
            .iter()
            .map(|v| eval::norm_axis(*v, rank))
            .collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(a.fail("pads must have two entries per axis"));
    }
    let k = axes.len();
    let mode = a.string("mode", "constant");
    if mode == "constant" {
        let value = match a.float_values(2)? {
            Some(v) => v.first().copied().unwrap_or(0.0),
            None => 0.0,
        };
        let mut list = vec![0i64; 2 * rank];
        for (i, axis) in axes.iter().enumerate() {
            // libtorch lists (begin, end) from the last dim.
            let slot = rank - 1 - axis;
            list[2 * slot] = pads[i];
            list[2 * slot + 1] = pads[k + i];
        }
        return Ok(x.f_pad(list.as_slice(), "constant", value)?);
    }
    if !matches!(mode.as_str(), "reflect" | "edge" | "wrap") {
        return Err(a.unsupported(format!("mode {mode}")));
    }
    let mut y = x.shallow_clone();
    for (i, axis) in axes.iter().enumerate() {
        let (b, e, d) = (pads[i], pads[k + i], size[*axis]);
        if mode == "reflect" && (b >= d || e >= d) && d > 1 {
            return Err(a.fail("reflect pads must be below the dim"));
        }
        let src: Vec<i64> = (-b..d + e).map(|p| pad_source(&mode, p, d)).collect();
        y = select(&y, *axis, &src)?;
    }
    Ok(y)
}

/// ONNX's reading of a slice bound `v` on an axis of size `d`, clamped to `[lo, hi]`.
fn bound(v: i64, d: i64, lo: i64, hi: i64) -> i64 {
    let v = if v < 0 { v.saturating_add(d) } else { v };
    v.clamp(lo, hi)
}

/// `Slice(x, starts, ends, axes, steps)`.
fn slice(a: &Args, x: &Tensor) -> Result<Tensor, RefError> {
    let size = x.size();
    let rank = size.len();
    let starts = a.required_ints(1, "starts")?;
    let ends = a.required_ints(2, "ends")?;
    let k = starts.len();
    let axes: Vec<usize> = match a.int_values(3)? {
        Some(axes) => axes
            .iter()
            .map(|v| eval::norm_axis(*v, rank))
            .collect::<Result<_, _>>()?,
        None => (0..k).collect(),
    };
    let steps = a.int_values(4)?.unwrap_or_else(|| vec![1; k]);
    if ends.len() != k || axes.len() != k || steps.len() != k {
        return Err(a.fail("starts, ends, axes and steps differ in length"));
    }
    let mut y = x.shallow_clone();
    for i in 0..k {
        let (axis, step, d) = (axes[i], steps[i], size[axes[i]]);
        let indices: Vec<i64> = if step > 0 {
            let (s, e) = (bound(starts[i], d, 0, d), bound(ends[i], d, 0, d));
            (s..e.max(s)).step_by(step as usize).collect()
        } else if step < 0 {
            let (s, e) = (bound(starts[i], d, 0, d - 1), bound(ends[i], d, -1, d - 1));
            let mut v = Vec::new();
            let mut p = s;
            while p > e {
                v.push(p);
                p += step;
            }
            v
        } else {
            return Err(a.fail("a step of 0"));
        };
        y = select(&y, axis, &indices)?;
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::resize::Resize;
    use crate::ops::testing::*;

    fn ints(v: &[i64]) -> ConstInput<Int> {
        ConstInput::Ints(v.iter().map(|x| Int::from(*x)).collect())
    }

    /// Slice length straight from the ONNX operator text.
    fn onnx_slice_len(d: i64, start: i64, end: i64, step: i64) -> i64 {
        let adj = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
        let (s, e) = if step > 0 {
            (adj(start).clamp(0, d), adj(end).clamp(0, d))
        } else {
            (adj(start).clamp(0, d - 1), adj(end).clamp(-1, d - 1))
        };
        let n = if step > 0 { e - s } else { s - e };
        let q = step.abs();
        ((n + q - 1).div_euclid(q)).max(0)
    }

    #[test]
    fn slice_length_follows_onnx_clamping_for_constants() {
        let specials = [i64::MIN, i64::MIN + 1, -1000, 1000, i64::MAX];
        for d in 1..=6i64 {
            let values: Vec<i64> = (-d - 3..=d + 3).chain(specials).collect();
            for &start in &values {
                for &end in &values {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        let attrs = SymAttrs {
                            consts: vec![ints(&[start]), ints(&[end]), ints(&[0]), ints(&[step])],
                            ..SymAttrs::default()
                        };
                        let (reqs, out) = Slice::infer(&attrs, &[tensor(&[d])]);
                        let want = onnx_slice_len(d, start, end, step);
                        assert_eq!(
                            out[0].as_const(),
                            Some(want),
                            "d={d} start={start} end={end} step={step}"
                        );
                        // Negative steps from below -d are the contested edge, never generated.
                        let contested = step < 0 && start < -d;
                        assert_eq!(all_true(&reqs), want >= 1 && !contested);
                    }
                }
            }
        }
    }

    #[test]
    fn symbolic_slice_indices_evaluate_like_onnx() {
        // start and end as solver variables, dim as a variable too (backward insertion).
        let (s, e, d) = (Int::var(0), Int::var(1), Int::var(2));
        let attrs = SymAttrs {
            consts: vec![
                ConstInput::Ints(vec![s]),
                ConstInput::Ints(vec![e]),
                ints(&[0]),
                ints(&[-2]),
            ],
            ..SymAttrs::default()
        };
        let x = SymTensor {
            dtype: DType::F32,
            dims: vec![d],
        };
        let out = Slice::infer(&attrs, &[x]).1;
        for dim in 1..=7i64 {
            for start in -MAX_DIM - 1..=MAX_DIM {
                for end in [
                    -MAX_DIM - 1,
                    -dim - 1,
                    -dim,
                    -1,
                    0,
                    1,
                    dim - 1,
                    dim,
                    MAX_DIM,
                ] {
                    let got = out[0].eval(&[start, end, dim]);
                    assert_eq!(
                        got,
                        Some(onnx_slice_len(dim, start, end, -2)),
                        "d={dim} s={start} e={end}"
                    );
                }
            }
        }
    }

    #[test]
    fn concat_split_gather_shapes() {
        let mut a = SymAttrs::default();
        a.set("axis", AttrValue::Int(Int::from(-1i64)));
        let ins = [tensor(&[2, 3]), tensor(&[2, 5]), tensor(&[2, 1])];
        assert!(all_true(&Concat.requires(&a, &ins)));
        assert_eq!(consts(&Concat.type_transfer(&a, &ins)[0]), vec![2, 9]);
        assert!(!all_true(
            &Concat.requires(&a, &[tensor(&[2, 3]), tensor(&[3, 3])])
        ));

        let mut s = SymAttrs {
            class: "num_outputs".into(),
            ..SymAttrs::default()
        };
        s.set("axis", AttrValue::Int(Int::from(0i64)));
        s.set("num_outputs", AttrValue::Int(Int::from(3i64)));
        let outs = Split.type_transfer(&s, &[tensor(&[7, 2])]);
        assert_eq!(
            outs.iter().map(|o| consts(o)[0]).collect::<Vec<_>>(),
            vec![3, 3, 1]
        );
        assert!(
            !all_true(&Split.requires(&s, &[tensor(&[4, 2])])),
            "4 into 3 leaves an empty last chunk"
        );

        let mut g = SymAttrs::default();
        g.set("axis", AttrValue::Int(Int::from(1i64)));
        let shape = vec![Int::from(4i64), Int::from(2i64)];
        g.consts.push(ConstInput::Indices {
            shape,
            bound: Int::from(3i64),
            seed: 0,
        });
        assert_eq!(
            consts(&Gather.type_transfer(&g, &[tensor(&[5, 3, 6])])[0]),
            vec![5, 4, 2, 6]
        );
    }

    #[test]
    fn pad_modes_and_axes() {
        let mut p = SymAttrs {
            class: "reflect".into(),
            ..SymAttrs::default()
        };
        p.consts = vec![ints(&[1, 2]), ConstInput::Absent, ints(&[-1])];
        let x = [tensor(&[4, 3])];
        assert!(all_true(&Pad.requires(&p, &x)));
        assert_eq!(consts(&Pad.type_transfer(&p, &x)[0]), vec![4, 6]);
        p.consts[0] = ints(&[1, 3]);
        assert!(
            !all_true(&Pad.requires(&p, &x)),
            "reflect pads must stay below the dim"
        );
        p.class = "wrap".into();
        assert!(all_true(&Pad.requires(&p, &x)));
        p.class = "constant".into();
        p.consts[0] = ints(&[-2, 1]);
        assert!(all_true(&Pad.requires(&p, &x)));
        assert_eq!(consts(&Pad.type_transfer(&p, &x)[0]), vec![4, 2]);
    }

    #[test]
    fn resize_floors_scales_and_keeps_ort_rank_rules() {
        let mut r = SymAttrs {
            class: "linear".into(),
            ..SymAttrs::default()
        };
        r.consts = vec![
            ConstInput::Absent,
            ConstInput::Floats(vec![1.0, 1.0, 0.75, 2.5]),
        ];
        let x = [tensor(&[2, 3, 5, 3])];
        assert!(all_true(&Resize.requires(&r, &x)));
        assert_eq!(consts(&Resize.type_transfer(&r, &x)[0]), vec![2, 3, 3, 7]);
        r.class = "cubic".into();
        assert!(!all_true(&Resize.requires(&r, &[tensor(&[2, 3, 5])])));
        let mut s = SymAttrs {
            class: "nearest".into(),
            ..SymAttrs::default()
        };
        s.set("axes", AttrValue::Ints(vec![Int::from(-1i64)]));
        s.consts = vec![ConstInput::Absent, ConstInput::Absent, ints(&[9])];
        assert_eq!(consts(&Resize.type_transfer(&s, &x)[0]), vec![2, 3, 5, 9]);
    }

    #[test]
    fn generated_graphs_use_every_spec_of_the_family() {
        use crate::gen::{Config, Limits, Menu, Recipe, TestCase, STEP_BYTES};
        use crate::ir::NodeKind;
        use crate::ops::registry;
        let names: Vec<&str> = specs().iter().map(|s| s.name()).collect();
        let menu = Menu::new(|spec, _, _| names.contains(&registry()[spec].name()));
        let mut seen = std::collections::BTreeSet::new();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        };
        for i in 0..40u8 {
            let config = Config {
                op_mask: u128::MAX,
                dtype_mask: 0b10,
                nodes: 0,
                backward_chance: [0, 128, 255][usize::from(i % 3)],
                weight_chance: 0,
                value_seed: 0,
            };
            let steps = (0..12)
                .map(|_| (0..STEP_BYTES).map(|_| byte()).collect())
                .collect();
            let case = TestCase::from_recipe(&Recipe { config, steps }, &menu, &Limits::exact(3));
            for n in case.graph.topo_order() {
                let node = case.graph.node(n);
                if let NodeKind::Op(op) = &node.kind {
                    seen.insert(registry()[op.spec].name());
                    assert!(node.outputs.iter().all(|o| o.shape.iter().all(|d| *d >= 1)));
                }
            }
        }
        assert_eq!(seen.len(), names.len(), "seen only {seen:?}");
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;
    use tch::Tensor;

    fn ints(v: &[i64]) -> Option<Tensor> {
        Some(i64s(v, &[v.len() as i64]))
    }

    #[test]
    fn pad_modes_on_one_axis() {
        let x = f32s(&[1.0, 2.0, 3.0], &[3]);
        let run = |mode: &str, pads: &[i64]| {
            values(&run1(
                "Pad",
                &[("mode", AttrValue::Str(mode.into()))],
                vec![Some(x.shallow_clone()), ints(pads)],
                DType::F32,
            ))
        };
        assert_eq!(run("constant", &[2, 1]), vec![0.0, 0.0, 1.0, 2.0, 3.0, 0.0]);
        assert_eq!(run("constant", &[-1, 1]), vec![2.0, 3.0, 0.0]);
        assert_eq!(
            run("reflect", &[2, 2]),
            vec![3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]
        );
        assert_eq!(run("edge", &[2, 1]), vec![1.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
        assert_eq!(
            run("wrap", &[4, 1]),
            vec![3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0]
        );
    }

    #[test]
    fn pad_value_and_axes_inputs() {
        let x = i64s(&[1, 2, 3, 4], &[2, 2]);
        let y = run1(
            "Pad",
            &[],
            vec![Some(x), ints(&[1, 0]), Some(i64s(&[9], &[])), ints(&[-1])],
            DType::I64,
        );
        assert_eq!(y.size(), vec![2, 3]);
        assert_eq!(values(&y), vec![9.0, 1.0, 2.0, 9.0, 3.0, 4.0]);
    }

    #[test]
    fn slice_clamps_and_steps_backward() {
        let x = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0], &[5]);
        let run = |s: i64, e: i64, step: i64| {
            values(&run1(
                "Slice",
                &[],
                vec![
                    Some(x.shallow_clone()),
                    ints(&[s]),
                    ints(&[e]),
                    ints(&[0]),
                    ints(&[step]),
                ],
                DType::F32,
            ))
        };
        assert_eq!(run(1, 1000, 2), vec![1.0, 3.0]);
        assert_eq!(run(-1, i64::MIN, -2), vec![4.0, 2.0, 0.0]);
        assert_eq!(run(10, -4, -1), vec![4.0, 3.0, 2.0]);
        assert_eq!(run(i64::MIN, -2, 1), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn gather_negative_indices_and_split_num_outputs() {
        let x = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
        let g = run1(
            "Gather",
            &[("axis", AttrValue::Int(1))],
            vec![Some(x.shallow_clone()), Some(i64s(&[-1, 0], &[2, 1]))],
            DType::F32,
        );
        assert_eq!(g.size(), vec![2, 2, 1]);
        assert_eq!(values(&g), vec![2.0, 0.0, 5.0, 3.0]);
        let attrs: Vec<(String, AttrValue<i64>)> = vec![
            ("axis".into(), AttrValue::Int(0)),
            ("num_outputs".into(), AttrValue::Int(3)),
        ];
        let seven = Some(f32s(&[0.0; 7], &[7]));
        let outs = crate::ops::apply::apply("Split", &attrs, &[seven], &[DType::F32; 3]).unwrap();
        let sizes: Vec<i64> = outs.iter().map(|t| t.size()[0]).collect();
        assert_eq!(sizes, vec![3, 3, 1]);
    }

    #[test]
    fn trilu_keeps_a_band() {
        let x = f32s(&[1.0; 9], &[3, 3]);
        let up = run1(
            "Trilu",
            &[],
            vec![Some(x.shallow_clone()), Some(i64s(&[1], &[]))],
            DType::F32,
        );
        assert_eq!(
            values(&up),
            vec![0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
        );
        let low = run1(
            "Trilu",
            &[("upper", AttrValue::Int(0))],
            vec![Some(x)],
            DType::F32,
        );
        assert_eq!(
            values(&low),
            vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
        );
    }
}
