//! Test-case generation: fuzzer bytes → [`Recipe`] → valid typed [`Graph`] plus values.
//!
//! The recipe is `Arbitrary`: a fixed-size swarm [`Config`] (which ops and dtypes this case may
//! use, how many nodes, how often to insert backward) followed by fixed-size byte chunks, one
//! per insertion step. Each step reads only its own chunk, so flipping one byte changes one
//! step's choices, and an exhausted input just yields zeros: every byte string decodes.

pub(crate) mod insert;
pub use crate::headers::padded_head;

pub mod menu;
pub mod sample;
pub mod solve;

use crate::ir::{Graph, NodeKind, Tensor};
use arbitrary::{Arbitrary, Unstructured};
use petgraph::stable_graph::NodeIndex;
use rand::SeedableRng;
use sample::sample_tensor;
use std::collections::{BTreeMap, BTreeSet};

pub use menu::Menu;

/// Bytes the [`Config`] occupies at the head of every input.
pub const CONFIG_BYTES: usize = 40;

/// Version of the byte decoder (recipe layout, op registry order, solver choices, pattern
/// header). Bump it whenever the same bytes may decode to a different test case: saved
/// inputs carry it (`target.json` in finding folders, `corpus/envelopes/`), and replay warns
/// when it differs. Version 7: the torch surface (torch_compile_* programs) and torch forms
/// on more element-wise declarations (torchscript_* menus). Version 8: pattern splices keep
/// what their pass matches on (pins), read inputs that are not constant-folded, and feed the
/// pattern's result to a consumer. Version 9: torch_onnx_export rows are only given the
/// element types ONNX Runtime's CPU kernels handle for what they export to (probed).
/// Version 10: that probe reads a float argument wherever the row takes one. Version 11:
/// torch.compile's mode byte draws Inductor's configuration from its top two bits.
/// Version 12: the torch surface's attention row and the rows aimed at Inductor's
/// pattern-matcher rewrites take their share of the row draws. Version 13: the six rows
/// aimed at Inductor's freezing passes take theirs. Version 14: `CumSum` takes its share of
/// the op ring (consistent hashing: seeds whose draws land on its points change). Version
/// 15: `GridSample` takes its share of the op ring, and six more torch rows aimed at
/// Inductor's rewrites take theirs of the row draws. Version 16: torch attention rows shape
/// their queries and draw key lengths from 2, torch scans move their axis off a dim of 1.
pub const DECODER_VERSION: u32 = 16;
/// Bytes each insertion step reads.
pub const STEP_BYTES: usize = 48;

/// Bounds on generated graphs, set by the caller (not the bytes).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Fewest operator nodes to aim for.
    pub min_nodes: usize,
    /// Most operator nodes to aim for.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            min_nodes: 1,
            max_nodes: Self::DEFAULT_MAX_NODES,
        }
    }
}

impl Limits {
    /// The default most operator nodes per graph (the fuzz binaries' and campaigns' size).
    pub const DEFAULT_MAX_NODES: usize = 10;

    /// Exactly `n` nodes (as far as insertion succeeds).
    pub fn exact(n: usize) -> Self {
        Limits {
            min_nodes: n,
            max_nodes: n,
        }
    }
}

/// Where each [`Config`] field sits in the [`CONFIG_BYTES`] (the `Arbitrary` derive reads the
/// fields in declaration order; the bytes after the last field are unused): the fields a
/// structure-aware mutator ([`crate::targets::mutator`]) changes one at a time.
pub const CONFIG_FIELDS: [(&str, std::ops::Range<usize>); 6] = [
    ("op_mask", 0..16),
    ("dtype_mask", 16..18),
    ("nodes", 18..19),
    ("backward_chance", 19..20),
    ("weight_chance", 20..21),
    ("value_seed", 21..29),
];

/// The swarm configuration of one test case (itself decoded from bytes).
#[derive(Clone, Debug, PartialEq, Eq, Arbitrary)]
pub struct Config {
    /// Ops enabled for this case: bit i enables registry index i (mod 128).
    pub op_mask: u128,
    /// Dtypes enabled for this case: bit i enables `DType::ALL[i]`.
    pub dtype_mask: u16,
    /// Raw node-count choice, mapped into [`Limits`].
    pub nodes: u8,
    /// Chance (out of 255) that a step inserts backward.
    pub backward_chance: u8,
    /// Chance (out of 255) that a placeholder becomes a weight.
    pub weight_chance: u8,
    /// Seed of the input and weight values.
    pub value_seed: u64,
}

