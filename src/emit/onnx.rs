//! Graph → ONNX `ModelProto`, through prost types generated from the vendored `onnx.proto`.

use crate::gen::TestCase;
use crate::ir::graph::OpNode;
use crate::ir::{Buffer, DType, Graph, NodeKind, Tensor, TensorType, ValueRef};
use crate::ops::{AttrValue, ConstInput};
use petgraph::stable_graph::NodeIndex;
use prost::Message;
use rand::{Rng, SeedableRng};

/// prost types generated from `proto/onnx.proto`.
#[allow(missing_docs, clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

/// The one ONNX opset every model uses (accepted by ONNX Runtime 1.31 and tract 0.23; the
/// first with Pad's `wrap` mode).
pub const OPSET: i64 = 19;
/// The IR version matching [`OPSET`].
pub const IR_VERSION: i64 = 9;

/// An emitted model plus the names that tie it back to the graph.
#[derive(Clone, Debug)]
pub struct OnnxModel {
    /// The serialized `ModelProto`.
    pub bytes: Vec<u8>,
    /// Input leaves and their names, in graph-input order.
    pub inputs: Vec<(NodeIndex, String)>,
    /// Graph outputs and their names, in graph-output order.
    pub outputs: Vec<(ValueRef, String)>,
    /// The type of each output, parallel to `outputs`.
    pub output_types: Vec<TensorType>,
}

/// The ONNX name of a value.
pub fn value_name(g: &Graph, v: ValueRef) -> String {
    let i = v.node.index();
    match g.node(v.node).kind {
        NodeKind::Input => format!("x{i}"),
        NodeKind::Weight => format!("w{i}"),
        NodeKind::Placeholder => format!("p{i}"),
        NodeKind::Op(_) => format!("t{i}_{}", v.output),
    }
}

/// A graph input or output declaration of type `ty`.
pub fn value_info(name: &str, ty: &TensorType) -> pb::ValueInfoProto {
    let dims = ty
        .shape
        .iter()
        .map(|d| pb::tensor_shape_proto::Dimension {
            value: Some(pb::tensor_shape_proto::dimension::Value::DimValue(
                *d as i64,
            )),
            ..Default::default()
        })
        .collect();
    pb::ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: Some(ty.dtype.onnx_code()),
                shape: Some(pb::TensorShapeProto { dim: dims }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A `TensorProto` holding `t` as raw little-endian data.
pub fn tensor_proto(name: &str, t: &Tensor) -> pb::TensorProto {
    pb::TensorProto {
        name: Some(name.to_string()),
        dims: t.shape.iter().map(|d| *d as i64).collect(),
        data_type: Some(t.data.dtype().onnx_code()),
        raw_data: Some(t.data.to_le_bytes()),
        ..Default::default()
    }
}

/// The ONNX attribute `name` holding `v`.
pub fn attribute(name: &str, v: &AttrValue<i64>) -> pb::AttributeProto {
    use pb::attribute_proto::AttributeType as T;
    let mut a = pb::AttributeProto {
        name: Some(name.to_string()),
        ..Default::default()
    };
    match v {
        AttrValue::Int(i) => {
            a.i = Some(*i);
            a.r#type = Some(T::Int as i32);
        }
        AttrValue::Ints(is) => {
            a.ints = is.clone();
            a.r#type = Some(T::Ints as i32);
        }
        AttrValue::Float(f) => {
            a.f = Some(*f);
            a.r#type = Some(T::Float as i32);
        }
        AttrValue::Str(s) => {
            a.s = Some(s.as_bytes().to_vec());
            a.r#type = Some(T::String as i32);
        }
    }
    a
}

/// The tensor a constant operand stands for; `None` for an absent optional input.
pub fn const_tensor(c: &ConstInput<i64>) -> Option<Tensor> {
    let ints = |v: Vec<i64>| Tensor {
        shape: vec![v.len()],
        data: Buffer::I64(v),
    };
    Some(match c {
        ConstInput::Ints(v) => ints(v.clone()),
        ConstInput::Floats(v) => Tensor {
            shape: vec![v.len()],
            data: Buffer::F32(v.clone()),
        },
        ConstInput::Scalar(d, v) => Tensor {
            shape: vec![],
            data: Buffer::from_f64(*d, &[*v]),
        },
        ConstInput::Indices { shape, bound, seed } => {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(*seed);
            let n: usize = shape.iter().map(|d| *d as usize).product();
            let values = (0..n).map(|_| rng.random_range(-*bound..*bound)).collect();
            Tensor {
                shape: shape.iter().map(|d| *d as usize).collect(),
                data: Buffer::I64(values),
            }
        }
        ConstInput::Absent => return None,
    })
}

/// What an operator node becomes in ONNX, apart from its data inputs: shared by [`emit`] and
/// the reference interpreter ([`crate::reference`]), so both read a node the same way.
pub struct NodeParts<'a> {
    /// The ONNX op type.
    pub op_type: &'static str,
    /// Named attributes, in emission order.
    pub attrs: &'a [(String, AttrValue<i64>)],
    /// The constant operands that follow the data inputs, `None` for an omitted optional one.
    pub consts: Vec<Option<Tensor>>,
}

/// The ONNX op type, attributes and constant operands of `op`.
pub fn node_parts(op: &OpNode) -> NodeParts<'_> {
    NodeParts {
        op_type: op.op_type(),
        attrs: &op.attrs.named,
        consts: op.attrs.consts.iter().map(const_tensor).collect(),
    }
}

