//! Fragile values: values no comparison may judge, because a correct compiler may
//! legitimately compute something else there.
//!
//! Three reasons make a value fragile, and everything computed from a fragile value is
//! fragile too. Each operator states its own rules ([`crate::ops::fragility`]: where it jumps,
//! what the specification leaves undefined or open for it, each citing its sentence); this
//! file is the walk that asks them:
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

use super::{Args, RefError};
use crate::emit::onnx::node_parts;
use crate::ir::{DType, Graph, NodeKind, ValueRef};
use crate::ops::fragility::{ArgsReader, NodeValues, Verdict};
use crate::ops::{registry, OpSpec};
use petgraph::stable_graph::NodeIndex;
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};
use tch::Tensor;

/// The absolute margin (elementwise, as `f64`) of a value: how far rounding alone can move
/// it from the value the rule reads.
pub type Margin<'a> = &'a dyn Fn(ValueRef, &Tensor) -> Tensor;

/// Asks op node `n`'s operator `question` about the values computed, with input margins
/// from `margin`; `None` for a leaf or an op without inputs.
fn ask<R>(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
    margin: Margin,
    question: impl FnOnce(&dyn OpSpec, &NodeValues) -> Result<R, RefError>,
) -> Result<Option<R>, RefError> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return Ok(None);
    };
    let data = graph.inputs_of(n);
    if data.is_empty() {
        return Ok(None);
    }
    let outputs = &graph.node(n).outputs;
    let margin_of = |i: usize, x: &Tensor| margin(data[i], x);
    // The evaluation's arguments (data inputs and constant operands), built the first time
    // a rule reads the node as its evaluation does, and shared by every later reading.
    let out: Vec<DType> = outputs.iter().map(|t| t.dtype).collect();
    let args: OnceCell<Args> = OnceCell::new();
    let with_args = |reading: ArgsReader| {
        reading(args.get_or_init(|| {
            let parts = node_parts(op);
            let mut inputs: Vec<Option<Tensor>> = data
                .iter()
                .map(|v| Some(values[v].shallow_clone()))
                .collect();
            let mut dtypes: Vec<Option<DType>> =
                data.iter().map(|v| Some(graph.ty(*v).dtype)).collect();
            for c in &parts.consts {
                dtypes.push(c.as_ref().map(|t| t.data.dtype()));
                inputs.push(c.as_ref().map(super::convert::to_tch));
            }
            Args::new(parts.op_type, parts.attrs, inputs, dtypes, &out)
        }));
    };
    let node = NodeValues {
        attrs: &op.attrs,
        inputs: data.iter().map(|v| &values[v]).collect(),
        dtypes: data.iter().map(|v| graph.ty(*v).dtype).collect(),
        shapes: data.iter().map(|v| graph.ty(*v).shape.as_slice()).collect(),
        out_dtype: outputs[0].dtype,
        outputs: outputs.len(),
        margin: &margin_of,
        with_args: &with_args,
    };
    question(registry()[op.spec].as_ref(), &node).map(Some)
}

/// Whether op node `n` has an input within its margin of a discontinuity, for the values
/// computed ([`OpSpec::near_jump`]).
pub fn on_boundary(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
    margin: Margin,
) -> Result<bool, RefError> {
    Ok(ask(graph, n, values, margin, |spec, node| spec.near_jump(node))?.unwrap_or(false))
}

/// No margin: the undefined and ambiguous rules do not read one.
fn no_margin(_: ValueRef, x: &Tensor) -> Tensor {
    x.zeros_like()
}

/// Why op node `n` computes something the ONNX specification leaves undefined, for the
/// values computed ([`OpSpec::undefined`]): `Some(rule)` names the rule, `None` when the node
/// is defined.
pub fn undefined(graph: &Graph, n: NodeIndex, values: &BTreeMap<ValueRef, Tensor>) -> Verdict {
    Ok(ask(graph, n, values, &no_margin, |spec, node| {
        spec.undefined(node)
    })?
    .flatten())
}

/// Why op node `n`, for the values computed, falls where the ONNX specification admits more
/// than one reading ([`OpSpec::ambiguous`]): `Some(rule)` citing the clauses, `None` when
/// every reading gives one result. Such values are never compared: a compiler that follows
/// any admissible reading is right.
pub fn ambiguous(graph: &Graph, n: NodeIndex, values: &BTreeMap<ValueRef, Tensor>) -> Verdict {
    Ok(ask(graph, n, values, &no_margin, |spec, node| {
        spec.ambiguous(node)
    })?
    .flatten())
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
        // One view of the node for the three questions, asked in this order.
        let judged = |spec: &dyn OpSpec, node: &NodeValues| -> Result<bool, RefError> {
            Ok(spec.undefined(node)?.is_some()
                || spec.ambiguous(node)?.is_some()
                || spec.near_jump(node)?)
        };
        if tainted || tch::no_grad(|| ask(graph, n, values, margin, judged))?.unwrap_or(false) {
            fragile.insert(n);
        }
    }
    Ok(fragile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::TensorType;
    use crate::ops::{spec_id, AttrValue, Attrs, ConstInput, Sig};
    use tch::Kind;

    fn fixed(m: f64) -> impl Fn(ValueRef, &Tensor) -> Tensor {
        move |_, x: &Tensor| x.abs().clamp_min(1.0) * m
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
}
