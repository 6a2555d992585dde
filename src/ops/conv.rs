//! Sliding-window ops over `N, C, spatial...` tensors: Conv (1-D and 2-D), MaxPool,
//! AveragePool, GlobalAveragePool and GlobalMaxPool; and GridSample, which samples an
//! `N, C, H, W` tensor at the points of a grid.
//!
//! Kernel sizes, strides, pads and dilations are solver variables, so backward insertion can
//! hit a wanted output size: each spatial output is
//! `floor((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1` (or the
//! ceil-mode variant of pools, see [`window`]).

use super::accumulation::{self, Terms};
use super::eval;
use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::torch_form::{TorchForm, TorchWriter};
use super::ConcreteAttrs;
use super::{
    uniform_sigs, uniform_sigs_with_arities, AttrCx, AttrValue, OpSpec, RoundingClass, Sig,
    SymAttrs, SymTensor,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use tch::{Kind, Tensor};

/// Ranks of the `N, C, spatial...` tensors these ops take: 1-D and 2-D windows.
const WINDOW_RANKS: RangeInclusive<usize> = 3..=4;

/// Largest kernel size a pool draws.
const MAX_KERNEL: i64 = 5;
/// Largest stride.
const MAX_STRIDE: i64 = 3;
/// Largest pad on either side.
const MAX_PAD: i64 = 2;
/// Largest dilation.
const MAX_DILATION: i64 = 2;

/// Attribute classes of the pools: `ceil_mode` 0 or 1.
const CEIL_CLASSES: [&str; 2] = ["floor", "ceil"];

/// `n` solver variables `name0..` in `[lo, hi]`.
fn vars(cx: &mut AttrCx, name: &str, n: usize, lo: i64, hi: i64) -> Vec<Int> {
    (0..n)
        .map(|i| cx.var(&format!("{name}{i}"), lo, hi))
        .collect()
}

/// Sets `kernel_shape`, `strides`, `pads` and (when `dilate`) `dilations` for `spatial` dims.
/// `kernel` is the kernel size per dim (Conv takes it from its weight); pools pass `None`
/// and get solver variables.
fn window_attrs(
    cx: &mut AttrCx,
    attrs: &mut SymAttrs,
    spatial: usize,
    kernel: Option<Vec<Int>>,
    dilate: bool,
) {
    let kernel = kernel.unwrap_or_else(|| vars(cx, "kernel", spatial, 1, MAX_KERNEL));
    let strides = vars(cx, "stride", spatial, 1, MAX_STRIDE);
    let pads = vars(cx, "pad", 2 * spatial, 0, MAX_PAD);
    attrs.set("kernel_shape", AttrValue::Ints(kernel));
    attrs.set("strides", AttrValue::Ints(strides));
    attrs.set("pads", AttrValue::Ints(pads));
    if dilate {
        let dilations = vars(cx, "dilation", spatial, 1, MAX_DILATION);
        attrs.set("dilations", AttrValue::Ints(dilations));
    }
}

/// The requires and output sizes of the window attributes over the spatial dims of `x`.
///
/// Floor mode: `out = (in + pb + pe - ek) / s + 1` with effective kernel
/// `ek = d * (k - 1) + 1`, requiring `in + pb + pe >= ek`. Ceil mode (pools):
/// `out = ceil((in + pb + pe - ek) / s) + 1`. ONNX Runtime then drops a last window that would
/// start at or past `in + pb`, while ONNX shape inference (onnx 1.23) keeps it; ceil mode
/// therefore requires that the last window starts before `in + pb`, where both agree.
fn window(attrs: &SymAttrs, x: &[Int], pads_below_kernel: bool) -> (Vec<Bool>, Vec<Int>) {
    let spatial = &x[2..];
    let n = spatial.len();
    let kernel = attrs.ints("kernel_shape");
    let strides = attrs.ints("strides");
    let pads = attrs.ints("pads");
    let dilations = match attrs.get("dilations") {
        Some(AttrValue::Ints(d)) => d.clone(),
        _ => vec![Int::from(1i64); n],
    };
    let ceil = matches!(attrs.get("ceil_mode"), Some(AttrValue::Int(c)) if c.as_const() == Some(1));
    let mut reqs = Vec::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (k, s, d) = (&kernel[i], &strides[i], &dilations[i]);
        let (pb, pe) = (&pads[i], &pads[n + i]);
        let effective = d * (k - 1i64) + 1i64;
        let span = &spatial[i] + pb + pe - effective;
        reqs.push(span.ge(0i64));
        if pads_below_kernel {
            reqs.push(pb.lt(k));
            reqs.push(pe.lt(k));
        }
        out.push(if ceil {
            let full = (&span + s - 1i64) / s + 1i64;
            reqs.push(((&full - 1i64) * s).lt(&spatial[i] + pb));
            full
        } else {
            &span / s + 1i64
        });
    }
    (reqs, out)
}

/// `Conv(X, W[, B])`: W is `(M, C / group, k...)`, B is `(M)`.
struct Conv;

