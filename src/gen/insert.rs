//! NNSmith's Algorithm 1: grow a graph by forward insertion (an op consumes existing tensors)
//! and backward insertion (an op replaces a placeholder, producing its type), solving each
//! insertion's constraints with [`super::solve`].

use super::menu::{Choice, Menu};
use super::Recipe;
use crate::ir::graph::OpNode;
use crate::ir::{DType, Graph, NodeKind, TensorType, ValueRef};
use crate::ops::{registry, AttrCx, OpSpec, SymTensor, ValueDomain, MAX_RANK};
use crate::sym::vars::VarTable;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use petgraph::stable_graph::NodeIndex;
use std::collections::{BTreeMap, BTreeSet};

/// Largest dimension of a placeholder.
pub const MAX_LEAF_DIM: i64 = 8;
/// Largest dimension of any op output.
pub const MAX_OUT_DIM: i64 = 48;
/// Largest element count of any tensor.
pub const MAX_NUMEL: usize = 4096;
/// Insertion attempts per step before the step is skipped.
const ATTEMPTS: usize = 6;
/// Steps allowed per wanted node before generation stops.
const STEPS_PER_NODE: usize = 4;

/// The raw result of generation: the graph (leaves still placeholders) and the value domains
/// some placeholders need.
pub struct Generated {
    /// The graph.
    pub graph: Graph,
    /// Placeholders whose values must lie in a restricted domain.
    pub domains: BTreeMap<NodeIndex, ValueDomain>,
    /// Placeholders that must become weights (pattern constants), with a fixed value where
    /// the pattern gives one.
    pub constants: BTreeMap<NodeIndex, Option<f64>>,
    /// Placeholders that must become inputs, so that what reads them is not constant-folded
    /// away (the inputs of a spliced pattern).
    pub live: BTreeSet<NodeIndex>,
}

/// A choice in `[0, n)` from the bytes, shifted by the attempt number so that retries on
/// exhausted input still explore.
pub(crate) fn pick(u: &mut Unstructured, n: usize, attempt: usize) -> usize {
    if n == 0 {
        return 0;
    }
    (u.arbitrary::<u16>().unwrap_or(0) as usize + attempt * 7) % n
}

/// The draw that picks an op ([`Menu::pick`]); a retry lands elsewhere on the ring.
fn op_draw(u: &mut Unstructured, attempt: usize) -> u16 {
    let draw = u.arbitrary::<u16>().unwrap_or(0);
    draw.wrapping_add((attempt as u16).wrapping_mul(40_503))
}

/// A fresh symbolic tensor for a new placeholder of the given dtype and rank.
/// Where `like` is given, each dimension is hinted toward the aligned (trailing) dimension of
/// `like`, so element-wise partners usually match without the solver.
fn fresh_tensor(
    vars: &mut VarTable,
    u: &mut Unstructured,
    dtype: DType,
    rank: usize,
    tag: &str,
    like: Option<&[usize]>,
) -> SymTensor {
    let dims = (0..rank)
        .map(|i| {
            let preferred = like
                .and_then(|l| (l.len() + i).checked_sub(rank).and_then(|j| l.get(j)))
                .map(|d| *d as i64);
            vars.fresh_near(format!("{tag}.d{i}"), 1, MAX_LEAF_DIM, preferred, u)
        })
        .collect();
    SymTensor { dtype, dims }
}

fn concrete(t: &TensorType) -> SymTensor {
    SymTensor {
        dtype: t.dtype,
        dims: t.shape.iter().map(|d| Int::from(*d)).collect(),
    }
}

fn eval_shape(dims: &[Int], env: &[i64]) -> Option<Vec<usize>> {
    dims.iter()
        .map(|d| d.eval(env).and_then(|v| usize::try_from(v).ok()))
        .collect()
}

/// Where an insertion's operands come from.
enum Operand {
    Existing(ValueRef),
    Fresh(ValueDomain),
}

/// What a planned insertion imposes on the attributes its spec drew: it rewrites them and
/// returns extra requirements, or `None` when this draw cannot take them.
pub(crate) type AdjustAttrs<'a> =
    dyn Fn(&mut crate::ops::SymAttrs, &[SymTensor]) -> Option<Vec<Bool>> + 'a;

/// Leaves the drawn attributes as they are.
pub(crate) fn as_drawn(_: &mut crate::ops::SymAttrs, _: &[SymTensor]) -> Option<Vec<Bool>> {
    Some(Vec::new())
}

