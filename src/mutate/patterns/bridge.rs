//! Bridge nodes: feed a placeholder of any type from a tensor of any other type, with only
//! ops our specs cover — Cast to the dtype, Reshape to one dimension, Slice or Pad to the
//! element count, Reshape to the target shape. Every bridge node is re-typed with its spec
//! ([`crate::ops::retype`]) and must be on the backend's menu.

use crate::gen::insert::Generator;
use crate::gen::Menu;
use crate::ir::graph::OpNode;
use crate::ir::{DType, TensorType, ValueRef};
use crate::ops::retype::retype;
use crate::ops::{
    spec_id, AttrValue, Attrs, ConcreteAttrs, ConstInput, OpType, Sig, DEFAULT_CLASS,
};
use petgraph::stable_graph::NodeIndex;

/// One bridge op, before it is placed.
struct Step {
    op: OpNode,
    output: TensorType,
}

/// A node of spec `name` with `attrs`, re-typed on `input`; `None` when the spec rejects it or
/// the menu does not allow it.
fn step(
    menu: &Menu,
    op: OpType,
    out_dtype: DType,
    attrs: ConcreteAttrs,
    input: &TensorType,
) -> Option<Step> {
    let spec = spec_id(op.name())?;
    let sig = Sig::new(vec![input.dtype], vec![out_dtype]);
    if !menu.allows(spec, &sig, &attrs.class) {
        return None;
    }
    let op = OpNode { spec, sig, attrs };
    let output = retype(&op, std::slice::from_ref(input)).ok()?.remove(0);
    Some(Step { op, output })
}

fn ints_attrs(class: &str, consts: Vec<ConstInput<i64>>) -> ConcreteAttrs {
    Attrs {
        class: class.into(),
        named: Vec::new(),
        consts,
    }
}

/// The ops that turn a tensor of type `from` into one of type `to`.
fn plan(menu: &Menu, from: &TensorType, to: &TensorType) -> Option<Vec<Step>> {
    let mut steps: Vec<Step> = Vec::new();
    let mut cur = from.clone();
    let push = |steps: &mut Vec<Step>, cur: &mut TensorType, s: Step| {
        *cur = s.output.clone();
        steps.push(s);
    };
    if cur.dtype != to.dtype {
        let mut attrs = ConcreteAttrs::default();
        attrs.set("to", AttrValue::Int(i64::from(to.dtype.onnx_code())));
        let s = step(menu, OpType::Cast, to.dtype, attrs, &cur)?;
        push(&mut steps, &mut cur, s);
    }
    let (have, want) = (cur.numel(), to.numel());
    if cur.shape != to.shape && (have != want || cur.rank() == 0) {
        if cur.rank() != 1 {
            let flat = ints_attrs(DEFAULT_CLASS, vec![ConstInput::Ints(vec![have as i64])]);
            let s = step(menu, OpType::Reshape, to.dtype, flat, &cur)?;
            push(&mut steps, &mut cur, s);
        }
        if have > want {
            let consts = [vec![0], vec![want as i64], vec![0], vec![1]]
                .into_iter()
                .map(ConstInput::Ints)
                .collect();
            let s = step(
                menu,
                OpType::Slice,
                to.dtype,
                ints_attrs(DEFAULT_CLASS, consts),
                &cur,
            )?;
            push(&mut steps, &mut cur, s);
        } else if have < want {
            let mut attrs = ints_attrs(
                "constant",
                vec![
                    ConstInput::Ints(vec![0, (want - have) as i64]),
                    ConstInput::Absent,
                ],
            );
            attrs.set("mode", AttrValue::Str("constant".into()));
            let s = step(menu, OpType::Pad, to.dtype, attrs, &cur)?;
            push(&mut steps, &mut cur, s);
        }
    }
    if cur.shape != to.shape {
        let dims = to.shape.iter().map(|d| *d as i64).collect();
        let s = step(
            menu,
            OpType::Reshape,
            to.dtype,
            ints_attrs(DEFAULT_CLASS, vec![ConstInput::Ints(dims)]),
            &cur,
        )?;
        push(&mut steps, &mut cur, s);
    }
    (cur == *to && !steps.is_empty()).then_some(steps)
}

/// Makes placeholder `target` compute its value from `source` through bridge nodes; `false`
/// (and nothing changed) when no bridge is possible.
pub(super) fn feed(gen: &mut Generator, menu: &Menu, source: ValueRef, target: NodeIndex) -> bool {
    let from = gen.graph.ty(source).clone();
    let to = gen.graph.node(target).outputs[0].clone();
    let Some(mut steps) = plan(menu, &from, &to) else {
        return false;
    };
    let last = steps.pop().expect("a plan has a step");
    let mut cur = source;
    for s in steps {
        let n = gen.graph.add_op(s.op, vec![s.output], &[cur]);
        cur = ValueRef { node: n, output: 0 };
    }
    gen.replace_placeholder(target, last.op, vec![last.output], &[cur]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cast_flatten_slice_pad_and_reshape() {
        let menu = Menu::everything();
        let from = TensorType::new(DType::I32, vec![2, 3, 4]);
        let to = TensorType::new(DType::F32, vec![5, 2]);
        let ops: Vec<&str> = plan(&menu, &from, &to)
            .unwrap()
            .iter()
            .map(|s| s.op.op_type())
            .collect();
        assert_eq!(ops, ["Cast", "Reshape", "Slice", "Reshape"]);
        let small = TensorType::new(DType::F32, vec![3]);
        let ops: Vec<&str> = plan(&menu, &small, &to)
            .unwrap()
            .iter()
            .map(|s| s.op.op_type())
            .collect();
        assert_eq!(ops, ["Pad", "Reshape"]);
        let same_count = TensorType::new(DType::F32, vec![10]);
        let ops: Vec<&str> = plan(&menu, &same_count, &to)
            .unwrap()
            .iter()
            .map(|s| s.op.op_type())
            .collect();
        assert_eq!(ops, ["Reshape"]);
        assert!(plan(&menu, &to, &to).is_none(), "nothing to bridge");
    }
}