impl OpSpec for Conv {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        // Each output sums one kernel window over its group's input channels.
        let w = node.size(1);
        accumulation::product(&w) / w.first().copied().unwrap_or(1).max(1) as f64
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![conv(a)?])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "Conv"
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs_with_arities(&DType::FLOATS, &[2, 3])
    }

    fn input_ranks(&self, sig: &Sig) -> Vec<RangeInclusive<usize>> {
        let mut ranks = vec![WINDOW_RANKS, WINDOW_RANKS];
        if sig.inputs.len() == 3 {
            ranks.push(1..=1);
        }
        ranks
    }

    fn infer_input_types(
        &self,
        sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        WINDOW_RANKS.contains(&out_rank).then(|| {
            let mut ranks = vec![out_rank, out_rank];
            if sig.inputs.len() == 3 {
                ranks.push(1);
            }
            ranks
        })
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let (x, w) = (&inputs[0], &inputs[1]);
        let spatial = x.rank() - 2;
        let kernel = (0..spatial)
            .map(|i| {
                w.dims
                    .get(2 + i)
                    .cloned()
                    .unwrap_or_else(|| Int::from(1i64))
            })
            .collect();
        let channels = x.dims[1].clone();
        // Mostly plain convolution, sometimes depthwise (group = C) or a small divisor of C.
        let group = match cx.pick(0, 3) {
            0 | 1 => Int::from(1i64),
            2 => channels,
            _ => match channels.as_const() {
                Some(c) => {
                    let divisors: Vec<i64> = (2..=c.min(8)).filter(|g| c % g == 0).collect();
                    Int::from(
                        divisors
                            .get(cx.pick(0, divisors.len() as i64 - 1) as usize)
                            .copied()
                            .unwrap_or(1),
                    )
                }
                None => Int::from(cx.pick(2, 4)),
            },
        };
        let mut attrs = SymAttrs::default();
        window_attrs(cx, &mut attrs, spatial, Some(kernel), true);
        attrs.set("group", AttrValue::Int(group));
        attrs
    }

    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let (x, w) = (&inputs[0], &inputs[1]);
        if w.rank() != x.rank() {
            return vec![Bool::from(false)];
        }
        let group = attrs.int("group");
        let mut reqs = window(attrs, &x.dims, false).0;
        reqs.push((&w.dims[1] * &group).eq(&x.dims[1]));
        reqs.push(w.dims[0].modulo(&group).eq(0i64));
        if let Some(b) = inputs.get(2) {
            reqs.push(b.dims[0].eq(&w.dims[0]));
        }
        reqs
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let x = &inputs[0];
        let mut out = vec![x.dims[0].clone(), inputs[1].dims[0].clone()];
        out.extend(window(attrs, &x.dims, false).1);
        vec![out]
    }
}

/// MaxPool or AveragePool over the spatial dims.
struct Pool {
    /// ONNX op type.
    name: &'static str,
    /// Element types the schema allows.
    types: &'static [DType],
}

/// Element types of MaxPool (opset 12+).
const POOL_TYPES_MAX: &[DType] = &[DType::F16, DType::F32, DType::F64, DType::I8, DType::U8];

impl Pool {
    /// AveragePool (which has `count_include_pad`) rather than MaxPool.
    fn is_average(&self) -> bool {
        self.name == "AveragePool"
    }
}

impl OpSpec for Pool {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        match node.attrs.iter().find(|(n, _)| n == "kernel_shape") {
            Some((_, AttrValue::Ints(k))) if self.name == "AveragePool" => accumulation::product(k),
            _ => 1.0,
        }
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        // AveragePool: with `count_include_pad = 0` a window of padding only averages no
        // element (0 / 0); the operator text gives no value for it.
        if self.name == "AveragePool" && all_padding_window(node.attrs, node.shapes[0]) {
            return Ok(Some(
                "AveragePool: a window of padding only with count_include_pad = 0",
            ));
        }
        fragility::accumulation_overflow(self.rounding(), self.name, |m| m, node)
    }

    fn ambiguous(&self, node: &NodeValues) -> fragility::Verdict {
        let x = node.shapes[0];
        if self.name == "AveragePool" && ceil_window_past_end_padding(node.attrs, x) {
            return Ok(Some("AveragePool: a ceil-mode window past the end padding with count_include_pad=1 (its divisor is unspecified)"));
        }
        // The output length of ceil mode depends on the opset's rule.
        Ok(window_starts_in_right_padding(node.attrs, x)
            .then_some("MaxPool/AveragePool: a ceil-mode window starting in the right padding"))
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![pool(a)?])
    }

    fn rounding(&self) -> RoundingClass {
        if self.is_average() {
            RoundingClass::Accumulating
        } else {
            RoundingClass::Correct
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(self.types, 1)
    }

    fn classes(&self) -> Vec<&'static str> {
        CEIL_CLASSES.to_vec()
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WINDOW_RANKS]
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs {
            class: cx.class.into(),
            ..Default::default()
        };
        window_attrs(cx, &mut attrs, inputs[0].rank() - 2, None, true);
        attrs.set(
            "ceil_mode",
            AttrValue::Int(Int::from(i64::from(cx.class == CEIL_CLASSES[1]))),
        );
        if self.is_average() {
            let include = cx.flip();
            attrs.set(
                "count_include_pad",
                AttrValue::Int(Int::from(i64::from(include))),
            );
        }
        attrs
    }

    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        window(attrs, &inputs[0].dims, true).0
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let x = &inputs[0];
        let mut out = x.dims[..2].to_vec();
        out.extend(window(attrs, &x.dims, true).1);
        vec![out]
    }
}

/// GlobalAveragePool or GlobalMaxPool: `N, C, 1...`.
struct GlobalPool {
    /// ONNX op type.
    name: &'static str,
}