/// A planned operand of [`Generator::insert_planned`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plan {
    /// An existing tensor.
    Existing(ValueRef),
    /// A fresh placeholder of this rank, with values in `domain`.
    Fresh {
        /// Values it must take.
        domain: ValueDomain,
        /// Its rank.
        rank: usize,
    },
}

/// A graph under construction: forward and backward insertions, and planned ones for pattern
/// splices.
#[derive(Clone)]
pub(crate) struct Generator<'m> {
    menu: &'m Menu,
    /// The graph so far (leaves still placeholders).
    pub(crate) graph: Graph,
    placeholders: Vec<NodeIndex>,
    /// Placeholders whose values must lie in a restricted domain.
    pub(crate) domains: BTreeMap<NodeIndex, ValueDomain>,
    /// Placeholders that must become weights, with a fixed value where given.
    pub(crate) constants: BTreeMap<NodeIndex, Option<f64>>,
    /// Placeholders that must become inputs.
    pub(crate) live: BTreeSet<NodeIndex>,
    /// Nodes of spliced patterns: what they read inside their pattern is not offered to later
    /// splices, which would add consumers a pass checks for.
    pub(crate) sealed: BTreeSet<NodeIndex>,
}

/// Generates a graph of about `target` op nodes from the recipe's step chunks.
pub fn generate(recipe: &Recipe, menu: &Menu, target: usize) -> Generated {
    Generator::grow(recipe, menu, target).finish()
}

impl<'m> Generator<'m> {
    /// Grows a graph of about `target` op nodes from the recipe's step chunks.
    pub(crate) fn grow(recipe: &Recipe, menu: &'m Menu, target: usize) -> Generator<'m> {
        let mut gen = Generator {
            menu,
            graph: Graph::new(),
            placeholders: Vec::new(),
            domains: BTreeMap::new(),
            constants: BTreeMap::new(),
            live: BTreeSet::new(),
            sealed: BTreeSet::new(),
        };
        let empty: Vec<u8> = Vec::new();
        let chunk = |i: usize| recipe.steps.get(i).unwrap_or(&empty);
        gen.seed_placeholder(chunk(0));
        let mut step = 0;
        while gen.graph.op_count() < target && step < target.max(1) * STEPS_PER_NODE {
            gen.step(chunk(step), recipe.config.backward_chance, step);
            step += 1;
        }
        if gen.graph.op_count() == 0 {
            gen.force_identity();
        }
        gen
    }

    /// The finished graph.
    pub(crate) fn finish(self) -> Generated {
        Generated {
            graph: self.graph,
            domains: self.domains,
            constants: self.constants,
            live: self.live,
        }
    }

    /// Marks placeholder `p` as a constant (a weight), with a fixed value where given.
    pub(crate) fn make_constant(&mut self, p: NodeIndex, value: Option<f64>) {
        self.constants.insert(p, value);
    }

    /// The first placeholder `v` reads (itself, or one upstream) that is not a pattern
    /// constant: `v` is constant-folded unless it becomes an input.
    fn free_placeholder(&self, v: ValueRef) -> Option<NodeIndex> {
        let graph = petgraph::visit::Reversed(self.graph.inner());
        let mut upstream = petgraph::visit::Dfs::new(graph, v.node);
        while let Some(n) = upstream.next(graph) {
            if self.placeholders.contains(&n) && !self.constants.contains_key(&n) {
                return Some(n);
            }
        }
        None
    }

    /// Whether `v` can depend on a graph input ([`Generator::make_live`] then makes it so).
    pub(crate) fn can_be_live(&self, v: ValueRef) -> bool {
        self.free_placeholder(v).is_some()
    }

    /// Makes `v` depend on a graph input: the first placeholder it reads that is not a
    /// pattern constant must become an input.
    pub(crate) fn make_live(&mut self, v: ValueRef) {
        if let Some(p) = self.free_placeholder(v) {
            self.live.insert(p);
        }
    }

    /// Turns placeholder `p` into the op `op` fed by `inputs` (a bridge); `p` stops being a
    /// placeholder.
    pub(crate) fn replace_placeholder(
        &mut self,
        p: NodeIndex,
        op: OpNode,
        outputs: Vec<TensorType>,
        inputs: &[ValueRef],
    ) {
        self.placeholders.retain(|q| *q != p);
        self.domains.remove(&p);
        self.constants.remove(&p);
        self.live.remove(&p);
        self.graph.replace_placeholder(p, op, outputs, inputs);
    }
}

impl Generator<'_> {
    fn seed_placeholder(&mut self, chunk: &[u8]) {
        let mut u = Unstructured::new(chunk);
        let dtypes = self.menu.first_input_dtypes();
        let dtype = dtypes
            .get(pick(&mut u, dtypes.len(), 0))
            .copied()
            .unwrap_or(DType::F32);
        let rank = 1 + pick(&mut u, MAX_RANK, 0);
        let shape = (0..rank)
            .map(|_| 1 + pick(&mut u, MAX_LEAF_DIM as usize, 0))
            .collect();
        let p = self
            .graph
            .add_leaf(NodeKind::Placeholder, TensorType::new(dtype, shape));
        self.placeholders.push(p);
    }

