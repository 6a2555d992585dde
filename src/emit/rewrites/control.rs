//! Control-flow rewrites: a run of nodes moved into an always-taken `If` branch (constant or
//! EMI condition) or into the body of a `Loop` with trip count 1.

use super::nodes::{cast, graph_attr, node};
use super::scope::{rename, Region};
use super::Rewriter;
use crate::emit::onnx::{attribute, pb, tensor_proto, value_info};
use crate::ir::{Buffer, DType, Tensor, TensorType};
use crate::ops::{AttrValue, OpType};
use std::collections::BTreeMap;

/// A scalar tensor.
fn scalar(data: Buffer) -> Tensor {
    Tensor {
        shape: vec![],
        data,
    }
}

/// The moved nodes of a region, with every name they define given `prefix`, and the map.
struct Moved {
    nodes: Vec<pb::NodeProto>,
    names: BTreeMap<String, String>,
}

impl Rewriter {
    /// Removes `[s, e)` from the main graph and renames what those nodes define.
    fn take_region(&mut self, s: usize, e: usize, region: &Region, prefix: &str) -> Moved {
        let names: BTreeMap<String, String> = region
            .defines
            .iter()
            .map(|n| (n.clone(), format!("{prefix}_{n}")))
            .collect();
        for (old, new) in &names {
            if let Some(ty) = self.types.get(old).cloned() {
                self.types.insert(new.clone(), ty);
            }
        }
        let nodes = self
            .graph()
            .node
            .drain(s..e)
            .map(|mut n| {
                rename(&mut n, &names);
                n
            })
            .collect();
        Moved { nodes, names }
    }

    /// The region `[start, start+len]` with its live-outs, when every live-out has a known
    /// type (subgraph outputs must be typed).
    fn typed_region(&mut self, start: u8, len: u8) -> Option<(usize, usize, Region)> {
        let (s, e) = self.span(start, len)?;
        let outputs = self.output_names();
        let region = Region::of(&self.graph().node, s, e, &outputs);
        let typed = region.live_out.iter().all(|n| self.types.contains_key(n));
        (typed && !region.live_out.is_empty()).then_some((s, e, region))
    }

    /// Typed declarations of `names` (renamed through `map`).
    fn declarations(
        &self,
        names: &[String],
        map: &BTreeMap<String, String>,
    ) -> Vec<pb::ValueInfoProto> {
        names
            .iter()
            .map(|n| value_info(&map[n], &self.types[n]))
            .collect()
    }

    /// Adds an initializer to the main graph.
    fn initializer(&mut self, name: &str, t: &Tensor) {
        self.graph().initializer.push(tensor_proto(name, t));
    }