impl OpSpec for GlobalPool {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        match self.name {
            "GlobalAveragePool" => accumulation::product(node.size(0).get(2..).unwrap_or(&[])),
            _ => 1.0,
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let dims: Vec<i64> = (2..x.dim() as i64).collect();
        Ok(vec![if self.name == "GlobalAveragePool" {
            x.f_mean_dim(dims.as_slice(), true, None::<Kind>)?
        } else {
            x.f_amax(dims.as_slice(), true)?
        }])
    }

    fn rounding(&self) -> RoundingClass {
        match self.name {
            "GlobalAveragePool" => RoundingClass::Accumulating,
            _ => RoundingClass::Correct,
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::FLOATS, 1)
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WINDOW_RANKS]
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let x = &inputs[0];
        let mut out = x.dims[..2].to_vec();
        out.resize(x.rank(), Int::from(1i64));
        vec![out]
    }
}

/// `GridSample(X, grid)` (opset 16, the version of opset 19): `X` (`N, C, H, W`) sampled at
/// the points of `grid` (`N, H_out, W_out, 2`, normalized `x, y` in `[-1, 1]` at the
/// corner pixels' centers with `align_corners`, at their outer edges without), giving
/// `N, C, H_out, W_out`. Modes `bilinear` and `nearest` (the attribute classes, probed
/// apart); `bicubic` is not drawn: the operator text does not say how its 4x4 neighbourhood
/// meets `border` or `reflection` padding, where implementations differ. Padding
/// `zeros`, `border` or `reflection` for points outside the image.
struct GridSample;

/// GridSample's modes, as attribute classes.
const GRID_SAMPLE_MODES: [&str; 2] = ["bilinear", "nearest"];
/// GridSample's padding modes, in PyTorch's `grid_sampler` numbering.
const GRID_SAMPLE_PADDING: [&str; 3] = ["zeros", "border", "reflection"];

impl GridSample {
    /// The node's mode, padding mode (as PyTorch numbers them) and `align_corners`.
    fn settings(attrs: &[(String, AttrValue<i64>)]) -> (i64, i64, bool) {
        let mode = i64::from(eval::str_attr(attrs, "mode", "bilinear") == "nearest");
        let padding = eval::str_attr(attrs, "padding_mode", "zeros");
        let padding = GRID_SAMPLE_PADDING
            .iter()
            .position(|p| *p == padding)
            .unwrap_or(0) as i64;
        let align = eval::int_attr(attrs, "align_corners", 0) != 0;
        (mode, padding, align)
    }

    /// Whether a nearest-mode sampling point lies within rounding of a half-pixel, where the
    /// pixel it picks changes (padding maps half-pixels to half-pixels: the reflection axes
    /// sit on pixel centers or edges, and `zeros` starts at an edge).
    fn nearest_on_boundary(node: &NodeValues) -> Result<bool, RefError> {
        let (mode, _, align) = Self::settings(&node.attrs.named);
        let (Some(x), Some(grid)) = (node.shapes.first(), node.inputs.get(1)) else {
            return Ok(false);
        };
        if mode != 1 || x.len() != 4 {
            return Ok(false);
        }
        let grid = grid.to_kind(Kind::Double);
        let margin = (node.margin)(1, &grid);
        // The unit roundoff of the grid's type.
        let eps = match node.dtypes.get(1) {
            Some(DType::F16) => 2f64.powi(-11),
            Some(DType::F32) => 2f64.powi(-24),
            _ => 2f64.powi(-53),
        };
        // Grid component 0 is x (the width, dim 3), component 1 is y (the height, dim 2).
        for (component, size) in [(0, x[3]), (1, x[2])] {
            let g = grid.f_select(-1, component)?;
            let m = margin.f_select(-1, component)?;
            let size = size as f64;
            let (scale, coordinate) = if align {
                ((size - 1.0) / 2.0, (&g + 1.0) * ((size - 1.0) / 2.0))
            } else {
                (size / 2.0, ((&g + 1.0) * size - 1.0) / 2.0)
            };
            // The grid's own rounding, scaled into pixels, plus the coordinate's computation
            // in the grid's type.
            let slack = m * scale + (coordinate.abs() + size) * (8.0 * eps);
            if fragility::near_grid(&coordinate, &slack, 0.5) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl OpSpec for GridSample {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        // Bilinear weighs four pixels; nearest copies one.
        let (mode, _, _) = Self::settings(node.attrs);
        if mode == 1 {
            1.0
        } else {
            4.0
        }
    }

    fn interpolates(&self, attrs: &[(String, AttrValue<i64>)]) -> bool {
        Self::settings(attrs).0 == 0
    }

    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        Self::nearest_on_boundary(node)
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let (mode, padding, align) = Self::settings(a.attrs());
        let (x, grid) = (a.x(0)?, a.x(1)?);
        let grid = grid.to_kind(x.kind());
        Ok(vec![Tensor::f_grid_sampler(
            x, &grid, mode, padding, align,
        )?])
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        Some(TorchWriter::new(|cx| {
            // ATen's `grid_sampler` (what `torch.nn.functional.grid_sample` calls, and a
            // TorchScript builtin), with its mode and padding numbers.
            let (mode, padding, align) = Self::settings(&cx.attrs.named);
            let align = if align { "True" } else { "False" };
            Ok(TorchForm::whole(
                format!("torch.grid_sampler({{0}}, {{1}}, {mode}, {padding}, {align})"),
                true,
            ))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "GridSample"
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::FLOATS, 2)
    }

    fn classes(&self) -> Vec<&'static str> {
        GRID_SAMPLE_MODES.to_vec()
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![4..=4, 4..=4]
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank == 4).then(|| vec![4, 4])
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        let mode = GRID_SAMPLE_MODES
            .iter()
            .find(|m| **m == cx.class)
            .copied()
            .unwrap_or(GRID_SAMPLE_MODES[0]);
        attrs.set("mode", AttrValue::Str(mode.into()));
        let padding = GRID_SAMPLE_PADDING[cx.pick(0, 2) as usize];
        attrs.set("padding_mode", AttrValue::Str(padding.into()));
        if cx.flip() {
            attrs.set("align_corners", AttrValue::Int(Int::from(1i64)));
        }
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let (x, grid) = (&inputs[0], &inputs[1]);
        vec![grid.dims[0].eq(&x.dims[0]), grid.dims[3].eq(2i64)]
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let (x, grid) = (&inputs[0], &inputs[1]);
        vec![vec![
            x.dims[0].clone(),
            x.dims[1].clone(),
            grid.dims[1].clone(),
            grid.dims[2].clone(),
        ]]
    }
}

/// The convolution and pooling family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![
        Box::new(Conv),
        Box::new(Pool {
            name: "MaxPool",
            types: POOL_TYPES_MAX,
        }),
        Box::new(Pool {
            name: "AveragePool",
            types: &DType::FLOATS,
        }),
        Box::new(GlobalPool {
            name: "GlobalAveragePool",
        }),
        Box::new(GlobalPool {
            name: "GlobalMaxPool",
        }),
        Box::new(GridSample),
    ]
}

