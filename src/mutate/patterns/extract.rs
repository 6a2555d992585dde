//! Pattern extraction from a folder of ONNX models grouped by the optimizer pass that their
//! test exercised (`DIR/<Pass>/*.onnx`, as in ONNX Runtime's optimizer tests).
//!
//! Granularity is decided per model, which makes it per pass in effect (a pass's models are
//! alike): a model whose every node our specs cover becomes one **block** pattern (the whole
//! graph); otherwise its largest connected part of covered nodes becomes a **subgraph**
//! pattern, the uncovered producers' outputs turning into pattern inputs. Parts larger than
//! [`MAX_PATTERN_NODES`] keep their first nodes in graph order. Shapes and dtypes are dropped;
//! data inputs that are initializers or `Constant` outputs stay constants (with their value
//! when they are float scalars, which fusions check); shape, axes and pads operands are
//! dropped, since our specs choose those. `com.microsoft` QuantizeLinear/DequantizeLinear
//! become the ONNX ops of the same formulas. Models with no covered node, or that do not parse,
//! are dropped and counted by reason; identical abstract patterns of one pass are merged.

use super::{data_arities, specs_for, transformer_for_pass, Granularity, Library, Pattern};
use super::{PatternNode, Source, LIBRARY_VERSION};
use crate::emit::onnx::pb;
use crate::ops::registry;
use crate::reference::onnx_models::tensor_from_proto;
use petgraph::unionfind::UnionFind;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Largest pattern kept.
pub const MAX_PATTERN_NODES: usize = 16;

/// What a model's value names stand for.
enum Producer {
    /// Output `output` of node `node` (index into the graph's nodes).
    Node { node: usize, output: usize },
    /// An initializer or a `Constant` output, with its value when a float scalar.
    Const(Option<f64>),
}

/// The scalar value of a constant tensor, when it is a finite one-element float.
fn scalar(t: &pb::TensorProto) -> Option<f64> {
    let t = tensor_from_proto(t).ok().flatten()?;
    let value = (t.data.dtype().is_float() && t.data.len() == 1).then(|| t.data.to_f64_vec()[0]);
    value.filter(|v| v.is_finite())
}

/// Whether a node belongs to the default ONNX domain.
fn default_domain(n: &pb::NodeProto) -> bool {
    matches!(n.domain.as_deref(), None | Some("") | Some("ai.onnx"))
}

/// The op type of a node, prefixed by its domain outside the default one.
fn qualified(n: &pb::NodeProto) -> String {
    let op = n.op_type.clone().unwrap_or_default();
    if default_domain(n) {
        op
    } else {
        format!("{}:{op}", n.domain.as_deref().unwrap_or(""))
    }
}

/// Whether our specs may stand for `n`: a default-domain op, or one of the `com.microsoft`
/// QuantizeLinear/DequantizeLinear contrib ops, which compute the same per-tensor formulas.
fn covered_domain(n: &pb::NodeProto) -> bool {
    default_domain(n)
        || (n.domain.as_deref() == Some("com.microsoft")
            && matches!(
                n.op_type.as_deref(),
                Some("QuantizeLinear" | "DequantizeLinear")
            ))
}

/// How many of `n`'s inputs are data inputs for our spec, or `None` when no spec takes it.
fn data_arity(n: &pb::NodeProto) -> Option<usize> {
    if !covered_domain(n) {
        return None;
    }
    let present = n.input.iter().take_while(|i| !i.is_empty()).count();
    specs_for(n.op_type.as_deref().unwrap_or(""))
        .into_iter()
        .flat_map(data_arities)
        .filter(|a| *a <= present && *a > 0)
        .max()
}

/// The attribute class a node pins, where our spec has classes that mirror ONNX's.
fn class_of(n: &pb::NodeProto) -> Option<String> {
    match n.op_type.as_deref()? {
        "Clip" => {
            let given: Vec<bool> = (1..3)
                .map(|i| n.input.get(i).is_some_and(|s| !s.is_empty()))
                .collect();
            match (given[0], given[1]) {
                (true, true) => Some("min_max".into()),
                (true, false) => Some("min_only".into()),
                (false, true) => Some("max_only".into()),
                (false, false) => None,
            }
        }
        "Pad" => {
            let mode = n
                .attribute
                .iter()
                .find(|a| a.name.as_deref() == Some("mode"))
                .and_then(|a| a.s.clone())
                .map(|s| String::from_utf8_lossy(&s).into_owned());
            Some(mode.unwrap_or_else(|| "constant".into()))
        }
        _ => None,
    }
}