    /// The condition of an always-taken `If`: a constant true, or (EMI) `max(x) >= bound`
    /// over a model input whose fixed value makes it true. Returns the condition's name and
    /// the nodes computing it (none for the constant), which go before the `If`.
    fn true_condition(&mut self, emi: bool, pick: u8) -> (String, Vec<pb::NodeProto>) {
        let cond = self.mint("cond");
        let input = (!self.inputs.is_empty())
            .then(|| self.inputs[usize::from(pick) % self.inputs.len()].clone());
        let (Some((x, value)), true) = (input, emi) else {
            self.initializer(&cond, &scalar(Buffer::Bool(vec![true])));
            return (cond, Vec::new());
        };
        let max = value
            .data
            .to_f64_vec()
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max);
        // One below the profiled maximum (rounded down): true on the fixed inputs with room for
        // the float cast, yet not foldable since it reads the input.
        let bound = (max.floor() - 1.0).max(-1e30) as f32;
        let (as_float, reduced, limit) = (
            format!("{cond}_x"),
            format!("{cond}_max"),
            format!("{cond}_bound"),
        );
        let mut max_node = node(OpType::ReduceMax.name(), &[&as_float], &reduced);
        max_node
            .attribute
            .push(attribute("keepdims", &AttrValue::Int(0)));
        self.initializer(&limit, &scalar(Buffer::F32(vec![bound])));
        let compare = node(OpType::GreaterOrEqual.name(), &[&reduced, &limit], &cond);
        (
            cond,
            vec![cast(&x, DType::F32, &as_float), max_node, compare],
        )
    }

    /// Moves nodes `[start, start+len]` into the then-branch of an always-taken `If`; the
    /// else-branch yields zeros of the same types.
    pub(super) fn wrap_in_if(&mut self, start: u8, len: u8, emi: bool) -> bool {
        let Some((s, e, region)) = self.typed_region(start, len) else {
            return false;
        };
        let tag = self.mint("if");
        let (cond, mut inserted) = self.true_condition(emi, start ^ len);
        let moved = self.take_region(s, e, &region, &format!("{tag}t"));
        let then_branch = pb::GraphProto {
            name: Some(format!("{tag}_then")),
            node: moved.nodes,
            output: self.declarations(&region.live_out, &moved.names),
            ..Default::default()
        };
        let zeros: BTreeMap<String, String> = region
            .live_out
            .iter()
            .map(|n| (n.clone(), format!("{tag}e_{n}")))
            .collect();
        let else_nodes = region
            .live_out
            .iter()
            .map(|n| {
                let mut c = node("Constant", &[], &zeros[n]);
                c.attribute.push(pb::AttributeProto {
                    name: Some("value".into()),
                    r#type: Some(pb::attribute_proto::AttributeType::Tensor as i32),
                    t: Some(tensor_proto("", &Tensor::full(&self.types[n], 0.0))),
                    ..Default::default()
                });
                c
            })
            .collect();
        let else_branch = pb::GraphProto {
            name: Some(format!("{tag}_else")),
            node: else_nodes,
            output: self.declarations(&region.live_out, &zeros),
            ..Default::default()
        };
        let mut wrapper = pb::NodeProto {
            name: Some(tag),
            op_type: Some("If".into()),
            input: vec![cond],
            output: region.live_out.clone(),
            ..Default::default()
        };
        wrapper
            .attribute
            .push(graph_attr("then_branch", then_branch));
        wrapper
            .attribute
            .push(graph_attr("else_branch", else_branch));
        inserted.push(wrapper);
        self.graph().node.splice(s..s, inserted);
        true
    }

    /// Moves nodes `[start, start+len]` into the body of a `Loop` with trip count 1; the
    /// live-outs leave as loop-carried values (initialized with zeros the body ignores).
    pub(super) fn wrap_in_loop(&mut self, start: u8, len: u8) -> bool {
        let Some((s, e, region)) = self.typed_region(start, len) else {
            return false;
        };
        let tag = self.mint("loop");
        let (trip, keep_going) = (format!("{tag}_trip"), format!("{tag}_cond"));
        self.initializer(&trip, &scalar(Buffer::I64(vec![1])));
        self.initializer(&keep_going, &scalar(Buffer::Bool(vec![true])));
        let mut loop_inputs = vec![trip, keep_going];
        let mut body_inputs = vec![
            value_info(&format!("{tag}_iter"), &TensorType::new(DType::I64, vec![])),
            value_info(&format!("{tag}_cin"), &TensorType::new(DType::Bool, vec![])),
        ];
        for (j, n) in region.live_out.iter().enumerate() {
            let ty = self.types[n].clone();
            let init = format!("{tag}_init{j}");
            self.initializer(&init, &Tensor::full(&ty, 0.0));
            loop_inputs.push(init);
            body_inputs.push(value_info(&format!("{tag}_carry{j}"), &ty));
        }
        let moved = self.take_region(s, e, &region, &format!("{tag}b"));
        let cond_out = format!("{tag}_cout");
        let mut body_nodes = vec![node(
            OpType::Identity.name(),
            &[&format!("{tag}_cin")],
            &cond_out,
        )];
        body_nodes.extend(moved.nodes);
        let mut body_outputs = vec![value_info(&cond_out, &TensorType::new(DType::Bool, vec![]))];
        body_outputs.extend(self.declarations(&region.live_out, &moved.names));
        let body = pb::GraphProto {
            name: Some(format!("{tag}_body")),
            node: body_nodes,
            input: body_inputs,
            output: body_outputs,
            ..Default::default()
        };
        let mut wrapper = pb::NodeProto {
            name: Some(tag),
            op_type: Some("Loop".into()),
            input: loop_inputs,
            output: region.live_out.clone(),
            ..Default::default()
        };
        wrapper.attribute.push(graph_attr("body", body));
        self.graph().node.insert(s, wrapper);
        true
    }
}
