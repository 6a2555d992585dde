//! Graph → straight-line SSA program: one statement per operator, written as the TorchScript
//! expression with ONNX's semantics (float32 only). [`supported`] is the generator menu's
//! filter, so generated graphs lower.

use super::{Call, Program, Stmt, VarType};
use crate::emit::onnx::value_name;
use crate::gen::TestCase;
use crate::ir::{DType, NodeKind, ValueRef};
use crate::ops::unary::declared;
use crate::ops::{AttrValue, ConstInput};
use std::collections::BTreeMap;

/// Other ops the lowering writes.
const OTHER: &[&str] = &[
    "Clip",
    "MatMul",
    "Transpose",
    "Reshape",
    "Softmax",
    "ReduceSum",
    "ReduceMean",
    "Concat",
];

/// Whether the lowering writes `op_type` with every data dtype in `dtypes` (float32 only).
pub fn supported(op_type: &str, dtypes: &[DType]) -> bool {
    let unary = declared(op_type).is_some_and(|u| u.torch.is_some());
    let binary = crate::ops::binary::declared(op_type).is_some_and(|b| b.torch.is_some());
    let known = unary || binary || OTHER.contains(&op_type);
    known && dtypes.iter().all(|d| *d == DType::F32)
}

fn float(v: f64) -> String {
    format!("{:?}", v as f32 as f64)
}

fn list(v: impl IntoIterator<Item = i64>) -> String {
    let items: Vec<String> = v.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// The call an operator node becomes, or why it cannot be lowered.
fn call_of(
    case: &TestCase,
    node: petgraph::stable_graph::NodeIndex,
    args: Vec<String>,
) -> Result<Call, String> {
    let g = &case.graph;
    let NodeKind::Op(op) = &g.node(node).kind else {
        return Err("not an operator".into());
    };
    let t = op.op_type();
    let out = g.ty(ValueRef { node, output: 0 });
    let named = |k: &str| {
        op.attrs
            .named
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let ints = |c: Option<&ConstInput<i64>>| match c {
        Some(ConstInput::Ints(v)) => Some(v.clone()),
        _ => None,
    };
    let rank = |k: usize| g.ty(g.inputs_of(node)[k]).rank() as i64;
    let unary = declared(t).and_then(|u| Some((u, u.torch?)));
    let (template, elementwise, fresh) = if let Some((row, torch)) = unary {
        let floats = row.float_values(&op.attrs.named);
        let mut template = torch.replace("{x}", "{0}");
        for (a, v) in row.floats.iter().zip(floats) {
            template = template.replace(&format!("{{{}}}", a.name), &float(v));
        }
        (template, true, true)
    } else if let Some(torch) = crate::ops::binary::declared(t).and_then(|b| b.torch) {
        let template = torch.replace("{a}", "{0}").replace("{b}", "{1}");
        (template, true, true)
    } else {
        match t {
            "Clip" => {
                let bound = |k: usize| match op.attrs.consts.get(k) {
                    Some(ConstInput::Scalar(_, v)) => float(*v),
                    _ => "None".into(),
                };
                (
                    format!("torch.clamp({{0}}, {}, {})", bound(0), bound(1)),
                    true,
                    true,
                )
            }
            "MatMul" => ("torch.matmul({0}, {1})".into(), false, true),
            "Transpose" => {
                let perm = match named("perm") {
                    Some(AttrValue::Ints(p)) => p,
                    _ => (0..rank(0)).rev().collect(),
                };
                (
                    format!("torch.permute({{0}}, {})", list(perm)),
                    false,
                    false,
                )
            }
            "Reshape" => (
                format!(
                    "torch.reshape({{0}}, {})",
                    list(out.shape.iter().map(|d| *d as i64))
                ),
                false,
                false,
            ),
            "Softmax" => {
                let axis = match named("axis") {
                    Some(AttrValue::Int(a)) => a,
                    _ => -1,
                };
                (format!("torch.softmax({{0}}, {axis})"), false, true)
            }
            "ReduceSum" | "ReduceMean" => {
                let keep = !matches!(named("keepdims"), Some(AttrValue::Int(0)));
                let axes = ints(op.attrs.consts.first()).unwrap_or_default();
                let axes = if axes.is_empty() {
                    (0..rank(0)).collect()
                } else {
                    axes
                };
                if axes.is_empty() {
                    return Err("reduction of a scalar".into());
                }
                let f = if t == "ReduceSum" {
                    "torch.sum"
                } else {
                    "torch.mean"
                };
                let keep = if keep { "True" } else { "False" };
                (format!("{f}({{0}}, {}, {keep})", list(axes)), false, true)
            }
            "Concat" => {
                let axis = match named("axis") {
                    Some(AttrValue::Int(a)) => a,
                    _ => 0,
                };
                let parts: Vec<String> = (0..args.len()).map(|k| format!("{{{k}}}")).collect();
                (
                    format!("torch.cat([{}], {axis})", parts.join(", ")),
                    false,
                    true,
                )
            }
            other => return Err(format!("no TorchScript lowering for {other}")),
        }
    };
    Ok(Call {
        template,
        args,
        elementwise,
        fresh,
    })
}

/// Lowers `case` to a program; the profile holds the reference value of every variable
/// (`values`, keyed like the graph's values) when given.
pub fn lower(
    case: &TestCase,
    values: &BTreeMap<ValueRef, crate::ir::Tensor>,
) -> Result<Program, String> {
    let g = &case.graph;
    let mut program = Program::default();
    for v in g.values() {
        let name = value_name(g, v);
        if g.ty(v).dtype != DType::F32 {
            return Err(format!(
                "{name} is {:?}: the program lowering is float32 only",
                g.ty(v).dtype
            ));
        }
        let ty = VarType::of_tensor(g.ty(v)).expect("float32 has a torch type");
        program.types.insert(name.clone(), ty);
        if let Some(t) = values.get(&v) {
            program.profile.insert(name, t.clone());
        }
    }
    for n in g.topo_order() {
        let node = g.node(n);
        match &node.kind {
            NodeKind::Input | NodeKind::Weight => {
                program
                    .params
                    .push(value_name(g, ValueRef { node: n, output: 0 }));
            }
            NodeKind::Placeholder => return Err("an unresolved placeholder".into()),
            NodeKind::Op(_) => {
                if node.outputs.len() != 1 {
                    return Err("multi-output operator".into());
                }
                let args = g
                    .inputs_of(n)
                    .into_iter()
                    .map(|v| value_name(g, v))
                    .collect();
                let call = call_of(case, n, args)?;
                let var = value_name(g, ValueRef { node: n, output: 0 });
                program.body.push(Stmt::Let { var, call });
            }
        }
    }
    program.outputs = g.outputs().into_iter().map(|v| value_name(g, v)).collect();
    Ok(program)
}