/// Window geometry of one node, per spatial dim.
struct Window {
    kernel: Vec<i64>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    /// Padding before each spatial dim.
    begin: Vec<i64>,
    /// Padding after each spatial dim, including what ceil mode adds.
    end: Vec<i64>,
    /// The part of `end` that ceil mode added (not counted as padding by AveragePool).
    extra: Vec<i64>,
}

impl Window {
    /// Reads the window attributes for input spatial sizes `input`; `kernel` defaults to the
    /// `kernel_shape` attribute.
    fn new(a: &Args, input: &[i64], kernel: Vec<i64>, ceil: bool) -> Result<Window, RefError> {
        let n = input.len();
        let list = |name: &str, default: i64| {
            let v = a.ints(name).unwrap_or_else(|| vec![default; n]);
            if v.len() == n {
                Ok(v)
            } else {
                Err(a.fail(format!(
                    "{name} has {} entries for {n} spatial dims",
                    v.len()
                )))
            }
        };
        let strides = list("strides", 1)?;
        let dilations = list("dilations", 1)?;
        if kernel.len() != n {
            return Err(a.fail("kernel rank differs from the spatial rank"));
        }
        let effective: Vec<i64> = (0..n).map(|i| dilations[i] * (kernel[i] - 1) + 1).collect();
        let (begin, mut end) = match a.string("auto_pad", "NOTSET").as_str() {
            "NOTSET" => {
                let pads = a.ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
                if pads.len() != 2 * n {
                    return Err(a.fail("pads must have two entries per spatial dim"));
                }
                (pads[..n].to_vec(), pads[n..].to_vec())
            }
            "VALID" => (vec![0; n], vec![0; n]),
            mode @ ("SAME_UPPER" | "SAME_LOWER") => {
                let mut b = Vec::with_capacity(n);
                let mut e = Vec::with_capacity(n);
                for i in 0..n {
                    let out = (input[i] + strides[i] - 1) / strides[i];
                    let total = ((out - 1) * strides[i] + effective[i] - input[i]).max(0);
                    let small = total / 2;
                    if mode == "SAME_UPPER" {
                        b.push(small);
                        e.push(total - small);
                    } else {
                        b.push(total - small);
                        e.push(small);
                    }
                }
                (b, e)
            }
            other => return Err(a.fail(format!("auto_pad {other}"))),
        };
        let mut extra = vec![0; n];
        for i in 0..n {
            let span = input[i] + begin[i] + end[i] - effective[i];
            if span < 0 {
                return Err(a.fail("the window is larger than the padded input"));
            }
            if ceil {
                let out = (span + strides[i] - 1) / strides[i] + 1;
                extra[i] = (out - 1) * strides[i] + effective[i] - (input[i] + begin[i] + end[i]);
                end[i] += extra[i];
            }
        }
        Ok(Window {
            kernel,
            strides,
            dilations,
            begin,
            end,
            extra,
        })
    }

    /// libtorch's pad list (last dim first) for `begin`/`end`.
    fn pad_list(begin: &[i64], end: &[i64]) -> Vec<i64> {
        (0..begin.len())
            .rev()
            .flat_map(|i| [begin[i], end[i]])
            .collect()
    }

    /// The dilated windows of `t` (already padded): `[.., out..., k...]`, window dims last.
    fn windows(&self, t: &Tensor) -> Result<Tensor, RefError> {
        let first = t.dim() as i64 - self.kernel.len() as i64;
        let mut w = t.shallow_clone();
        for i in 0..self.kernel.len() {
            let ek = self.dilations[i] * (self.kernel[i] - 1) + 1;
            w = w.f_unfold(first + i as i64, ek, self.strides[i])?.f_slice(
                -1,
                0,
                ek,
                self.dilations[i],
            )?;
        }
        Ok(w)
    }

    /// The window dims of [`Window::windows`]' result.
    fn window_dims(&self, rank: usize) -> Vec<i64> {
        let n = self.kernel.len();
        (rank..rank + n).map(|d| d as i64).collect()
    }
}

