//! Re-typing concrete nodes with their specs: the check that a graph built outside the
//! generator (spliced patterns, bridges) is exactly what the specs would have produced.

use super::{registry, AttrValue, Attrs, ConcreteAttrs, ConstInput, SymAttrs, SymTensor};
use crate::ir::graph::OpNode;
use crate::ir::{Graph, NodeKind, TensorType};
use crate::sym::Int;

/// Concrete attributes as (constant) symbolic ones.
fn symbolic(attrs: &ConcreteAttrs) -> SymAttrs {
    let ints = |v: &[i64]| v.iter().map(|i| Int::from(*i)).collect::<Vec<_>>();
    Attrs {
        class: attrs.class.clone(),
        named: attrs
            .named
            .iter()
            .map(|(n, v)| {
                let v = match v {
                    AttrValue::Int(i) => AttrValue::Int(Int::from(*i)),
                    AttrValue::Ints(is) => AttrValue::Ints(ints(is)),
                    AttrValue::Float(f) => AttrValue::Float(*f),
                    AttrValue::Str(s) => AttrValue::Str(s.clone()),
                };
                (n.clone(), v)
            })
            .collect(),
        consts: attrs
            .consts
            .iter()
            .map(|c| match c {
                ConstInput::Ints(is) => ConstInput::Ints(ints(is)),
                ConstInput::Floats(f) => ConstInput::Floats(f.clone()),
                ConstInput::Scalar(d, v) => ConstInput::Scalar(*d, *v),
                ConstInput::Indices { shape, bound, seed } => ConstInput::Indices {
                    shape: ints(shape),
                    bound: Int::from(*bound),
                    seed: *seed,
                },
                ConstInput::Absent => ConstInput::Absent,
            })
            .collect(),
    }
}

/// The output types `op` has on `inputs` by its spec, or why it is ill-typed there (a
/// dtype outside its signature, a violated requirement, an output dim out of range).
pub fn retype(op: &OpNode, inputs: &[TensorType]) -> Result<Vec<TensorType>, String> {
    let spec = &*registry()[op.spec];
    let name = spec.name();
    let dtypes: Vec<_> = inputs.iter().map(|t| t.dtype).collect();
    if dtypes != op.sig.inputs || !spec.sigs().contains(&op.sig) {
        return Err(format!(
            "{name}: signature {} on inputs {dtypes:?}",
            op.sig.key()
        ));
    }
    let ranks = spec.input_ranks(&op.sig);
    if let Some((i, t)) = inputs
        .iter()
        .enumerate()
        .find(|(i, t)| !ranks[*i].contains(&t.rank()))
    {
        return Err(format!("{name}: input {i} has rank {}", t.rank()));
    }
    let sym_inputs: Vec<SymTensor> = inputs
        .iter()
        .map(|t| SymTensor {
            dtype: t.dtype,
            dims: t.shape.iter().map(|d| Int::from(*d)).collect(),
        })
        .collect();
    let attrs = symbolic(&op.attrs);
    if let Some(r) = spec
        .requires(&attrs, &sym_inputs)
        .iter()
        .find(|r| r.as_const() != Some(true))
    {
        return Err(format!("{name}: requirement {r:?} does not hold"));
    }
    spec.type_transfer(&attrs, &sym_inputs)
        .iter()
        .zip(&op.sig.outputs)
        .map(|(dims, dtype)| {
            let shape = dims
                .iter()
                .map(|d| match d.as_const() {
                    Some(v) if v >= 1 => Ok(v as usize),
                    other => Err(format!("{name}: output dim {other:?}")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(TensorType::new(*dtype, shape))
        })
        .collect()
}

/// Re-types every op node of `graph` from its inputs and checks the result against the types
/// it carries; the first mismatch is the error.
pub fn check_graph(graph: &Graph) -> Result<(), String> {
    for n in graph.op_nodes() {
        let NodeKind::Op(op) = &graph.node(n).kind else {
            continue;
        };
        let inputs: Vec<TensorType> = graph
            .inputs_of(n)
            .iter()
            .map(|v| graph.ty(*v).clone())
            .collect();
        let outputs = retype(op, &inputs)?;
        if outputs != graph.node(n).outputs {
            return Err(format!(
                "{} (node {}): spec gives {outputs:?}, graph says {:?}",
                op.op_type(),
                n.index(),
                graph.node(n).outputs
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Limits, Menu, TestCase};

    #[test]
    fn generated_graphs_retype_to_themselves() {
        let menu = Menu::everything();
        for seed in 0..60u8 {
            let bytes: Vec<u8> = (0..600u32)
                .map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed))
                .collect();
            let case = TestCase::decode(&bytes, &menu, &Limits::default());
            check_graph(&case.graph).unwrap();
        }
    }

    #[test]
    fn a_wrong_output_type_is_reported() {
        let menu = Menu::everything();
        let mut case = TestCase::decode(&[7u8; 300], &menu, &Limits::default());
        let n = case.graph.op_nodes()[0];
        case.graph.node_mut(n).outputs[0].shape.push(9);
        assert!(check_graph(&case.graph).is_err());
    }
}
