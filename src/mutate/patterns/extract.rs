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
//! become the ONNX ops of the same formulas, and the fused contrib ops a pass produces are
//! first rewritten into the subgraph it fuses ([`super::defuse`]). Models with no covered
//! node, or that do not parse, are dropped and counted by reason; identical abstract patterns
//! of one pass are merged.

use super::defuse::defuse;
use super::{
    data_arities, roles_of, specs_for, transformer_for_pass, Granularity, Library, Pattern,
};
use super::{PatternNode, Pin, PinValue, Source, LIBRARY_VERSION};
use crate::emit::onnx::pb;
use crate::ops::pattern_roles::{NodeView, PinRoles};
use crate::ops::{registry, OpType};
use crate::reference::onnx_models::tensor_from_proto;
use petgraph::unionfind::UnionFind;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Largest pattern kept.
pub const MAX_PATTERN_NODES: usize = 16;

/// What a model's value names stand for.
enum Producer {
    /// Output `output` of node `node` (index into the graph's nodes).
    Node { node: usize, output: usize },
    /// An initializer or a `Constant` output.
    Const(Constant),
}

/// What a constant tensor holds that a pattern may keep.
#[derive(Clone, Default)]
struct Constant {
    /// Its value, when it has one finite element (a float, or an integer such as a zero
    /// point).
    scalar: Option<f64>,
    /// Its float value, when a finite one-element float (fusions check those).
    float: Option<f64>,
    /// Its values, when a 1-D integer tensor (axes).
    ints: Option<Vec<i64>>,
}

impl Constant {
    fn of(t: &pb::TensorProto) -> Constant {
        let Some(t) = tensor_from_proto(t).ok().flatten() else {
            return Constant::default();
        };
        let values = t.data.to_f64_vec();
        let scalar = (values.len() == 1)
            .then(|| values[0])
            .filter(|v| v.is_finite());
        let integer = !t.data.dtype().is_float();
        Constant {
            scalar,
            float: scalar.filter(|_| !integer),
            ints: (integer && t.shape.len() == 1)
                .then(|| values.iter().map(|v| *v as i64).collect()),
        }
    }
}

/// Attributes our specs never take from a source: they follow the chosen dtype signature,
/// the shape of a weight the spec chooses, or the signature's output count.
const DERIVED_ATTRIBUTES: &[&str] = &[
    "to",
    "dtype",
    "output_dtype",
    "saturate",
    "kernel_shape",
    "num_outputs",
];

/// `axes` counted from the end when the rank they index is known, so that they keep their
/// position relative to the rank at any rank the splice picks.
fn from_end(roles: PinRoles, axes: &[i64], input_rank: Option<usize>) -> Vec<i64> {
    let Some(rank) = input_rank else {
        return axes.to_vec();
    };
    let rank = roles.axis_rank(rank, axes.len()) as i64;
    axes.iter()
        .map(|a| if *a >= 0 { a - rank } else { *a })
        .collect()
}

/// The pins of source node `n` (its attributes, and its constant operands after `arity` data
/// inputs that our specs model), given the rank of its first input when known.
fn pins_of(
    n: &pb::NodeProto,
    arity: usize,
    producers: &HashMap<&str, Producer>,
    input_rank: Option<usize>,
) -> Vec<Pin> {
    let roles = roles_of(n.op_type.as_deref().unwrap_or(""));
    let mut pins = Vec::new();
    for a in &n.attribute {
        let name = a.name.clone().unwrap_or_default();
        if DERIVED_ATTRIBUTES.contains(&name.as_str()) {
            continue;
        }
        let axis_like = matches!(name.as_str(), "axis" | "axes");
        let value = match a.r#type() {
            pb::attribute_proto::AttributeType::Int if axis_like => {
                PinValue::Axes(from_end(roles, &[a.i()], input_rank))
            }
            pb::attribute_proto::AttributeType::Int => PinValue::Int(a.i()),
            pb::attribute_proto::AttributeType::Ints if axis_like => {
                PinValue::Axes(from_end(roles, &a.ints, input_rank))
            }
            pb::attribute_proto::AttributeType::Ints => PinValue::Ints(a.ints.clone()),
            pb::attribute_proto::AttributeType::Float => PinValue::Float(f64::from(a.f())),
            _ => continue,
        };
        pins.push(Pin::Attr { name, value });
    }
    for (slot, input) in n.input.iter().skip(arity).enumerate() {
        let Some(Producer::Const(c)) = producers.get(input.as_str()) else {
            continue;
        };
        let value = match (&c.ints, c.scalar) {
            (Some(axes), _) if slot == 0 && roles.axes_operand => {
                PinValue::Axes(from_end(roles, axes, input_rank))
            }
            (_, Some(v)) => PinValue::Float(v),
            _ => continue,
        };
        pins.push(Pin::Const { slot, value });
    }
    pins.extend(input_rank.map(|rank| Pin::Rank { slot: 0, rank }));
    pins
}

