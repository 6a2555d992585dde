//! `Resize` (opset 19), its spec and its evaluation on the reference: nearest (four rounding modes), linear and cubic (with `antialias`,
//! `cubic_coeff_a`, `exclude_outside`), the coordinate transformation modes `half_pixel`,
//! `half_pixel_symmetric`, `pytorch_half_pixel`, `align_corners` and `asymmetric`, the `axes`
//! attribute, `scales` or `sizes` (with `keep_aspect_ratio_policy`).
//!
//! Resizing is separable: each resampled axis is done on its own. Nearest picks one source
//! index per output position (`index_select`, exact for every dtype). Linear and cubic build
//! an `out × in` weight matrix on the host (it depends only on shapes and attributes) and
//! apply it with a matrix product, which keeps float inputs on the autograd tape. Source
//! indices beyond the input read its edge. Integer inputs are interpolated in `f64`, then
//! rounded half to even and saturated to their type.
//!
//! Coordinates are computed in `f64` from the scale as given (or `out / in` when `sizes` is
//! given). `align_corners` and `pytorch_half_pixel` use the integer output length, and
//! `pytorch_half_pixel` maps a length-1 output to coordinate 0, as the operator text says (the
//! `onnx` reference implementation uses the fractional length and -0.5 there).

use super::eval::{self, Args, RefError};
use super::fragility::{self, NodeValues};
use super::layout::{normalized_axes, signed_axis};
use super::numeric::{carrier_reading, int_range, to_double};
use super::{
    uniform_sigs, AttrCx, AttrValue, ConstInput, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor,
    MAX_RANK,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use std::ops::RangeInclusive;
use tch::Tensor;

/// Denominator of Resize scales: every scale is `p / SCALE_DEN`, exact in f32, so
/// `floor(d * scale)` is `(d * p) / SCALE_DEN` exactly.
const SCALE_DEN: i64 = 4;

/// `Resize(x, roi, scales, sizes)`, one class per mode. Either `scales` (dyadic, in
/// `[1/4, 3]`) or `sizes` is given. ONNX Runtime resamples `linear` only for ranks 2 and 3
/// and, at rank 4, with N and C (or N and the last axis) left alone; `cubic` only at rank 2
/// and rank 4 with N and C left alone. Those restrictions are kept for every backend.
pub(super) struct Resize;

impl Resize {
    /// The axes a class may resample at `rank`; `None` when the class does not take the rank.
    fn resampled(class: &str, rank: usize, nhwc: bool) -> Option<Vec<usize>> {
        match (class, rank) {
            ("nearest", _) | ("linear", 2 | 3) | ("cubic", 2) => Some((0..rank).collect()),
            ("linear", 4) if nhwc => Some(vec![1, 2]),
            ("linear" | "cubic", 4) => Some(vec![2, 3]),
            _ => None,
        }
    }

    /// The axes the scales/sizes operand lists (the `axes` attribute, else all).
    fn listed_axes(attrs: &SymAttrs, rank: usize) -> Option<Vec<usize>> {
        match attrs.get("axes") {
            Some(AttrValue::Ints(a)) => normalized_axes(a, rank),
            _ => Some((0..rank).collect()),
        }
    }

    /// Output dims; `None` when the attributes do not fit the input.
    fn infer(attrs: &SymAttrs, inputs: &[SymTensor]) -> Option<Vec<Int>> {
        let dims = &inputs[0].dims;
        let axes = Self::listed_axes(attrs, dims.len())?;
        let mut out = dims.clone();
        match (attrs.consts.get(1), attrs.consts.get(2)) {
            (Some(ConstInput::Floats(scales)), _) if scales.len() == axes.len() => {
                for (a, s) in axes.iter().zip(scales) {
                    let p = (f64::from(*s) * SCALE_DEN as f64).round() as i64;
                    out[*a] = &dims[*a] * p / SCALE_DEN;
                }
            }
            (_, Some(ConstInput::Ints(sizes))) if sizes.len() == axes.len() => {
                for (a, s) in axes.iter().zip(sizes) {
                    out[*a] = s.clone();
                }
            }
            _ => return None,
        }
        Some(out)
    }
}

impl OpSpec for Resize {
    fn interpolates(&self, attrs: &[(String, AttrValue<i64>)]) -> bool {
        interpolates(attrs)
    }

    fn rounds_integers_freely(&self, attrs: &[(String, AttrValue<i64>)], dtype: DType) -> bool {
        rounds_integers_freely(attrs, dtype)
    }

    fn working_type(&self, attrs: &[(String, AttrValue<i64>)]) -> Option<DType> {
        // The interpolation weights come from the float32 `scales` (or `roi`) input, and the
        // operator text never asks for the coordinate transform in a wider type, so weights
        // computed in float32 are a legal evaluation for any data type.
        interpolates(attrs).then_some(DType::F32)
    }

    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        // A nearest-mode source coordinate on a rounding boundary (any dtype: the index it
        // picks jumps).
        node.reads(nearest_ambiguous)
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        // Cubic interpolation of an integer tensor forms a fractional value that may
        // overshoot the type's range, and the operator text never says how it becomes an
        // integer again (onnx/onnx issue 3390, "Rounding behavior of Resize when
        // interpolating on integral types is unspecified") nor what an overshoot gives; a
        // "weighted average" of bools is no bool at all. A linear interpolation of integers
        // stays within the input's range, so only its rounding is open: the precision
        // analysis bounds it (`precision::integer_interpolation_freedom`).
        let named = &node.attrs.named;
        if !node.float_input()
            && interpolates(named)
            && !rounds_integers_freely(named, node.in_dtype())
        {
            return Ok(Some(
                "Resize: a cubic-interpolated integer or an interpolated bool is unspecified",
            ));
        }
        fragility::accumulation_overflow(self.rounding(), "Resize", |m| m, node)
    }

    fn ambiguous(&self, node: &NodeValues) -> fragility::Verdict {
        // Resize-19: "scale = length_resized / length_original" in the operator text, while
        // `onnx.reference` and the backend tests (test_resize_downsample_scales_*) use the
        // `scales` input; with a non-integral `length_original * scale` the two differ, and
        // so does `align_corners` over the integral or the fractional output length.
        if node.reads(scales_ambiguous)? {
            return Ok(Some(
                "Resize: `scales` with a non-integral output length (text vs onnx.reference)",
            ));
        }
        Ok(node
            .reads(single_output_ambiguous)?
            .then_some("Resize: pytorch_half_pixel onto one output (text 0, onnx.reference -0.5)"))
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        resize(a)
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "Resize"
    }
    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::ALL, 1)
    }
    fn classes(&self) -> Vec<&'static str> {
        vec!["nearest", "linear", "cubic"]
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK]
    }
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let dims = &inputs[0].dims;
        let r = dims.len();
        let class = cx.class;
        let mut attrs = SymAttrs {
            class: class.into(),
            ..SymAttrs::default()
        };
        attrs.set("mode", AttrValue::Str(class.into()));
        let nhwc = cx.flip();
        let resampled = Self::resampled(class, r, nhwc).unwrap_or_default();
        // List only the resampled axes (opset-18 `axes`) sometimes, else every axis.
        let listed: Vec<usize> = if resampled.len() < r && cx.flip() {
            let axes = resampled
                .iter()
                .map(|a| Int::from(signed_axis(cx, *a, r)))
                .collect();
            attrs.set("axes", AttrValue::Ints(axes));
            resampled.clone()
        } else {
            (0..r).collect()
        };
        const COORDS: [&str; 5] = [
            "half_pixel",
            "asymmetric",
            "align_corners",
            "pytorch_half_pixel",
            "half_pixel_symmetric",
        ];
        let c = cx.pick(0, COORDS.len() as i64) as usize;
        if let Some(mode) = COORDS.get(c) {
            attrs.set(
                "coordinate_transformation_mode",
                AttrValue::Str((*mode).into()),
            );
        }
        match class {
            "nearest" => {
                const ROUNDING: [&str; 4] =
                    ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"];
                if let Some(m) = ROUNDING.get(cx.pick(0, ROUNDING.len() as i64) as usize) {
                    attrs.set("nearest_mode", AttrValue::Str((*m).into()));
                }
            }
            _ => {
                if cx.flip() {
                    attrs.set("antialias", AttrValue::Int(Int::from(1i64)));
                }
                if class == "cubic" {
                    if cx.flip() {
                        attrs.set("cubic_coeff_a", AttrValue::Float(-cx.float(0.5, 1.0)));
                    }
                    if cx.flip() {
                        attrs.set("exclude_outside", AttrValue::Int(Int::from(1i64)));
                    }
                }
            }
        }
        if cx.flip() {
            let scales = listed
                .iter()
                .map(|a| {
                    if resampled.contains(a) {
                        cx.pick(1, 3 * SCALE_DEN) as f32 / SCALE_DEN as f32
                    } else {
                        1.0
                    }
                })
                .collect();
            attrs.consts = vec![ConstInput::Absent, ConstInput::Floats(scales)];
        } else {
            let sizes = listed
                .iter()
                .map(|a| {
                    if resampled.contains(a) {
                        cx.var(&format!("resize.s{a}"), 1, 24)
                    } else {
                        dims[*a].clone()
                    }
                })
                .collect();
            attrs.consts = vec![
                ConstInput::Absent,
                ConstInput::Absent,
                ConstInput::Ints(sizes),
            ];
        }
        attrs
    }
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let r = inputs[0].rank();
        let ok = Self::resampled(&attrs.class, r, false).is_some()
            && Self::infer(attrs, inputs).is_some();
        vec![Bool::from(ok)]
    }
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![Self::infer(attrs, inputs).unwrap_or_else(|| inputs[0].dims.clone())]
    }
}

