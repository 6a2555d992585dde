//! Name scoping in ONNX graphs: what a node reads from its enclosing scope (its inputs plus
//! whatever its `If`/`Loop` subgraphs capture), and renaming values inside subgraphs.

use crate::emit::onnx::pb;
use std::collections::{BTreeMap, BTreeSet};

/// The names a node reads from its enclosing scope: its non-empty inputs, plus the outer
/// names its subgraphs capture.
pub fn reads(node: &pb::NodeProto) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = node
        .input
        .iter()
        .filter(|n| !n.is_empty())
        .cloned()
        .collect();
    for graph in subgraphs(node) {
        out.extend(captures(graph));
    }
    out
}

/// The subgraphs held in a node's attributes (`If` branches, `Loop` bodies).
fn subgraphs(node: &pb::NodeProto) -> impl Iterator<Item = &pb::GraphProto> {
    node.attribute
        .iter()
        .flat_map(|a| a.g.iter().chain(a.graphs.iter()))
}

/// The outer-scope names a graph reads: names its nodes (recursively) read and that the graph
/// itself neither declares as input or initializer nor defines.
pub fn captures(graph: &pb::GraphProto) -> BTreeSet<String> {
    let mut defined: BTreeSet<&str> = graph
        .input
        .iter()
        .filter_map(|v| v.name.as_deref())
        .collect();
    defined.extend(graph.initializer.iter().filter_map(|t| t.name.as_deref()));
    let mut out = BTreeSet::new();
    for node in &graph.node {
        for name in reads(node) {
            if !defined.contains(name.as_str()) {
                out.insert(name);
            }
        }
        defined.extend(node.output.iter().map(String::as_str));
    }
    out.extend(
        graph
            .output
            .iter()
            .filter_map(|v| v.name.clone())
            .filter(|n| !defined.contains(n.as_str())),
    );
    out
}

/// Renames every occurrence of the names in `map` in `node`: its inputs and outputs, and
/// (recursively) every name inside its subgraphs. Names not in `map` stay.
pub fn rename(node: &mut pb::NodeProto, map: &BTreeMap<String, String>) {
    let swap = |n: &mut String| {
        if let Some(new) = map.get(n.as_str()) {
            n.clone_from(new);
        }
    };
    node.input.iter_mut().for_each(swap);
    node.output.iter_mut().for_each(swap);
    for a in &mut node.attribute {
        for g in a.g.iter_mut().chain(a.graphs.iter_mut()) {
            rename_graph(g, map);
        }
    }
}

fn rename_graph(graph: &mut pb::GraphProto, map: &BTreeMap<String, String>) {
    for v in graph.input.iter_mut().chain(graph.output.iter_mut()) {
        if let Some(new) = v.name.as_ref().and_then(|n| map.get(n)) {
            v.name = Some(new.clone());
        }
    }
    for node in &mut graph.node {
        rename(node, map);
    }
}

/// The region `[start, end)` of a node list as a unit: what it reads from before it, what it
/// defines, and which of its definitions are read after it (or are graph outputs).
pub struct Region {
    /// Names the region reads and does not define, in first-read order.
    pub reads: Vec<String>,
    /// Names the region defines.
    pub defines: BTreeSet<String>,
    /// Defined names read after the region or declared as graph outputs, in definition order.
    pub live_out: Vec<String>,
}

impl Region {
    /// Analyses `nodes[start..end]`; `outputs` are the enclosing graph's output names.
    pub fn of(nodes: &[pb::NodeProto], start: usize, end: usize, outputs: &[String]) -> Region {
        let mut defines = BTreeSet::new();
        let mut read = Vec::new();
        for node in &nodes[start..end] {
            for name in reads_in_order(node) {
                if !defines.contains(&name) && !read.contains(&name) {
                    read.push(name);
                }
            }
            defines.extend(node.output.iter().filter(|n| !n.is_empty()).cloned());
        }
        let later: BTreeSet<String> = nodes[end..]
            .iter()
            .flat_map(reads)
            .chain(outputs.iter().cloned())
            .collect();
        let live_out = nodes[start..end]
            .iter()
            .flat_map(|n| n.output.iter())
            .filter(|n| later.contains(*n))
            .cloned()
            .collect();
        Region {
            reads: read,
            defines,
            live_out,
        }
    }
}

/// [`reads`] in a stable order: inputs first, then subgraph captures.
fn reads_in_order(node: &pb::NodeProto) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in node.input.iter().filter(|n| !n.is_empty()) {
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    for name in reads(node) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> pb::NodeProto {
        pb::NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn region_reads_defines_and_live_outs() {
        let nodes = vec![
            node("Relu", &["x"], &["a"]),
            node("Add", &["a", "w"], &["b"]),
            node("Neg", &["b"], &["c"]),
            node("Mul", &["a", "c"], &["d"]),
        ];
        let r = Region::of(&nodes, 1, 3, &["d".into()]);
        assert_eq!(r.reads, vec!["a".to_string(), "w".to_string()]);
        assert_eq!(r.live_out, vec!["c".to_string()]);
        assert!(r.defines.contains("b"));
    }

    #[test]
    fn captures_see_through_nested_subgraphs() {
        let inner = pb::GraphProto {
            node: vec![node("Add", &["outer", "local"], &["y"])],
            input: vec![pb::ValueInfoProto {
                name: Some("local".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut wrapper = node("If", &["cond"], &["z"]);
        wrapper.attribute.push(pb::AttributeProto {
            name: Some("then_branch".into()),
            g: Some(inner),
            ..Default::default()
        });
        let got = reads(&wrapper);
        assert!(got.contains("outer") && got.contains("cond") && !got.contains("local"));
        let mut renamed = wrapper.clone();
        rename(
            &mut renamed,
            &BTreeMap::from([("outer".into(), "o2".into())]),
        );
        assert!(reads(&renamed).contains("o2"));
    }
}
