//! Fragile outputs: outputs that depend on a discontinuous op whose input sits on (or within
//! rounding error of) a boundary, where a correct compiler may legitimately differ from the
//! reference: an ArgMax/ArgMin tie, a Floor/Ceil/Cast-to-integer input next to an integer, a
//! Round input next to a half (or a QuantizeLinear input whose quotient by the scale is), a
//! comparison between nearly equal values, a Sign input next to
//! zero, an input next to the edge of an op's domain (Sqrt, Log, Pow and Reciprocal near 0, a
//! divisor near 0, Asin/Acos/Atanh near ±1, Acosh near 1). The oracle never compares fragile outputs, so these cannot become false reports.

use super::RefError;
use crate::ir::{DType, Graph, NodeKind, ValueRef};
use crate::ops::{AttrValue, ConstInput};
use petgraph::stable_graph::NodeIndex;
use std::collections::{BTreeMap, BTreeSet};
use tch::{Kind, Tensor};

/// Relative distance to a boundary below which an input counts as on it, per float dtype
/// (the oracle's tolerances).
fn margin(dtype: DType) -> f64 {
    crate::oracle::tolerance(dtype).1.max(1e-6)
}

fn any(t: &Tensor) -> bool {
    t.any().int64_value(&[]) != 0
}

/// Whether `x` (float) holds a value within `m` (relative) of an integer, or of a half when
/// `halves`.
fn near_grid(x: &Tensor, m: f64, halves: bool) -> bool {
    let x = x.to_kind(Kind::Double);
    let shifted = if halves { &x - 0.5 } else { x.shallow_clone() };
    let distance = (&shifted - shifted.round()).abs();
    any(&distance.le_tensor(&(x.abs().clamp_min(1.0) * m)))
}

/// Whether op node `n` is on a boundary for the values computed.
fn on_boundary(
    graph: &Graph,
    n: NodeIndex,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<bool, RefError> {
    let NodeKind::Op(op) = &graph.node(n).kind else {
        return Ok(false);
    };
    let inputs = graph.inputs_of(n);
    let Some(first) = inputs.first() else {
        return Ok(false);
    };
    let dtype = graph.ty(*first).dtype;
    if !dtype.is_float() {
        return Ok(false);
    }
    let m = margin(dtype);
    let x = &values[first];
    let out_dtype = graph.node(n).outputs[0].dtype;
    Ok(match op.op_type() {
        "Floor" | "Ceil" => near_grid(x, m, false),
        "Round" => near_grid(x, m, true),
        "QuantizeLinear" => {
            let scale = match op.attrs.consts.first() {
                Some(ConstInput::Scalar(_, scale)) => *scale,
                _ => 1.0,
            };
            near_grid(&(x / scale), m, true)
        }
        "Cast" => !out_dtype.is_float() && near_grid(x, m, false),
        "Sign" => any(&x.abs().le(m)),
        // Domain edges: a value computed by cancellation can land on either side of them
        // (`Sqrt(a - b)` with a ≈ b is 0 in one compiler and NaN in another).
        "Sqrt" | "Log" | "Reciprocal" | "Pow" => any(&x.abs().le(m)),
        "Div" | "Mod" => {
            let y = &values[&inputs[1]];
            y.is_floating_point() && any(&y.abs().le(m))
        }
        "Asin" | "Acos" | "Atanh" => any(&(x.abs() - 1.0).abs().le(m)),
        "Acosh" => any(&(x - 1.0).abs().le(m)),
        "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "Equal" => {
            let y = &values[&inputs[1]];
            let (a, b) = (x.to_kind(Kind::Double), y.to_kind(Kind::Double));
            let scale = a.abs().maximum(&b.abs()).clamp_min(1.0) * m;
            any(&(&a - &b).abs().le_tensor(&scale))
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
                let (top, _) = x.to_kind(Kind::Double).f_topk(2, axis, largest, true)?;
                let gap = (top.select(axis, 0) - top.select(axis, 1)).abs();
                let scale = top.select(axis, 0).abs().clamp_min(1.0) * m;
                any(&gap.le_tensor(&scale))
            }
        }
        _ => false,
    })
}

/// The op nodes of `graph` that are fragile for the computed `values`: on a boundary
/// themselves, or downstream of one that is.
pub fn fragile_nodes(
    graph: &Graph,
    values: &BTreeMap<ValueRef, Tensor>,
) -> Result<BTreeSet<NodeIndex>, RefError> {
    let mut fragile: BTreeSet<NodeIndex> = BTreeSet::new();
    for n in graph.topo_order() {
        let tainted = graph.inputs_of(n).iter().any(|v| fragile.contains(&v.node));
        if tainted || tch::no_grad(|| on_boundary(graph, n, values))? {
            fragile.insert(n);
        }
    }
    Ok(fragile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_and_tie_checks() {
        let m = 1e-3;
        assert!(near_grid(
            &Tensor::from_slice(&[0.3f32, 2.0000001]),
            m,
            false
        ));
        assert!(!near_grid(&Tensor::from_slice(&[0.3f32, 2.4]), m, false));
        assert!(near_grid(&Tensor::from_slice(&[1.5f32]), m, true));
        assert!(!near_grid(&Tensor::from_slice(&[1.0f32]), m, true));
    }

    #[test]
    fn values_at_a_domain_edge_are_fragile() {
        use crate::ir::{Graph, TensorType};
        use crate::ops::{spec_id, Attrs, Sig};
        let edge = |op: &str, v: f32| {
            let t = TensorType::new(DType::F32, vec![2]);
            let mut g = Graph::new();
            let x = g.add_leaf(NodeKind::Input, t.clone());
            let xv = ValueRef { node: x, output: 0 };
            let node = crate::ir::graph::OpNode {
                spec: spec_id(op).unwrap(),
                sig: Sig::uniform(DType::F32, 1),
                attrs: Attrs::default(),
            };
            let n = g.add_op(node, vec![t], &[xv]);
            let values = BTreeMap::from([(xv, Tensor::from_slice(&[0.5f32, v]))]);
            on_boundary(&g, n, &values).unwrap()
        };
        assert!(edge("Sqrt", 1e-7));
        assert!(!edge("Sqrt", 0.25));
        assert!(edge("Asin", -0.99999));
        assert!(!edge("Asin", 0.9));
        assert!(edge("Acosh", 1.0000001));
        assert!(!edge("Acosh", 1.5));
    }
}
