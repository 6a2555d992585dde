//! OATest's optimization-aware synthesis: abstract patterns of the graphs an optimizer pass
//! rewrites, spliced into generated seed graphs so that the pass actually fires.
//!
//! A [`Pattern`] is a small DAG of ONNX op types without shapes or dtypes: each node's data
//! inputs are pattern holes (tensors from the surrounding graph), outputs of earlier pattern
//! nodes, or constants (initializers, some with the exact scalar value a fusion checks, such as
//! Gelu's `0.5`). When a pattern is spliced, our op specs choose every dtype, shape and
//! attribute, so a spliced graph is valid by the same constraints as a generated one.
//!
//! - [`extract`]: patterns from a folder of ONNX models grouped by optimizer pass;
//! - [`defuse`]: fused contrib ops of those models back into the subgraphs they fuse;
//! - [`pins`]: what a pass matches on beyond op types, imposed when a pattern is spliced;
//! - [`builtin`]: the library written from ONNX Runtime's documented fusions, used when no
//!   extracted library is given;
//! - [`splice`]: synthesis into seed graphs, with context reuse and bridge nodes;
//! - [`recipe`]: which patterns, where and how, decoded from fuzzer bytes.

mod bridge;
pub mod builtin;
pub mod defuse;
pub mod extract;
pub mod pins;
pub mod recipe;
pub mod splice;

pub use pins::{Pin, PinValue};

use crate::ops::pattern_roles::PinRoles;
use crate::ops::{registry, SpecId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Version of the serialized library format.
pub const LIBRARY_VERSION: u32 = 2;

/// Where a pattern node's data input comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// Pattern input `k` (a tensor of the surrounding graph); every use of `k` reads the same
    /// tensor.
    Hole(usize),
    /// Output `output` of pattern node `node` (an earlier node).
    Node {
        /// Index of the producing pattern node.
        node: usize,
        /// Its output index.
        output: usize,
    },
    /// A constant (an initializer), with its value when the pass checks it (a scalar).
    Const(Option<f64>),
}

/// One node of a pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternNode {
    /// ONNX op type.
    pub op: String,
    /// The attribute class to use, when the source pins one (e.g. Pad's mode).
    pub class: Option<String>,
    /// Data inputs, in slot order (constant operands such as shapes and axes are the spec's).
    pub inputs: Vec<Source>,
    /// What the pass matches on beyond the op type (attribute and constant values, equal
    /// shapes), imposed on the spec's draw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<Pin>,
}

impl PatternNode {
    /// The rank data input `slot` is pinned to, if any.
    pub fn pinned_rank(&self, slot: usize) -> Option<usize> {
        self.pins.iter().find_map(|p| match p {
            Pin::Rank { slot: s, rank } if *s == slot => Some(*rank),
            _ => None,
        })
    }

    /// Whether the node must keep its input's dtype (a no-op `Cast`).
    pub fn keeps_dtype(&self) -> bool {
        self.pins.contains(&Pin::KeepsDtype)
    }
}

/// How much of its source a pattern keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Granularity {
    /// The whole source graph.
    Block,
    /// A connected part of it (the rest used ops our specs do not cover).
    Subgraph,
    /// Written by hand from ONNX Runtime's documentation.
    Builtin,
}

/// An abstract pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    /// Name (the source model's file stem, or the fusion's name).
    pub name: String,
    /// The optimizer pass it exercises (the folder it came from).
    pub pass: String,
    /// The ONNX Runtime graph transformer whose firing shows the pass ran, when known.
    pub transformer: Option<String>,
    /// Block or subgraph (or built in).
    pub granularity: Granularity,
    /// Nodes in topological order.
    pub nodes: Vec<PatternNode>,
}

