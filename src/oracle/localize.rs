//! Localizing a disagreement between the reference and every level of a backend.
//!
//! When all levels agree with each other but not with the reference, the fault is in a kernel
//! the levels share or in the reference itself, and the op-type set of the whole graph says
//! little. The model is emitted again with every operator output exposed, run unoptimized,
//! and compared value by value with the reference in topological order: the first op whose
//! output differs (all its inputs agreeing) is the one at fault. One explanation is then
//! checked before anything is reported, **conditioning**: the reference, applied to the
//! backend's *own* inputs of that op, reproduces the backend's output. The inputs differed
//! only within tolerance and the op amplified that (Tan near a pole, a float16 chain):
//! rounding noise, not a kernel bug. (What the spec leaves open, such as the rounding of an
//! interpolated integer Resize, is never compared in the first place: `reference::fragile`.)

use crate::backend::Backend;
use crate::emit::onnx::emit_exposing_all;
use crate::gen::TestCase;
use crate::ir::{NodeKind, Tensor, ValueRef};
use crate::reference::compare::compare;
use crate::reference::graph::{apply_node, node_inputs};
use crate::reference::{from_tch, to_tch, TorchReference};
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeMap;

/// The first op whose unoptimized output differs from the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The node.
    pub node: NodeIndex,
    /// Its op type.
    pub op_type: &'static str,
    /// Its dtype signature (`i32,i64->i32`).
    pub sig: String,
    /// How the output differs.
    pub detail: String,
    /// Whether the reference on the backend's own inputs of the op reproduces the backend's
    /// output (the difference was amplified rounding upstream).
    pub conditioning: bool,
}

impl Divergence {
    /// The finding signature: the op and its dtypes, whatever graph it sat in.
    pub fn signature(&self) -> String {
        format!("reference-mismatch:{}({})", self.op_type, self.sig)
    }
}

/// Finds the first op of `case` whose output, run unoptimized on `backend`, differs from the
/// reference. `Ok(None)` when every exposed value agrees (the disagreement needs the
/// original outputs' context); `Err` when the exposed model cannot be run.
pub fn localize(backend: &dyn Backend, case: &TestCase) -> Result<Option<Divergence>, String> {
    let model = emit_exposing_all(case);
    let inputs: Vec<&Tensor> = model.inputs.iter().map(|(n, _)| &case.values[n]).collect();
    let got = backend
        .run(&model, &inputs, 0)
        .map_err(|e| e.message.clone())?;
    let reference = TorchReference.judge(case, &model);
    let fragile = reference.fragile();
    let expected = reference.outputs?;
    let envelope = reference.envelope;
    // Each exposed value against its exact result (its own precision envelope), in
    // topological order; the fixed tolerances only when the reference had no envelope.
    let divergence = (0..model.outputs.len()).find_map(|i| {
        let fragile = fragile.get(i).copied().unwrap_or(false);
        if fragile || !expected[i].is_finite() {
            return None;
        }
        match &envelope {
            Some(env) => env.deviation_of(i, &got[i]).map(|d| (i, d)),
            None => compare(&expected[i], &got[i]).map(|detail| (i, detail)),
        }
    });
    let Some((i, detail)) = divergence else {
        return Ok(None);
    };
    let v = model.outputs[i].0;
    let NodeKind::Op(op) = &case.graph.node(v.node).kind else {
        return Err("an exposed output is not an op output".into());
    };
    // The backend's own values of the op's inputs (exposed op outputs, or leaves).
    let backend_value = |u: &ValueRef| match model.outputs.iter().position(|(w, _)| w == u) {
        Some(k) => to_tch(&got[k]),
        None => to_tch(&case.values[&u.node]),
    };
    let values: BTreeMap<ValueRef, tch::Tensor> = case
        .graph
        .inputs_of(v.node)
        .iter()
        .map(|u| (*u, backend_value(u)))
        .collect();
    let again = tch::no_grad(|| {
        let ins = node_inputs(&case.graph, v.node, op, &values)?;
        let outs = apply_node(v.node, op, &ins)?;
        from_tch(&outs[v.output], got[i].data.dtype())
    });
    let conditioning = again.is_ok_and(|t| match &envelope {
        Some(env) => env.agree(i, &t, &got[i]),
        None => compare(&t, &got[i]).is_none(),
    });
    Ok(Some(Divergence {
        node: v.node,
        op_type: op.op_type(),
        sig: op.sig.key(),
        detail,
        conditioning,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn divergence(op_type: &'static str, sig: &str) -> Divergence {
        Divergence {
            node: NodeIndex::new(3),
            op_type,
            sig: sig.into(),
            detail: String::new(),
            conditioning: false,
        }
    }

    #[test]
    fn divergences_sign_by_op_and_dtypes() {
        assert_eq!(
            divergence("Mod", "i32,i32->i32").signature(),
            "reference-mismatch:Mod(i32,i32->i32)"
        );
    }
}
