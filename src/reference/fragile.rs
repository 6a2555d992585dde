//! Fragile values: values no comparison may judge, because a correct compiler may
//! legitimately compute something else there.
//!
//! Two reasons make a value fragile, and everything computed from a fragile value is fragile
//! too:
//!
//! - **A discontinuity within rounding distance** ([`on_boundary`]): a discontinuous op whose
//!   input lies within its *margin* of a jump (the margin is how far rounding alone can move
//!   that input: [`super::precision`] derives it from the legal evaluations of the graph). An
//!   ArgMax/ArgMin near-tie, a Floor/Ceil/Cast-to-integer input next to an integer, a Round
//!   (or QuantizeLinear quotient) next to a half, a Mod quotient next to an integer (the
//!   result jumps between 0 and the divisor), a comparison between nearly equal values, a
//!   Sign input next to zero, an input next to the edge of an op's domain (Sqrt, Log, Pow and
//!   Reciprocal near 0, a divisor near 0, Asin/Acos/Atanh near ±1, Acosh near 1), and a
//!   nearest-mode Resize whose source coordinate sits on a rounding boundary.
//! - **Behaviour the ONNX specification leaves undefined** ([`undefined`]), each rule citing
//!   the sentence (or the silence) it rests on.
//! - **Readings the specification leaves open** ([`ambiguous`]): where the operator text, its
//!   function body, the `onnx` reference and the backend tests disagree (Resize's `scale`
//!   with a non-integral output length, overflow or underflow inside Softplus's and ReduceLogSumExp's
//!   function bodies, integer ReduceL2/ReduceLogSum/ReduceMean, ceil-mode pool windows that
//!   start in the right padding, float64 LayerNormalization stashed in float32). A compiler
//!   following any reading is right.

use super::{int_attr, Args, RefError};
use crate::emit::onnx::node_parts;
use crate::ir::{DType, Graph, NodeKind, ValueRef};
use crate::ops::numeric::{self, int_range};
use crate::ops::resize;
use crate::ops::unary::Jumps;
use crate::ops::validity::{Domain, Finite};
use crate::ops::{AttrValue, ConstInput};
use petgraph::stable_graph::NodeIndex;
use std::collections::{BTreeMap, BTreeSet};
use tch::{Kind, Tensor};

/// The absolute margin (elementwise, as `f64`) of a value: how far rounding alone can move
/// it from the value the rule reads.
pub type Margin<'a> = &'a dyn Fn(ValueRef, &Tensor) -> Tensor;

fn any(t: &Tensor) -> bool {
    t.any().int64_value(&[]) != 0
}

/// Whether some element of `x` lies within `margin` of a multiple of `step` offset by
/// `offset` (the integers: step 1, offset 0; the halves: step 1, offset 0.5).
fn near_grid(x: &Tensor, margin: &Tensor, offset: f64) -> bool {
    let shifted = x - offset;
    let distance = (&shifted - shifted.round()).abs();
    any(&distance.le_tensor(margin))
}

