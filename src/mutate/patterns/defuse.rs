//! Contrib ops back into the ONNX subgraphs they fuse, before extraction.
//!
//! Many pass-test models hold a pass's *result*: ONNX Runtime's `com.microsoft` fused ops
//! (`FusedConv`, `FusedMatMul`, `BiasSoftmax`, `QuickGelu`, `SkipLayerNormalization`, …). Our
//! specs cannot stand for them, and a pattern of the fused form would not fire the pass anyway.
//! Each one is rewritten here into the default-domain subgraph that its fusion matches, as
//! `com.microsoft`'s operator documentation defines it (the activation of a `FusedConv`, the
//! transposes and scale of a `FusedMatMul`, Gelu's erf and tanh formulas with their
//! constants), so that extraction keeps the model and the pattern targets the pass. Ops with
//! no such rewrite (quantized contrib ops, control flow) stay as they are.

use crate::emit::onnx::{attribute, pb, tensor_proto};
use crate::ir::{Buffer, Tensor};
use crate::ops::{AttrValue, OpType};

/// Constants of the Gelu formulas, as ONNX Runtime's fusions check them.
const SQRT_2: f32 = std::f32::consts::SQRT_2;
const TANH_GELU_SCALE: f32 = 0.797_884_6;
const TANH_GELU_CUBIC: f32 = 0.044_715;

/// A rewrite under way: new nodes, new scalar initializers, fresh value names.
struct Rewrite<'a> {
    prefix: String,
    next: usize,
    nodes: Vec<pb::NodeProto>,
    constants: &'a mut Vec<pb::TensorProto>,
}

impl Rewrite<'_> {
    /// A fresh value name.
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("{}_defused_{}", self.prefix, self.next)
    }

    /// A float32 scalar initializer of value `v`.
    fn scalar(&mut self, v: f32) -> String {
        let name = self.fresh();
        let t = Tensor {
            shape: Vec::new(),
            data: Buffer::F32(vec![v]),
        };
        self.constants.push(tensor_proto(&name, &t));
        name
    }

    /// Appends `op(inputs)` with `attrs`, writing `output` (a fresh name when `None`).
    fn op(
        &mut self,
        op: OpType,
        inputs: &[&str],
        attrs: Vec<pb::AttributeProto>,
        output: Option<&str>,
    ) -> String {
        let out = output.map_or_else(|| self.fresh(), str::to_string);
        self.nodes.push(pb::NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.clone()],
            attribute: attrs,
            ..Default::default()
        });
        out
    }

    /// `x · 0.5 · (1 + erf(x / √2))`, the erf Gelu as `GeluFusion` matches it.
    fn gelu_erf(&mut self, x: &str, output: &str) {
        let root = self.scalar(SQRT_2);
        let d = self.op(OpType::Div, &[x, &root], vec![], None);
        let e = self.op(OpType::Erf, &[&d], vec![], None);
        let one = self.scalar(1.0);
        let a = self.op(OpType::Add, &[&e, &one], vec![], None);
        let m = self.op(OpType::Mul, &[x, &a], vec![], None);
        let half = self.scalar(0.5);
        self.op(OpType::Mul, &[&m, &half], vec![], Some(output));
    }

    /// `0.5x · (1 + tanh(0.79788 · (x + 0.044715 x³)))`, the tanh Gelu `FastGeluFusion`
    /// matches (its second formula).
    fn gelu_tanh(&mut self, x: &str, output: &str) {
        let three = self.scalar(3.0);
        let cube = self.op(OpType::Pow, &[x, &three], vec![], None);
        let c = self.scalar(TANH_GELU_CUBIC);
        let scaled_cube = self.op(OpType::Mul, &[&cube, &c], vec![], None);
        let inner = self.op(OpType::Add, &[x, &scaled_cube], vec![], None);
        let k = self.scalar(TANH_GELU_SCALE);
        let arg = self.op(OpType::Mul, &[&inner, &k], vec![], None);
        let t = self.op(OpType::Tanh, &[&arg], vec![], None);
        let one = self.scalar(1.0);
        let a = self.op(OpType::Add, &[&t, &one], vec![], None);
        let half = self.scalar(0.5);
        let h = self.op(OpType::Mul, &[x, &half], vec![], None);
        self.op(OpType::Mul, &[&h, &a], vec![], Some(output));
    }

    /// The activation a fused node names (`activation`, `activation_params`) applied to `x`.
    fn activation(&mut self, n: &pb::NodeProto, x: &str, output: &str) -> Option<()> {
        let name = string_attr(n, "activation")?;
        let params = n
            .attribute
            .iter()
            .find(|a| a.name.as_deref() == Some("activation_params"))
            .map(|a| a.floats.clone())
            .unwrap_or_default();
        let float = |name: &str, i: usize| {
            params
                .get(i)
                .map(|v| attribute(name, &AttrValue::Float(*v)))
        };
        match OpType::parse(&name)? {
            op @ (OpType::Relu | OpType::Sigmoid | OpType::Tanh) => {
                self.op(op, &[x], vec![], Some(output));
            }
            op @ OpType::LeakyRelu => {
                self.op(
                    op,
                    &[x],
                    float("alpha", 0).into_iter().collect(),
                    Some(output),
                );
            }
            op @ OpType::HardSigmoid => {
                let attrs = [float("alpha", 0), float("beta", 1)]
                    .into_iter()
                    .flatten()
                    .collect();
                self.op(op, &[x], attrs, Some(output));
            }
            OpType::Clip => {
                let (lo, hi) = (self.scalar(*params.first()?), self.scalar(*params.get(1)?));
                self.op(OpType::Clip, &[x, &lo, &hi], vec![], Some(output));
            }
            _ => return None,
        }
        Some(())
    }
}