/// The rank of every value whose type the model states: graph inputs, outputs and value infos,
/// initializers and `Constant` outputs.
fn known_ranks(graph: &pb::GraphProto) -> HashMap<&str, usize> {
    let mut ranks = HashMap::new();
    for v in graph
        .input
        .iter()
        .chain(&graph.output)
        .chain(&graph.value_info)
    {
        let shape = v.r#type.as_ref().and_then(|t| match &t.value {
            Some(pb::type_proto::Value::TensorType(t)) => t.shape.as_ref(),
            _ => None,
        });
        if let (Some(name), Some(shape)) = (v.name.as_deref(), shape) {
            ranks.insert(name, shape.dim.len());
        }
    }
    for t in &graph.initializer {
        ranks.insert(t.name.as_deref().unwrap_or(""), t.dims.len());
    }
    for n in &graph.node {
        if let (Some(t), Some(out)) = (constant_value(n), n.output.first()) {
            ranks.insert(out.as_str(), t.dims.len());
        }
    }
    ranks
}

/// The tensor a `Constant` node holds (its `value` attribute).
fn constant_value(n: &pb::NodeProto) -> Option<&pb::TensorProto> {
    if n.op_type.as_deref() != Some("Constant") {
        return None;
    }
    let value = n
        .attribute
        .iter()
        .find(|a| a.name.as_deref() == Some("value"));
    value?.t.as_ref()
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
                n.op_type.as_deref().and_then(OpType::parse),
                Some(OpType::QuantizeLinear | OpType::DequantizeLinear)
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
    let view = NodeView {
        inputs_given: n.input.iter().map(|i| !i.is_empty()).collect(),
        strings: n
            .attribute
            .iter()
            .filter_map(|a| {
                Some((
                    a.name.clone()?,
                    String::from_utf8_lossy(a.s.as_ref()?).into_owned(),
                ))
            })
            .collect(),
    };
    let spec = *specs_for(n.op_type.as_deref()?).first()?;
    registry()[spec].class_of_node(&view)
}

