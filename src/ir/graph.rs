//! The typed computational graph, on petgraph.
//!
//! Nodes are placeholders (which become model inputs or weights) or operator nodes; edges
//! carry one tensor from an output of their source to an input slot of their target.

use super::attrs::{ConcreteAttrs, Sig, SpecId};
use super::TensorType;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

/// An operator application with concrete attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct OpNode {
    /// Index of the spec in [`crate::ops::registry`].
    pub spec: SpecId,
    /// The dtype signature chosen.
    pub sig: Sig,
    /// Concrete attributes and constant operands.
    pub attrs: ConcreteAttrs,
}

/// What a node is.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A leaf not yet decided between input and weight (only during generation).
    Placeholder,
    /// A model input, fed at run time.
    Input,
    /// A weight, stored as an initializer.
    Weight,
    /// An operator.
    Op(OpNode),
}

/// A node with the types of its outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// What the node is.
    pub kind: NodeKind,
    /// Output types (one for leaves).
    pub outputs: Vec<TensorType>,
}

/// An edge: output `out_index` of the source feeds input `in_slot` of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Output index on the source node.
    pub out_index: usize,
    /// Data-input slot on the target node.
    pub in_slot: usize,
}

/// One tensor of the graph: an output of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueRef {
    /// The producing node.
    pub node: NodeIndex,
    /// Its output index.
    pub output: usize,
}