/// The string attribute `name` of `n`.
fn string_attr(n: &pb::NodeProto, name: &str) -> Option<String> {
    let a = attr(n, name)?;
    Some(String::from_utf8_lossy(a.s.as_deref()?).into_owned())
}

/// The attribute `name` of `n`, if it has one.
fn attr<'n>(n: &'n pb::NodeProto, name: &str) -> Option<&'n pb::AttributeProto> {
    n.attribute.iter().find(|a| a.name.as_deref() == Some(name))
}

/// `n`'s attributes except those of its fused activation (`activation`, `activation_params`,
/// `activation_alpha`, …), which the unfused Conv or Gemm does not take.
fn without_activation(n: &pb::NodeProto) -> Vec<pb::AttributeProto> {
    n.attribute
        .iter()
        .filter(|a| !a.name.as_deref().unwrap_or("").starts_with("activation"))
        .cloned()
        .collect()
}

/// The present (non-empty) input `i` of `n`.
fn input(n: &pb::NodeProto, i: usize) -> Option<&str> {
    n.input.get(i).map(String::as_str).filter(|s| !s.is_empty())
}

/// Rewrites one contrib node into default-domain nodes, or `None` when it has no rewrite.
fn defuse_node(n: &pb::NodeProto, w: &mut Rewrite) -> Option<()> {
    if n.domain.as_deref() != Some("com.microsoft") {
        return None;
    }
    let out = n.output.first()?.clone();
    let x = input(n, 0)?;
    match n.op_type.as_deref()? {
        "FusedConv" => {
            let conv_inputs: Vec<&str> = n.input.iter().take(3).map(String::as_str).collect();
            let c = w.op(OpType::Conv, &conv_inputs, without_activation(n), None);
            let c = match input(n, 3) {
                Some(z) => w.op(OpType::Add, &[&c, z], vec![], None),
                None => c,
            };
            w.activation(n, &c, &out)?;
        }
        "FusedGemm" => {
            let gemm_inputs: Vec<&str> = n.input.iter().take(3).map(String::as_str).collect();
            let g = w.op(OpType::Gemm, &gemm_inputs, without_activation(n), None);
            w.activation(n, &g, &out)?;
        }
        "FusedMatMul" => {
            let flag = |name| attr(n, name).and_then(|a| a.i).unwrap_or(0) == 1;
            let a = if flag("transA") {
                w.op(OpType::Transpose, &[x], vec![], None)
            } else {
                x.to_string()
            };
            let b_in = input(n, 1)?;
            let b = if flag("transB") {
                w.op(OpType::Transpose, &[b_in], vec![], None)
            } else {
                b_in.to_string()
            };
            let alpha = attr(n, "alpha").and_then(|a| a.f).unwrap_or(1.0);
            if alpha == 1.0 {
                w.op(OpType::MatMul, &[&a, &b], vec![], Some(&out));
            } else {
                let m = w.op(OpType::MatMul, &[&a, &b], vec![], None);
                let k = w.scalar(alpha);
                w.op(OpType::Mul, &[&m, &k], vec![], Some(&out));
            }
        }
        "BiasSoftmax" => {
            let s = w.op(OpType::Add, &[x, input(n, 1)?], vec![], None);
            let axis = attr(n, "axis").and_then(|a| a.i).unwrap_or(-1);
            w.op(
                OpType::Softmax,
                &[&s],
                vec![attribute("axis", &AttrValue::Int(axis))],
                Some(&out),
            );
        }
        "BiasDropout" => {
            let s = w.op(OpType::Add, &[x, input(n, 1)?], vec![], None);
            match input(n, 2) {
                Some(residual) => {
                    let d = w.op(OpType::Dropout, &[&s], vec![], None);
                    w.op(OpType::Add, &[&d, residual], vec![], Some(&out));
                }
                None => {
                    w.op(OpType::Dropout, &[&s], vec![], Some(&out));
                }
            }
        }
        "QuickGelu" => {
            let alpha = attr(n, "alpha").and_then(|a| a.f).unwrap_or(1.702);
            let k = w.scalar(alpha);
            let s = w.op(OpType::Mul, &[x, &k], vec![], None);
            let g = w.op(OpType::Sigmoid, &[&s], vec![], None);
            w.op(OpType::Mul, &[x, &g], vec![], Some(&out));
        }
        "SkipLayerNormalization" => {
            let mut s = w.op(OpType::Add, &[x, input(n, 1)?], vec![], None);
            if let Some(bias) = input(n, 4) {
                s = w.op(OpType::Add, &[&s, bias], vec![], None);
            }
            let mut ln_inputs = vec![s.as_str(), input(n, 2)?];
            ln_inputs.extend(input(n, 3));
            let mut ln_attrs = vec![attribute("axis", &AttrValue::Int(-1))];
            ln_attrs.extend(attr(n, "epsilon").cloned());
            w.op(OpType::LayerNormalization, &ln_inputs, ln_attrs, Some(&out));
        }
        "Gelu" => w.gelu_erf(x, &out),
        "BiasGelu" => {
            let s = w.op(OpType::Add, &[x, input(n, 1)?], vec![], None);
            w.gelu_erf(&s, &out);
        }
        "FastGelu" => {
            let s = match input(n, 1) {
                Some(bias) => w.op(OpType::Add, &[x, bias], vec![], None),
                None => x.to_string(),
            };
            w.gelu_tanh(&s, &out);
        }
        _ => return None,
    }
    Some(())
}