/// The abstract pattern of one model, or why there is none.
fn pattern_of(model: &pb::ModelProto, name: &str, pass: &str) -> Result<Pattern, String> {
    let graph = model.graph.as_ref().ok_or("no graph")?;
    let mut producers: HashMap<&str, Producer> = HashMap::new();
    for t in &graph.initializer {
        producers.insert(t.name.as_deref().unwrap_or(""), Producer::Const(scalar(t)));
    }
    // Nodes other than Constant, counted; the covered ones with their data arity.
    let mut op_nodes = 0;
    let mut arity: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, n) in graph.node.iter().enumerate() {
        if n.op_type.as_deref() == Some("Constant") && default_domain(n) {
            let value = n
                .attribute
                .iter()
                .find(|a| a.name.as_deref() == Some("value"))
                .and_then(|a| a.t.as_ref())
                .and_then(scalar);
            for o in &n.output {
                producers.insert(o, Producer::Const(value));
            }
            continue;
        }
        for (k, o) in n.output.iter().enumerate() {
            producers.insert(o, Producer::Node { node: i, output: k });
        }
        op_nodes += 1;
        if let Some(a) = data_arity(n) {
            arity.insert(i, a);
        }
    }
    if arity.is_empty() {
        return Err("no op our specs cover".into());
    }
    // The largest connected part of covered nodes.
    let mut sets = UnionFind::<usize>::new(graph.node.len());
    for (&i, &a) in &arity {
        for input in graph.node[i].input.iter().take(a) {
            if let Some(Producer::Node { node, .. }) = producers.get(input.as_str()) {
                if arity.contains_key(node) {
                    sets.union(i, *node);
                }
            }
        }
    }
    let mut parts: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &i in arity.keys() {
        parts.entry(sets.find(i)).or_default().push(i);
    }
    let part = parts
        .into_values()
        .max_by_key(|p| p.len())
        .expect("some node is covered");
    let granularity = if part.len() == op_nodes {
        Granularity::Block
    } else {
        Granularity::Subgraph
    };
    let kept: Vec<usize> = part.into_iter().take(MAX_PATTERN_NODES).collect();
    let position: BTreeMap<usize, usize> = kept.iter().enumerate().map(|(p, i)| (*i, p)).collect();
    let mut holes: BTreeMap<String, usize> = BTreeMap::new();
    let mut pattern_nodes = Vec::with_capacity(kept.len());
    for &i in &kept {
        let n = &graph.node[i];
        let op = n.op_type.clone().unwrap_or_default();
        let inputs = n
            .input
            .iter()
            .take(arity[&i])
            .map(|input| match producers.get(input.as_str()) {
                Some(Producer::Const(v)) => Ok(Source::Const(*v)),
                Some(Producer::Node { node, output }) if position.contains_key(node) => {
                    let producer_op = graph.node[*node].op_type.as_deref().unwrap_or("");
                    let producer_outputs = specs_for(producer_op)
                        .iter()
                        .flat_map(|s| registry()[*s].sigs())
                        .map(|s| s.outputs.len())
                        .max()
                        .unwrap_or(1);
                    if position[node] >= position[&i] {
                        Err("nodes are not in topological order".to_string())
                    } else if *output < producer_outputs {
                        Ok(Source::Node {
                            node: position[node],
                            output: *output,
                        })
                    } else {
                        Ok(hole(&mut holes, input))
                    }
                }
                _ => Ok(hole(&mut holes, input)),
            })
            .collect::<Result<Vec<_>, String>>()?;
        pattern_nodes.push(PatternNode {
            op,
            class: class_of(n),
            inputs,
        });
    }
    let pattern = Pattern {
        name: name.into(),
        pass: pass.into(),
        transformer: transformer_for_pass(pass),
        granularity,
        nodes: pattern_nodes,
    };
    pattern.validate()?;
    Ok(pattern)
}

/// The hole for value `name`, numbered in order of first use.
fn hole(holes: &mut BTreeMap<String, usize>, name: &str) -> Source {
    let next = holes.len();
    Source::Hole(*holes.entry(name.to_string()).or_insert(next))
}

/// Extracts the patterns of every `DIR/<pass>/*.onnx`.
pub fn extract(dir: &Path) -> Result<Library, String> {
    let mut library = Library {
        version: LIBRARY_VERSION,
        ..Library::default()
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut passes: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    passes.sort_by_key(|e| e.file_name());
    for pass_dir in passes {
        let pass = pass_dir.file_name().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(pass_dir.path())
            .map_err(|e| format!("reading {}: {e}", pass_dir.path().display()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
            .collect();
        files.sort();
        for file in files {
            *library.models.entry(pass.clone()).or_default() += 1;
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let model = std::fs::read(&file)
                .ok()
                .and_then(|b| pb::ModelProto::decode(b.as_slice()).ok());
            let Some(model) = model else {
                *library.dropped.entry("does not parse".into()).or_default() += 1;
                continue;
            };
            let mut uncovered: BTreeSet<String> = BTreeSet::new();
            for n in model.graph.iter().flat_map(|g| &g.node) {
                if n.op_type.as_deref() != Some("Constant") && data_arity(n).is_none() {
                    uncovered.insert(qualified(n));
                }
            }
            for op in uncovered {
                *library.unsupported_ops.entry(op).or_default() += 1;
            }
            match pattern_of(&model, &name, &pass) {
                Ok(p) => {
                    if seen.insert(p.shape_key()) {
                        library.patterns.push(p);
                    } else {
                        library.duplicates += 1;
                    }
                }
                Err(reason) => *library.dropped.entry(reason).or_default() += 1,
            }
        }
    }
    Ok(library)
}