/// Spatial sizes of an `N, C, spatial...` tensor.
fn spatial(x: &Tensor) -> Vec<i64> {
    x.size()[2..].to_vec()
}

/// A `[1, 1, sizes...]` block of ones of `kind`, padded with `lead` zeros before and `trail`
/// zeros after each spatial dim.
fn region_mask(sizes: &[i64], lead: &[i64], trail: &[i64], kind: Kind) -> Result<Tensor, RefError> {
    let mut shape = vec![1, 1];
    shape.extend_from_slice(sizes);
    let ones = Tensor::f_ones(shape.as_slice(), (kind, tch::Device::Cpu))?;
    Ok(ones.f_constant_pad_nd(Window::pad_list(lead, trail))?)
}

/// MaxPool or AveragePool.
fn pool(a: &Args) -> Result<Tensor, RefError> {
    let x = a.x(0)?;
    if a.out.len() > 1 {
        return Err(a.unsupported("the Indices output"));
    }
    let input = spatial(x);
    let kernel = a
        .ints("kernel_shape")
        .ok_or_else(|| a.fail("kernel_shape is required"))?;
    let w = Window::new(a, &input, kernel, a.int("ceil_mode", 0) != 0)?;
    let rank = x.dim();
    let dims = w.window_dims(rank);
    let padded = x.f_constant_pad_nd(Window::pad_list(&w.begin, &w.end))?;
    let zeros = vec![0; input.len()];
    if a.op == "MaxPool" {
        let real = region_mask(&input, &w.begin, &w.end, Kind::Bool)?;
        let fill = if x.is_floating_point() {
            f64::NEG_INFINITY
        } else if x.kind() == Kind::Uint8 {
            0.0
        } else {
            -128.0
        };
        let filled = padded.f_where_scalarother(&real, fill)?;
        return Ok(w.windows(&filled)?.f_amax(dims.as_slice(), false)?);
    }
    let sums = w
        .windows(&padded)?
        .f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?;
    let counted = if a.int("count_include_pad", 0) != 0 {
        // The input and its explicit pads count, ceil mode's extra end does not.
        let explicit: Vec<i64> = w.end.iter().zip(&w.extra).map(|(e, x)| e - x).collect();
        let inner: Vec<i64> = (0..input.len())
            .map(|i| input[i] + w.begin[i] + explicit[i])
            .collect();
        region_mask(&inner, &zeros, &w.extra, x.kind())?
    } else {
        region_mask(&input, &w.begin, &w.end, x.kind())?
    };
    let counts = w
        .windows(&counted)?
        .f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?;
    Ok(sums.f_div(&counts)?)
}

/// Conv with explicit (possibly asymmetric) padding.
fn conv(a: &Args) -> Result<Tensor, RefError> {
    let (x, weight) = (a.x(0)?, a.x(1)?);
    let input = spatial(x);
    let kernel = a.ints("kernel_shape").unwrap_or_else(|| spatial(weight));
    let w = Window::new(a, &input, kernel, false)?;
    let padded = x.f_constant_pad_nd(Window::pad_list(&w.begin, &w.end))?;
    let n = input.len();
    Ok(padded.f_convolution(
        weight,
        a.opt(2),
        w.strides.as_slice(),
        vec![0i64; n].as_slice(),
        w.dilations.as_slice(),
        false,
        vec![0i64; n].as_slice(),
        a.int("group", 1),
    )?)
}

/// One spatial axis of a pooling node: input length, kernel, stride, dilation, pads, and the
/// output length this reference computes (ceil mode counts a window starting in the right
/// padding, as MaxPool-12 and the `onnx` reference do).
struct PoolAxis {
    len: i64,
    kernel: i64,
    stride: i64,
    dilation: i64,
    pad_begin: i64,
    pad_end: i64,
    out: i64,
}

/// The spatial axes of a pooling node over input shape `x` (none when malformed).
fn pool_axes(attrs: &ConcreteAttrs, x: &[usize]) -> Vec<PoolAxis> {
    let ints = |name: &str| match attrs.get(name) {
        Some(AttrValue::Ints(v)) => Some(v.clone()),
        _ => None,
    };
    if x.len() < 3 {
        return Vec::new();
    }
    let spatial = &x[2..];
    let n = spatial.len();
    let kernel = ints("kernel_shape").unwrap_or_default();
    let strides = ints("strides").unwrap_or_else(|| vec![1; n]);
    let pads = ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
    let dilations = ints("dilations").unwrap_or_else(|| vec![1; n]);
    let ceil = pool_int(attrs, "ceil_mode") == 1;
    (0..n)
        .filter_map(|i| {
            let (k, s, d) = (*kernel.get(i)?, *strides.get(i)?, *dilations.get(i)?);
            let (pb, pe) = (
                pads.get(i).copied().unwrap_or(0),
                pads.get(n + i).copied().unwrap_or(0),
            );
            let len = spatial[i] as i64;
            let span = len + pb + pe - (d * (k - 1) + 1);
            if span < 0 || s < 1 {
                return None;
            }
            let out = if ceil {
                (span + s - 1) / s + 1
            } else {
                span / s + 1
            };
            Some(PoolAxis {
                len,
                kernel: k,
                stride: s,
                dilation: d,
                pad_begin: pb,
                pad_end: pe,
                out,
            })
        })
        .collect()
}

fn pool_int(attrs: &ConcreteAttrs, name: &str) -> i64 {
    eval::int_attr(&attrs.named, name, 0)
}

