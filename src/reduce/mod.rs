//! Test-case reduction by delta debugging on the graph.
//!
//! A candidate is the original fuzz bytes plus an edit list ([`Edit`]); a candidate is kept
//! when running it still gives the same finding (the caller's `still_fails`, which compares
//! [`reduction_key`]s). The search:
//! 1. ddmin over the operator nodes ([`Edit::KeepOnly`]): the smallest set of nodes found to
//!    keep, every value they read from a dropped node fed as an input with the reference's
//!    value;
//! 2. one pass of single-node edits to a fixpoint: bypass a node with one of its inputs of the
//!    same type, drop graph outputs;
//! 3. turn all model inputs into constants, then all weights into inputs (each kept only when
//!    the finding survives).
//!
//! Every step is bounded by the caller's budget; the result is always a valid edit list (at
//! worst empty).

pub mod ddmin;
pub mod edit;
pub mod program;

pub use edit::{apply_all, Edit};

use crate::gen::TestCase;
use crate::ir::NodeKind;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// What a reduction did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reduction {
    /// The edits to apply, in order, to the decoded case.
    pub edits: Vec<Edit>,
    /// Operator nodes before.
    pub original_nodes: usize,
    /// Operator nodes after.
    pub reduced_nodes: usize,
    /// Candidates run.
    pub tests: usize,
    /// Whether the budget ran out before the search finished.
    pub out_of_budget: bool,
    /// Wall-clock seconds spent.
    pub seconds: f64,
}

impl Reduction {
    /// Reduced size over original size, in operator nodes (1.0: nothing removed).
    pub fn ratio(&self) -> f64 {
        self.reduced_nodes as f64 / self.original_nodes.max(1) as f64
    }

    /// One line for the user: the sizes before and after, and where the finding folder
    /// `finding`'s report is.
    pub fn summary(&self, finding: &std::path::Path) -> String {
        format!(
            "reduced {} -> {} operator nodes; report in {}",
            self.original_nodes,
            self.reduced_nodes,
            finding.join("report.md").display()
        )
    }
}

/// The part of a finding signature that a reduction must keep: the signature without the
/// trailing op-type list, which names what the graph contains rather than what failed
/// (`inconsistency:basic:Add,Mul` → `inconsistency:basic`).
pub fn reduction_key(signature: &str) -> String {
    let mut parts: Vec<&str> = signature.split(':').collect();
    let lists_ops = matches!(
        parts.first(),
        Some(&"inconsistency") | Some(&"reference-mismatch") | Some(&"hang") | Some(&"oom")
    ) || parts.last().is_some_and(|p| p.starts_with("ops="));
    let op_list = parts.last().is_some_and(|p| {
        let p = p.trim_start_matches("ops=");
        !p.is_empty()
            && p.split(',').all(|op| {
                op.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                    && op.chars().all(|c| c.is_ascii_alphanumeric())
            })
    });
    if lists_ops && op_list && parts.len() > 1 {
        parts.pop();
    }
    parts.join(":")
}

struct Search<'a, F: FnMut(&[Edit]) -> bool> {
    still_fails: F,
    accepted: Vec<Edit>,
    case: &'a TestCase,
    deadline: Instant,
    tests: usize,
    out_of_budget: bool,
}