    fn force_identity(&mut self) {
        let p = self.placeholders[0];
        let ty = self.graph.node(p).outputs[0].clone();
        let spec = crate::ops::spec_id(crate::ops::OpType::Identity.name())
            .expect("Identity is registered");
        let op = OpNode {
            spec,
            sig: crate::ops::Sig::uniform(ty.dtype, 1),
            attrs: crate::ops::Attrs {
                class: crate::ops::DEFAULT_CLASS.into(),
                ..Default::default()
            },
        };
        self.graph
            .add_op(op, vec![ty], &[ValueRef { node: p, output: 0 }]);
    }

    fn step(&mut self, chunk: &[u8], backward_chance: u8, step: usize) -> bool {
        let mut u = Unstructured::new(chunk);
        let roll = u.arbitrary::<u8>().unwrap_or(0).wrapping_add(step as u8);
        let backward = !self.placeholders.is_empty() && roll < backward_chance;
        for attempt in 0..ATTEMPTS {
            let done = if backward {
                self.try_backward(&mut u, attempt)
            } else {
                self.try_forward(&mut u, attempt)
            };
            if done {
                return true;
            }
        }
        false
    }

    fn try_forward(&mut self, u: &mut Unstructured, attempt: usize) -> bool {
        let entry = self.menu.pick(op_draw(u, attempt));
        let spec = &*registry()[entry.spec];
        let values = self.graph.values();
        let Some(choice) = self.pick_forward_choice(u, spec, &entry.choices, &values, attempt)
        else {
            return false;
        };
        let ranks = spec.input_ranks(&choice.sig);
        let domains = spec.input_domains(&choice.sig);
        // Restricted values need a fresh placeholder; the first operand is an existing tensor.
        if domains[0] != ValueDomain::Any {
            return false;
        }
        let first: Vec<ValueRef> = values
            .iter()
            .copied()
            .filter(|v| {
                let t = self.graph.ty(*v);
                t.dtype == choice.sig.inputs[0] && ranks[0].contains(&t.rank())
            })
            .collect();
        let mut vars = VarTable::default();
        let first = first[pick(u, first.len(), attempt)];
        let mut operands = vec![Operand::Existing(first)];
        let mut inputs = vec![concrete(self.graph.ty(first))];
        for i in 1..choice.sig.inputs.len() {
            let dtype = choice.sig.inputs[i];
            let reusable: Vec<ValueRef> = values
                .iter()
                .copied()
                .filter(|v| {
                    let t = self.graph.ty(*v);
                    t.dtype == dtype && ranks[i].contains(&t.rank())
                })
                .collect();
            let reuse = domains[i] == ValueDomain::Any
                && !reusable.is_empty()
                && u.ratio(1u8, 3u8).unwrap_or(false);
            if reuse {
                let v = reusable[pick(u, reusable.len(), attempt)];
                inputs.push(concrete(self.graph.ty(v)));
                operands.push(Operand::Existing(v));
            } else {
                let rank =
                    if ranks[i].contains(&inputs[0].rank()) && u.ratio(3u8, 4u8).unwrap_or(true) {
                        inputs[0].rank()
                    } else {
                        let (lo, hi) = (*ranks[i].start(), (*ranks[i].end()).min(MAX_RANK));
                        lo + pick(u, hi.saturating_sub(lo) + 1, 0)
                    };
                let like: Vec<usize> = inputs[0]
                    .dims
                    .iter()
                    .filter_map(|d| d.as_const().map(|v| v as usize))
                    .collect();
                inputs.push(fresh_tensor(
                    &mut vars,
                    u,
                    dtype,
                    rank,
                    &format!("in{i}"),
                    Some(&like),
                ));
                operands.push(Operand::Fresh(domains[i]));
            }
        }
        self.solve_and_add(u, (entry.spec, &choice), vars, inputs, &operands, &as_drawn)
            .is_some()
    }