/// Whether an AveragePool that excludes padding from its counts has a window (along some
/// spatial axis) whose taps all fall into the padding.
fn all_padding_window(attrs: &ConcreteAttrs, x: &[usize]) -> bool {
    pool_int(attrs, "count_include_pad") == 0
        && pool_axes(attrs, x).iter().any(|a| {
            (0..a.out).any(|o| {
                let start = o * a.stride - a.pad_begin;
                (0..a.kernel).all(|j| !(0..a.len).contains(&(start + j * a.dilation)))
            })
        })
}

/// Whether a ceil-mode AveragePool that counts padding has a last window reaching past the
/// end padding. "count_include_pad: Whether include pad pixels when calculating values for
/// the edges" says nothing of the taps beyond the explicit pads that only ceil mode creates:
/// ONNX Runtime divides by the taps inside input and pads, `onnx.reference` and OpenVINO each
/// by another count (seen on one window: -0.406, -0.510 and -0.271).
fn ceil_window_past_end_padding(attrs: &ConcreteAttrs, x: &[usize]) -> bool {
    pool_int(attrs, "ceil_mode") == 1
        && pool_int(attrs, "count_include_pad") == 1
        && pool_axes(attrs, x).iter().any(|a| {
            let last_tap = (a.out - 1) * a.stride - a.pad_begin + a.dilation * (a.kernel - 1);
            last_tap >= a.len + a.pad_end
        })
}