/// The graph with every contrib node that has a rewrite replaced by its subgraph (in place,
/// so the topological order holds); returns the op types rewritten, one per node.
pub fn defuse(graph: &mut pb::GraphProto) -> Vec<String> {
    let mut nodes = Vec::with_capacity(graph.node.len());
    let mut constants = Vec::new();
    let mut rewritten = Vec::new();
    for (i, n) in graph.node.iter().enumerate() {
        let mut w = Rewrite {
            prefix: format!("n{i}"),
            next: 0,
            nodes: Vec::new(),
            constants: &mut constants,
        };
        let before = w.constants.len();
        if defuse_node(n, &mut w).is_some() {
            nodes.append(&mut w.nodes);
            rewritten.push(n.op_type.clone().unwrap_or_default());
        } else {
            w.constants.truncate(before);
            nodes.push(n.clone());
        }
    }
    graph.node = nodes;
    graph.initializer.append(&mut constants);
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::patterns::specs_for;

    fn contrib(op: &str, inputs: &[&str], attrs: Vec<pb::AttributeProto>) -> pb::NodeProto {
        pb::NodeProto {
            op_type: Some(op.into()),
            domain: Some("com.microsoft".into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec!["y".into()],
            attribute: attrs,
            ..Default::default()
        }
    }

    fn ops(g: &pb::GraphProto) -> Vec<&str> {
        g.node
            .iter()
            .map(|n| n.op_type.as_deref().unwrap_or(""))
            .collect()
    }

    /// Every node a defusion writes is an op our specs stand for (a misspelt op type would
    /// otherwise make extraction drop the node without a word): each contrib op with its
    /// optional inputs given, and `FusedConv` with every activation it names.
    #[test]
    fn every_defusion_writes_only_registered_ops() {
        let string = |name: &str, v: &str| {
            let mut a = attribute(name, &AttrValue::Str(v.into()));
            a.r#type = Some(pb::attribute_proto::AttributeType::String as i32);
            a
        };
        let params = pb::AttributeProto {
            name: Some("activation_params".into()),
            floats: vec![0.0, 6.0],
            ..Default::default()
        };
        let mut nodes = Vec::new();
        for act in [
            "Relu",
            "Sigmoid",
            "Tanh",
            "LeakyRelu",
            "HardSigmoid",
            "Clip",
        ] {
            let attrs = vec![string("activation", act), params.clone()];
            nodes.push(contrib("FusedConv", &["x", "w", "b", "z"], attrs.clone()));
            nodes.push(contrib("FusedGemm", &["x", "w", "b"], attrs));
        }
        let alpha = attribute("alpha", &AttrValue::Float(0.5));
        let trans = attribute("transA", &AttrValue::Int(1));
        nodes.push(contrib("FusedMatMul", &["x", "w"], vec![alpha, trans]));
        for (op, inputs) in [
            ("BiasSoftmax", &["x", "b"][..]),
            ("BiasDropout", &["x", "b", "r"]),
            ("QuickGelu", &["x"]),
            ("SkipLayerNormalization", &["x", "s", "g", "b", "bias"]),
            ("Gelu", &["x"]),
            ("BiasGelu", &["x", "b"]),
            ("FastGelu", &["x", "b"]),
        ] {
            nodes.push(contrib(op, inputs, vec![]));
        }
        let contribs = nodes.len();
        let mut g = pb::GraphProto {
            node: nodes,
            ..Default::default()
        };
        assert_eq!(
            defuse(&mut g).len(),
            contribs,
            "every contrib node has a rewrite"
        );
        for op in ops(&g) {
            assert!(
                !specs_for(op).is_empty(),
                "a defusion writes {op}, which no spec takes"
            );
        }
    }

    #[test]
    fn a_fused_conv_becomes_conv_add_and_its_activation() {
        let mut act = attribute("activation", &AttrValue::Str("Relu".into()));
        act.r#type = Some(pb::attribute_proto::AttributeType::String as i32);
        let mut g = pb::GraphProto {
            node: vec![contrib("FusedConv", &["x", "w", "b", "z"], vec![act])],
            ..Default::default()
        };
        assert_eq!(defuse(&mut g), ["FusedConv"]);
        assert_eq!(ops(&g), ["Conv", "Add", "Relu"]);
        assert_eq!(g.node[2].output, ["y"]);
        assert!(g.node[0].attribute.is_empty());
    }

    #[test]
    fn quick_gelu_keeps_its_alpha_as_a_constant_and_unknown_ops_stay() {
        let alpha = attribute("alpha", &AttrValue::Float(1.5));
        let mut g = pb::GraphProto {
            node: vec![
                contrib("QuickGelu", &["x"], vec![alpha]),
                contrib("QLinearConv", &["x"], vec![]),
            ],
            ..Default::default()
        };
        assert_eq!(defuse(&mut g), ["QuickGelu"]);
        assert_eq!(ops(&g), ["Mul", "Sigmoid", "Mul", "QLinearConv"]);
        assert_eq!(g.initializer.len(), 1);
        assert_eq!(
            g.initializer[0].float_data.first().copied().or_else(|| {
                g.initializer[0]
                    .raw_data
                    .as_ref()
                    .map(|r| f32::from_le_bytes([r[0], r[1], r[2], r[3]]))
            }),
            Some(1.5)
        );
    }
}