/// The abstract pattern of one model, or why there is none.
fn pattern_of(model: &pb::ModelProto, name: &str, pass: &str) -> Result<Pattern, String> {
    let graph = model.graph.as_ref().ok_or("no graph")?;
    let mut producers: HashMap<&str, Producer> = HashMap::new();
    for t in &graph.initializer {
        producers.insert(
            t.name.as_deref().unwrap_or(""),
            Producer::Const(Constant::of(t)),
        );
    }
    // Nodes other than Constant, counted; the covered ones with their data arity.
    let mut op_nodes = 0;
    let mut arity: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, n) in graph.node.iter().enumerate() {
        if n.op_type.as_deref() == Some("Constant") && default_domain(n) {
            let value = constant_value(n).map(Constant::of).unwrap_or_default();
            for o in &n.output {
                producers.insert(o, Producer::Const(value.clone()));
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
    let ranks = known_ranks(graph);
    let mut pattern_nodes = Vec::with_capacity(kept.len());
    for &i in &kept {
        let n = &graph.node[i];
        let rank = n.input.first().and_then(|x| ranks.get(x.as_str())).copied();
        let op = n.op_type.clone().unwrap_or_default();
        let inputs = n
            .input
            .iter()
            .take(arity[&i])
            .map(|input| match producers.get(input.as_str()) {
                Some(Producer::Const(c)) => Ok(Source::Const(c.float)),
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
            pins: pins_of(n, arity[&i], &producers, rank),
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

/// The models `DIR/<pass>/*.onnx`, per pass, both in name order.
pub fn models_by_pass(dir: &Path) -> Result<Vec<(String, Vec<PathBuf>)>, String> {
    let mut passes: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    passes.sort_by_key(|e| e.file_name());
    passes
        .into_iter()
        .map(|pass_dir| {
            let mut files: Vec<PathBuf> = std::fs::read_dir(pass_dir.path())
                .map_err(|e| format!("reading {}: {e}", pass_dir.path().display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
                .collect();
            files.sort();
            Ok((pass_dir.file_name().to_string_lossy().into_owned(), files))
        })
        .collect()
}

/// Extracts the patterns of every `DIR/<pass>/*.onnx`.
pub fn extract(dir: &Path) -> Result<Library, String> {
    let mut library = Library {
        version: LIBRARY_VERSION,
        ..Library::default()
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (pass, files) in models_by_pass(dir)? {
        for file in files {
            *library.models.entry(pass.clone()).or_default() += 1;
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let model = std::fs::read(&file)
                .ok()
                .and_then(|b| pb::ModelProto::decode(b.as_slice()).ok());
            let Some(mut model) = model else {
                *library.dropped.entry("does not parse".into()).or_default() += 1;
                continue;
            };
            for op in model.graph.as_mut().map(defuse).unwrap_or_default() {
                *library.defused.entry(op).or_default() += 1;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::attribute;
    use crate::ops::AttrValue;

    fn value(name: &str, rank: usize) -> pb::ValueInfoProto {
        let dims = (0..rank)
            .map(|_| pb::tensor_shape_proto::Dimension {
                value: Some(pb::tensor_shape_proto::dimension::Value::DimValue(2)),
                ..Default::default()
            })
            .collect();
        pb::ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(pb::TypeProto {
                value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                    elem_type: Some(1),
                    shape: Some(pb::TensorShapeProto { dim: dims }),
                })),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn node(op: &str, inputs: &[&str], output: &str, domain: &str) -> pb::NodeProto {
        pb::NodeProto {
            op_type: Some(op.into()),
            domain: Some(domain.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            ..Default::default()
        }
    }

    #[test]
    fn axes_are_kept_from_the_end_and_fused_ops_are_rewritten_first() {
        let mut reduce = node("ReduceSum", &["x"], "r", "");
        reduce
            .attribute
            .push(attribute("axes", &AttrValue::Ints(vec![2])));
        reduce
            .attribute
            .push(attribute("keepdims", &AttrValue::Int(1)));
        let gelu = node("QuickGelu", &["r"], "y", "com.microsoft");
        let model = pb::ModelProto {
            graph: Some(pb::GraphProto {
                node: vec![reduce, gelu],
                input: vec![value("x", 3)],
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut model = model;
        let rewritten = defuse(model.graph.as_mut().unwrap());
        assert_eq!(rewritten, ["QuickGelu"]);
        let p = pattern_of(&model, "m", "QuickGeluFusion").unwrap();
        assert_eq!(p.granularity, Granularity::Block);
        let ops: Vec<&str> = p.nodes.iter().map(|n| n.op.as_str()).collect();
        assert_eq!(ops, ["ReduceSum", "Mul", "Sigmoid", "Mul"]);
        assert!(p.nodes[0].pins.contains(&Pin::Attr {
            name: "axes".into(),
            value: PinValue::Axes(vec![-1]),
        }));
        assert!(p.nodes[0].pins.contains(&Pin::Rank { slot: 0, rank: 3 }));
        // QuickGelu's alpha is a constant with its value.
        assert_eq!(
            p.nodes[1].inputs[1],
            Source::Const(Some(f64::from(1.702f32)))
        );
    }
}