/// How far input 0's elements `x` lie from the edge of the domain an op declares (`None`
/// for a declaration without an edge on input 0: growth, a divisor in another slot).
fn edge_distance(finite: Finite, x: &Tensor) -> Option<Tensor> {
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

/// Whether op node `n` has an input within its margin of a discontinuity, for the values
/// computed (float inputs only: integer inputs are exact).
pub fn on_boundary(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
    margin: Margin,
) -> Result<bool, RefError> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return Ok(false);
    };
    let inputs = graph.inputs_of(n);
    if op.op_type() == "Resize" {
        return resize_ambiguous(graph, n, values);
    }
    let Some(first) = inputs.first() else {
        return Ok(false);
    };
    if !graph.ty(*first).dtype.is_float() {
        return Ok(false);
    }
    let x = values[first].to_kind(Kind::Double);
    let mx = margin(*first, &x);
    let second = || {
        let y = values[&inputs[1]].to_kind(Kind::Double);
        let my = margin(inputs[1], &y);
        (y, my)
    };
    let out_dtype = graph.node(n).outputs[0].dtype;
    if let Some(row) = crate::ops::unary::declared(op.op_type()) {
        match row.jumps {
            // A declared jump (Sign at 0, ThresholdedRelu at alpha, Shrink at ±lambd).
            Some(Jumps::At(at)) => {
                let points = at(&row.float_values(&op.attrs.named));
                return Ok(points
                    .into_iter()
                    .any(|j| any(&(&x - j).abs().le_tensor(&mx))));
            }
            Some(Jumps::Grid(offset)) => return Ok(near_grid(&x, &mx, offset)),
            None => {}
        }
    }
    if crate::ops::binary::declared(op.op_type()).is_some_and(|b| b.compares()) {
        // A comparison flips where its operands meet.
        let (y, my) = second();
        return Ok(any(&(&x - &y).abs().le_tensor(&(mx + my))));
    }
    if let Some(distance) = op.finite().and_then(|f| edge_distance(f, &x)) {
        // Domain edges: a value computed by cancellation can land on either side of them
        // (`Sqrt(a - b)` with a ≈ b is 0 in one compiler and NaN in another).
        return Ok(any(&distance.le_tensor(&mx)));
    }
    Ok(match op.op_type() {
        "QuantizeLinear" => {
            let scale = match op.attrs.consts.first() {
                Some(ConstInput::Scalar(_, scale)) => *scale,
                _ => 1.0,
            };
            near_grid(&(&x / scale), &(&mx / scale.abs()), 0.5)
        }
        // Truncation jumps at every integer; a float cast to bool jumps at zero.
        "Cast" if out_dtype == DType::Bool => any(&x.abs().le_tensor(&mx)),
        "Cast" => !out_dtype.is_float() && near_grid(&x, &mx, 0.0),
        "Div" => {
            let (y, my) = second();
            any(&y.abs().le_tensor(&my))
        }
        "Mod" => {
            // x mod y jumps by |y| where x / y crosses an integer; near there either side is
            // a correct rounding of the exact value.
            let (y, my) = second();
            let q = (&x / &y).round();
            let distance = (&x - &q * &y).abs();
            let slack = &mx + q.abs() * &my;
            any(&y.abs().le_tensor(&my)) || any(&distance.le_tensor(&slack))
        }
        "ArgMax" | "ArgMin" => {
            let axis = match op.attrs.get("axis") {
                Some(AttrValue::Int(a)) => *a,
                _ => 0,
            };
            let rank = x.dim() as i64;
            let axis = if axis < 0 { axis + rank } else { axis };
            if x.size()[axis as usize] < 2 {
                false
            } else {
                let largest = op.op_type() == "ArgMax";
                let (top, _) = x.f_topk(2, axis, largest, true)?;
                let gap = (top.select(axis, 0) - top.select(axis, 1)).abs();
                // Twice the widest margin along the axis: both contenders may move.
                let widest = mx.broadcast_to(x.size()).f_amax([axis].as_slice(), false)?;
                any(&gap.le_tensor(&(widest * 2.0)))
            }
        }
        _ => false,
    })
}

/// Runs `f` on the arguments of op node `n` (its computed inputs and constant operands).
fn with_node_args<R>(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
    f: impl FnOnce(&Args) -> Result<R, RefError>,
) -> Result<R, RefError> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return Err(RefError::Failed("not an op node".into()));
    };
    let parts = node_parts(op);
    let data = graph.inputs_of(n);
    let mut inputs: Vec<Option<Tensor>> = data
        .iter()
        .map(|v| Some(values[v].shallow_clone()))
        .collect();
    let mut dtypes: Vec<Option<DType>> = data.iter().map(|v| Some(graph.ty(*v).dtype)).collect();
    for c in &parts.consts {
        dtypes.push(c.as_ref().map(|t| t.data.dtype()));
        inputs.push(c.as_ref().map(super::convert::to_tch));
    }
    let out: Vec<DType> = graph.node(n).outputs.iter().map(|t| t.dtype).collect();
    f(&Args::new(parts.op_type, parts.attrs, inputs, dtypes, &out))
}

