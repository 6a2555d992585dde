//! Splicing a pattern into a seed graph (OATest §4): every pattern node is inserted through
//! its op spec, in order.
//!
//! - A pattern input (hole) first reuses a compatible tensor of the preceding context (same
//!   dtype, an accepted rank); otherwise it becomes a fresh placeholder, which is then fed from
//!   the context through bridge nodes where possible ([`super::bridge`]).
//! - A pattern output that nothing in the pattern reads is then offered to the succeeding
//!   context: a context op whose input has exactly its type reads it instead.
//! - Constants become weights; those with a value keep it (the value search leaves them
//!   alone).
//!
//! Every choice comes from the splice's bytes. A splice either succeeds as a whole or leaves
//! the graph as it was.

use super::{bridge, pins, specs_for, Pattern, Source};
use crate::gen::insert::{as_drawn, pick, Generator, Plan};
use crate::gen::menu::Choice;
use crate::gen::Menu;
use crate::ir::{DType, NodeKind, ValueRef};
use crate::ops::{registry, OpType, SpecId, ValueDomain, MAX_RANK};
use arbitrary::Unstructured;
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeSet;

/// Attempts per pattern node (later ones stop reusing context tensors).
const ATTEMPTS: usize = 4;
/// Whole-splice tries before giving up.
const ROUNDS: usize = 3;

/// The (spec, choice) pairs that can instantiate pattern node `op` with `arity` data inputs,
/// class `class`, and the dtypes already fixed per slot.
fn options(
    menu: &Menu,
    op: &str,
    class: Option<&str>,
    fixed: &[Option<DType>],
) -> Vec<(SpecId, Choice)> {
    specs_for(op)
        .into_iter()
        .flat_map(|spec| menu.choices(spec).iter().map(move |c| (spec, c.clone())))
        .filter(|(_, c)| {
            c.sig.inputs.len() == fixed.len()
                && class.is_none_or(|k| c.class == k)
                && fixed
                    .iter()
                    .zip(&c.sig.inputs)
                    .all(|(f, d)| f.is_none_or(|f| f == *d))
        })
        .collect()
}

/// What a splice did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpliceReport {
    /// Pattern inputs bound to an existing context tensor.
    pub reused_inputs: usize,
    /// Pattern inputs fed from the context through bridge nodes.
    pub bridged_inputs: usize,
    /// Pattern outputs now read by a context op.
    pub reused_outputs: usize,
    /// Whether a consumer was appended to the last pattern node's output.
    pub appended_consumer: bool,
}

/// Splices `pattern` into the graph of `gen`, choosing with `bytes` and instantiating with
/// the choices of `menu`. On failure the graph is unchanged.
pub(crate) fn splice(
    gen: &mut Generator,
    menu: &Menu,
    pattern: &Pattern,
    bytes: &[u8],
) -> Option<SpliceReport> {
    let mut u = Unstructured::new(bytes);
    for round in 0..ROUNDS {
        if let Some((trial, report)) = splice_once(gen, menu, pattern, &mut u, round) {
            *gen = trial;
            return Some(report);
        }
    }
    None
}