/// How one axis is resampled.
struct Axis {
    input: i64,
    output: i64,
    scale: f64,
}

/// The source coordinate of output position `y`.
fn source(mode: &str, y: f64, ax: &Axis) -> Result<f64, String> {
    let (input, output) = (ax.input as f64, ax.output as f64);
    Ok(match mode {
        "half_pixel" => (y + 0.5) / ax.scale - 0.5,
        "pytorch_half_pixel" if ax.output > 1 => (y + 0.5) / ax.scale - 0.5,
        "pytorch_half_pixel" => 0.0,
        "align_corners" if ax.output > 1 => y * (input - 1.0) / (output - 1.0),
        "align_corners" => 0.0,
        "asymmetric" => y / ax.scale,
        "half_pixel_symmetric" => {
            let adjustment = output / (ax.scale * input);
            let offset = input / 2.0 * (1.0 - adjustment);
            offset + (y + 0.5) / ax.scale - 0.5
        }
        other => return Err(format!("coordinate_transformation_mode {other}")),
    })
}

/// The nearest source index of coordinate `x` in `nearest_mode`. A coordinate within 1e-9 of
/// a multiple of 1/2 is taken as that multiple: the exact coordinate is then an integer or a
/// tie, and `f64` rounding must not push it across (ONNX Runtime computes in `f32`).
fn nearest(mode: &str, x: f64) -> Result<i64, String> {
    let half = (x * 2.0).round() / 2.0;
    let x = if (x - half).abs() < 1e-9 { half } else { x };
    let floor = x.floor();
    let frac = x - floor;
    let pick = match mode {
        "round_prefer_floor" if frac <= 0.5 => floor,
        "round_prefer_floor" => floor + 1.0,
        "round_prefer_ceil" if frac < 0.5 => floor,
        "round_prefer_ceil" => floor + 1.0,
        "floor" => floor,
        "ceil" => x.ceil(),
        other => return Err(format!("nearest_mode {other}")),
    };
    Ok(pick as i64)
}

