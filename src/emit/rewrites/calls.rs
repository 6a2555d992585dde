//! Function rewrites: outline a run of nodes into a model-local function, wrap a function in
//! another, inline a call.

use super::scope::{rename, Region};
use super::{opset, Rewriter, DOMAIN};
use crate::emit::onnx::{pb, OPSET};
use std::collections::BTreeMap;

/// A node calling model-local function `name`.
fn call(name: &str, inputs: Vec<String>, outputs: Vec<String>) -> pb::NodeProto {
    pb::NodeProto {
        name: Some(format!("call_{name}")),
        op_type: Some(name.into()),
        domain: Some(DOMAIN.into()),
        input: inputs,
        output: outputs,
        ..Default::default()
    }
}

/// Whether `node` calls a model-local function.
pub fn is_call(node: &pb::NodeProto) -> bool {
    node.domain.as_deref() == Some(DOMAIN)
}

/// Visits every node of `graph`, recursively into subgraphs.
fn visit_nodes(graph: &mut pb::GraphProto, f: &mut impl FnMut(&mut pb::NodeProto)) {
    for node in &mut graph.node {
        f(node);
        for a in &mut node.attribute {
            for g in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                visit_nodes(g, f);
            }
        }
    }
}

impl Rewriter {
    /// A function named `name` with `body`, importing the standard opset and `dlcfuzz`.
    fn function(
        name: &str,
        inputs: Vec<String>,
        outputs: Vec<String>,
        body: Vec<pb::NodeProto>,
    ) -> pb::FunctionProto {
        pb::FunctionProto {
            name: Some(name.into()),
            domain: Some(DOMAIN.into()),
            input: inputs,
            output: outputs,
            node: body,
            opset_import: vec![opset("", OPSET), opset(DOMAIN, 1)],
            ..Default::default()
        }
    }

    /// Un-inlines nodes `[start, start+len]` into a new function and one call site.
    pub(super) fn outline(&mut self, start: u8, len: u8) -> bool {
        let Some((s, e)) = self.span(start, len) else {
            return false;
        };
        let outputs = self.output_names();
        let region = Region::of(&self.graph().node, s, e, &outputs);
        if region.live_out.is_empty() {
            return false;
        }
        let name = self.mint("f");
        let body: Vec<_> = self.graph().node.drain(s..e).collect();
        let site = call(&name, region.reads.clone(), region.live_out.clone());
        self.graph().node.insert(s, site);
        let function = Self::function(&name, region.reads, region.live_out, body);
        self.model.functions.push(function);
        self.import_domain();
        true
    }

    /// Wraps function number `index` in a new function, and points every call of it outside
    /// the wrapper at the wrapper.
    pub(super) fn wrap(&mut self, index: u8) -> bool {
        let count = self.model.functions.len();
        if count == 0 {
            return false;
        }
        let inner = self.model.functions[usize::from(index) % count].clone();
        let inner_name = inner.name.clone().unwrap_or_default();
        let name = self.mint("f");
        let redirect = &mut |node: &mut pb::NodeProto| {
            if is_call(node) && node.op_type.as_deref() == Some(inner_name.as_str()) {
                node.op_type = Some(name.clone());
            }
        };
        visit_nodes(self.graph(), redirect);
        for f in &mut self.model.functions {
            for node in &mut f.node {
                redirect(node);
            }
        }
        let body = vec![call(&inner_name, inner.input.clone(), inner.output.clone())];
        let wrapper = Self::function(&name, inner.input, inner.output, body);
        self.model.functions.push(wrapper);
        true
    }

    /// Replaces call node number `index` of the main graph with its function's body; the
    /// body's own values get fresh names.
    pub(super) fn inline(&mut self, index: u8) -> bool {
        let sites: Vec<usize> = (0..self.graph().node.len())
            .filter(|i| is_call(&self.graph().node[*i]))
            .collect();
        if sites.is_empty() {
            return false;
        }
        let at = sites[usize::from(index) % sites.len()];
        let site = self.graph().node[at].clone();
        let Some(function) = self
            .model
            .functions
            .iter()
            .find(|f| f.name == site.op_type)
            .cloned()
        else {
            return false;
        };
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        for (formal, actual) in function.input.iter().zip(&site.input) {
            names.insert(formal.clone(), actual.clone());
        }
        for (formal, actual) in function.output.iter().zip(&site.output) {
            names.insert(formal.clone(), actual.clone());
        }
        for node in &function.node {
            for out in node.output.iter().filter(|o| !o.is_empty()) {
                if !names.contains_key(out) {
                    let fresh = format!("{}_{out}", self.mint("i"));
                    if let Some(ty) = self.types.get(out).cloned() {
                        self.types.insert(fresh.clone(), ty);
                    }
                    names.insert(out.clone(), fresh);
                }
            }
        }
        let body: Vec<_> = function
            .node
            .iter()
            .map(|n| {
                let mut n = n.clone();
                rename(&mut n, &names);
                n
            })
            .collect();
        self.graph().node.splice(at..=at, body);
        true
    }
}