impl<F: FnMut(&[Edit]) -> bool> Search<'_, F> {
    /// Runs `accepted ++ [edit]`; keeps the edit when the finding survives.
    fn try_edit(&mut self, edit: Edit) -> bool {
        self.try_edits(vec![edit])
    }

    /// Runs `accepted ++ edits`; keeps the edits when the finding survives.
    fn try_edits(&mut self, edits: Vec<Edit>) -> bool {
        if Instant::now() >= self.deadline {
            self.out_of_budget = true;
            return false;
        }
        let mut candidate = self.accepted.clone();
        candidate.extend(edits);
        if apply_all(&mut self.case.clone(), &candidate).is_err() {
            return false;
        }
        self.tests += 1;
        let kept = (self.still_fails)(&candidate);
        if kept {
            self.accepted = candidate;
        }
        kept
    }

    fn current(&self) -> TestCase {
        let mut c = self.case.clone();
        apply_all(&mut c, &self.accepted).expect("accepted edits apply");
        c
    }

    /// ddmin over the operator nodes to keep.
    fn ddmin_nodes(&mut self) {
        let nodes: Vec<usize> = self
            .current()
            .graph
            .op_nodes()
            .iter()
            .map(|n| n.index())
            .collect();
        ddmin::ddmin(&nodes, |keep| self.try_edit(Edit::KeepOnly(keep.to_vec())));
    }

    /// Bypasses and output drops, one node at a time, until none applies.
    fn single_node_edits(&mut self) {
        loop {
            let case = self.current();
            let mut changed = false;
            for node in case.graph.op_nodes().into_iter().rev() {
                if self.out_of_budget {
                    return;
                }
                if case.graph.readers(node).is_empty()
                    && self.try_edit(Edit::DropOutput(node.index()))
                {
                    changed = true;
                    break;
                }
                let inputs = case.graph.inputs_of(node).len();
                if (0..inputs).any(|input| {
                    self.try_edit(Edit::Bypass {
                        node: node.index(),
                        input,
                    })
                }) {
                    changed = true;
                    break;
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// Every leaf of one kind retagged at once (except leaves an earlier edit retagged).
    fn retag_all(&mut self, kind: NodeKind, edit: fn(usize) -> Edit) {
        let retagged: Vec<usize> = self
            .accepted
            .iter()
            .filter_map(|e| match e {
                Edit::Freeze(n) | Edit::Thaw(n) => Some(*n),
                _ => None,
            })
            .collect();
        let leaves: Vec<_> = self
            .current()
            .graph
            .leaves(&kind)
            .into_iter()
            .filter(|n| !retagged.contains(&n.index()))
            .collect();
        if leaves.is_empty() || self.out_of_budget {
            return;
        }
        self.try_edits(leaves.iter().map(|n| edit(n.index())).collect());
    }
}

/// Reduces `case` (the decoded, prepared case of the finding): returns the edits that keep
/// `still_fails` true, within `budget`.
pub fn reduce(
    case: &TestCase,
    budget: Duration,
    still_fails: impl FnMut(&[Edit]) -> bool,
) -> Reduction {
    let start = Instant::now();
    let mut search = Search {
        still_fails,
        accepted: Vec::new(),
        case,
        deadline: start + budget,
        tests: 0,
        out_of_budget: false,
    };
    search.ddmin_nodes();
    search.single_node_edits();
    search.retag_all(NodeKind::Input, Edit::Freeze);
    search.retag_all(NodeKind::Weight, Edit::Thaw);
    let reduced_nodes = search.current().graph.op_count();
    Reduction {
        original_nodes: case.graph.op_count(),
        reduced_nodes,
        tests: search.tests,
        out_of_budget: search.out_of_budget,
        seconds: start.elapsed().as_secs_f64(),
        edits: search.accepted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Limits, Menu};

    #[test]
    fn a_reduction_summarizes_itself_in_one_line() {
        let reduction = Reduction {
            edits: Vec::new(),
            original_nodes: 9,
            reduced_nodes: 2,
            tests: 40,
            out_of_budget: false,
            seconds: 1.5,
        };
        let line = reduction.summary(std::path::Path::new("out/f1"));
        assert_eq!(
            line,
            "reduced 9 -> 2 operator nodes; report in out/f1/report.md"
        );
    }

    #[test]
    fn reduction_keys_drop_the_op_list_only() {
        assert_eq!(
            reduction_key("inconsistency:basic:Add,Mul"),
            "inconsistency:basic"
        );
        assert_eq!(
            reduction_key("reference-mismatch:Mod(u64,u64->u64)"),
            "reference-mismatch:Mod(u64,u64->u64)"
        );
        assert_eq!(
            reduction_key("crash:basic:Node (N) Op (Clip) type mismatch"),
            "crash:basic:Node (N) Op (Clip) type mismatch"
        );
        assert_eq!(reduction_key("hang:Add,Tan"), "hang");
        assert_eq!(reduction_key("crash:SIGSEGV:ops=Relu,Sin"), "crash:SIGSEGV");
    }

    #[test]
    fn ddmin_finds_the_one_node_that_matters() {
        // The "bug": the graph contains the op type of the decoded graph's last node.
        let menu = Menu::everything();
        for seed in 0..10u32 {
            let bytes: Vec<u8> = (0..900u32)
                .map(|i| (i.wrapping_mul(197) ^ (seed * 7001)) as u8)
                .collect();
            let case = TestCase::decode(&bytes, &menu, &Limits::exact(8));
            let culprit = case.graph.op_nodes().last().copied().expect("ops");
            let culprit_type = match &case.graph.node(culprit).kind {
                NodeKind::Op(op) => op.op_type(),
                _ => unreachable!(),
            };
            let r = reduce(&case, Duration::from_secs(30), |edits| {
                let mut c = case.clone();
                apply_all(&mut c, edits).is_ok()
                    && c.graph
                        .op_nodes()
                        .iter()
                        .any(|n| match &c.graph.node(*n).kind {
                            NodeKind::Op(op) => op.op_type() == culprit_type,
                            _ => false,
                        })
            });
            assert_eq!(r.reduced_nodes, 1, "seed {seed}: {r:?}");
            assert!(r.original_nodes >= 2);
            assert!(!r.out_of_budget);
        }
    }
}
