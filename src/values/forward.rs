//! The value search's forward pass: the graph on the libtorch reference, op by op in
//! topological order, with proxy derivatives on flat ops, stopping at the first op whose
//! outputs hold NaN or Inf.

use crate::gen::TestCase;
use crate::ir::{Graph, NodeKind, ValueRef};
use crate::ops::validity::{Finite, Proxy};
use crate::reference::{self, RefError};
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeMap;
use tch::Tensor;

/// Slope of the proxy derivative where an op's true derivative is zero (ReLU's negative side,
/// Clip's clipped regions…): small and positive, as in LeakyReLU.
pub const PROXY_SLOPE: f64 = 0.1;

/// The leaf values of one forward pass: float leaves from the search's master tensors (cast to
/// the leaf's dtype on the tape), the others from the test case.
pub struct Leaves<'a> {
    case: &'a TestCase,
    masters: &'a BTreeMap<NodeIndex, Tensor>,
}

impl<'a> Leaves<'a> {
    /// Binds `masters` (by leaf) over the values of `case`.
    pub fn new(case: &'a TestCase, masters: &'a BTreeMap<NodeIndex, Tensor>) -> Self {
        Leaves { case, masters }
    }

    fn tensor(&self, leaf: NodeIndex) -> Result<Tensor, RefError> {
        let value = self
            .case
            .values
            .get(&leaf)
            .ok_or_else(|| RefError::Failed(format!("leaf {} has no value", leaf.index())))?;
        let carrier = reference::convert::carrier(value.data.dtype());
        Ok(match self.masters.get(&leaf) {
            Some(m) => m.to_kind(carrier),
            None => reference::to_tch(value),
        })
    }
}

/// The first op (in topological order) whose outputs hold NaN or Inf, with its inputs.
pub struct FailingOp {
    /// The node.
    pub node: NodeIndex,
    /// Its ONNX op type.
    pub op_type: &'static str,
    /// Where it is finite, as it declares.
    pub finite: Option<Finite>,
    /// Its inputs (data inputs, then constant operands), on the autograd tape.
    pub inputs: Vec<Option<Tensor>>,
}

/// Adds a proxy derivative to the output of a flat or non-differentiable element-wise op
/// (what it declares, [`crate::ops::OpSpec::proxy`]): the value stays `out`, the gradient
/// gains `slope · d/dx x` (slope 1 for the rounding functions, whose true derivative is zero
/// almost everywhere; [`PROXY_SLOPE`] for ops flat on part of the line).
fn with_proxy(proxy: Option<Proxy>, x: Option<&Tensor>, out: Tensor) -> Tensor {
    let slope = match proxy {
        Some(Proxy::Identity) => 1.0,
        Some(Proxy::Leaky) => PROXY_SLOPE,
        None => return out,
    };
    match x {
        Some(x)
            if x.is_floating_point()
                && out.is_floating_point()
                && x.size() == out.size()
                && x.requires_grad() =>
        {
            &out + (x - x.detach()).to_kind(out.kind()) * slope
        }
        _ => out,
    }
}

fn all_finite(t: &Tensor) -> bool {
    !t.is_floating_point() || t.isfinite().all().int64_value(&[]) != 0
}

/// Evaluates `graph` on `leaves` up to the first op whose outputs are not all finite, and
/// returns it (`None` when every op's outputs are finite).
pub fn first_non_finite(graph: &Graph, leaves: &Leaves) -> Result<Option<FailingOp>, RefError> {
    let mut values: BTreeMap<ValueRef, Tensor> = BTreeMap::new();
    for n in graph.topo_order() {
        let NodeKind::Op(op) = &graph.node(n).kind else {
            values.insert(ValueRef { node: n, output: 0 }, leaves.tensor(n)?);
            continue;
        };
        let inputs = reference::graph::node_inputs(graph, n, op, &values)?;
        let first = inputs.tensors.first().and_then(Option::as_ref);
        let outputs: Vec<Tensor> = reference::graph::apply_node(n, op, &inputs)?
            .into_iter()
            .map(|o| with_proxy(op.proxy(), first, o))
            .collect();
        if !outputs.iter().all(all_finite) {
            return Ok(Some(FailingOp {
                node: n,
                op_type: op.op_type(),
                finite: op.finite(),
                inputs: inputs.tensors,
            }));
        }
        for (i, o) in outputs.into_iter().enumerate() {
            values.insert(ValueRef { node: n, output: i }, o);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the registry's op `name` declares.
    fn proxy_of(name: &str) -> Option<Proxy> {
        crate::ops::registry()[crate::ops::spec_id(name).expect("a registry op")].proxy()
    }

    #[test]
    fn proxies_keep_values_and_give_flat_ops_a_gradient() {
        let x = Tensor::from_slice(&[-1.5f32, 0.3, 2.7]).set_requires_grad(true);
        let floor = with_proxy(proxy_of("Floor"), Some(&x), x.floor());
        assert_eq!(
            Vec::<f32>::try_from(&floor.detach()).unwrap(),
            vec![-2.0, 0.0, 2.0]
        );
        floor.sum(tch::Kind::Float).backward();
        assert_eq!(
            Vec::<f32>::try_from(&x.grad()).unwrap(),
            vec![1.0, 1.0, 1.0]
        );

        let y = Tensor::from_slice(&[-1.0f32]).set_requires_grad(true);
        let relu = with_proxy(proxy_of("Relu"), Some(&y), y.relu());
        assert_eq!(relu.double_value(&[0]), 0.0);
        relu.sum(tch::Kind::Float).backward();
        assert!(
            y.grad().double_value(&[0]) > 0.0,
            "ReLU's flat side gets a positive slope"
        );
    }
}
