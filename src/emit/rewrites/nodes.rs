//! Small `NodeProto` and `AttributeProto` builders the rewrites share.

use crate::emit::onnx::{attribute, pb};
use crate::ir::DType;
use crate::ops::{AttrValue, OpType};

/// A node of type `op` reading `inputs` and defining `output`, without attributes.
pub fn node(op: &str, inputs: &[&str], output: &str) -> pb::NodeProto {
    pb::NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    }
}

/// `output = Cast(x, to)`.
pub fn cast(x: &str, to: DType, output: &str) -> pb::NodeProto {
    let mut n = node(OpType::Cast.name(), &[x], output);
    n.attribute
        .push(attribute("to", &AttrValue::Int(to.onnx_code().into())));
    n
}

/// A graph attribute.
pub fn graph_attr(name: &str, g: pb::GraphProto) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(pb::attribute_proto::AttributeType::Graph as i32),
        g: Some(g),
        ..Default::default()
    }
}