impl Config {
    /// The dtypes enabled, or all of them when the mask enables none.
    pub fn dtypes(&self) -> BTreeSet<crate::ir::DType> {
        let set: BTreeSet<_> = crate::ir::DType::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| self.dtype_mask & (1 << i) != 0)
            .map(|(_, d)| *d)
            .collect();
        if set.is_empty() {
            crate::ir::DType::ALL.iter().copied().collect()
        } else {
            set
        }
    }

    /// The node count this case aims for.
    pub fn target_nodes(&self, limits: &Limits) -> usize {
        let span = limits.max_nodes.saturating_sub(limits.min_nodes) + 1;
        limits.min_nodes + usize::from(self.nodes) % span
    }
}

/// The decoded fuzz input: a config plus one byte chunk per insertion step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipe {
    /// Swarm configuration.
    pub config: Config,
    /// Step chunks, each at most [`STEP_BYTES`] long.
    pub steps: Vec<Vec<u8>>,
}

impl<'a> Arbitrary<'a> for Recipe {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let (padded, rest) = padded_head::<CONFIG_BYTES>(u.bytes(u.len())?);
        let config = Config::arbitrary(&mut Unstructured::new(&padded))?;
        let steps = rest.chunks(STEP_BYTES).map(<[u8]>::to_vec).collect();
        Ok(Recipe { config, steps })
    }
}

impl Recipe {
    /// Decodes any byte string (never fails).
    pub fn from_bytes(bytes: &[u8]) -> Recipe {
        Recipe::arbitrary_take_rest(Unstructured::new(bytes)).expect("recipe decoding is total")
    }
}

/// `ops` sorted, de-duplicated and comma-separated: how signatures, reports and coverage
/// features name a test's op types.
pub fn distinct_ops<S: AsRef<str> + Ord>(mut ops: Vec<S>) -> String {
    ops.sort_unstable();
    ops.dedup();
    ops.iter()
        .map(AsRef::as_ref)
        .collect::<Vec<&str>>()
        .join(",")
}

/// A generated test case: the graph plus values for its inputs and weights.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// The swarm config it came from.
    pub config: Config,
    /// The graph (leaves are inputs or weights).
    pub graph: Graph,
    /// A value for every input and weight leaf.
    pub values: BTreeMap<NodeIndex, Tensor>,
    /// The value domain of each leaf that needs more than the default (e.g. positive
    /// variances), which value search must respect.
    pub domains: BTreeMap<NodeIndex, crate::ops::ValueDomain>,
    /// Leaves whose values are fixed by a spliced pattern (e.g. Gelu's `0.5`): value search
    /// leaves them alone.
    pub frozen: BTreeSet<NodeIndex>,
    /// The patterns spliced into this case, in order (empty for plain generated cases).
    pub spliced: Vec<Spliced>,
    /// The constraint level and ONNX rewrites applied when the case is emitted
    /// (`ort_cpu_mutated`); `None` for plain cases.
    pub mutations: Option<crate::headers::Mutations>,
}

/// A pattern spliced into a test case.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Spliced {
    /// The pattern's name.
    pub pattern: String,
    /// The optimizer pass it was extracted for.
    pub pass: String,
    /// The ONNX Runtime graph transformer whose firing shows the pass ran, when known.
    pub transformer: Option<String>,
}

