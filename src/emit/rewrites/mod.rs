//! HirFuzz's function and call mutations, expressed in ONNX (`ort_cpu_mutated`).
//!
//! A generated model is rewritten after emission by a short sequence of semantics-preserving
//! [`Rewrite`]s decoded from bytes ([`RewritePlan`]):
//! - **outline** (un-inline): a run of nodes becomes a model-local function (`FunctionProto`
//!   in the `dlcfuzz` domain) and one call node;
//! - **wrap**: a function is wrapped in a new function whose body only calls it, and its call
//!   sites call the wrapper; repeated, this builds chains of wrappers;
//! - **inline**: a call node is replaced by its function's body;
//! - **if**: a run of nodes moves into the then-branch of an `If` whose condition is a
//!   constant true or, EMI-style, an input-derived comparison that holds on the fixed inputs;
//!   the else-branch yields zeros, so taking it shows;
//! - **loop**: a run of nodes moves into the body of a `Loop` with trip count 1.
//!
//! Each rewrite reads a fixed 4-byte chunk and indexes the current node list modulo its
//! length, so every byte string applies to every model, and replay is deterministic. The
//! oracle compares the rewritten model at every level against the reference of the original
//! graph (`pipeline`).

mod calls;
mod control;
pub(crate) mod nodes;
pub mod scope;
pub mod violation;

use crate::emit::onnx::{pb, value_name};
use crate::gen::TestCase;
use crate::headers::Mutations;
pub use crate::headers::{Rewrite, RewritePlan, MAX_REWRITES, PLAN_BYTES, REWRITE_BYTES};
use crate::ir::{Tensor, TensorType};
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeMap;

/// The domain of model-local functions.
pub const DOMAIN: &str = "dlcfuzz";

/// What the rewrites need to know about the model's values.
pub(crate) struct Rewriter {
    pub(crate) model: pb::ModelProto,
    /// The type of every value name in scope anywhere (grows as names are minted).
    pub(crate) types: BTreeMap<String, TensorType>,
    /// Model inputs and their fixed values (the EMI profile).
    inputs: Vec<(String, Tensor)>,
    /// Counter for fresh names.
    fresh: usize,
}

impl Rewriter {
    pub(crate) fn graph(&mut self) -> &mut pb::GraphProto {
        self.model
            .graph
            .as_mut()
            .expect("emitted models have a graph")
    }

    /// A fresh name with `prefix`.
    pub(crate) fn mint(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    /// The main graph's output names.
    fn output_names(&mut self) -> Vec<String> {
        self.graph()
            .output
            .iter()
            .filter_map(|v| v.name.clone())
            .collect()
    }

    /// `[start, end)` of the main graph for a `(start, len)` pair read from bytes.
    fn span(&mut self, start: u8, len: u8) -> Option<(usize, usize)> {
        let n = self.graph().node.len();
        if n == 0 {
            return None;
        }
        let s = usize::from(start) % n;
        let l = 1 + usize::from(len) % (n - s);
        Some((s, s + l))
    }

    /// Registers the `dlcfuzz` domain in the model's opset imports (once).
    fn import_domain(&mut self) {
        if !self
            .model
            .opset_import
            .iter()
            .any(|o| o.domain.as_deref() == Some(DOMAIN))
        {
            self.model.opset_import.push(opset(DOMAIN, 1));
        }
    }

    /// Applies one rewrite; `false` when it did not apply (e.g. no function to wrap yet).
    fn apply(&mut self, rewrite: Rewrite) -> bool {
        match rewrite {
            Rewrite::Outline { start, len } => self.outline(start, len),
            Rewrite::Wrap { function } => self.wrap(function),
            Rewrite::Inline { call } => self.inline(call),
            Rewrite::If { start, len, emi } => self.wrap_in_if(start, len, emi),
            Rewrite::Loop { start, len } => self.wrap_in_loop(start, len),
        }
    }
}

/// An opset import.
fn opset(domain: &str, version: i64) -> pb::OperatorSetIdProto {
    pb::OperatorSetIdProto {
        domain: Some(domain.into()),
        version: Some(version),
    }
}

/// Applies `mutations` to `model` (the plain emission of `case`, whose inputs are
/// `inputs`): first the level-0 violation, if any, then the rewrite plan. Returns the names
/// of what applied, in order (`violation:<kind>`, then rewrite names).
pub fn apply(
    case: &TestCase,
    model: &mut pb::ModelProto,
    inputs: &[(NodeIndex, String)],
    mutations: &Mutations,
) -> Vec<String> {
    if mutations.violation.is_none() && mutations.plan.rewrites.is_empty() {
        return Vec::new();
    }
    let g = &case.graph;
    let types = g
        .values()
        .into_iter()
        .map(|v| (value_name(g, v), g.ty(v).clone()))
        .collect();
    let inputs = inputs
        .iter()
        .map(|(n, name)| (name.clone(), case.values[n].clone()))
        .collect();
    let mut rewriter = Rewriter {
        model: std::mem::take(model),
        types,
        inputs,
        fresh: 0,
    };
    let mut applied = Vec::new();
    if let Some(v) = mutations.violation {
        if rewriter.violate(v) {
            applied.push(format!("violation:{}", v.name()));
        }
    }
    applied.extend(
        mutations
            .plan
            .rewrites
            .iter()
            .filter(|r| rewriter.apply(**r))
            .map(|r| r.name().to_string()),
    );
    *model = rewriter.model;
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_decode_totally_and_consume_their_header() {
        // The short third chunk reads as [9, 0, 0, 0] (missing bytes are zero): an inline.
        let (plan, rest) = RewritePlan::split(&[1, 0, 3, 0, 2, 0, 0, 0, 9]);
        assert_eq!(
            plan.rewrites,
            vec![
                Rewrite::Outline { start: 0, len: 3 },
                Rewrite::Wrap { function: 0 },
                Rewrite::Inline { call: 0 }
            ]
        );
        assert!(rest.is_empty());
        let (empty, rest) = RewritePlan::split(&[]);
        assert!(empty.rewrites.is_empty() && rest.is_empty());
        let long: Vec<u8> = (0..40).collect();
        assert_eq!(RewritePlan::split(&long).1.len(), 40 - PLAN_BYTES);
    }
}