    /// Inserts op `spec` with `choice` on planned operands (a pattern splice): each one an
    /// existing tensor, or a fresh placeholder of the given rank whose dims the solver picks
    /// (hinted toward the first existing operand's). Returns the new node and the values its
    /// inputs read, or `None` when the constraints cannot be met.
    pub(crate) fn insert_planned(
        &mut self,
        u: &mut Unstructured,
        spec: crate::ops::SpecId,
        choice: &Choice,
        plans: &[Plan],
        adjust: &AdjustAttrs,
    ) -> Option<(NodeIndex, Vec<ValueRef>)> {
        let like: Option<Vec<usize>> = plans.iter().find_map(|p| match p {
            Plan::Existing(v) => Some(self.graph.ty(*v).shape.clone()),
            Plan::Fresh { .. } => None,
        });
        let mut vars = VarTable::default();
        let mut inputs = Vec::with_capacity(plans.len());
        let mut operands = Vec::with_capacity(plans.len());
        for (i, plan) in plans.iter().enumerate() {
            match plan {
                Plan::Existing(v) => {
                    inputs.push(concrete(self.graph.ty(*v)));
                    operands.push(Operand::Existing(*v));
                }
                Plan::Fresh { domain, rank } => {
                    let dtype = choice.sig.inputs[i];
                    let tag = format!("in{i}");
                    inputs.push(fresh_tensor(
                        &mut vars,
                        u,
                        dtype,
                        *rank,
                        &tag,
                        like.as_deref(),
                    ));
                    operands.push(Operand::Fresh(*domain));
                }
            }
        }
        let node = self.solve_and_add(u, (spec, choice), vars, inputs, &operands, adjust)?;
        Some((node, self.graph.inputs_of(node)))
    }

    /// Draws the attributes of an insertion of `(spec, choice)`, adjusts them, solves its
    /// constraints and, when they hold, adds the node (and placeholders for its fresh
    /// operands).
    fn solve_and_add(
        &mut self,
        u: &mut Unstructured,
        (spec_id, choice): (crate::ops::SpecId, &Choice),
        mut vars: VarTable,
        inputs: Vec<SymTensor>,
        operands: &[Operand],
        adjust: &AdjustAttrs,
    ) -> Option<NodeIndex> {
        let spec = &*registry()[spec_id];
        let mut cx = AttrCx {
            u,
            vars: &mut vars,
            sig: &choice.sig,
            class: choice.class,
            out_rank: None,
        };
        let mut attrs = spec.attrs(&mut cx, &inputs);
        let pinned = adjust(&mut attrs, &inputs)?;
        let outs = spec.type_transfer(&attrs, &inputs);
        let mut reqs = spec.requires(&attrs, &inputs);
        reqs.extend(pinned);
        reqs.extend(output_bounds(&outs));
        let env = vars.solve(&reqs)?;
        let resolved = Resolved::new(spec_id, choice, &attrs, &inputs, &outs, &env)?;
        let refs: Vec<ValueRef> = operands
            .iter()
            .zip(&resolved.inputs)
            .map(|(op, ty)| match op {
                Operand::Existing(v) => *v,
                Operand::Fresh(domain) => self.new_placeholder(ty.clone(), *domain),
            })
            .collect();
        Some(self.graph.add_op(resolved.op, resolved.outputs, &refs))
    }

    fn pick_forward_choice(
        &self,
        u: &mut Unstructured,
        spec: &dyn OpSpec,
        choices: &[Choice],
        values: &[ValueRef],
        attempt: usize,
    ) -> Option<Choice> {
        let usable: Vec<&Choice> = choices
            .iter()
            .filter(|c| {
                let r0 = spec.input_ranks(&c.sig)[0].clone();
                values.iter().any(|v| {
                    let t = self.graph.ty(*v);
                    t.dtype == c.sig.inputs[0] && r0.contains(&t.rank())
                })
            })
            .collect();
        usable
            .get(pick(u, usable.len(), attempt))
            .map(|c| (*c).clone())
    }