/// The interpolation kernel at distance `d`: the tent for linear, Keys' cubic with `a`.
fn kernel(cubic: bool, a: f64, d: f64) -> f64 {
    let d = d.abs();
    if !cubic {
        return (1.0 - d).max(0.0);
    }
    if d <= 1.0 {
        ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
    } else if d < 2.0 {
        ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
    } else {
        0.0
    }
}

/// The attributes that shape the linear and cubic weights.
struct Filter {
    cubic: bool,
    a: f64,
    antialias: bool,
    exclude_outside: bool,
}

/// The `output × input` weights of one axis (row-major).
fn weights(f: &Filter, mode: &str, ax: &Axis) -> Result<Vec<f64>, String> {
    let radius = if f.cubic { 2.0 } else { 1.0 };
    // Antialiasing stretches the kernel when downsampling.
    let stretch = if f.antialias { ax.scale.min(1.0) } else { 1.0 };
    let first = (-radius / stretch).floor() as i64 + 1;
    let taps = 2 - 2 * first;
    let (n_in, n_out) = (ax.input as usize, ax.output as usize);
    let mut w = vec![0.0; n_out * n_in];
    for y in 0..n_out {
        let x = source(mode, y as f64, ax)?;
        // The taps nearest to x, ties toward lower indices: an exact integer x sits at the
        // right of the middle pair.
        let base = if x == x.floor() {
            x as i64 - 1
        } else {
            x.floor() as i64
        };
        let mut row: Vec<(i64, f64)> = (0..taps)
            .map(|k| {
                let j = base + first + k;
                (j, kernel(f.cubic, f.a, (j as f64 - x) * stretch))
            })
            .collect();
        if f.antialias {
            let total: f64 = row.iter().map(|(_, c)| c).sum();
            row.iter_mut().for_each(|(_, c)| *c /= total);
        }
        if f.exclude_outside {
            row.iter_mut()
                .filter(|(j, _)| *j < 0 || *j >= ax.input)
                .for_each(|(_, c)| *c = 0.0);
            let total: f64 = row.iter().map(|(_, c)| c).sum();
            if total != 0.0 {
                row.iter_mut().for_each(|(_, c)| *c /= total);
            }
        }
        for (j, c) in row {
            let j = j.clamp(0, ax.input - 1) as usize;
            w[y * n_in + j] += c;
        }
    }
    Ok(w)
}