/// Whether a ceil-mode pooling node's last window starts in the right padding: MaxPool-12
/// (and the `onnx` reference) count that window, the corrected text (onnx/onnx#5711, "Sliding
/// windows that would start in the right padded region are ignored", MaxPool-22) drops it.
fn window_starts_in_right_padding(attrs: &ConcreteAttrs, x: &[usize]) -> bool {
    pool_int(attrs, "ceil_mode") == 1
        && pool_axes(attrs, x)
            .iter()
            .any(|a| (a.out - 1) * a.stride - a.pad_begin >= a.len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::*;
    use crate::ops::Attrs;

    fn ints(v: &[i64]) -> AttrValue<Int> {
        AttrValue::Ints(v.iter().map(|d| Int::from(*d)).collect())
    }

    fn window_attrs_of(
        kernel: &[i64],
        strides: &[i64],
        pads: &[i64],
        dilations: &[i64],
    ) -> SymAttrs {
        let mut a = SymAttrs::default();
        a.set("kernel_shape", ints(kernel));
        a.set("strides", ints(strides));
        a.set("pads", ints(pads));
        a.set("dilations", ints(dilations));
        a
    }

    #[test]
    fn grouped_strided_padded_conv_2d() {
        let mut a = window_attrs_of(&[3, 3], &[2, 2], &[1, 1, 1, 1], &[1, 1]);
        a.set("group", AttrValue::Int(Int::from(2i64)));
        let ins = [tensor(&[1, 4, 7, 7]), tensor(&[6, 2, 3, 3]), tensor(&[6])];
        assert!(all_true(&Conv.requires(&a, &ins)));
        assert_eq!(consts(&Conv.type_transfer(&a, &ins)[0]), vec![1, 6, 4, 4]);
        let bad_bias = [tensor(&[1, 4, 7, 7]), tensor(&[6, 2, 3, 3]), tensor(&[5])];
        assert!(!all_true(&Conv.requires(&a, &bad_bias)));
        let bad_group = [tensor(&[1, 4, 7, 7]), tensor(&[6, 4, 3, 3])];
        assert!(!all_true(&Conv.requires(&a, &bad_group)));
    }

    #[test]
    fn dilated_conv_1d_and_rank_mismatch() {
        let mut a = window_attrs_of(&[3], &[1], &[0, 0], &[2]);
        a.set("group", AttrValue::Int(Int::from(1i64)));
        let ins = [tensor(&[2, 3, 10]), tensor(&[5, 3, 3])];
        assert!(all_true(&Conv.requires(&a, &ins)));
        assert_eq!(consts(&Conv.type_transfer(&a, &ins)[0]), vec![2, 5, 6]);
        let too_small = [tensor(&[2, 3, 4]), tensor(&[5, 3, 3])];
        assert!(!all_true(&Conv.requires(&a, &too_small)));
        let mismatch = [tensor(&[2, 3, 10]), tensor(&[5, 3, 3, 3])];
        assert!(!all_true(&Conv.requires(&a, &mismatch)));
    }

    #[test]
    fn pool_floor_and_ceil_modes() {
        let pool = Pool {
            name: "MaxPool",
            types: POOL_TYPES_MAX,
        };
        let x = [tensor(&[1, 2, 8, 5])];
        let mut a = window_attrs_of(&[3, 2], &[2, 2], &[0, 1, 0, 0], &[1, 1]);
        a.set("ceil_mode", AttrValue::Int(Int::from(0i64)));
        assert!(all_true(&pool.requires(&a, &x)));
        // floor((8 - 3) / 2) + 1 = 3; floor((5 + 1 - 2) / 2) + 1 = 3.
        assert_eq!(consts(&pool.type_transfer(&a, &x)[0]), vec![1, 2, 3, 3]);
        let mut a = window_attrs_of(&[3, 2], &[2, 2], &[0, 1, 0, 0], &[1, 1]);
        a.set("ceil_mode", AttrValue::Int(Int::from(1i64)));
        assert!(all_true(&pool.requires(&a, &x)));
        // ceil((8 - 3) / 2) + 1 = 4; ceil((5 + 1 - 2) / 2) + 1 = 3.
        assert_eq!(consts(&pool.type_transfer(&a, &x)[0]), vec![1, 2, 4, 3]);
    }

    #[test]
    fn pool_rejects_ambiguous_ceil_windows_and_large_pads() {
        let pool = Pool {
            name: "AveragePool",
            types: &DType::FLOATS,
        };
        let x = [tensor(&[1, 1, 8])];
        // ceil(7 / 3) + 1 = 4 windows, but the last starts at 9 >= 8: ORT drops it, ONNX keeps it.
        let mut a = window_attrs_of(&[1], &[3], &[0, 0], &[2]);
        a.set("ceil_mode", AttrValue::Int(Int::from(1i64)));
        assert!(!all_true(&pool.requires(&a, &x)));
        let mut a = window_attrs_of(&[2], &[1], &[2, 0], &[1]);
        a.set("ceil_mode", AttrValue::Int(Int::from(0i64)));
        assert!(!all_true(&pool.requires(&a, &x)));
    }

    #[test]
    fn global_pools_keep_batch_and_channels() {
        let g = GlobalPool {
            name: "GlobalMaxPool",
        };
        let out = g.type_transfer(&SymAttrs::default(), &[tensor(&[3, 5, 7, 2])]);
        assert_eq!(consts(&out[0]), vec![3, 5, 1, 1]);
        assert_eq!(
            g.infer_input_types(&Sig::uniform(DType::F32, 1), 2, &mut Unstructured::new(&[])),
            None
        );
    }

    #[test]
    fn a_ceil_mode_window_starting_in_the_right_padding_is_found() {
        let pool = |pads: Vec<i64>| Attrs {
            named: vec![
                ("kernel_shape".into(), AttrValue::Ints(vec![2])),
                ("strides".into(), AttrValue::Ints(vec![2])),
                ("pads".into(), AttrValue::Ints(pads)),
                ("ceil_mode".into(), AttrValue::Int(1)),
            ],
            ..Attrs::default()
        };
        // Length 4, pads (0, 1): ceil gives 3 windows, the last starting at 4 (padding).
        assert!(window_starts_in_right_padding(
            &pool(vec![0, 1]),
            &[1, 1, 4]
        ));
        assert!(!window_starts_in_right_padding(
            &pool(vec![0, 0]),
            &[1, 1, 4]
        ));
    }

    #[test]
    fn a_ceil_mode_average_window_past_the_end_padding_is_ambiguous_when_pads_count() {
        let pool = |count_include_pad: i64| Attrs {
            named: vec![
                ("kernel_shape".into(), AttrValue::Ints(vec![3])),
                ("strides".into(), AttrValue::Ints(vec![3])),
                ("pads".into(), AttrValue::Ints(vec![0, 1])),
                ("ceil_mode".into(), AttrValue::Int(1)),
                (
                    "count_include_pad".into(),
                    AttrValue::Int(count_include_pad),
                ),
            ],
            ..Attrs::default()
        };
        // Length 4, pads (0, 1): ceil gives 2 windows, the last covering 3, 4 (the pad) and
        // 5 (past it). At length 5 the last window ends exactly on the pad.
        assert!(ceil_window_past_end_padding(&pool(1), &[1, 1, 4]));
        assert!(!ceil_window_past_end_padding(&pool(0), &[1, 1, 4]));
        assert!(!ceil_window_past_end_padding(&pool(1), &[1, 1, 5]));
    }

    #[test]
    fn grid_sample_takes_batch_and_channels_from_x_and_the_size_from_the_grid() {
        let (x, grid) = (tensor(&[2, 3, 5, 6]), tensor(&[2, 4, 7, 2]));
        let attrs = SymAttrs::default();
        assert!(all_true(
            &GridSample.requires(&attrs, &[x.clone(), grid.clone()])
        ));
        assert_eq!(
            consts(&GridSample.type_transfer(&attrs, &[x.clone(), grid])[0]),
            vec![2, 3, 4, 7]
        );
        // The grid's batch must match, and its points have two coordinates.
        assert!(!all_true(
            &GridSample.requires(&attrs, &[x.clone(), tensor(&[1, 4, 7, 2])])
        ));
        assert!(!all_true(
            &GridSample.requires(&attrs, &[x, tensor(&[2, 4, 7, 3])])
        ));
    }

    /// The nearest-mode boundary rule on a 1x1x1x`width` image sampled at `xs` (y at 0).
    fn nearest_boundary(xs: &[f32], width: i64, align: i64) -> bool {
        let x = Tensor::zeros([1, 1, 1, width], (Kind::Float, tch::Device::Cpu));
        let points: Vec<f32> = xs.iter().flat_map(|&px| [px, 0.0]).collect();
        let grid = f32s(&points, &[1, 1, xs.len() as i64, 2]);
        let attrs = Attrs {
            named: vec![
                ("mode".into(), AttrValue::Str("nearest".into())),
                ("align_corners".into(), AttrValue::Int(align)),
            ],
            ..Attrs::default()
        };
        let shapes = [vec![1, 1, 1, width as usize], vec![1, 1, xs.len(), 2]];
        let margin = |_: usize, t: &Tensor| t.zeros_like();
        let with_args = |_: crate::ops::fragility::ArgsReader| {};
        let node = NodeValues {
            attrs: &attrs,
            inputs: vec![&x, &grid],
            dtypes: vec![DType::F32, DType::F32],
            shapes: shapes.iter().map(Vec::as_slice).collect(),
            out_dtype: DType::F32,
            outputs: 1,
            margin: &margin,
            with_args: &with_args,
        };
        GridSample.near_jump(&node).expect("judged")
    }

    #[test]
    fn a_nearest_grid_sample_point_on_a_half_pixel_is_fragile() {
        // Width 4 without align_corners: pixel k spans [-1 + k/2, -1 + (k+1)/2] of the grid, so
        // -0.5 is the edge between pixels 0 and 1; -0.625 and 0.125 fall inside pixels.
        assert!(nearest_boundary(&[-0.5], 4, 0));
        assert!(!nearest_boundary(&[-0.625, 0.125], 4, 0));
        // With align_corners the corners are pixel centers: width 5 has centers every 0.5.
        assert!(nearest_boundary(&[0.25], 5, 1));
        assert!(!nearest_boundary(&[0.5, -1.0], 5, 1));
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;

    fn ints(v: &[i64]) -> AttrValue<i64> {
        AttrValue::Ints(v.to_vec())
    }

    #[test]
    fn average_pool_counts_or_skips_padding() {
        let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 4]);
        let attrs = |include: i64| {
            vec![
                ("kernel_shape", ints(&[3])),
                ("pads", ints(&[1, 1])),
                ("strides", ints(&[2])),
                ("count_include_pad", AttrValue::Int(include)),
            ]
        };
        // Windows over [0, 1, 2, 3, 4, 0]: [0,1,2] and [2,3,4].
        let y = run1(
            "AveragePool",
            &attrs(1),
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&y), vec![1.0, 3.0]);
        let y = run1("AveragePool", &attrs(0), vec![Some(x)], DType::F32);
        assert_eq!(values(&y), vec![1.5, 3.0]);
    }

    #[test]
    fn max_pool_ceil_mode_dilation_and_negative_inputs() {
        let x = f32s(&[-5.0, -1.0, -3.0, -2.0, -4.0], &[1, 1, 5]);
        let y = run1(
            "MaxPool",
            &[
                ("kernel_shape", ints(&[2])),
                ("strides", ints(&[2])),
                ("pads", ints(&[1, 0])),
                ("ceil_mode", AttrValue::Int(1)),
            ],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        // Padded [pad, -5, -1, -3, -2, -4]: windows [pad,-5], [-1,-3], [-2,-4].
        assert_eq!(values(&y), vec![-5.0, -1.0, -2.0]);
        let d = run1(
            "MaxPool",
            &[("kernel_shape", ints(&[2])), ("dilations", ints(&[3]))],
            vec![Some(x)],
            DType::F32,
        );
        // Pairs (0,3), (1,4): max(-5,-2), max(-1,-4).
        assert_eq!(values(&d), vec![-2.0, -1.0]);
    }

    #[test]
    fn grouped_conv_with_asymmetric_pads() {
        // Two channels, depthwise kernel [1, 1] per channel, pads (1 before, 0 after).
        let x = f32s(&[1.0, 2.0, 3.0, 10.0, 20.0, 30.0], &[1, 2, 3]);
        let w = f32s(&[1.0, 1.0, 2.0, 0.0], &[2, 1, 2]);
        let y = run1(
            "Conv",
            &[("group", AttrValue::Int(2)), ("pads", ints(&[1, 0]))],
            vec![Some(x), Some(w)],
            DType::F32,
        );
        assert_eq!(y.size(), vec![1, 2, 3]);
        assert_eq!(values(&y), vec![1.0, 3.0, 5.0, 0.0, 20.0, 40.0]);
    }

    #[test]
    fn grid_sample_interpolates_pads_and_picks_the_nearest_pixel() {
        let sample = |mode: &str, padding: &str, align: i64, xs: &[f32]| {
            // One row of four pixels 10, 20, 30, 40; the points at y = 0.
            let x = Some(f32s(&[10.0, 20.0, 30.0, 40.0], &[1, 1, 1, 4]));
            let points: Vec<f32> = xs.iter().flat_map(|&px| [px, 0.0]).collect();
            let grid = Some(f32s(&points, &[1, 1, xs.len() as i64, 2]));
            let attrs = [
                ("mode", AttrValue::Str(mode.into())),
                ("padding_mode", AttrValue::Str(padding.into())),
                ("align_corners", AttrValue::Int(align)),
            ];
            values(&run1("GridSample", &attrs, vec![x, grid], DType::F32))
        };
        // align_corners: -1 and 1 are the first and last pixel centers; 0 is halfway.
        assert_eq!(
            sample("bilinear", "zeros", 1, &[-1.0, 0.0, 1.0]),
            [10.0, 25.0, 40.0]
        );
        // Without it they are the outer edges: -1 is half a pixel left of pixel 0, which
        // zeros padding blends with 0, border clamps and reflection mirrors.
        assert_eq!(sample("bilinear", "zeros", 0, &[-1.0]), [5.0]);
        assert_eq!(sample("bilinear", "border", 0, &[-1.0, 1.5]), [10.0, 40.0]);
        assert_eq!(sample("bilinear", "reflection", 0, &[-1.5]), [15.0]);
        // Nearest picks one pixel; a point outside under zeros padding gives 0.
        assert_eq!(
            sample("nearest", "zeros", 1, &[-0.4, 0.4, 2.0]),
            [20.0, 30.0, 0.0]
        );
    }
}