impl TestCase {
    /// The op type of every operator node, in node order.
    pub fn op_sequence(&self) -> Vec<&'static str> {
        self.graph
            .op_nodes()
            .into_iter()
            .filter_map(|n| match &self.graph.node(n).kind {
                crate::ir::NodeKind::Op(op) => Some(op.op_type()),
                _ => None,
            })
            .collect()
    }

    /// Sorted, de-duplicated op types of the graph, comma-separated (part of inconsistency
    /// signatures and of coverage features).
    pub fn op_types(&self) -> String {
        distinct_ops(self.op_sequence())
    }

    /// Decodes `bytes` into a valid test case using the choices in `menu`.
    pub fn decode(bytes: &[u8], menu: &Menu, limits: &Limits) -> TestCase {
        Self::from_recipe(&Recipe::from_bytes(bytes), menu, limits)
    }

    /// Builds the test case a recipe describes.
    pub fn from_recipe(recipe: &Recipe, menu: &Menu, limits: &Limits) -> TestCase {
        let swarm = menu.swarm(recipe.config.op_mask, &recipe.config.dtypes());
        let out = insert::generate(recipe, &swarm, recipe.config.target_nodes(limits));
        Self::from_generated(recipe, out)
    }

    /// Decides which placeholders of a generated graph become inputs and which weights (from
    /// the recipe's bytes; pattern constants are always weights, live placeholders always
    /// inputs), and samples their values.
    pub(crate) fn from_generated(recipe: &Recipe, out: insert::Generated) -> TestCase {
        let config = &recipe.config;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(config.value_seed);
        let mut graph = out.graph;
        let mut values = BTreeMap::new();
        let mut frozen = BTreeSet::new();
        let leaves = graph.leaves(&NodeKind::Placeholder);
        let mut any_input = false;
        for (i, leaf) in leaves.iter().enumerate() {
            let weight_roll = recipe
                .steps
                .get(i)
                .and_then(|s| s.last())
                .copied()
                .unwrap_or(255);
            let last = i + 1 == leaves.len();
            let constant = out.constants.get(leaf).copied();
            // The last leaf is an input when none is yet, so every model has one.
            let weight = constant.is_some()
                || (weight_roll < config.weight_chance
                    && (any_input || !last)
                    && !out.live.contains(leaf));
            any_input |= !weight;
            let node = graph.node_mut(*leaf);
            node.kind = if weight {
                NodeKind::Weight
            } else {
                NodeKind::Input
            };
            let domain = out
                .domains
                .get(leaf)
                .copied()
                .unwrap_or(crate::ops::ValueDomain::Any);
            let value = match constant.flatten() {
                Some(v) => {
                    frozen.insert(*leaf);
                    Tensor::full(&node.outputs[0], v)
                }
                None => sample_tensor(&node.outputs[0], domain, &mut rng),
            };
            values.insert(*leaf, value);
        }
        if !any_input {
            // Every leaf is a pattern constant: the first unfrozen one (or the first one) is
            // fed at run time instead.
            let leaf = leaves
                .iter()
                .find(|l| !frozen.contains(*l))
                .or(leaves.first())
                .copied();
            if let Some(leaf) = leaf {
                graph.node_mut(leaf).kind = NodeKind::Input;
            }
        }
        TestCase {
            config: config.clone(),
            graph,
            values,
            domains: out.domains,
            frozen,
            spliced: Vec::new(),
            mutations: None,
        }
    }

    /// Input leaves in emission order.
    pub fn inputs(&self) -> Vec<NodeIndex> {
        self.graph.leaves(&NodeKind::Input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_short_inputs_decode_to_a_graph() {
        let menu = Menu::everything();
        for bytes in [&[][..], &[1u8][..], &[255u8; 7][..]] {
            let case = TestCase::decode(bytes, &menu, &Limits::default());
            assert!(case.graph.op_count() >= 1);
            assert!(case.graph.is_connected());
            assert!(!case.inputs().is_empty());
        }
    }

    #[test]
    fn config_fields_sit_where_the_table_says() {
        let decode = |bytes: &[u8; CONFIG_BYTES]| Recipe::from_bytes(bytes).config;
        let zero = decode(&[0; CONFIG_BYTES]);
        let differs = |c: &Config| {
            [
                ("op_mask", c.op_mask != zero.op_mask),
                ("dtype_mask", c.dtype_mask != zero.dtype_mask),
                ("nodes", c.nodes != zero.nodes),
                ("backward_chance", c.backward_chance != zero.backward_chance),
                ("weight_chance", c.weight_chance != zero.weight_chance),
                ("value_seed", c.value_seed != zero.value_seed),
            ]
            .into_iter()
            .filter_map(|(name, changed)| changed.then_some(name))
            .collect::<Vec<_>>()
        };
        for (name, range) in CONFIG_FIELDS {
            for at in range {
                let mut bytes = [0; CONFIG_BYTES];
                bytes[at] = 0xff;
                assert_eq!(differs(&decode(&bytes)), [name], "byte {at}");
            }
        }
        let unused = CONFIG_FIELDS[CONFIG_FIELDS.len() - 1].1.end..CONFIG_BYTES;
        let mut bytes = [0; CONFIG_BYTES];
        bytes[unused].fill(0xff);
        assert_eq!(decode(&bytes), zero);
    }

    #[test]
    fn recipe_splits_config_and_steps() {
        let bytes: Vec<u8> = (0..(CONFIG_BYTES + STEP_BYTES + 5) as u32)
            .map(|i| i as u8)
            .collect();
        let r = Recipe::from_bytes(&bytes);
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.steps[1].len(), 5);
    }
}
