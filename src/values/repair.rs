//! Structural repair for graphs no values can make valid.
//!
//! Some generated graphs are numerically infeasible whatever their leaves hold:
//! `Log(Mod(x, x))`, `Log(Abs(Trilu(x)))` (Trilu zeroes half the matrix), `Acosh(Sigmoid(x))`.
//! NNSmith leaves such models invalid. dlcfuzz instead cuts the failing op off the producer
//! that confines it: each constrained input slot that an operator (or a leaf shared with other
//! consumers) feeds is rewired to a fresh model input of the same type, sampled in the op's
//! domain, and the value search runs again. The op, its type and everything else in the graph
//! stay; the old producer becomes one more graph output.

use super::search::{gradient_search, SearchConfig, SearchOutcome};
use crate::gen::TestCase;
use crate::ir::{Buffer, NodeKind, Tensor, ValueRef};
use crate::ops::validity::{Domain, Finite};
use crate::ops::ValueDomain;
use petgraph::stable_graph::NodeIndex;
use rand::SeedableRng;
use std::time::Instant;

/// Most cuts per test case: each removes one infeasible spot.
pub const MAX_CUTS: u32 = 5;

/// The input slots of an op finite where `finite` says (what it declares) whose values its
/// domain constrains (a divisor, `Pow`'s base and exponent, a domain's input; every slot
/// otherwise), with the domain a fresh input there starts in.
fn constrained_slots(finite: Option<Finite>, arity: usize) -> Vec<(usize, ValueDomain)> {
    match finite {
        Some(Finite::Divisor { slot }) => vec![(slot, ValueDomain::Positive)],
        Some(Finite::Domain {
            domain: Domain::Positive | Domain::NonZero | Domain::AboveOne,
            ..
        }) => vec![(0, ValueDomain::Positive)],
        Some(Finite::Power) => vec![(0, ValueDomain::Positive), (1, ValueDomain::Any)],
        _ => (0..arity).map(|slot| (slot, ValueDomain::Any)).collect(),
    }
}

/// `value` (sampled in `[-2, 2]`, or `[0.25, 2]` when positive) moved inside the bounded
/// domains: `[-0.9, 0.9]` for `(-1, 1)` (Asin, Acos, Atanh), `[1.25, 3]` above 1 (Acosh).
fn inside_domain(finite: Option<Finite>, mut value: Tensor) -> Tensor {
    let map: fn(f64) -> f64 = match finite {
        Some(Finite::Domain {
            domain: Domain::Symmetric,
            ..
        }) => |v| v * 0.45,
        Some(Finite::Domain {
            domain: Domain::AboveOne,
            ..
        }) => |v| v + 1.0,
        _ => return value,
    };
    let dtype = value.data.dtype();
    if dtype.is_float() {
        let moved: Vec<f64> = value.data.to_f64_vec().into_iter().map(map).collect();
        value.data = Buffer::from_f64(dtype, &moved);
    }
    value
}

/// Rewires the constrained inputs of `node` that are not already private leaves to fresh model
/// inputs. Returns how many slots were cut (0: nothing left to cut).
pub fn cut_inputs(case: &mut TestCase, node: NodeIndex, rng: &mut impl rand::Rng) -> usize {
    let finite = match &case.graph.node(node).kind {
        NodeKind::Op(op) => op.finite(),
        _ => return 0,
    };
    let inputs = case.graph.inputs_of(node);
    let mut cut = 0;
    for (slot, domain) in constrained_slots(finite, inputs.len()) {
        let Some(&source) = inputs.get(slot) else {
            continue;
        };
        let private_leaf = !matches!(case.graph.node(source.node).kind, NodeKind::Op(_))
            && case.graph.consumers(source) == 1;
        if private_leaf {
            continue;
        }
        let ty = case.graph.ty(source).clone();
        let value = inside_domain(finite, crate::gen::sample::sample_tensor(&ty, domain, rng));
        let fresh = case.graph.add_leaf(NodeKind::Input, ty);
        case.values.insert(fresh, value);
        if domain != ValueDomain::Any {
            case.domains.insert(fresh, domain);
        }
        case.graph.replace_input(
            node,
            slot,
            ValueRef {
                node: fresh,
                output: 0,
            },
        );
        cut += 1;
    }
    cut
}

/// The gradient search, then up to [`MAX_CUTS`] rounds of cutting the op that still fails
/// and searching again (each round with `config`'s budget and step limit). The outcome's
/// `steps`, `restarts` and `elapsed` cover every round; `cuts` says how many slots were cut.
pub fn search_with_repair(case: &mut TestCase, config: &SearchConfig) -> SearchOutcome {
    let start = Instant::now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(config.seed ^ 0x00c0_ffee);
    let mut total = gradient_search(case, config);
    for _ in 0..MAX_CUTS {
        if total.valid || total.error.is_some() {
            break;
        }
        let Some(node) = total.failing_node else {
            break;
        };
        let cut = cut_inputs(case, node, &mut rng);
        if cut == 0 {
            break;
        }
        let round = gradient_search(case, config);
        total = SearchOutcome {
            initially_valid: false,
            steps: total.steps + round.steps,
            restarts: total.restarts + round.restarts,
            cuts: total.cuts + cut as u32,
            ..round
        };
    }
    total.elapsed = start.elapsed();
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Limits, Menu};
    use crate::ir::graph::OpNode;
    use crate::ir::{DType, TensorType};
    use crate::ops::{spec_id, Attrs, Sig};

    fn op(name: &str, arity: usize) -> OpNode {
        OpNode {
            spec: spec_id(name).unwrap(),
            sig: Sig::uniform(DType::F32, arity),
            attrs: Attrs::default(),
        }
    }

    /// `Log(Sub(x, x))`: zero whatever x holds.
    fn infeasible() -> (TestCase, NodeIndex) {
        let mut case = TestCase::decode(&[0u8; 64], &Menu::everything(), &Limits::exact(1));
        case.graph = crate::ir::Graph::new();
        case.values.clear();
        case.domains.clear();
        let t = TensorType::new(DType::F32, vec![3]);
        let x = case.graph.add_leaf(NodeKind::Input, t.clone());
        case.values.insert(x, Tensor::full(&t, 1.5));
        let xv = ValueRef { node: x, output: 0 };
        let sub = case.graph.add_op(op("Sub", 2), vec![t.clone()], &[xv, xv]);
        let sv = ValueRef {
            node: sub,
            output: 0,
        };
        let log = case.graph.add_op(op("Log", 1), vec![t], &[sv]);
        (case, log)
    }

    #[test]
    fn an_infeasible_op_is_cut_and_then_valid() {
        let (mut case, log) = infeasible();
        let config = SearchConfig {
            max_steps: 32,
            ..SearchConfig::default()
        };
        assert!(
            !gradient_search(&mut case.clone(), &config).valid,
            "infeasible as built"
        );
        let outcome = search_with_repair(&mut case, &config);
        assert!(outcome.valid, "{outcome:?}");
        assert_eq!(outcome.cuts, 1);
        let fed = case.graph.inputs_of(log)[0];
        assert_eq!(case.graph.node(fed.node).kind, NodeKind::Input);
        assert!(case.values[&fed.node]
            .data
            .to_f64_vec()
            .iter()
            .all(|v| *v > 0.0));
        assert_eq!(case.graph.op_count(), 2, "no op is removed");
    }

    #[test]
    fn a_private_leaf_is_not_cut_again() {
        let (mut case, log) = infeasible();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(cut_inputs(&mut case, log, &mut rng), 1);
        assert_eq!(cut_inputs(&mut case, log, &mut rng), 0);
    }
}
