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

use super::precision::ACCUMULATING;
use super::{resize, with_args, RefError};
use crate::emit::onnx::node_parts;
use crate::ir::{DType, Graph, NodeKind, ValueRef};
use crate::ops::numeric::{self, int_range};
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
    if let Some(jumps) = crate::ops::unary::declared(op.op_type())
        .and_then(|u| u.jumps.map(|jumps| jumps(&u.float_values(&op.attrs.named))))
    {
        // A declared jump (Sign at 0, ThresholdedRelu at alpha, Shrink at ±lambd).
        return Ok(jumps
            .into_iter()
            .any(|j| any(&(&x - j).abs().le_tensor(&mx))));
    }
    Ok(match op.op_type() {
        "Floor" | "Ceil" => near_grid(&x, &mx, 0.0),
        "Round" => near_grid(&x, &mx, 0.5),
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
        // Domain edges: a value computed by cancellation can land on either side of them
        // (`Sqrt(a - b)` with a ≈ b is 0 in one compiler and NaN in another).
        "Sqrt" | "Log" | "Reciprocal" | "Pow" => any(&x.abs().le_tensor(&mx)),
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
        "Asin" | "Acos" | "Atanh" => any(&(x.abs() - 1.0).abs().le_tensor(&mx)),
        "Acosh" => any(&(&x - 1.0).abs().le_tensor(&mx)),
        "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "Equal" => {
            let (y, my) = second();
            any(&(&x - &y).abs().le_tensor(&(mx + my)))
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

/// Whether a nearest-mode Resize picks a source index from a coordinate that sits on a
/// rounding boundary: the exact coordinate is an integer (or a tie), and a compiler that
/// computes it in `float` legitimately lands on either side.
fn resize_ambiguous(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<bool, RefError> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return Ok(false);
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
    with_args(
        parts.op_type,
        parts.attrs,
        inputs,
        dtypes,
        &out,
        resize::nearest_ambiguous,
    )
}

/// Why op node `n` computes something the ONNX specification leaves undefined, for the
/// values computed: `Some(rule)` names the rule, `None` when the node is defined.
pub fn undefined(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<Option<&'static str>, RefError> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return Ok(None);
    };
    let inputs = graph.inputs_of(n);
    let Some(first) = inputs.first() else {
        return Ok(None);
    };
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
        // Resize: linear and cubic interpolation of an integer tensor form a fractional
        // value, and the operator text never says how it becomes an integer again (onnx/onnx
        // issue 3390, "Rounding behavior of Resize when interpolating on integral types is
        // unspecified"): truncation, rounding half up and half to even are all in use.
        "Resize" if !in_dtype.is_float() && resize::interpolates(node_parts(op).attrs) => {
            Some("Resize: rounding of an interpolated integer value is unspecified")
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
        _ if ACCUMULATING.contains(&op_type) && in_dtype.is_int() => {
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

/// Whether an AveragePool that excludes padding from its counts has a window (along some
/// spatial axis) whose taps all fall into the padding.
fn all_padding_window(op: &crate::ir::graph::OpNode, x: &[usize]) -> bool {
    let int = |name: &str| match op.attrs.get(name) {
        Some(AttrValue::Int(v)) => Some(*v),
        _ => None,
    };
    let ints = |name: &str| match op.attrs.get(name) {
        Some(AttrValue::Ints(v)) => Some(v.clone()),
        _ => None,
    };
    if int("count_include_pad").unwrap_or(0) != 0 || x.len() < 3 {
        return false;
    }
    let spatial = &x[2..];
    let n = spatial.len();
    let kernel = ints("kernel_shape").unwrap_or_default();
    let strides = ints("strides").unwrap_or_else(|| vec![1; n]);
    let pads = ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
    let dilations = ints("dilations").unwrap_or_else(|| vec![1; n]);
    let ceil = int("ceil_mode").unwrap_or(0) == 1;
    (0..n).any(|i| {
        let (Some(k), Some(s), Some(d)) = (kernel.get(i), strides.get(i), dilations.get(i)) else {
            return false;
        };
        let (pb, pe) = (
            pads.get(i).copied().unwrap_or(0),
            pads.get(n + i).copied().unwrap_or(0),
        );
        let len = spatial[i] as i64;
        let span = len + pb + pe - (d * (k - 1) + 1);
        if span < 0 || *s < 1 {
            return false;
        }
        let out = if ceil {
            (span + s - 1) / s + 1
        } else {
            span / s + 1
        };
        (0..out).any(|o| {
            let start = o * s - pb;
            (0..*k).all(|j| !(0..len).contains(&(start + j * d)))
        })
    })
}

/// The op nodes of `graph` that are fragile for the computed `values` under `margin`: on a
/// boundary or undefined themselves, downstream of one that is, or listed in `seeds`.
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
                Ok(
                    undefined(graph, n, values)?.is_some()
                        || on_boundary(graph, n, values, margin)?,
                )
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
    fn judge(op: &str, dtype: DType, xs: Vec<Tensor>) -> (bool, bool) {
        judge_with(op, dtype, Attrs::default(), xs)
    }

    /// [`judge`] with attributes.
    fn judge_with(op: &str, dtype: DType, attrs: Attrs<i64>, xs: Vec<Tensor>) -> (bool, bool) {
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
        let n = g.add_op(node, vec![t], &refs);
        let m = fixed(1e-3);
        (
            on_boundary(&g, n, &values, &m).unwrap(),
            undefined(&g, n, &values).unwrap().is_some(),
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
    fn interpolating_an_integer_resize_is_undefined_and_picking_is_not() {
        let mode = |m: &str| Attrs {
            named: vec![("mode".into(), AttrValue::Str(m.into()))],
            consts: vec![ConstInput::Absent, ConstInput::Floats(vec![1.5])],
            ..Attrs::default()
        };
        let x = || vec![Tensor::from_slice(&[1i64, 4]).to_kind(Kind::Uint8)];
        assert!(judge_with("Resize", DType::U8, mode("linear"), x()).1);
        assert!(judge_with("Resize", DType::U8, mode("cubic"), x()).1);
        assert!(!judge_with("Resize", DType::U8, mode("nearest"), x()).1);
        let floats = vec![Tensor::from_slice(&[1.0f32, 4.0])];
        assert!(!judge_with("Resize", DType::F32, mode("linear"), floats).1);
    }
}