/// Applies `out × in` weights along `axis` of the float tensor `t`.
fn apply_weights(t: &Tensor, axis: usize, w: &[f64], ax: &Axis) -> Result<Tensor, RefError> {
    let m = Tensor::f_from_slice(w)?
        .f_reshape([ax.output, ax.input])?
        .f_to_kind(t.kind())?;
    let last = t.dim() as i64 - 1;
    let moved = t.f_movedim([axis as i64], [last])?;
    Ok(moved
        .f_matmul(&m.f_transpose(0, 1)?)?
        .f_movedim([last], [axis as i64])?)
}

/// The resampled axes of a `Resize` and how each is resampled.
fn plan(a: &Args) -> Result<(Vec<usize>, Vec<Axis>), RefError> {
    let size = a.x(0)?.size();
    let rank = size.len();
    let axes: Vec<usize> = match a.ints("axes") {
        Some(v) => v
            .iter()
            .map(|d| eval::norm_axis(*d, rank))
            .collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    let scales = a.float_values(2)?.filter(|s| !s.is_empty());
    let sizes = a.int_values(3)?.filter(|s| !s.is_empty());
    let mut plan: Vec<Axis> = Vec::with_capacity(axes.len());
    match (scales, sizes) {
        (Some(scales), None) if scales.len() == axes.len() => {
            for (d, s) in axes.iter().zip(scales) {
                let output = (size[*d] as f64 * s).floor() as i64;
                plan.push(Axis {
                    input: size[*d],
                    output,
                    scale: s,
                });
            }
        }
        (None, Some(sizes)) if sizes.len() == axes.len() => {
            let ratios: Vec<f64> = axes
                .iter()
                .zip(&sizes)
                .map(|(d, s)| *s as f64 / size[*d] as f64)
                .collect();
            let policy = a.string("keep_aspect_ratio_policy", "stretch");
            let common = match policy.as_str() {
                "stretch" => None,
                "not_larger" => ratios.iter().copied().reduce(f64::min),
                "not_smaller" => ratios.iter().copied().reduce(f64::max),
                other => return Err(a.fail(format!("keep_aspect_ratio_policy {other}"))),
            };
            for (i, d) in axes.iter().enumerate() {
                let (output, scale) = match common {
                    None => (sizes[i], ratios[i]),
                    Some(s) => ((s * size[*d] as f64 + 0.5).floor() as i64, s),
                };
                plan.push(Axis {
                    input: size[*d],
                    output,
                    scale,
                });
            }
        }
        _ => return Err(a.fail("exactly one of scales and sizes, one entry per axis")),
    }
    Ok((axes, plan))
}

/// Whether a Resize with these named attributes interpolates (linear or cubic `mode`) rather
/// than picking a neighbour (`nearest`, the default).
pub(crate) fn interpolates(attrs: &[(String, AttrValue<i64>)]) -> bool {
    interpolates_linearly(attrs) || mode_is(attrs, "cubic")
}

/// Whether a Resize with these named attributes interpolates linearly: its weights are never
/// negative and sum to one (with `antialias` too), so every output lies within the input's
/// range.
pub(crate) fn interpolates_linearly(attrs: &[(String, AttrValue<i64>)]) -> bool {
    mode_is(attrs, "linear")
}

/// Whether a Resize of `dtype` with these named attributes leaves only its rounding open: a
/// linear interpolation of integers (the precision analysis bounds it; cubic and bool
/// interpolation are undefined).
pub(crate) fn rounds_integers_freely(attrs: &[(String, AttrValue<i64>)], dtype: DType) -> bool {
    dtype.is_int() && interpolates_linearly(attrs)
}

/// Whether the `mode` attribute is set to `mode` (never empty).
fn mode_is(attrs: &[(String, AttrValue<i64>)], mode: &str) -> bool {
    eval::str_attr(attrs, "mode", "") == mode
}

/// Whether a nearest-mode `Resize` reads a source coordinate that lies on a rounding
/// boundary of its `nearest_mode` (an integer for `floor`/`ceil`, a half for the round
/// modes), within 1e-5 relative: a compiler that computes coordinates in `float` may land on
/// either side, so the output is fragile. Linear and cubic modes are continuous in the
/// coordinate and never are.
pub(crate) fn nearest_ambiguous(a: &Args) -> Result<bool, RefError> {
    if a.string("mode", "nearest") != "nearest" {
        return Ok(false);
    }
    let (_, plan) = plan(a)?;
    let coords = a.string("coordinate_transformation_mode", "half_pixel");
    let rounding = a.string("nearest_mode", "round_prefer_floor");
    let offset = if rounding.starts_with("round") {
        0.5
    } else {
        0.0
    };
    for ax in plan
        .iter()
        .filter(|ax| !(ax.output == ax.input && ax.scale == 1.0))
    {
        // With a power-of-two scale every way of computing a scale-based coordinate is
        // exact, so a coordinate on a boundary is on it in every compiler.
        let exact = coords != "align_corners"
            && coords != "half_pixel_symmetric"
            && ax.scale.log2().fract() == 0.0;
        if exact {
            continue;
        }
        for o in 0..ax.output {
            let x = source(&coords, o as f64, ax).map_err(|e| a.unsupported(e))?;
            let shifted = x - offset;
            if (shifted - shifted.round()).abs() <= 1e-5 * x.abs().max(1.0) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Whether a `Resize` given `scales` has a resampled axis whose `length * scale` is not an
/// integer: the operator text's `scale = length_resized / length_original` then differs from
/// the `scales` input the `onnx` reference uses (and `align_corners` from its fractional
/// output length), so the readings give different outputs.
pub(crate) fn scales_ambiguous(a: &Args) -> Result<bool, RefError> {
    let Some(scales) = a.float_values(2)?.filter(|s| !s.is_empty()) else {
        return Ok(false);
    };
    let (_, plan) = plan(a)?;
    Ok(plan
        .iter()
        .zip(&scales)
        .any(|(ax, s)| ((ax.input as f64) * s).fract() != 0.0))
}

/// Whether an interpolating `Resize` with `pytorch_half_pixel` shrinks an axis to length
/// one: the operator text maps that output to source coordinate 0 (`length_resized > 1 ? …
/// : 0`), the `onnx` reference to -0.5, and ONNX's backend test of the mode
/// (`test_resize_downsample_sizes_linear_pytorch_half_pixel`) cannot tell them apart (a
/// linear tap at -0.5 reads the edge). Cubic weights and antialiased filters reach past the
/// edge, so the readings give different outputs.
pub(crate) fn single_output_ambiguous(a: &Args) -> Result<bool, RefError> {
    if a.string("coordinate_transformation_mode", "half_pixel") != "pytorch_half_pixel"
        || !interpolates(a.attrs())
    {
        return Ok(false);
    }
    let (_, plan) = plan(a)?;
    Ok(plan.iter().any(|ax| ax.output == 1 && ax.input > 1))
}

/// Runs `Resize`.
fn resize(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let (axes, plan) = plan(a)?;
    let mode = a.string("mode", "nearest");
    let coords = a.string("coordinate_transformation_mode", "half_pixel");
    let float = x.is_floating_point();
    let mut y = if mode == "nearest" || float {
        x.shallow_clone()
    } else {
        to_double(x, a.out0())?
    };
    for (axis, ax) in axes.iter().zip(&plan) {
        if ax.output == ax.input && ax.scale == 1.0 {
            continue;
        }
        if ax.output < 1 || ax.input < 1 {
            return Err(a.fail("an empty resized axis"));
        }
        y = match mode.as_str() {
            "nearest" => {
                let rounding = a.string("nearest_mode", "round_prefer_floor");
                let idx = (0..ax.output)
                    .map(|o| {
                        let src = source(&coords, o as f64, ax)?;
                        Ok(nearest(&rounding, src)?.clamp(0, ax.input - 1))
                    })
                    .collect::<Result<Vec<i64>, String>>()
                    .map_err(|e| a.unsupported(e))?;
                y.f_index_select(*axis as i64, &Tensor::f_from_slice(&idx)?)?
            }
            "linear" | "cubic" => {
                let filter = Filter {
                    cubic: mode == "cubic",
                    a: a.float("cubic_coeff_a", -0.75),
                    antialias: a.int("antialias", 0) != 0,
                    exclude_outside: a.int("exclude_outside", 0) != 0,
                };
                let w = weights(&filter, &coords, ax).map_err(|e| a.unsupported(e))?;
                apply_weights(&y, *axis, &w, ax)?
            }
            other => return Err(a.unsupported(format!("mode {other}"))),
        };
    }
    if mode != "nearest" && !float {
        // Round half to even and saturate, then the final wrap converts the kind.
        let (lo, hi) = int_range(a.out0());
        y = carrier_reading(&y.f_round()?.f_clamp(lo, hi)?, a.out0())?;
    }
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;
    use tch::Tensor;

    fn resize(x: &Tensor, attrs: &[(&str, AttrValue<i64>)], scale: f32) -> Vec<f64> {
        let scales = Some(Tensor::from_slice(&[scale]));
        values(&run1(
            "Resize",
            attrs,
            vec![Some(x.shallow_clone()), None, scales],
            DType::F32,
        ))
    }

    fn s(v: &str) -> AttrValue<i64> {
        AttrValue::Str(v.into())
    }

    #[test]
    fn nearest_rounding_modes_on_half_pixel_ties() {
        // Upsampling 2 -> 4 (scale 2), half_pixel: sources -0.25, 0.25, 0.75, 1.25.
        let x = f32s(&[10.0, 20.0], &[2]);
        let floor = resize(&x, &[("nearest_mode", s("floor"))], 2.0);
        assert_eq!(floor, vec![10.0, 10.0, 10.0, 20.0]);
        // asymmetric 2 -> 5 (scale 2.5): sources 0, 0.4, 0.8, 1.2, 1.6.
        let pf = resize(
            &x,
            &[("coordinate_transformation_mode", s("asymmetric"))],
            2.5,
        );
        assert_eq!(pf, vec![10.0, 10.0, 20.0, 20.0, 20.0]);
        // Ties at .5: asymmetric 2 -> 4 (scale 2) gives sources 0, 0.5, 1, 1.5.
        let attrs = |m: &str| {
            vec![
                ("coordinate_transformation_mode", s("asymmetric")),
                ("nearest_mode", s(m)),
            ]
        };
        assert_eq!(
            resize(&x, &attrs("round_prefer_floor"), 2.0),
            vec![10.0, 10.0, 20.0, 20.0]
        );
        assert_eq!(
            resize(&x, &attrs("round_prefer_ceil"), 2.0),
            vec![10.0, 20.0, 20.0, 20.0]
        );
        assert_eq!(
            resize(&x, &attrs("ceil"), 2.0),
            vec![10.0, 20.0, 20.0, 20.0]
        );
    }

    #[test]
    fn pytorch_half_pixel_maps_a_single_output_to_zero_and_ties_are_exact() {
        let x = f32s(&[1.0, 0.0], &[2]);
        let attrs = [
            ("mode", s("cubic")),
            ("coordinate_transformation_mode", s("pytorch_half_pixel")),
        ];
        assert_eq!(resize(&x, &attrs, 0.5), vec![1.0]);
        // half_pixel_symmetric, 7 -> 15 (scale 2.25): output 7 maps to exactly 3 (f64 gives
        // 3.0000000000000004), so ceil picks 3.
        let x = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[7]);
        let attrs = [
            ("coordinate_transformation_mode", s("half_pixel_symmetric")),
            ("nearest_mode", s("ceil")),
        ];
        assert_eq!(resize(&x, &attrs, 2.25)[7], 3.0);
    }

    #[test]
    fn linear_modes_and_edges() {
        let x = f32s(&[0.0, 4.0], &[2]);
        // half_pixel 2 -> 4: sources -0.25 (edge), 0.25, 0.75, 1.25 (edge).
        assert_eq!(
            resize(&x, &[("mode", s("linear"))], 2.0),
            vec![0.0, 1.0, 3.0, 4.0]
        );
        let ac = [
            ("mode", s("linear")),
            ("coordinate_transformation_mode", s("align_corners")),
        ];
        // 2 -> 3: sources 0, 0.5, 1.
        assert_eq!(resize(&x, &ac, 1.5), vec![0.0, 2.0, 4.0]);
    }

    #[test]
    fn cubic_weights_follow_keys_with_coefficient_a() {
        // asymmetric, scale 2 on [0, 0, 8, 0, 0]: output 3 samples x = 1.5, between 0 and 8.
        let x = f32s(&[0.0, 0.0, 8.0, 0.0, 0.0], &[5]);
        let attrs = [
            ("mode", s("cubic")),
            ("coordinate_transformation_mode", s("asymmetric")),
            ("cubic_coeff_a", AttrValue::Float(-0.5)),
        ];
        let y = resize(&x, &attrs, 2.0);
        // At x = 1.5 the taps 0..3 sit at distances 1.5, 0.5, 0.5, 1.5; tap 2 holds 8 with
        // weight W(0.5) = (a + 2) / 8 - (a + 3) / 4 + 1 = 0.5625 for a = -0.5.
        assert!((y[3] - 8.0 * 0.5625).abs() < 1e-6, "{y:?}");
        assert_eq!(y[4], 8.0);
    }

    #[test]
    fn sizes_and_axes_and_integer_rounding() {
        let x = Tensor::from_slice(&[0u8, 3]).reshape([1, 2]);
        let y = run1(
            "Resize",
            &[("mode", s("linear")), ("axes", AttrValue::Ints(vec![-1]))],
            vec![Some(x), None, None, Some(i64s(&[4], &[1]))],
            DType::U8,
        );
        assert_eq!(y.size(), vec![1, 4]);
        // Sources -0.25, 0.25, 0.75, 1.25: 0, 0.75 -> 1, 2.25 -> 2, 3.
        assert_eq!(values(&y), vec![0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn uint64_values_from_two_to_the_63_interpolate_as_values() {
        // The carrier holds u64::MAX - 2 as -3; read signed, it would interpolate to about 0.
        let x = Tensor::from_slice(&[-3i64, -3]).reshape([1, 2]);
        let y = run1(
            "Resize",
            &[("mode", s("linear"))],
            vec![Some(x), None, None, Some(i64s(&[1, 3], &[2]))],
            DType::U64,
        );
        let carrier = y.to_kind(tch::Kind::Int64);
        assert!(crate::ops::eval::int_values(&carrier)
            .unwrap()
            .iter()
            .all(|v| *v < 0 && *v > -4096));
    }
}