/// Emits the graph of `case` as it is (weights as initializers), without its mutations: the
/// original model a mutated one must agree with ([`crate::emit::emit`] applies them).
pub fn emit_plain(case: &TestCase) -> OnnxModel {
    emit_with_outputs(case, case.graph.outputs())
}

/// Emits `case` with every operator output declared as a graph output, in topological order:
/// what localizing a wrong value to one op needs.
pub fn emit_exposing_all(case: &TestCase) -> OnnxModel {
    let g = &case.graph;
    let values = g
        .values()
        .into_iter()
        .filter(|v| matches!(g.node(v.node).kind, NodeKind::Op(_)))
        .collect();
    emit_with_outputs(case, values)
}

/// Emits `case` with `outputs` as the graph outputs.
fn emit_with_outputs(case: &TestCase, outputs: Vec<ValueRef>) -> OnnxModel {
    let (proto, model) = model_proto(case, outputs);
    OnnxModel {
        bytes: proto.encode_to_vec(),
        ..model
    }
}

/// The `ModelProto` of `case` with `outputs` as the graph outputs, and the model's names and
/// output types (its `bytes` still empty).
pub fn model_proto(case: &TestCase, outputs: Vec<ValueRef>) -> (pb::ModelProto, OnnxModel) {
    let g = &case.graph;
    let mut graph = pb::GraphProto {
        name: Some("dlcfuzz".into()),
        ..Default::default()
    };
    let mut inputs = Vec::new();
    for n in g.topo_order() {
        let node = g.node(n);
        let v = ValueRef { node: n, output: 0 };
        match &node.kind {
            NodeKind::Input => {
                let name = value_name(g, v);
                graph.input.push(value_info(&name, &node.outputs[0]));
                inputs.push((n, name));
            }
            NodeKind::Weight | NodeKind::Placeholder => {
                let value = case.values.get(&n).expect("every weight has a value");
                graph
                    .initializer
                    .push(tensor_proto(&value_name(g, v), value));
            }
            NodeKind::Op(op) => {
                let parts = node_parts(op);
                let mut in_names: Vec<String> = g
                    .inputs_of(n)
                    .into_iter()
                    .map(|v| value_name(g, v))
                    .collect();
                for (j, c) in parts.consts.iter().enumerate() {
                    match c {
                        Some(t) => {
                            let name = format!("c{}_{j}", n.index());
                            graph.initializer.push(tensor_proto(&name, t));
                            in_names.push(name);
                        }
                        None => in_names.push(String::new()),
                    }
                }
                while in_names.last().is_some_and(String::is_empty) {
                    in_names.pop();
                }
                graph.node.push(pb::NodeProto {
                    name: Some(format!("n{}_{}", n.index(), parts.op_type)),
                    op_type: Some(parts.op_type.to_string()),
                    input: in_names,
                    output: (0..node.outputs.len())
                        .map(|o| value_name(g, ValueRef { node: n, output: o }))
                        .collect(),
                    attribute: parts.attrs.iter().map(|(k, v)| attribute(k, v)).collect(),
                    ..Default::default()
                });
            }
        }
    }
    let outputs: Vec<(ValueRef, String)> =
        outputs.into_iter().map(|v| (v, value_name(g, v))).collect();
    for (v, name) in &outputs {
        graph.output.push(value_info(name, g.ty(*v)));
    }
    let model = pb::ModelProto {
        ir_version: Some(IR_VERSION),
        producer_name: Some("dlcfuzz".into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(OPSET),
        }],
        graph: Some(graph),
        ..Default::default()
    };
    let output_types = outputs.iter().map(|(v, _)| g.ty(*v).clone()).collect();
    let names = OnnxModel {
        bytes: Vec::new(),
        inputs,
        outputs,
        output_types,
    };
    (model, names)
}

/// The dtype of an ONNX elem-type code.
pub fn dtype_of_code(code: i32) -> Option<DType> {
    DType::ALL.iter().copied().find(|d| d.onnx_code() == code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Limits, Menu};
    use emit_plain as emit;

    #[test]
    fn emitted_model_decodes_and_names_every_input_and_output() {
        let case = TestCase::decode(&[7u8; 300], &Menu::everything(), &Limits::exact(5));
        let m = emit(&case);
        let proto = pb::ModelProto::decode(m.bytes.as_slice()).expect("valid protobuf");
        let graph = proto.graph.expect("graph");
        assert_eq!(graph.input.len(), m.inputs.len());
        assert_eq!(graph.output.len(), m.outputs.len());
        assert_eq!(graph.node.len(), case.graph.op_count());
        assert!(!m.outputs.is_empty());
    }
}