/// One try at a splice; later rounds shift every choice and reuse less.
fn splice_once<'m>(
    gen: &Generator<'m>,
    menu: &Menu,
    pattern: &Pattern,
    u: &mut Unstructured,
    round: usize,
) -> Option<(Generator<'m>, SpliceReport)> {
    let mut trial = gen.clone();
    // The preceding context: tensors that can depend on a graph input (a constant one would
    // be folded away with the pattern), except what earlier patterns read inside themselves.
    let context: Vec<ValueRef> = trial
        .graph
        .values()
        .into_iter()
        .filter(|v| {
            trial.can_be_live(*v)
                && !(trial.sealed.contains(&v.node) && trial.graph.consumers(*v) > 0)
        })
        .collect();
    let context_nodes: BTreeSet<NodeIndex> = trial.graph.inner().node_indices().collect();
    let mut report = SpliceReport::default();
    let mut holes: Vec<Option<ValueRef>> = vec![None; pattern.holes()];
    let mut fresh_holes: Vec<NodeIndex> = Vec::new();
    let mut produced: Vec<NodeIndex> = Vec::new();
    for node in &pattern.nodes {
        // The tensors the node's inputs are already bound to: earlier pattern nodes' outputs
        // and holes bound by earlier nodes.
        let mut bound: Vec<Option<ValueRef>> = Vec::with_capacity(node.inputs.len());
        for source in &node.inputs {
            bound.push(match source {
                Source::Node { node, output } => {
                    let v = ValueRef {
                        node: produced[*node],
                        output: *output,
                    };
                    // An earlier node instantiated with fewer outputs than this one reads: no
                    // splice.
                    if *output >= trial.graph.node(v.node).outputs.len() {
                        return None;
                    }
                    Some(v)
                }
                Source::Hole(k) => holes[*k],
                Source::Const(_) => None,
            });
        }
        let fixed: Vec<Option<DType>> = bound
            .iter()
            .map(|v| v.map(|v| trial.graph.ty(v).dtype))
            .collect();
        let mut options = options(menu, &node.op, node.class.as_deref(), &fixed);
        if node.keeps_dtype() {
            options.retain(|(_, c)| c.sig.outputs.first() == c.sig.inputs.first());
        }
        if options.is_empty() {
            return None;
        }
        // ONNX Runtime's fusions mostly match float32 only (on CPU): prefer it, 7 times in 8.
        let float32: Vec<(SpecId, Choice)> = options
            .iter()
            .filter(|(_, c)| {
                let types = || c.sig.inputs.iter().chain(&c.sig.outputs);
                types().any(|d| *d == DType::F32)
                    && types().all(|d| !matches!(d, DType::F16 | DType::F64))
            })
            .cloned()
            .collect();
        let options = if !float32.is_empty() && u.ratio(7u8, 8u8).unwrap_or(true) {
            float32
        } else {
            options
        };
        let mut placed = None;
        for attempt in round * ATTEMPTS..(round + 1) * ATTEMPTS {
            let (spec, choice) = &options[pick(u, options.len(), attempt)];
            let s = &*registry()[*spec];
            let ranks = s.input_ranks(&choice.sig);
            let domains = s.input_domains(&choice.sig);
            let mut plans = Vec::with_capacity(node.inputs.len());
            let mut lead_rank = node.pinned_rank(0);
            for (slot, source) in node.inputs.iter().enumerate() {
                let plan = if let Some(v) = bound[slot] {
                    Plan::Existing(v)
                } else {
                    let reusable: Vec<ValueRef> = context
                        .iter()
                        .copied()
                        .filter(|v| {
                            let t = trial.graph.ty(*v);
                            t.dtype == choice.sig.inputs[slot]
                                && ranks[slot].contains(&t.rank())
                                && node.pinned_rank(slot).is_none_or(|r| r == t.rank())
                        })
                        .collect();
                    let reuse = matches!(source, Source::Hole(_))
                        && domains[slot] == ValueDomain::Any
                        && attempt % ATTEMPTS < ATTEMPTS / 2
                        && round + 1 < ROUNDS
                        && !reusable.is_empty()
                        && u.ratio(3u8, 4u8).unwrap_or(true);
                    if reuse {
                        Plan::Existing(reusable[pick(u, reusable.len(), attempt)])
                    } else {
                        let scalar = matches!(source, Source::Const(Some(_)));
                        let rank = if let Some(rank) = node.pinned_rank(slot) {
                            rank
                        } else if scalar && ranks[slot].contains(&0) {
                            0
                        } else {
                            let want = lead_rank.unwrap_or(2 + pick(u, 3, attempt));
                            want.clamp(*ranks[slot].start(), (*ranks[slot].end()).min(MAX_RANK))
                        };
                        Plan::Fresh {
                            domain: domains[slot],
                            rank,
                        }
                    }
                };
                if let Plan::Existing(v) = plan {
                    lead_rank.get_or_insert(trial.graph.ty(v).rank());
                }
                plans.push(plan);
            }
            let ranks_fit = plans.iter().zip(&ranks).all(|(p, r)| match p {
                Plan::Existing(v) => r.contains(&trial.graph.ty(*v).rank()),
                Plan::Fresh { rank, .. } => r.contains(rank),
            });
            if !ranks_fit {
                continue;
            }
            let pinned =
                |attrs: &mut _, inputs: &[_]| pins::apply(&node.op, &node.pins, attrs, inputs);
            if let Some((n, inputs)) = trial.insert_planned(u, *spec, choice, &plans, &pinned) {
                for (slot, ((source, plan), v)) in
                    node.inputs.iter().zip(&plans).zip(&inputs).enumerate()
                {
                    match (source, plan) {
                        (Source::Hole(k), Plan::Existing(_)) if holes[*k].is_none() => {
                            holes[*k] = Some(*v);
                            report.reused_inputs += 1;
                        }
                        (Source::Hole(k), Plan::Fresh { .. }) => {
                            holes[*k] = Some(*v);
                            fresh_holes.push(v.node);
                        }
                        // A fixed value outside the slot's domain (a zero integer divisor)
                        // is left to the value search.
                        (Source::Const(value), _) => {
                            let legal =
                                value.filter(|x| domains[slot] == ValueDomain::Any || *x > 0.0);
                            trial.make_constant(v.node, legal)
                        }
                        _ => {}
                    }
                }
                placed = Some(n);
                break;
            }
        }
        produced.push(placed?);
    }
    // Fresh holes are fed from the context where a bridge exists (always try for the first
    // one, so that the pattern joins the graph).
    for (i, p) in fresh_holes.iter().enumerate() {
        let first = i == 0 && report.reused_inputs == 0;
        if trial.domains.contains_key(p) || !(first || u.ratio(1u8, 2u8).unwrap_or(false)) {
            continue;
        }
        let sources: Vec<ValueRef> = context
            .iter()
            .copied()
            .filter(|v| matches!(trial.graph.node(v.node).kind, NodeKind::Op(_)))
            .collect();
        let sources = if sources.is_empty() {
            context.clone()
        } else {
            sources
        };
        if sources.is_empty() {
            continue;
        }
        let source = sources[pick(u, sources.len(), 0)];
        if bridge::feed(&mut trial, menu, source, *p) {
            report.bridged_inputs += 1;
        }
    }
    // Every pattern input depends on a graph input, so constant folding leaves the pattern
    // for its pass.
    for v in holes.iter().flatten() {
        trial.make_live(*v);
    }
    trial.sealed.extend(produced.iter().copied());
    report.reused_outputs = reuse_outputs(&mut trial, u, &produced, &context_nodes);
    if let Some(last) = produced.last() {
        report.appended_consumer = consume(&mut trial, menu, u, *last);
    }
    Some((trial, report))
}

