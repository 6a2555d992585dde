//! Graph edits a reducer tries, and how each applies to a prepared test case.
//!
//! Edits name nodes by their index in the decoded graph (petgraph's stable indices), so an
//! edit list plus the fuzz bytes it started from is a complete, replayable description of a
//! reduced test: decode the bytes, prepare the values, apply the edits in order.

use crate::gen::TestCase;
use crate::ir::{NodeKind, ValueRef};
use crate::reference::TorchReference;
use petgraph::stable_graph::NodeIndex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One reduction step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Edit {
    /// Keep only these operator nodes. A value a kept node reads from a dropped node becomes a
    /// fresh model input holding what the reference computed for it (so the kept part sees
    /// the same numbers); dropped nodes and the leaves only they read disappear.
    KeepOnly(Vec<usize>),
    /// The readers of the node's output 0 read its data input `input` instead (of the same
    /// type), and the node goes.
    Bypass {
        /// The node bypassed.
        node: usize,
        /// Which of its data inputs takes its place.
        input: usize,
    },
    /// A graph output is dropped: the operator node (whose outputs nothing reads) goes, with
    /// every node only it needed.
    DropOutput(usize),
    /// A model input becomes a constant (an initializer).
    Freeze(usize),
    /// A weight (initializer) becomes a model input.
    Thaw(usize),
    /// An edit of a program target's program ([`super::program`]); graphs reject it.
    Program(super::program::ProgramEdit),
}

/// Why an edit does not apply.
pub type EditError = String;

/// Applies `edits` in order.
pub fn apply_all(case: &mut TestCase, edits: &[Edit]) -> Result<(), EditError> {
    edits.iter().try_for_each(|e| apply(case, e))
}

/// Applies one edit; on error the case may be partly edited and must be dropped.
pub fn apply(case: &mut TestCase, edit: &Edit) -> Result<(), EditError> {
    match edit {
        Edit::KeepOnly(keep) => keep_only(case, keep)?,
        Edit::Bypass { node, input } => bypass(case, NodeIndex::new(*node), *input)?,
        Edit::DropOutput(node) => drop_output(case, NodeIndex::new(*node))?,
        Edit::Freeze(n) => retag(case, NodeIndex::new(*n), NodeKind::Input, NodeKind::Weight)?,
        Edit::Thaw(n) => retag(case, NodeIndex::new(*n), NodeKind::Weight, NodeKind::Input)?,
        Edit::Program(p) => return Err(format!("{p:?} edits a program, not a graph")),
    }
    if case.graph.op_count() == 0 || case.graph.outputs().is_empty() {
        return Err("no operator or output left".into());
    }
    Ok(())
}

fn is_op(case: &TestCase, n: NodeIndex) -> bool {
    case.graph.contains(n) && matches!(case.graph.node(n).kind, NodeKind::Op(_))
}

/// Removes `n` and then, transitively, every producer left without readers that was not a
/// graph output before (leaves without readers always go).
fn remove_with_orphans(case: &mut TestCase, n: NodeIndex) {
    let mut work = vec![n];
    while let Some(m) = work.pop() {
        if !case.graph.contains(m) {
            continue;
        }
        let producers: Vec<NodeIndex> = case.graph.inputs_of(m).iter().map(|v| v.node).collect();
        case.graph.remove_node(m);
        forget_leaf(case, m);
        for p in producers {
            if case.graph.contains(p) && case.graph.readers(p).is_empty() {
                work.push(p);
            }
        }
    }
}

fn forget_leaf(case: &mut TestCase, n: NodeIndex) {
    case.values.remove(&n);
    case.domains.remove(&n);
    case.frozen.remove(&n);
}

fn keep_only(case: &mut TestCase, keep: &[usize]) -> Result<(), EditError> {
    let keep: Vec<NodeIndex> = keep.iter().map(|k| NodeIndex::new(*k)).collect();
    if let Some(k) = keep.iter().find(|k| !is_op(case, **k)) {
        return Err(format!("node {} is not an operator", k.index()));
    }
    let dropped: Vec<NodeIndex> = case
        .graph
        .op_nodes()
        .into_iter()
        .filter(|n| !keep.contains(n))
        .collect();
    // Every (kept reader, slot) fed by a dropped node, grouped by the value it reads.
    let mut cuts: BTreeMap<ValueRef, Vec<(NodeIndex, usize)>> = BTreeMap::new();
    for &k in &keep {
        for (slot, v) in case.graph.inputs_of(k).into_iter().enumerate() {
            if dropped.contains(&v.node) {
                cuts.entry(v).or_default().push((k, slot));
            }
        }
    }
    if !cuts.is_empty() {
        let wanted: Vec<ValueRef> = cuts.keys().copied().collect();
        let values = TorchReference
            .values_of(case, &wanted)
            .map_err(|e| format!("the reference cannot compute the cut values: {e}"))?;
        for ((v, readers), value) in cuts.into_iter().zip(values) {
            let leaf = case
                .graph
                .add_leaf(NodeKind::Input, case.graph.ty(v).clone());
            case.values.insert(leaf, value);
            for (reader, slot) in readers {
                case.graph.replace_input(
                    reader,
                    slot,
                    ValueRef {
                        node: leaf,
                        output: 0,
                    },
                );
            }
        }
    }
    for d in dropped {
        case.graph.remove_node(d);
    }
    let orphans: Vec<NodeIndex> = case
        .graph
        .inner()
        .node_indices()
        .filter(|n| !is_op(case, *n) && case.graph.readers(*n).is_empty())
        .collect();
    for o in orphans {
        case.graph.remove_node(o);
        forget_leaf(case, o);
    }
    Ok(())
}

