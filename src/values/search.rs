//! Gradient-guided value search (NNSmith Algorithm 2): tune a test case's float inputs *and*
//! weights until no operator anywhere in the graph produces NaN or Inf.
//!
//! Each iteration evaluates the graph on libtorch ([`super::forward`]) up to the first op whose
//! outputs hold NaN or Inf, takes that op's first positive loss ([`super::loss`]), and steps
//! Adam (learning rate 0.5) on the float leaves. Adam's state is reset whenever the failing op
//! changes; a zero or non-finite gradient restarts the leaves from fresh random values. Flat
//! or non-differentiable ops get proxy derivatives during the backward pass. Leaves whose
//! domain is positive stay positive. The search stops on success or when its time budget is
//! spent.
//!
//! [`sample_search`] is the baseline the paper compares against: fresh random values until
//! one draw is valid, under the same budget.

use super::forward::{first_non_finite, Leaves};
use super::loss::first_positive_loss;
use crate::gen::TestCase;
use crate::ir::{DType, Tensor};
use crate::ops::ValueDomain;
use petgraph::stable_graph::NodeIndex;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tch::nn::{self, OptimizerConfig};

/// Adam's learning rate (the paper's).
pub const LEARNING_RATE: f64 = 0.5;

/// Steps (since the last restart) after which the learning rate halves. Adam keeps moving an
/// element on momentum after its gradient vanishes, so on a bounded domain (Asin's `|x| ≤ 1`)
/// or between two ops with opposite demands (`Acos(x)` needs `x ≤ 1`, `Acos(Acos(x))` needs
/// `x ≥ cos 1`) a constant rate of 0.5 overshoots back and forth; a decaying one settles.
pub const DECAY_EVERY: u32 = 8;

/// Halvings after which the search gives up on the current values and restarts.
pub const MAX_HALVINGS: u32 = 8;

/// Search settings. The step limit makes a search deterministic (a fuzz input must replay to
/// the same values); the wall-clock budget only guards against pathological cases.
#[derive(Clone, Copy, Debug)]
pub struct SearchConfig {
    /// Wall-clock budget per test case.
    pub budget: Duration,
    /// Most gradient steps (or sampling draws) per test case.
    pub max_steps: u32,
    /// Seed of the restarts' random values.
    pub seed: u64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            budget: Duration::from_millis(500),
            max_steps: 64,
            seed: 0,
        }
    }
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SearchOutcome {
    /// Whether every op's outputs are finite on the final values.
    pub valid: bool,
    /// Whether the initial values were already valid (no search needed).
    pub initially_valid: bool,
    /// Gradient steps (or draws, for sampling) taken.
    pub steps: u32,
    /// Random restarts.
    pub restarts: u32,
    /// Input slots cut by structural repair ([`super::repair`]).
    pub cuts: u32,
    /// Wall-clock time spent.
    pub elapsed: Duration,
    /// The op type that was still failing when the budget ran out.
    pub failing_op: Option<String>,
    /// Its node.
    #[serde(skip)]
    pub failing_node: Option<NodeIndex>,
    /// Why the evaluation itself failed (a reference error), if it did.
    pub error: Option<String>,
}

/// Draws a fresh value for a float leaf of type `like`, in `domain`.
fn random_like(like: &Tensor, domain: ValueDomain, rng: &mut impl Rng) -> Tensor {
    crate::gen::sample::sample_tensor(&like.ty(), domain, rng)
}

fn domain_of(case: &TestCase, leaf: NodeIndex) -> ValueDomain {
    case.domains.get(&leaf).copied().unwrap_or(ValueDomain::Any)
}

/// The float leaves of `case`, which the search may change (frozen pattern constants
/// excluded).
fn float_leaves(case: &TestCase) -> Vec<NodeIndex> {
    case.values
        .iter()
        .filter(|(n, t)| t.data.dtype().is_float() && !case.frozen.contains(*n))
        .map(|(n, _)| *n)
        .collect()
}

/// Whether the search's first forward pass would find every op's outputs finite, made
/// without the autograd tape: the same float32 master copies of the float `leaves`, every
/// value the same (a proxy derivative adds exactly zero to a finite value), at a fraction of
/// the cost. Most generated cases are valid as drawn, and then the search ends here. A leaf
/// that is not finite as float32 is left to the search itself.
fn initially_valid(case: &TestCase, leaves: &[NodeIndex]) -> bool {
    tch::no_grad(|| {
        let masters: BTreeMap<NodeIndex, tch::Tensor> = leaves
            .iter()
            .map(|n| {
                let m = crate::reference::to_tch(&case.values[n]).to_kind(tch::Kind::Float);
                (*n, m)
            })
            .collect();
        masters
            .values()
            .all(|m| m.isfinite().all().int64_value(&[]) != 0)
            && matches!(
                first_non_finite(&case.graph, &Leaves::new(case, &masters)),
                Ok(None)
            )
    })
}