/// A typed computational graph. Always a DAG; the generator keeps it connected.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    g: StableDiGraph<Node, Edge>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// The underlying petgraph graph.
    pub fn inner(&self) -> &StableDiGraph<Node, Edge> {
        &self.g
    }

    /// Adds a leaf of the given type.
    pub fn add_leaf(&mut self, kind: NodeKind, ty: TensorType) -> NodeIndex {
        self.g.add_node(Node {
            kind,
            outputs: vec![ty],
        })
    }

    /// Adds an operator node fed by `inputs` (in slot order).
    pub fn add_op(
        &mut self,
        op: OpNode,
        outputs: Vec<TensorType>,
        inputs: &[ValueRef],
    ) -> NodeIndex {
        let n = self.g.add_node(Node {
            kind: NodeKind::Op(op),
            outputs,
        });
        self.connect(n, inputs);
        n
    }

    /// Turns placeholder `p` into an operator node (backward insertion): its consumers keep
    /// reading output 0, which must keep the placeholder's type.
    pub fn replace_placeholder(
        &mut self,
        p: NodeIndex,
        op: OpNode,
        outputs: Vec<TensorType>,
        inputs: &[ValueRef],
    ) {
        let node = &mut self.g[p];
        assert_eq!(
            node.kind,
            NodeKind::Placeholder,
            "only placeholders are replaced"
        );
        assert_eq!(
            node.outputs[0], outputs[0],
            "output 0 keeps the placeholder's type"
        );
        node.kind = NodeKind::Op(op);
        node.outputs = outputs;
        self.connect(p, inputs);
    }

    fn connect(&mut self, n: NodeIndex, inputs: &[ValueRef]) {
        for (slot, v) in inputs.iter().enumerate() {
            self.g.add_edge(
                v.node,
                n,
                Edge {
                    out_index: v.output,
                    in_slot: slot,
                },
            );
        }
    }

    /// Makes input `slot` of node `n` read `v` instead of what it read before. The caller keeps
    /// the types equal; the old producer may become a graph output.
    pub fn replace_input(&mut self, n: NodeIndex, slot: usize, v: ValueRef) {
        let old = self
            .g
            .edges_directed(n, Direction::Incoming)
            .find(|e| e.weight().in_slot == slot)
            .map(|e| e.id())
            .expect("the slot is fed");
        self.g.remove_edge(old);
        self.g.add_edge(
            v.node,
            n,
            Edge {
                out_index: v.output,
                in_slot: slot,
            },
        );
    }

    /// Removes node `n` and every edge touching it; other indices stay valid.
    pub fn remove_node(&mut self, n: NodeIndex) -> Option<Node> {
        self.g.remove_node(n)
    }

    /// Whether `n` is a node of the graph.
    pub fn contains(&self, n: NodeIndex) -> bool {
        self.g.contains_node(n)
    }

    /// The nodes reading any output of `n`, with the slot each reads into and the output it
    /// reads: `(consumer, in_slot, out_index)`.
    pub fn readers(&self, n: NodeIndex) -> Vec<(NodeIndex, usize, usize)> {
        self.g
            .edges_directed(n, Direction::Outgoing)
            .map(|e| (e.target(), e.weight().in_slot, e.weight().out_index))
            .collect()
    }

    /// The node at `n`.
    pub fn node(&self, n: NodeIndex) -> &Node {
        &self.g[n]
    }

    /// Mutable access to the node at `n`.
    pub fn node_mut(&mut self, n: NodeIndex) -> &mut Node {
        &mut self.g[n]
    }

    /// The type of a value.
    pub fn ty(&self, v: ValueRef) -> &TensorType {
        &self.g[v.node].outputs[v.output]
    }

    /// The data inputs of `n`, in slot order.
    pub fn inputs_of(&self, n: NodeIndex) -> Vec<ValueRef> {
        let mut ins: Vec<(usize, ValueRef)> = self
            .g
            .edges_directed(n, Direction::Incoming)
            .map(|e| {
                (
                    e.weight().in_slot,
                    ValueRef {
                        node: e.source(),
                        output: e.weight().out_index,
                    },
                )
            })
            .collect();
        ins.sort();
        ins.into_iter().map(|(_, v)| v).collect()
    }

    /// How many op inputs read `v`.
    pub fn consumers(&self, v: ValueRef) -> usize {
        self.g
            .edges_directed(v.node, Direction::Outgoing)
            .filter(|e| e.weight().out_index == v.output)
            .count()
    }

    /// Node indices in topological order.
    pub fn topo_order(&self) -> Vec<NodeIndex> {
        petgraph::algo::toposort(&self.g, None).expect("graphs are acyclic by construction")
    }

    /// Every value (node output), in topological order.
    pub fn values(&self) -> Vec<ValueRef> {
        self.topo_order()
            .into_iter()
            .flat_map(|n| {
                (0..self.g[n].outputs.len()).map(move |output| ValueRef { node: n, output })
            })
            .collect()
    }

    /// Leaves of the given kind, in topological order.
    pub fn leaves(&self, kind: &NodeKind) -> Vec<NodeIndex> {
        self.topo_order()
            .into_iter()
            .filter(|n| &self.g[*n].kind == kind)
            .collect()
    }

    /// Operator nodes in topological order.
    pub fn op_nodes(&self) -> Vec<NodeIndex> {
        self.topo_order()
            .into_iter()
            .filter(|n| matches!(self.g[*n].kind, NodeKind::Op(_)))
            .collect()
    }

    /// Number of operator nodes.
    pub fn op_count(&self) -> usize {
        self.g
            .node_weights()
            .filter(|n| matches!(n.kind, NodeKind::Op(_)))
            .count()
    }

    /// Graph outputs: op outputs that nothing consumes.
    pub fn outputs(&self) -> Vec<ValueRef> {
        self.values()
            .into_iter()
            .filter(|v| matches!(self.g[v.node].kind, NodeKind::Op(_)) && self.consumers(*v) == 0)
            .collect()
    }

    /// True when the graph is weakly connected.
    pub fn is_connected(&self) -> bool {
        let mut sets = petgraph::unionfind::UnionFind::new(
            petgraph::visit::NodeIndexable::node_bound(&self.g),
        );
        for e in self.g.edge_indices() {
            let (a, b) = self.g.edge_endpoints(e).expect("edge exists");
            sets.union(a.index(), b.index());
        }
        let mut roots = self.g.node_indices().map(|n| sets.find(n.index()));
        let first = roots.next();
        roots.all(|r| Some(r) == first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;
    use crate::ops::{spec_id, Attrs};

    fn relu() -> OpNode {
        OpNode {
            spec: spec_id("Relu").unwrap(),
            sig: crate::ops::Sig::uniform(DType::F32, 1),
            attrs: Attrs::default(),
        }
    }

    #[test]
    fn backward_replacement_keeps_consumers_and_connectivity() {
        let t = TensorType::new(DType::F32, vec![2, 3]);
        let mut g = Graph::new();
        let p = g.add_leaf(NodeKind::Placeholder, t.clone());
        let top = g.add_op(relu(), vec![t.clone()], &[ValueRef { node: p, output: 0 }]);
        let q = g.add_leaf(NodeKind::Placeholder, t.clone());
        g.replace_placeholder(
            p,
            relu(),
            vec![t.clone()],
            &[ValueRef { node: q, output: 0 }],
        );
        assert_eq!(g.op_count(), 2);
        assert!(g.is_connected());
        assert_eq!(
            g.outputs(),
            vec![ValueRef {
                node: top,
                output: 0
            }]
        );
        assert_eq!(g.inputs_of(p), vec![ValueRef { node: q, output: 0 }]);
        assert_eq!(g.topo_order().first(), Some(&q));
    }

    #[test]
    fn replacing_an_input_rewires_one_slot() {
        let t = TensorType::new(DType::F32, vec![2]);
        let mut g = Graph::new();
        let a = g.add_leaf(NodeKind::Input, t.clone());
        let inner = g.add_op(relu(), vec![t.clone()], &[ValueRef { node: a, output: 0 }]);
        let top = g.add_op(
            relu(),
            vec![t.clone()],
            &[ValueRef {
                node: inner,
                output: 0,
            }],
        );
        let fresh = g.add_leaf(NodeKind::Input, t);
        g.replace_input(
            top,
            0,
            ValueRef {
                node: fresh,
                output: 0,
            },
        );
        assert_eq!(
            g.inputs_of(top),
            vec![ValueRef {
                node: fresh,
                output: 0
            }]
        );
        let mut outputs = g.outputs();
        outputs.sort();
        assert_eq!(
            outputs,
            vec![
                ValueRef {
                    node: inner,
                    output: 0
                },
                ValueRef {
                    node: top,
                    output: 0
                }
            ],
            "the old producer becomes a graph output"
        );
    }
}