fn bypass(case: &mut TestCase, n: NodeIndex, input: usize) -> Result<(), EditError> {
    if !is_op(case, n) {
        return Err(format!("node {} is not an operator", n.index()));
    }
    let inputs = case.graph.inputs_of(n);
    let source = *inputs.get(input).ok_or("no such input")?;
    let readers = case.graph.readers(n);
    if readers.iter().any(|(_, _, out)| *out != 0) {
        return Err("another output of the node is read".into());
    }
    if case.graph.ty(source) != &case.graph.node(n).outputs[0] {
        return Err("the input's type differs from the output's".into());
    }
    for (reader, slot, _) in readers {
        case.graph.replace_input(reader, slot, source);
    }
    remove_with_orphans(case, n);
    Ok(())
}

fn drop_output(case: &mut TestCase, n: NodeIndex) -> Result<(), EditError> {
    if !is_op(case, n) || !case.graph.readers(n).is_empty() {
        return Err(format!("node {} is not a graph output", n.index()));
    }
    remove_with_orphans(case, n);
    Ok(())
}

fn retag(case: &mut TestCase, n: NodeIndex, from: NodeKind, to: NodeKind) -> Result<(), EditError> {
    if !case.graph.contains(n) || case.graph.node(n).kind != from {
        return Err(format!("node {} is not a {from:?}", n.index()));
    }
    case.graph.node_mut(n).kind = to;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Limits, Menu};

    fn case(seed: u8, nodes: usize) -> TestCase {
        let bytes: Vec<u8> = (0..900u32)
            .map(|i| (i.wrapping_mul(151) ^ (u32::from(seed) * 4099)) as u8)
            .collect();
        TestCase::decode(&bytes, &Menu::everything(), &Limits::exact(nodes))
    }

    #[test]
    fn keeping_one_node_leaves_one_node_fed_by_the_cut_values() {
        let mut applied = 0;
        for seed in 0..20 {
            let mut c = case(seed, 6);
            let last = *c.graph.op_nodes().last().expect("has ops");
            if apply(&mut c, &Edit::KeepOnly(vec![last.index()])).is_err() {
                continue;
            }
            applied += 1;
            assert_eq!(c.graph.op_count(), 1, "seed {seed}");
            // Every leaf left has a value, and every value belongs to a leaf.
            for n in c.graph.inner().node_indices() {
                if !is_op(&c, n) {
                    assert!(c.values.contains_key(&n), "seed {seed}: leaf without value");
                }
            }
            assert!(c.values.keys().all(|n| c.graph.contains(*n)));
            // The remaining graph still runs on the reference with its declared types.
            let model = crate::emit::emit(&c);
            assert!(TorchReference.run(&c, &model).is_ok(), "seed {seed}");
        }
        assert!(applied >= 15, "only {applied} of 20 applied");
    }

    #[test]
    fn edits_that_do_not_fit_are_refused() {
        let mut c = case(1, 4);
        let op = c.graph.op_nodes()[0];
        assert!(apply(&mut c.clone(), &Edit::Freeze(op.index())).is_err());
        assert!(apply(&mut c.clone(), &Edit::KeepOnly(vec![])).is_err());
        assert!(apply(
            &mut c,
            &Edit::Bypass {
                node: 9999,
                input: 0
            }
        )
        .is_err());
    }

    #[test]
    fn dropping_an_output_removes_what_only_it_needed() {
        for seed in 0..20 {
            let mut c = case(seed, 6);
            let sinks: Vec<NodeIndex> = c
                .graph
                .op_nodes()
                .into_iter()
                .filter(|n| c.graph.readers(*n).is_empty())
                .collect();
            if sinks.len() < 2 {
                continue;
            }
            let before = c.graph.op_count();
            apply(&mut c, &Edit::DropOutput(sinks[0].index())).expect("applies");
            assert!(c.graph.op_count() < before);
            assert!(!c.graph.contains(sinks[0]));
            return;
        }
        panic!("no seed had two outputs");
    }
}