/// Ops appended after a pattern whose result nothing reads.
const CONSUMERS: [OpType; 2] = [OpType::Neg, OpType::Abs];

/// Most of the time, gives the unread output 0 of `last` a consumer: many fusions leave a
/// node alone whose output is a graph output (ONNX Runtime's `CheckOutputEdges`), so a
/// pattern left at the end of the graph would not fire.
fn consume(gen: &mut Generator, menu: &Menu, u: &mut Unstructured, last: NodeIndex) -> bool {
    let v = ValueRef {
        node: last,
        output: 0,
    };
    if gen.graph.consumers(v) > 0 || !u.ratio(3u8, 4u8).unwrap_or(true) {
        return false;
    }
    let dtype = gen.graph.ty(v).dtype;
    let choices: Vec<(SpecId, Choice)> = CONSUMERS
        .iter()
        .flat_map(|op| options(menu, op.name(), None, &[Some(dtype)]))
        .collect();
    if choices.is_empty() {
        return false;
    }
    let (spec, choice) = &choices[pick(u, choices.len(), 0)];
    gen.insert_planned(u, *spec, choice, &[Plan::Existing(v)], &as_drawn)
        .is_some()
}

/// Offers each unread pattern output to a context op whose input has exactly its type (and
/// is not fed by a domain-restricted placeholder, and is not upstream of the pattern).
fn reuse_outputs(
    gen: &mut Generator,
    u: &mut Unstructured,
    produced: &[NodeIndex],
    context_nodes: &BTreeSet<NodeIndex>,
) -> usize {
    let mut reused = 0;
    for n in produced {
        for output in 0..gen.graph.node(*n).outputs.len() {
            let v = ValueRef { node: *n, output };
            if gen.graph.consumers(v) > 0 || !u.ratio(1u8, 2u8).unwrap_or(false) {
                continue;
            }
            let ty = gen.graph.ty(v).clone();
            let slots: Vec<(NodeIndex, usize)> = gen
                .graph
                .op_nodes()
                .into_iter()
                .filter(|c| context_nodes.contains(c))
                .flat_map(|c| {
                    gen.graph
                        .inputs_of(c)
                        .into_iter()
                        .enumerate()
                        .map(move |(slot, src)| (c, slot, src))
                })
                .filter(|(c, _, src)| {
                    *gen.graph.ty(*src) == ty
                        && !gen.domains.contains_key(&src.node)
                        && !gen.constants.contains_key(&src.node)
                        && !petgraph::algo::has_path_connecting(gen.graph.inner(), *c, *n, None)
                })
                .map(|(c, slot, _)| (c, slot))
                .collect();
            if slots.is_empty() {
                continue;
            }
            let (c, slot) = slots[pick(u, slots.len(), 0)];
            gen.graph.replace_input(c, slot, v);
            reused += 1;
        }
    }
    reused
}