impl Pattern {
    /// Number of distinct holes.
    pub fn holes(&self) -> usize {
        self.nodes
            .iter()
            .flat_map(|n| &n.inputs)
            .filter_map(|s| match s {
                Source::Hole(k) => Some(k + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The structure without names, for de-duplication.
    pub fn shape_key(&self) -> String {
        format!("{}|{:?}", self.pass, self.nodes)
    }

    /// Checks that every node names a registered op with a matching data arity and reads only
    /// earlier nodes and holes.
    pub fn validate(&self) -> Result<(), String> {
        if self.nodes.is_empty() {
            return Err(format!("{}: no nodes", self.name));
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let specs = specs_for(&node.op);
            if specs.is_empty() {
                return Err(format!("{}: op {} is not registered", self.name, node.op));
            }
            if !specs
                .iter()
                .any(|s| data_arities(*s).contains(&node.inputs.len()))
            {
                return Err(format!(
                    "{}: {} with {} data inputs",
                    self.name,
                    node.op,
                    node.inputs.len()
                ));
            }
            for s in &node.inputs {
                if let Source::Node { node: j, .. } = s {
                    if *j >= i {
                        return Err(format!("{}: node {i} reads node {j}", self.name));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The specs whose ONNX op type is `op_type`.
pub fn specs_for(op_type: &str) -> Vec<SpecId> {
    crate::ops::specs_of_op_type(op_type)
        .map(|(i, _)| i)
        .collect()
}

/// The pin roles of `op_type`, every spec of it combined (none for an op without a spec).
pub fn roles_of(op_type: &str) -> PinRoles {
    specs_for(op_type)
        .into_iter()
        .map(|i| registry()[i].pin_roles())
        .fold(PinRoles::default(), PinRoles::or)
}

/// The data-input counts a spec's signatures take.
pub fn data_arities(spec: SpecId) -> Vec<usize> {
    let mut arities: Vec<usize> = registry()[spec]
        .sigs()
        .iter()
        .map(|s| s.inputs.len())
        .collect();
    arities.sort_unstable();
    arities.dedup();
    arities
}

/// The ONNX Runtime graph transformer that shows a pass (a test folder of ONNX Runtime's
/// optimizer tests, or a rewrite rule) ran: rule-based rewrites log as their level's
/// `RuleBasedTransformer`; test-only names map to nothing.
pub fn transformer_for_pass(pass: &str) -> Option<String> {
    const LEVEL1_RULES: &[&str] = &[
        "EliminateIdentity",
        "EliminateSlice",
        "UnsqueezeElimination",
        "EliminateDropout",
        "ExpandElimination",
        "CastElimination",
        "PreShapeNodeElimination",
        "NoopElimination",
        "DivMulFusion",
        "FuseReluClip",
        "GemmSumFusion",
        "GemmTransposeFusion",
        "NotWhereFusion",
        "ConvAddFusion",
        "ConvMulFusion",
        "ConvBNFusion",
        "RuleTransformer",
        "RuleTransformer1",
        "RuleTransformerL1",
        "Level1_RuleBasedTransformer",
    ];
    // Rules of the level-2 rule-based transformer (seen in its verbose log).
    const LEVEL2_RULES: &[&str] = &["ClipQuantFusion", "ReluQuantFusion"];
    match pass {
        p if LEVEL1_RULES.contains(&p) => Some("Level1_RuleBasedTransformer".into()),
        p if LEVEL2_RULES.contains(&p) => Some("Level2_RuleBasedTransformer".into()),
        "Test" | "test_transformer" => None,
        // Tests of the CPU-specific instance of the transpose optimizer.
        "TransposeOptimizer_CPUExecutionProvider" => Some(pass.into()),
        p => Some(p.into()),
    }
}

/// A persisted set of patterns plus the bookkeeping of their extraction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Library {
    /// Format version ([`LIBRARY_VERSION`]).
    pub version: u32,
    /// The patterns, grouped by pass in a stable order.
    pub patterns: Vec<Pattern>,
    /// Models read, per pass.
    pub models: BTreeMap<String, usize>,
    /// Models dropped, by reason.
    pub dropped: BTreeMap<String, usize>,
    /// Models whose pattern duplicated an earlier one of the same pass.
    pub duplicates: usize,
    /// Ops not covered by our specs, with how many models used them.
    pub unsupported_ops: BTreeMap<String, usize>,
    /// Contrib ops rewritten into the subgraphs they fuse, with how many nodes.
    #[serde(default)]
    pub defused: BTreeMap<String, usize>,
}

impl Library {
    /// Reads a library written by [`Library::save`].
    pub fn load(path: &Path) -> Result<Library, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let library: Library = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a pattern library: {e}", path.display()))?;
        if library.version != LIBRARY_VERSION {
            return Err(format!(
                "{}: library version {} (this build reads {LIBRARY_VERSION}); re-extract it",
                path.display(),
                library.version
            ));
        }
        for p in &library.patterns {
            p.validate()
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(library)
    }

    /// The library called `name`: `builtin` ([`builtin::library`]), or a file written by
    /// [`Library::save`].
    pub fn named(name: &str) -> Result<Library, String> {
        if name == "builtin" {
            Ok(builtin::library())
        } else {
            Library::load(Path::new(name))
        }
    }

    /// Writes the library as JSON.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
    }

    /// Patterns per pass, and per granularity.
    pub fn per_pass(&self) -> BTreeMap<String, BTreeMap<Granularity, usize>> {
        let mut out: BTreeMap<String, BTreeMap<Granularity, usize>> = BTreeMap::new();
        for p in &self.patterns {
            *out.entry(p.pass.clone())
                .or_default()
                .entry(p.granularity)
                .or_default() += 1;
        }
        out
    }

    /// A human-readable summary: patterns per pass, drops by reason, unsupported ops.
    pub fn stats(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let total_models: usize = self.models.values().sum();
        let _ = writeln!(
            s,
            "{} patterns from {} models ({} duplicates merged, {} dropped)",
            self.patterns.len(),
            total_models,
            self.duplicates,
            self.dropped.values().sum::<usize>()
        );
        let _ = writeln!(
            s,
            "{:<42} {:>6} {:>6} {:>9} {:>8}",
            "pass", "models", "block", "subgraph", "builtin"
        );
        let per_pass = self.per_pass();
        let passes: std::collections::BTreeSet<&String> =
            self.models.keys().chain(per_pass.keys()).collect();
        for pass in passes {
            let counts = per_pass.get(pass);
            let get = |g| counts.and_then(|c| c.get(&g)).copied().unwrap_or(0);
            let _ = writeln!(
                s,
                "{:<42} {:>6} {:>6} {:>9} {:>8}",
                pass,
                self.models.get(pass).copied().unwrap_or(0),
                get(Granularity::Block),
                get(Granularity::Subgraph),
                get(Granularity::Builtin)
            );
        }
        if !self.dropped.is_empty() {
            let _ = writeln!(s, "dropped:");
            for (reason, n) in &self.dropped {
                let _ = writeln!(s, "  {n:>5}  {reason}");
            }
        }
        if !self.defused.is_empty() {
            let list: Vec<String> = self
                .defused
                .iter()
                .map(|(o, n)| format!("{o} ({n})"))
                .collect();
            let _ = writeln!(
                s,
                "contrib ops rewritten into their subgraphs (nodes): {}",
                list.join(", ")
            );
        }
        if !self.unsupported_ops.is_empty() {
            let mut ops: Vec<_> = self.unsupported_ops.iter().collect();
            ops.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let list: Vec<String> = ops.iter().map(|(o, n)| format!("{o} ({n})")).collect();
            let _ = writeln!(s, "ops outside our specs (models): {}", list.join(", "));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_map_to_their_rule_based_transformer() {
        assert_eq!(
            transformer_for_pass("ConvBNFusion").as_deref(),
            Some("Level1_RuleBasedTransformer")
        );
        assert_eq!(
            transformer_for_pass("GeluFusionL1").as_deref(),
            Some("GeluFusionL1")
        );
        assert_eq!(transformer_for_pass("test_transformer"), None);
    }

    #[test]
    fn a_library_round_trips_through_json() {
        let library = builtin::library();
        let dir = std::env::temp_dir().join(format!("dlcfuzz-lib-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lib.json");
        library.save(&path).unwrap();
        assert_eq!(Library::load(&path).unwrap(), library);
        std::fs::write(&path, "{\"version\": 0}").unwrap();
        assert!(Library::load(&path).is_err());
    }

    #[test]
    fn validation_rejects_forward_references_and_unknown_ops() {
        let mut p = builtin::library().patterns[0].clone();
        p.nodes[0].inputs[0] = Source::Node { node: 0, output: 0 };
        assert!(p.validate().is_err());
        let mut q = builtin::library().patterns[0].clone();
        q.nodes[0].op = "NoSuchOp".into();
        assert!(q.validate().is_err());
    }
}
