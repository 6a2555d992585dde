//! Reading a standalone ONNX file back into an [`OnnxModel`], so that hand-reduced
//! reproducers run through any backend at every level (`dlcfuzz run-model`).

use super::onnx::{dtype_of_code, pb, OnnxModel};
use crate::ir::{Tensor, TensorType, ValueRef};
use petgraph::stable_graph::NodeIndex;
use prost::Message;

/// The declared type of a graph input or output: a tensor of a dlcfuzz dtype with a static
/// shape.
fn declared_type(v: &pb::ValueInfoProto) -> Result<TensorType, String> {
    let name = v.name.as_deref().unwrap_or("");
    let Some(pb::type_proto::Value::TensorType(t)) =
        v.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Err(format!("{name:?} is not a tensor"));
    };
    let dtype = t
        .elem_type
        .and_then(dtype_of_code)
        .ok_or_else(|| format!("{name:?} has an element type dlcfuzz does not generate"))?;
    let shape = t
        .shape
        .as_ref()
        .ok_or_else(|| format!("{name:?} has no shape"))?
        .dim
        .iter()
        .map(|d| match d.value {
            Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) if v >= 0 => Ok(v as usize),
            _ => Err(format!("{name:?} has a symbolic or unknown dimension")),
        })
        .collect::<Result<_, _>>()?;
    Ok(TensorType::new(dtype, shape))
}

/// Reads `bytes` as a model whose inputs and outputs are statically shaped tensors. The
/// returned model's node indices are positions (input `k` is node `k`, output `k` is node
/// `inputs + k`); the second value holds the input types, in order.
pub fn read_model(bytes: Vec<u8>) -> Result<(OnnxModel, Vec<TensorType>), String> {
    let proto = pb::ModelProto::decode(bytes.as_slice()).map_err(|e| e.to_string())?;
    let graph = proto.graph.ok_or("the model has no graph")?;
    let input_types = graph
        .input
        .iter()
        .map(declared_type)
        .collect::<Result<Vec<_>, _>>()?;
    let output_types = graph
        .output
        .iter()
        .map(declared_type)
        .collect::<Result<Vec<_>, _>>()?;
    let name = |v: &pb::ValueInfoProto| v.name.clone().unwrap_or_default();
    let model = OnnxModel {
        inputs: graph
            .input
            .iter()
            .enumerate()
            .map(|(k, v)| (NodeIndex::new(k), name(v)))
            .collect(),
        outputs: graph
            .output
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let node = NodeIndex::new(graph.input.len() + k);
                (ValueRef { node, output: 0 }, name(v))
            })
            .collect(),
        output_types,
        bytes,
    };
    Ok((model, input_types))
}

/// The documented input of a standalone reproducer: element `i` is `(7 i mod 11) - 3`,
/// converted to the dtype (negative values saturate to 0 for unsigned types, booleans are
/// `v != 0`), so that a Python script can feed the very same values.
pub fn pattern_input(ty: &TensorType) -> Tensor {
    let values: Vec<f64> = (0..ty.numel())
        .map(|i| ((7 * i) % 11) as f64 - 3.0)
        .collect();
    Tensor {
        shape: ty.shape.clone(),
        data: crate::ir::Buffer::from_f64(ty.dtype, &values),
    }
}

/// The op types of a serialized model's graph in node order, or `None` when the bytes are
/// not a model.
pub fn node_op_types(bytes: &[u8]) -> Option<Vec<String>> {
    let model = pb::ModelProto::decode(bytes).ok()?;
    Some(
        model
            .graph?
            .node
            .into_iter()
            .filter_map(|n| n.op_type)
            .collect(),
    )
}

/// The names of a serialized model's graph inputs that some graph output depends on (in
/// input order), or `None` when the bytes are not a model. Nodes are read in reverse order,
/// which ONNX's topological order makes a single backward pass.
pub fn live_input_names(bytes: &[u8]) -> Option<Vec<String>> {
    let graph = pb::ModelProto::decode(bytes).ok()?.graph?;
    let mut needed: std::collections::HashSet<String> =
        graph.output.iter().filter_map(|o| o.name.clone()).collect();
    for node in graph.node.iter().rev() {
        if node.output.iter().any(|o| needed.contains(o)) {
            needed.extend(node.input.iter().filter(|i| !i.is_empty()).cloned());
        }
    }
    Some(
        graph
            .input
            .iter()
            .filter_map(|i| i.name.clone())
            .filter(|n| needed.contains(n))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::emit_plain as emit;
    use crate::gen::{Limits, Menu, TestCase};

    #[test]
    fn an_emitted_model_reads_back_with_its_names_and_types() {
        let case = TestCase::decode(&[5u8; 400], &Menu::everything(), &Limits::exact(4));
        let emitted = emit(&case);
        let (read, input_types) = read_model(emitted.bytes.clone()).unwrap();
        let names =
            |v: &[(NodeIndex, String)]| v.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&read.inputs), names(&emitted.inputs));
        assert_eq!(read.output_types, emitted.output_types);
        let expected: Vec<TensorType> = emitted
            .inputs
            .iter()
            .map(|(n, _)| case.graph.node(*n).outputs[0].clone())
            .collect();
        assert_eq!(input_types, expected);
        assert!(read_model(b"\x0a\x00garbage".to_vec()).is_err());
    }

    #[test]
    fn the_pattern_is_the_documented_one() {
        let t = pattern_input(&TensorType::new(crate::ir::DType::I32, vec![4]));
        assert_eq!(t.data.to_f64_vec(), vec![-3.0, 4.0, 0.0, 7.0]);
    }
}