    fn try_backward(&mut self, u: &mut Unstructured, attempt: usize) -> bool {
        let free: Vec<NodeIndex> = self
            .placeholders
            .iter()
            .copied()
            .filter(|p| !self.domains.contains_key(p))
            .collect();
        if free.is_empty() {
            return false;
        }
        let p = free[pick(u, free.len(), attempt)];
        let target = self.graph.node(p).outputs[0].clone();
        let entry = self.menu.pick(op_draw(u, attempt));
        let spec = &*registry()[entry.spec];
        let usable: Vec<&Choice> = entry
            .choices
            .iter()
            .filter(|c| c.sig.outputs[0] == target.dtype)
            .collect();
        let Some(choice) = usable
            .get(pick(u, usable.len(), attempt))
            .map(|c| (*c).clone())
        else {
            return false;
        };
        let Some(ranks) = spec.infer_input_types(&choice.sig, target.rank(), u) else {
            return false;
        };
        let accepted = spec.input_ranks(&choice.sig);
        if ranks.len() != accepted.len()
            || ranks
                .iter()
                .zip(&accepted)
                .any(|(r, a)| !a.contains(r) || *r > MAX_RANK)
        {
            return false;
        }
        let mut vars = VarTable::default();
        let inputs: Vec<SymTensor> = ranks
            .iter()
            .zip(&choice.sig.inputs)
            .enumerate()
            .map(|(i, (r, d))| {
                fresh_tensor(&mut vars, u, *d, *r, &format!("in{i}"), Some(&target.shape))
            })
            .collect();
        let mut cx = AttrCx {
            u,
            vars: &mut vars,
            sig: &choice.sig,
            class: choice.class,
            out_rank: Some(target.rank()),
        };
        let attrs = spec.attrs(&mut cx, &inputs);
        let outs = spec.type_transfer(&attrs, &inputs);
        if outs[0].len() != target.rank() {
            return false;
        }
        let mut reqs = spec.requires(&attrs, &inputs);
        reqs.extend(outs[0].iter().zip(&target.shape).map(|(d, t)| d.eq(*t)));
        reqs.extend(output_bounds(&outs[1..]));
        let Some(env) = vars.solve(&reqs) else {
            return false;
        };
        let Some(resolved) = Resolved::new(entry.spec, &choice, &attrs, &inputs, &outs, &env)
        else {
            return false;
        };
        if resolved.outputs[0] != target {
            return false;
        }
        let domains = spec.input_domains(&choice.sig);
        let refs: Vec<ValueRef> = resolved
            .inputs
            .iter()
            .zip(domains)
            .map(|(ty, domain)| self.new_placeholder(ty.clone(), domain))
            .collect();
        self.placeholders.retain(|q| *q != p);
        self.graph
            .replace_placeholder(p, resolved.op, resolved.outputs, &refs);
        true
    }

    fn new_placeholder(&mut self, ty: TensorType, domain: ValueDomain) -> ValueRef {
        let n = self.graph.add_leaf(NodeKind::Placeholder, ty);
        self.placeholders.push(n);
        if domain != ValueDomain::Any {
            self.domains.insert(n, domain);
        }
        ValueRef { node: n, output: 0 }
    }
}

/// Every output dim in `[1, MAX_OUT_DIM]`.
fn output_bounds(outs: &[Vec<Int>]) -> Vec<Bool> {
    outs.iter()
        .flatten()
        .map(|d| d.within(1i64, MAX_OUT_DIM))
        .collect()
}

/// An insertion made concrete by a solver assignment.
struct Resolved {
    op: OpNode,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
}

impl Resolved {
    fn new(
        spec: crate::ops::SpecId,
        choice: &Choice,
        attrs: &crate::ops::SymAttrs,
        inputs: &[SymTensor],
        outs: &[Vec<Int>],
        env: &[i64],
    ) -> Option<Resolved> {
        let attrs = attrs.concretize(env)?;
        let inputs: Vec<TensorType> = inputs
            .iter()
            .map(|t| Some(TensorType::new(t.dtype, eval_shape(&t.dims, env)?)))
            .collect::<Option<_>>()?;
        let outputs: Vec<TensorType> = outs
            .iter()
            .zip(&choice.sig.outputs)
            .map(|(dims, d)| Some(TensorType::new(*d, eval_shape(dims, env)?)))
            .collect::<Option<_>>()?;
        if inputs
            .iter()
            .chain(&outputs)
            .any(|t| t.numel() > MAX_NUMEL || t.shape.contains(&0))
        {
            return None;
        }
        Some(Resolved {
            op: OpNode {
                spec,
                sig: choice.sig.clone(),
                attrs,
            },
            inputs,
            outputs,
        })
    }
}