/// Runs the gradient-guided search on `case`, replacing its values with the result when it
/// succeeds (on failure the values are left as they were). Integer and boolean leaves, which
/// no gradient reaches, are redrawn at each restart.
pub fn gradient_search(case: &mut TestCase, config: &SearchConfig) -> SearchOutcome {
    let start = Instant::now();
    let mut outcome = SearchOutcome::default();
    let leaves = float_leaves(case);
    if initially_valid(case, &leaves) {
        outcome.valid = true;
        outcome.initially_valid = true;
        outcome.elapsed = start.elapsed();
        return outcome;
    }
    let original = case.values.clone();
    let discrete: Vec<NodeIndex> = case
        .values
        .keys()
        .filter(|n| !leaves.contains(n) && !case.frozen.contains(*n))
        .copied()
        .collect();
    let vs = nn::VarStore::new(tch::Device::Cpu);
    // f32 master copies of the float leaves; the forward pass casts them to the leaf dtype.
    let masters: BTreeMap<NodeIndex, tch::Tensor> = leaves
        .iter()
        .map(|n| {
            let init = crate::reference::to_tch(&case.values[n]).to_kind(tch::Kind::Float);
            (*n, vs.root().var_copy(&format!("leaf{}", n.index()), &init))
        })
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(config.seed);
    let mut optimizer: Option<nn::Optimizer> = None;
    let mut target: Option<NodeIndex> = None;
    let mut steps_since_restart = 0u32;
    loop {
        let bound = Leaves::new(case, &masters);
        let failing = match first_non_finite(&case.graph, &bound) {
            Ok(f) => f,
            Err(e) => {
                outcome.error = Some(e.to_string());
                break;
            }
        };
        let Some(failing) = failing else {
            outcome.valid = true;
            outcome.initially_valid = outcome.steps == 0 && outcome.restarts == 0;
            break;
        };
        outcome.failing_op = Some(failing.op_type.to_string());
        outcome.failing_node = Some(failing.node);
        if start.elapsed() >= config.budget || outcome.steps >= config.max_steps {
            break;
        }
        let inputs: Vec<Option<&tch::Tensor>> = failing
            .inputs
            .iter()
            .map(|t| t.as_ref().filter(|t| t.is_floating_point()))
            .collect();
        let loss = first_positive_loss(failing.finite, &inputs);
        if target != Some(failing.node) {
            // A different op fails now: Adam starts afresh (the paper resets the learning rate).
            optimizer = Some(
                nn::Adam::default()
                    .build(&vs, LEARNING_RATE)
                    .expect("Adam over a CPU var store"),
            );
            target = Some(failing.node);
        }
        steps_since_restart += 1;
        let halvings = steps_since_restart / DECAY_EVERY;
        if let Some(opt) = optimizer.as_mut() {
            opt.set_lr(LEARNING_RATE * 0.5f64.powi(halvings as i32));
        }
        let stuck = match loss {
            None => true,
            Some(_) if halvings > MAX_HALVINGS => true,
            // The failing op depends on no float leaf (say, Log of a Cast integer input).
            Some(loss) if !loss.requires_grad() => true,
            Some(loss) => {
                let opt = optimizer.as_mut().expect("set above");
                opt.zero_grad();
                loss.backward();
                let grads: Vec<f64> = masters
                    .values()
                    .map(|m| {
                        let g = m.grad();
                        if g.defined() {
                            g.abs().sum(tch::Kind::Double).double_value(&[])
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let total: f64 = grads.iter().sum();
                if total == 0.0 || !total.is_finite() {
                    true
                } else {
                    opt.step();
                    false
                }
            }
        };
        outcome.steps += 1;
        tch::no_grad(|| {
            for (leaf, master) in &masters {
                let finite = master.isfinite().all().int64_value(&[]) != 0;
                if stuck || !finite {
                    let fresh = random_like(&case.values[leaf], domain_of(case, *leaf), &mut rng);
                    let fresh = crate::reference::to_tch(&fresh).to_kind(tch::Kind::Float);
                    let mut m = master.shallow_clone();
                    m.copy_(&fresh);
                } else if domain_of(case, *leaf) == ValueDomain::Positive {
                    let mut m = master.shallow_clone();
                    let _ = m.clamp_min_(1e-3);
                }
            }
        });
        if stuck {
            // Integer and boolean leaves are redrawn too: no gradient reaches them.
            for leaf in &discrete {
                let fresh = random_like(&case.values[leaf], domain_of(case, *leaf), &mut rng);
                case.values.insert(*leaf, fresh);
            }
            steps_since_restart = 0;
            outcome.restarts += 1;
            optimizer = None;
            target = None;
        }
    }
    if !outcome.valid {
        case.values = original;
    } else if !outcome.initially_valid {
        for (leaf, master) in &masters {
            let dtype: DType = case.values[leaf].data.dtype();
            let carrier = crate::reference::convert::carrier(dtype);
            let value = crate::reference::from_tch(&master.detach().to_kind(carrier), dtype)
                .expect("float leaves convert back");
            case.values.insert(*leaf, value);
        }
    }
    outcome.elapsed = start.elapsed();
    outcome
}

/// The sampling baseline: redraws every float leaf at random until one draw makes every op's
/// outputs finite, or the budget is spent. Replaces the values on success.
pub fn sample_search(case: &mut TestCase, config: &SearchConfig) -> SearchOutcome {
    let start = Instant::now();
    let mut outcome = SearchOutcome::default();
    let leaves = float_leaves(case);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(config.seed);
    let mut values = case.values.clone();
    loop {
        let masters: BTreeMap<NodeIndex, tch::Tensor> = leaves
            .iter()
            .map(|n| (*n, crate::reference::to_tch(&values[n])))
            .collect();
        match tch::no_grad(|| first_non_finite(&case.graph, &Leaves::new(case, &masters))) {
            Err(e) => {
                outcome.error = Some(e.to_string());
                break;
            }
            Ok(None) => {
                outcome.valid = true;
                outcome.initially_valid = outcome.steps == 0;
                case.values = values;
                break;
            }
            Ok(Some(f)) => {
                outcome.failing_op = Some(f.op_type.to_string());
                outcome.failing_node = Some(f.node);
            }
        }
        if start.elapsed() >= config.budget || outcome.steps >= config.max_steps {
            break;
        }
        outcome.steps += 1;
        for leaf in &leaves {
            let fresh = random_like(&values[leaf], domain_of(case, *leaf), &mut rng);
            values.insert(*leaf, fresh);
        }
    }
    outcome.elapsed = start.elapsed();
    outcome
}
