//! Whole-graph evaluation on the reference: every value of a generated graph, in topological
//! order, with each node's constant operands built exactly as the ONNX emitter builds them
//! ([`crate::emit::onnx::node_parts`]).

use super::{apply_typed, convert, RefError};
use crate::emit::onnx::node_parts;
use crate::ir::graph::OpNode;
use crate::ir::{DType, Graph, NodeKind, ValueRef};
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeMap;

/// Computes every value of `graph`. `leaves` holds a tensor (in its dtype's carrier, see
/// [`convert`]) for every input and weight leaf; leaves that require gradients keep them
/// through every float op.
pub fn evaluate(
    graph: &Graph,
    leaves: &BTreeMap<NodeIndex, tch::Tensor>,
) -> Result<BTreeMap<ValueRef, tch::Tensor>, RefError> {
    let mut values: BTreeMap<ValueRef, tch::Tensor> = BTreeMap::new();
    for n in graph.topo_order() {
        let node = graph.node(n);
        match &node.kind {
            NodeKind::Op(op) => {
                let inputs = node_inputs(graph, n, op, &values)?;
                for (output, t) in apply_node(n, op, &inputs)?.into_iter().enumerate() {
                    values.insert(ValueRef { node: n, output }, t);
                }
            }
            _ => {
                let t = leaves
                    .get(&n)
                    .ok_or_else(|| RefError::Failed(format!("no value for leaf {}", n.index())))?;
                values.insert(ValueRef { node: n, output: 0 }, t.shallow_clone());
            }
        }
    }
    Ok(values)
}

/// The inputs of op node `n` in ONNX order: its data inputs (from `values`) and then its
/// constant operands, built exactly as the emitter builds them; each with its dtype.
pub fn node_inputs(
    graph: &Graph,
    n: NodeIndex,
    op: &OpNode,
    values: &BTreeMap<ValueRef, tch::Tensor>,
) -> Result<NodeInputs, RefError> {
    let parts = node_parts(op);
    let data = graph.inputs_of(n);
    let mut inputs = NodeInputs {
        tensors: Vec::with_capacity(data.len() + parts.consts.len()),
        dtypes: Vec::with_capacity(data.len() + parts.consts.len()),
        output_dtypes: graph.node(n).outputs.iter().map(|t| t.dtype).collect(),
    };
    for v in &data {
        let t = values
            .get(v)
            .ok_or_else(|| RefError::Failed(format!("{v:?} used before computed")))?;
        inputs.tensors.push(Some(t.shallow_clone()));
        inputs.dtypes.push(Some(graph.ty(*v).dtype));
    }
    for c in &parts.consts {
        inputs.dtypes.push(c.as_ref().map(|t| t.data.dtype()));
        inputs.tensors.push(c.as_ref().map(convert::to_tch));
    }
    Ok(inputs)
}

/// The inputs of one op node, as [`node_inputs`] assembles them.
pub struct NodeInputs {
    /// Data inputs then constant operands (`None` for an absent optional one).
    pub tensors: Vec<Option<tch::Tensor>>,
    /// The dtype of each present input.
    pub dtypes: Vec<Option<DType>>,
    /// The node's output dtypes.
    pub output_dtypes: Vec<DType>,
}

/// Runs op node `n` on its assembled inputs.
pub fn apply_node(
    n: NodeIndex,
    op: &OpNode,
    inputs: &NodeInputs,
) -> Result<Vec<tch::Tensor>, RefError> {
    let parts = node_parts(op);
    apply_typed(
        parts.op_type,
        parts.attrs,
        &inputs.tensors,
        &inputs.dtypes,
        &inputs.output_dtypes,
    )
    .map_err(|e| match e {
        RefError::Failed(m) => RefError::Failed(format!("node {}: {m}", n.index())),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Limits, Menu, TestCase};

    #[test]
    fn float32_graphs_stay_on_the_autograd_tape() {
        // Every op of a float32-only graph keeps its outputs differentiable in the leaves.
        let f32_only: std::collections::BTreeSet<DType> = [DType::F32].into_iter().collect();
        let menu = Menu::everything().swarm(u128::MAX, &f32_only);
        for seed in 0..30u8 {
            let bytes: Vec<u8> = (0..700u32)
                .map(|i| (i.wrapping_mul(97) ^ (u32::from(seed) * 6151)) as u8)
                .collect();
            let case = TestCase::decode(&bytes, &menu, &Limits::exact(5));
            let leaves: BTreeMap<NodeIndex, tch::Tensor> = case
                .values
                .iter()
                .map(|(n, t)| (*n, convert::to_tch(t).set_requires_grad(true)))
                .collect();
            let values = evaluate(&case.graph, &leaves).unwrap();
            let mut total = tch::Tensor::from(0.0f32);
            for v in case.graph.outputs() {
                let t = &values[&v];
                assert!(t.requires_grad(), "seed {seed}: {v:?} is off the tape");
                total += t.f_sum(tch::Kind::Float).unwrap();
            }
            total.f_backward().unwrap();
            assert!(leaves.values().any(|l| l.grad().defined()), "seed {seed}");
        }
    }

    #[test]
    fn gradients_flow_from_outputs_to_float_leaves() {
        let t = crate::ir::TensorType::new(DType::F32, vec![3]);
        let mut g = Graph::new();
        let x = g.add_leaf(NodeKind::Input, t.clone());
        let op = crate::ir::graph::OpNode {
            spec: crate::ops::spec_id("Sin").unwrap(),
            sig: crate::ops::Sig::uniform(DType::F32, 1),
            attrs: crate::ops::Attrs::default(),
        };
        let y = g.add_op(op, vec![t], &[ValueRef { node: x, output: 0 }]);
        let leaf = tch::Tensor::from_slice(&[0.0f32, 1.0, 2.0]).set_requires_grad(true);
        let leaves = BTreeMap::from([(x, leaf.shallow_clone())]);
        let values = evaluate(&g, &leaves).unwrap();
        let out = &values[&ValueRef { node: y, output: 0 }];
        out.sum(tch::Kind::Float).backward();
        let grad = super::super::float_values(&leaf.grad()).unwrap();
        for (g, x) in grad.iter().zip([0.0f64, 1.0, 2.0]) {
            assert!((g - x.cos()).abs() < 1e-6);
        }
    }
}
