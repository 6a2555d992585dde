//! The structural rules every emitted ONNX model keeps, checked in process (no Python, unlike
//! the `onnx` checker of `tests/onnx_checker.rs`), for the `decoder` target
//! ([`crate::targets::decoder`]): the bytes parse as a `ModelProto` with a graph and the
//! default-domain opset; graph inputs, initializers and node outputs have distinct non-empty
//! names (SSA); every node input names a value defined before the node; every graph input
//! and output declares a tensor type (a known element type and a static shape), and every
//! output is defined.

use super::onnx::{dtype_of_code, pb};
use prost::Message;
use std::collections::HashSet;

/// A broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The rule: `unparsable`, `no-graph`, `no-opset`, `redefined-value`,
    /// `undefined-input`, `untyped-value` or `undefined-output`.
    pub rule: &'static str,
    /// The op type of the node at fault, when a node is.
    pub op: Option<String>,
    /// What is wrong, naming the value.
    pub detail: String,
}

impl Malformed {
    fn new(rule: &'static str, op: Option<&str>, detail: String) -> Malformed {
        Malformed {
            rule,
            op: op.map(str::to_string),
            detail,
        }
    }
}

/// Checks the serialized model `bytes` against every rule; the first broken one is the error.
pub fn check_model(bytes: &[u8]) -> Result<(), Malformed> {
    let model = pb::ModelProto::decode(bytes)
        .map_err(|e| Malformed::new("unparsable", None, e.to_string()))?;
    let default_opset = model.opset_import.iter().any(|o| {
        o.domain.as_deref().unwrap_or_default().is_empty() && o.version.is_some_and(|v| v > 0)
    });
    if !default_opset {
        return Err(Malformed::new(
            "no-opset",
            None,
            "no default-domain opset import".into(),
        ));
    }
    let graph = model
        .graph
        .ok_or_else(|| Malformed::new("no-graph", None, "the model has no graph".into()))?;
    let mut defined = HashSet::new();
    for input in &graph.input {
        typed(input)?;
        define(&mut defined, input.name(), None)?;
    }
    for init in &graph.initializer {
        define(&mut defined, init.name(), None)?;
    }
    for node in &graph.node {
        let op = node.op_type();
        // An empty name is an omitted optional input.
        if let Some(input) = node
            .input
            .iter()
            .find(|i| !i.is_empty() && !defined.contains(*i))
        {
            return Err(Malformed::new(
                "undefined-input",
                Some(op),
                format!(
                    "node {:?} reads {input:?} before it is defined",
                    node.name()
                ),
            ));
        }
        for output in &node.output {
            define(&mut defined, output, Some(op))?;
        }
    }
    for output in &graph.output {
        typed(output)?;
        if !defined.contains(output.name()) {
            return Err(Malformed::new(
                "undefined-output",
                None,
                format!("graph output {:?} is never defined", output.name()),
            ));
        }
    }
    Ok(())
}

/// Adds `name` (the output of an `op` node, when one) to the `defined` values; an empty or
/// already defined name breaks SSA.
fn define(defined: &mut HashSet<String>, name: &str, op: Option<&str>) -> Result<(), Malformed> {
    if name.is_empty() || !defined.insert(name.to_string()) {
        return Err(Malformed::new(
            "redefined-value",
            op,
            format!("value {name:?} is defined twice or has no name"),
        ));
    }
    Ok(())
}

/// Whether `value` declares a tensor of a known element type and a static shape.
fn typed(value: &pb::ValueInfoProto) -> Result<(), Malformed> {
    let tensor = match value.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(pb::type_proto::Value::TensorType(t)) => Some(t),
        _ => None,
    };
    let known = tensor.is_some_and(|t| {
        t.elem_type.and_then(dtype_of_code).is_some()
            && t.shape.as_ref().is_some_and(|s| {
                s.dim.iter().all(|d| {
                    matches!(
                        d.value,
                        Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) if v >= 0
                    )
                })
            })
    });
    if known {
        Ok(())
    } else {
        Err(Malformed::new(
            "untyped-value",
            None,
            format!("{:?} declares no static tensor type", value.name()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::emit_plain;
    use crate::gen::{Limits, Menu, TestCase};

    /// The model of a 5-node generated case, as a proto.
    fn model() -> pb::ModelProto {
        let case = TestCase::decode(&[7u8; 300], &Menu::everything(), &Limits::exact(5));
        pb::ModelProto::decode(emit_plain(&case).bytes.as_slice()).expect("emitted model")
    }

    /// The rule `edit` breaks in the model.
    fn broken(edit: impl FnOnce(&mut pb::GraphProto)) -> &'static str {
        let mut model = model();
        edit(model.graph.as_mut().expect("graph"));
        check_model(&model.encode_to_vec()).unwrap_err().rule
    }

    #[test]
    fn emitted_models_keep_every_rule() {
        let menu = Menu::everything();
        for seed in 0..40u8 {
            let bytes: Vec<u8> = (0..900u32)
                .map(|i| (i as u8).wrapping_mul(seed | 1) ^ seed)
                .collect();
            let case = TestCase::decode(&bytes, &menu, &Limits::default());
            check_model(&emit_plain(&case).bytes).unwrap();
        }
    }

    #[test]
    fn each_broken_rule_is_named() {
        assert_eq!(check_model(b"\xff\xff\xff").unwrap_err().rule, "unparsable");
        assert_eq!(
            broken(|g| g.node[0].input[0] = "ghost".into()),
            "undefined-input"
        );
        assert_eq!(
            broken(|g| {
                let first = g.node[0].clone();
                g.node.push(first);
            }),
            "redefined-value"
        );
        assert_eq!(broken(|g| g.output[0].r#type = None), "untyped-value");
        assert_eq!(
            broken(|g| g.output[0].name = Some("nowhere".into())),
            "undefined-output"
        );
        let mut model = model();
        model.opset_import.clear();
        assert_eq!(
            check_model(&model.encode_to_vec()).unwrap_err().rule,
            "no-opset"
        );
    }
}