/// Whether a nearest-mode Resize picks a source index from a coordinate that sits on a
/// rounding boundary: the exact coordinate is an integer (or a tie), and a compiler that
/// computes it in `float` legitimately lands on either side.
fn resize_ambiguous(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<bool, RefError> {
    with_node_args(graph, n, values, resize::nearest_ambiguous)
}

/// Op node `n`'s op and inputs; `None` for a leaf or an op without inputs.
fn op_with_inputs(
    graph: &Graph,
    n: NodeIndex,
) -> Option<(&crate::ir::graph::OpNode, Vec<ValueRef>)> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return None;
    };
    let inputs = graph.inputs_of(n);
    (!inputs.is_empty()).then_some((op, inputs))
}

/// Why op node `n` computes something the ONNX specification leaves undefined, for the
/// values computed: `Some(rule)` names the rule, `None` when the node is defined.
pub fn undefined(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<Option<&'static str>, RefError> {
    let Some((op, inputs)) = op_with_inputs(graph, n) else {
        return Ok(None);
    };
    let first = &inputs[0];
    let in_dtype = graph.ty(*first).dtype;
    let out_dtype = graph.node(n).outputs[0].dtype;
    let exact = |i: usize| -> Result<Tensor, RefError> {
        let v = inputs[i];
        let t = &values[&v];
        let d = graph.ty(v).dtype;
        if d.is_float() {
            Ok(t.f_to_kind(Kind::Double)?)
        } else {
            Ok(numeric::to_double(t, d)?)
        }
    };
    let outside = |t: &Tensor, dtype: DType| {
        let (lo, hi) = int_range(dtype);
        any(&t.lt(lo)) || any(&t.gt(hi))
    };
    let op_type = op.op_type();
    Ok(match op_type {
        // NaN has no integer image: Cast's "undefined if OOR" (NaN is in no range),
        // QuantizeLinear's formula (its saturation bounds infinities, not NaN), and the index
        // of a maximum or minimum (ArgMax and ArgMin say nothing of NaN). A value search that
        // could not make every value finite leaves such NaNs in place.
        "Cast" | "QuantizeLinear" | "ArgMax" | "ArgMin"
            if in_dtype.is_float() && out_dtype.is_int() && any(&exact(0)?.isnan()) =>
        {
            Some("NaN converted to an integer: no value is defined")
        }
        // Cast: "Casting from floating point to fixed point: undefined if OOR" (out of range).
        "Cast" if in_dtype.is_float() && out_dtype.is_int() => {
            let t = exact(0)?.f_trunc()?;
            outside(&t, out_dtype).then_some("Cast: float to integer out of range is undefined")
        }
        // BitShift: the operator text is silent on shift amounts of the bit width or more,
        // which the C++ every kernel is written in leaves undefined.
        "BitShift" => {
            let width = (in_dtype.width() * 8) as f64;
            let amount = exact(1)?;
            (any(&amount.ge(width)) || any(&amount.lt(0.0)))
                .then_some("BitShift: shift amount of the bit width or more")
        }
        // Signed overflow: the arithmetic operators do not say what overflow gives, and the
        // C++ of every kernel (and LLVM's `nsw` arithmetic) leaves signed overflow undefined.
        // Unsigned arithmetic is modular in C++ and agrees with Cast's "discard higher bits".
        "Add" | "Sub" | "Mul" | "Div" | "Neg" | "Abs" | "Mod"
            if in_dtype.is_int() && !in_dtype.is_unsigned() =>
        {
            let exact_result = match op_type {
                "Add" => exact(0)? + exact(1)?,
                "Sub" => exact(0)? - exact(1)?,
                "Mul" => exact(0)? * exact(1)?,
                // MIN / -1 and MIN % -1 are the only overflowing quotients.
                "Div" | "Mod" => exact(0)?.f_div(&exact(1)?)?,
                "Neg" => -exact(0)?,
                _ => exact(0)?.abs(),
            };
            outside(&exact_result, in_dtype).then_some("signed integer overflow")
        }
        // Resize: cubic interpolation of an integer tensor forms a fractional value that may
        // overshoot the type's range, and the operator text never says how it becomes an
        // integer again (onnx/onnx issue 3390, "Rounding behavior of Resize when
        // interpolating on integral types is unspecified") nor what an overshoot gives; a
        // "weighted average" of bools is no bool at all. A linear interpolation of integers
        // stays within the input's range, so only its rounding is open: the precision
        // analysis bounds it (`precision::integer_interpolation_freedom`).
        "Resize"
            if !in_dtype.is_float()
                && resize::interpolates(node_parts(op).attrs)
                && !resize::rounds_integers_freely(node_parts(op).attrs, in_dtype) =>
        {
            Some("Resize: a cubic-interpolated integer or an interpolated bool is unspecified")
        }
        // ReduceLogSumExp on integers: `log(sum(exp(x)))` is not an integer, and the operator
        // text never says how it (or each `exp`) becomes one; kernels truncate each term,
        // truncate the result or round it.
        "ReduceLogSumExp" if !in_dtype.is_float() => {
            Some("ReduceLogSumExp: rounding of an integer result is unspecified")
        }
        // AveragePool: with `count_include_pad = 0` a window of padding only averages no
        // element (0 / 0); the operator text gives no value for it.
        "AveragePool" if all_padding_window(op, &graph.ty(*first).shape) => {
            Some("AveragePool: a window of padding only with count_include_pad = 0")
        }
        // Accumulation overflow (a kernel may accumulate in a wider type, saturate or wrap, so
        // an intermediate that leaves the type's range is left open): the bound is the op on
        // magnitudes (on max(|x|, 1) for
        // products), which bounds every partial sum or product a kernel may form.
        _ if op.rounding().accumulates() && in_dtype.is_int() => {
            let parts = node_parts(op);
            let mut bounded: Vec<Option<Tensor>> = Vec::new();
            let mut dtypes: Vec<Option<DType>> = Vec::new();
            for (i, v) in inputs.iter().enumerate() {
                let magnitude = exact(i)?.abs();
                let magnitude = match op_type {
                    "ReduceProd" => magnitude.clamp_min(1.0),
                    "ReduceLogSumExp" => magnitude.exp(),
                    _ => magnitude,
                };
                bounded.push(Some(magnitude));
                dtypes.push(Some(if graph.ty(*v).dtype.is_int() {
                    DType::F64
                } else {
                    graph.ty(*v).dtype
                }));
            }
            for c in &parts.consts {
                dtypes.push(c.as_ref().map(|t| t.data.dtype()));
                bounded.push(c.as_ref().map(super::convert::to_tch));
            }
            let bound_op = match op_type {
                "ReduceL2" => "ReduceSumSquare",
                "ReduceLogSumExp" => "ReduceSum",
                other => other,
            };
            let outs = vec![DType::F64; graph.node(n).outputs.len().min(1)];
            let bound =
                super::apply_typed(bound_op, parts.attrs, &bounded, &dtypes, &outs)?.remove(0);
            outside(&bound, out_dtype).then_some("integer accumulation overflow")
        }
        _ => None,
    })
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
fn pool_axes(op: &crate::ir::graph::OpNode, x: &[usize]) -> Vec<PoolAxis> {
    let ints = |name: &str| match op.attrs.get(name) {
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
    let ceil = pool_int(op, "ceil_mode") == 1;
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

fn pool_int(op: &crate::ir::graph::OpNode, name: &str) -> i64 {
    int_attr(&op.attrs.named, name, 0)
}

/// Whether an AveragePool that excludes padding from its counts has a window (along some
/// spatial axis) whose taps all fall into the padding.
fn all_padding_window(op: &crate::ir::graph::OpNode, x: &[usize]) -> bool {
    pool_int(op, "count_include_pad") == 0
        && pool_axes(op, x).iter().any(|a| {
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
fn ceil_window_past_end_padding(op: &crate::ir::graph::OpNode, x: &[usize]) -> bool {
    pool_int(op, "ceil_mode") == 1
        && pool_int(op, "count_include_pad") == 1
        && pool_axes(op, x).iter().any(|a| {
            let last_tap = (a.out - 1) * a.stride - a.pad_begin + a.dilation * (a.kernel - 1);
            last_tap >= a.len + a.pad_end
        })
}

/// Whether a ceil-mode pooling node's last window starts in the right padding: MaxPool-12
/// (and the `onnx` reference) count that window, the corrected text (onnx/onnx#5711, "Sliding
/// windows that would start in the right padded region are ignored", MaxPool-22) drops it.
fn window_starts_in_right_padding(op: &crate::ir::graph::OpNode, x: &[usize]) -> bool {
    pool_int(op, "ceil_mode") == 1
        && pool_axes(op, x)
            .iter()
            .any(|a| (a.out - 1) * a.stride - a.pad_begin >= a.len)
}

/// The range of `x` whose `exp(x)` is a finite normal number in `dtype` (the logarithms of
/// its smallest normal and largest value).
fn exp_range(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (6.103_515_625e-5f64.ln(), 65504f64.ln()),
        DType::F32 => ((f32::MIN_POSITIVE as f64).ln(), (f32::MAX as f64).ln()),
        _ => (f64::MIN_POSITIVE.ln(), f64::MAX.ln()),
    }
}

/// Why op node `n`, for the values computed, falls where the ONNX specification admits more
/// than one reading (its operator text, its function body, the `onnx` reference
/// implementation and its backend tests disagree): `Some(rule)` citing the clauses, `None`
/// when every reading gives one result. Such values are never compared: a compiler that
/// follows any admissible reading is right.
pub fn ambiguous(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<Option<&'static str>, RefError> {
    let Some((op, inputs)) = op_with_inputs(graph, n) else {
        return Ok(None);
    };
    let first = &inputs[0];
    let in_dtype = graph.ty(*first).dtype;
    Ok(match op.op_type() {
        // Resize-19: "scale = length_resized / length_original" in the operator text, while
        // `onnx.reference` and the backend tests (test_resize_downsample_scales_*) use the
        // `scales` input; with a non-integral `length_original * scale` the two differ, and
        // so does `align_corners` over the integral or the fractional output length.
        "Resize" if with_node_args(graph, n, values, resize::scales_ambiguous)? => {
            Some("Resize: `scales` with a non-integral output length (text vs onnx.reference)")
        }
        "Resize" if with_node_args(graph, n, values, resize::single_output_ambiguous)? => {
            Some("Resize: pytorch_half_pixel onto one output (text 0, onnx.reference -0.5)")
        }
        // Softplus-1's function body is log(exp(x) + 1) and ReduceLogSumExp-18's is
        // log(ReduceSum(exp(x))): a kernel that follows the body overflows to inf, or loses
        // its digits to subnormals, where exp(x) leaves the type's normal range; a stable
        // kernel (max-shifted) does not. Both are admissible.
        "Softplus" | "ReduceLogSumExp" if in_dtype.is_float() && {
            let (low, high) = exp_range(in_dtype);
            let x = values[first].to_kind(Kind::Double);
            any(&x.gt(high)) || any(&x.lt(low))
        } =>
        {
            Some("Softplus/ReduceLogSumExp: exp(x) leaves the normal range inside the spec's function body")
        }
        // ReduceL2, ReduceLogSum and ReduceMean on integers: sqrt, log and a division form a
        // fractional value and the operator texts never say how it becomes an integer
        // (truncation and rounding are both in use).
        "ReduceL2" | "ReduceLogSum" | "ReduceMean" if in_dtype.is_int() => {
            Some("ReduceL2/ReduceLogSum/ReduceMean: rounding of an integer result is unspecified")
        }
        // LayerNormalization-17 on float64 with the default `stash_type` (1, float32): its
        // function body casts X to float32 for stage one ("This also specifies stage one's
        // computation precision"), where a large mean cancels; ONNX Runtime and `onnx.reference`
        // (before onnx/onnx#8439) compute it in float64. Both readings are in use.
        "LayerNormalization"
            if in_dtype == DType::F64 && int_attr(&op.attrs.named, "stash_type", 1) == 1 =>
        {
            Some("LayerNormalization: float64 with stage one stashed in float32 (function body vs onnx.reference)")
        }
        // InstanceNormalization leaves the precision of its mean and variance open (unlike
        // LayerNormalization's `stash_type`): on float16, a kernel that computes them in
        // float16 overflows where an instance's sum of squares leaves the float16 range, one
        // that computes them in float32 (ONNX Runtime) does not.
        "InstanceNormalization" if in_dtype == DType::F16 && {
            let x = values[first].to_kind(Kind::Double);
            let spatial: Vec<i64> = (2..x.dim() as i64).collect();
            !spatial.is_empty()
                && any(&x.square().sum_dim_intlist(spatial.as_slice(), false, Kind::Double).gt(f64::from(half::f16::MAX)))
        } =>
        {
            Some("InstanceNormalization: float16 statistics whose sum of squares leaves the float16 range (their precision is unspecified)")
        }
        "AveragePool" if ceil_window_past_end_padding(op, &graph.ty(*first).shape) => {
            Some("AveragePool: a ceil-mode window past the end padding with count_include_pad=1 (its divisor is unspecified)")
        }
        // MaxPool/AveragePool ceil_mode: the output length depends on the opset's rule.
        "MaxPool" | "AveragePool"
            if window_starts_in_right_padding(op, &graph.ty(*first).shape) =>
        {
            Some("MaxPool/AveragePool: a ceil-mode window starting in the right padding")
        }
        _ => None,
    })
}

/// The op nodes of `graph` that are fragile for the computed `values` under `margin`: on a
/// boundary, undefined or ambiguous themselves, downstream of one that is, or listed in
/// `seeds`.
pub fn fragile_nodes(
    graph: &Graph,
    values: &BTreeMap<ValueRef, Tensor>,
    margin: Margin,
    seeds: &BTreeSet<NodeIndex>,
) -> Result<BTreeSet<NodeIndex>, RefError> {
    let mut fragile: BTreeSet<NodeIndex> = BTreeSet::new();
    for n in graph.topo_order() {
        let tainted =
            seeds.contains(&n) || graph.inputs_of(n).iter().any(|v| fragile.contains(&v.node));
        if tainted
            || tch::no_grad(|| -> Result<bool, RefError> {
                Ok(undefined(graph, n, values)?.is_some()
                    || ambiguous(graph, n, values)?.is_some()
                    || on_boundary(graph, n, values, margin)?)
            })?
        {
            fragile.insert(n);
        }
    }
    Ok(fragile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::TensorType;
    use crate::ops::{spec_id, Attrs, Sig};

    fn fixed(m: f64) -> impl Fn(ValueRef, &Tensor) -> Tensor {
        move |_, x: &Tensor| x.abs().clamp_min(1.0) * m
    }

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

    /// A graph `op(x[, y])` on `dtype` with the given input values: whether its node is on a
    /// boundary (with a 1e-3 relative margin) and whether it is undefined.
    fn judge(op: &str, dtype: DType, xs: Vec<Tensor>) -> (bool, bool, bool) {
        judge_with(op, dtype, Attrs::default(), xs)
    }

    /// [`judge`] with attributes.
    fn judge_with(
        op: &str,
        dtype: DType,
        attrs: Attrs<i64>,
        xs: Vec<Tensor>,
    ) -> (bool, bool, bool) {
        judge_typed(op, dtype, dtype, attrs, xs)
    }

    /// [`judge_with`] for an op whose output type `out` differs from its inputs'.
    fn judge_typed(
        op: &str,
        dtype: DType,
        out: DType,
        attrs: Attrs<i64>,
        xs: Vec<Tensor>,
    ) -> (bool, bool, bool) {
        let t = TensorType::new(dtype, vec![xs[0].numel()]);
        let mut g = Graph::new();
        let mut values = BTreeMap::new();
        let mut refs = Vec::new();
        for x in xs {
            let leaf = g.add_leaf(NodeKind::Input, t.clone());
            let v = ValueRef {
                node: leaf,
                output: 0,
            };
            values.insert(v, x);
            refs.push(v);
        }
        let node = crate::ir::graph::OpNode {
            spec: spec_id(op).unwrap(),
            sig: Sig::uniform(dtype, refs.len()),
            attrs,
        };
        let n = g.add_op(node, vec![TensorType::new(out, t.shape.clone())], &refs);
        let m = fixed(1e-3);
        (
            on_boundary(&g, n, &values, &m).unwrap(),
            undefined(&g, n, &values).unwrap().is_some(),
            ambiguous(&g, n, &values).unwrap().is_some(),
        )
    }

    #[test]
    fn values_at_a_domain_edge_are_fragile() {
        let f = |v: &[f32]| vec![Tensor::from_slice(v)];
        assert!(judge("Sqrt", DType::F32, f(&[0.5, 1e-7])).0);
        assert!(!judge("Sqrt", DType::F32, f(&[0.5, 0.25])).0);
        assert!(judge("Asin", DType::F32, f(&[0.5, -0.99999])).0);
        assert!(!judge("Asin", DType::F32, f(&[0.5, 0.9])).0);
        assert!(judge("Acosh", DType::F32, f(&[0.5, 1.0000001])).0);
        assert!(!judge("Acosh", DType::F32, f(&[0.5, 1.5])).0);
    }

    #[test]
    fn a_mod_quotient_next_to_an_integer_is_fragile() {
        let xy = |x: f32, y: f32| vec![Tensor::from_slice(&[x]), Tensor::from_slice(&[y])];
        // 3.0000001 / 1.5 is just above 2: the result jumps between ~0 and ~1.5.
        assert!(judge("Mod", DType::F32, xy(3.000_000_1, 1.5)).0);
        assert!(!judge("Mod", DType::F32, xy(3.7, 1.5)).0);
    }

    #[test]
    fn undefined_behaviour_is_recognized() {
        // (op, dtype, kind, x, y, undefined): int8 overflow (100 + 100) and not; unsigned
        // wrap is modular and compared; a u8 shift by 8 or more and not.
        let cases = [
            ("Add", DType::I8, Kind::Int8, 100, 100, true),
            ("Add", DType::I8, Kind::Int8, 100, -100, false),
            ("Sub", DType::U8, Kind::Uint8, 1, 2, false),
            ("BitShift", DType::U8, Kind::Uint8, 1, 9, true),
            ("BitShift", DType::U8, Kind::Uint8, 1, 7, false),
        ];
        for (op, dtype, kind, x, y, want) in cases {
            let xy = vec![
                Tensor::from_slice(&[x as i64]).to_kind(kind),
                Tensor::from_slice(&[y as i64]).to_kind(kind),
            ];
            assert_eq!(judge(op, dtype, xy).1, want, "{op} {x} {y}");
        }
    }

    #[test]
    fn float16_instance_statistics_beyond_the_float16_range_are_ambiguous() {
        let x = |v: f32| vec![Tensor::from_slice(&[v; 4]).reshape([1, 1, 4])];
        // 4 × 200² = 160000 > 65504; 4 × 100² = 40000 fits.
        assert!(judge("InstanceNormalization", DType::F16, x(200.0)).2);
        assert!(!judge("InstanceNormalization", DType::F16, x(100.0)).2);
        assert!(!judge("InstanceNormalization", DType::F32, x(200.0)).2);
    }

    #[test]
    fn nan_converted_to_an_integer_is_undefined() {
        let x = |v: f32| vec![Tensor::from_slice(&[1.0f32, v])];
        for op in ["Cast", "ArgMax"] {
            assert!(judge_typed(op, DType::F32, DType::I64, Attrs::default(), x(f32::NAN)).1);
            assert!(!judge_typed(op, DType::F32, DType::I64, Attrs::default(), x(2.0)).1);
        }
        // A float result of a NaN is compared as NaN, not undefined.
        assert!(!judge("Relu", DType::F32, x(f32::NAN)).1);
    }

    #[test]
    fn cubic_integer_or_any_bool_interpolation_is_undefined_and_linear_or_nearest_is_not() {
        let mode = |m: &str| Attrs {
            named: vec![("mode".into(), AttrValue::Str(m.into()))],
            consts: vec![ConstInput::Absent, ConstInput::Floats(vec![1.5])],
            ..Attrs::default()
        };
        let x = || vec![Tensor::from_slice(&[1i64, 4]).to_kind(Kind::Uint8)];
        assert!(!judge_with("Resize", DType::U8, mode("linear"), x()).1);
        assert!(judge_with("Resize", DType::U8, mode("cubic"), x()).1);
        assert!(!judge_with("Resize", DType::U8, mode("nearest"), x()).1);
        let floats = vec![Tensor::from_slice(&[1.0f32, 4.0])];
        assert!(!judge_with("Resize", DType::F32, mode("linear"), floats).1);
        let bools = vec![Tensor::from_slice(&[true, false])];
        assert!(judge_with("Resize", DType::Bool, mode("linear"), bools).1);
    }

    #[test]
    fn readings_the_spec_leaves_open_are_ambiguous() {
        let scales = |s: f64| Attrs {
            consts: vec![ConstInput::Absent, ConstInput::Floats(vec![s as f32])],
            ..Attrs::default()
        };
        let x = || vec![Tensor::from_slice(&[1.0f32, 4.0])];
        // 2 × 1.25 = 2.5: the text's length ratio (1) and the `scales` input (1.25) differ.
        assert!(judge_with("Resize", DType::F32, scales(1.25), x()).2);
        assert!(!judge_with("Resize", DType::F32, scales(1.5), x()).2);
        // pytorch_half_pixel onto one output: the text's coordinate 0, the reference's -0.5.
        let onto_one = |mode: &str| Attrs {
            named: vec![
                ("mode".into(), AttrValue::Str(mode.into())),
                (
                    "coordinate_transformation_mode".into(),
                    AttrValue::Str("pytorch_half_pixel".into()),
                ),
            ],
            consts: vec![
                ConstInput::Absent,
                ConstInput::Absent,
                ConstInput::Ints(vec![1]),
            ],
            ..Attrs::default()
        };
        assert!(judge_with("Resize", DType::F32, onto_one("cubic"), x()).2);
        assert!(!judge_with("Resize", DType::F32, onto_one("nearest"), x()).2);
        let f = |v: &[f32]| vec![Tensor::from_slice(v)];
        assert!(judge("Softplus", DType::F32, f(&[1.0, 100.0])).2);
        assert!(!judge("Softplus", DType::F32, f(&[1.0, 80.0])).2);
        assert!(judge("ReduceLogSumExp", DType::F32, f(&[-98.5, -99.0])).2);
        let ints = vec![Tensor::from_slice(&[3i32, 4])];
        assert!(judge("ReduceL2", DType::I32, ints).2);
        assert!(!judge("ReduceL2", DType::F32, f(&[3.0, 4.0])).2);
    }

    #[test]
    fn a_ceil_mode_window_starting_in_the_right_padding_is_found() {
        let pool = |pads: Vec<i64>| crate::ir::graph::OpNode {
            spec: spec_id("MaxPool").unwrap(),
            sig: Sig::uniform(DType::F32, 1),
            attrs: Attrs {
                named: vec![
                    ("kernel_shape".into(), AttrValue::Ints(vec![2])),
                    ("strides".into(), AttrValue::Ints(vec![2])),
                    ("pads".into(), AttrValue::Ints(pads)),
                    ("ceil_mode".into(), AttrValue::Int(1)),
                ],
                ..Attrs::default()
            },
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
        let pool = |count_include_pad: i64| crate::ir::graph::OpNode {
            spec: spec_id("AveragePool").unwrap(),
            sig: Sig::uniform(DType::F32, 1),
            attrs: Attrs {
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
            },
        };
        // Length 4, pads (0, 1): ceil gives 2 windows, the last covering 3, 4 (the pad) and
        // 5 (past it). At length 5 the last window ends exactly on the pad.
        assert!(ceil_window_past_end_padding(&pool(1), &[1, 1, 4]));
        assert!(!ceil_window_past_end_padding(&pool(0), &[1, 1, 4]));
        assert!(!ceil_window_past_end_padding(&pool(1), &[1, 1, 5]));
    }
}
