//! Graph → straight-line SSA program: one statement per operator, written as the TorchScript
//! expression with ONNX's semantics (float32 only). [`supported`] is the generator menu's
//! filter, so generated graphs lower.

use super::{Call, Program, Stmt, VarType};
use crate::emit::onnx::value_name;
use crate::gen::TestCase;
use crate::ir::{DType, NodeKind, ValueRef};
use crate::ops::torch_form::TorchCx;
use crate::ops::{registry, OpSpec};
use std::collections::BTreeMap;

/// Whether the lowering writes operator `spec` with every data dtype in `dtypes`: it
/// declares a torch form ([`OpSpec::torch_form`]), and the dtypes are float32.
pub fn supported(spec: &dyn OpSpec, dtypes: &[DType]) -> bool {
    spec.torch_form().is_some() && dtypes.iter().all(|d| *d == DType::F32)
}

/// The call an operator node becomes (its declared torch form), or why it cannot be lowered.
fn call_of(
    case: &TestCase,
    node: petgraph::stable_graph::NodeIndex,
    args: Vec<String>,
) -> Result<Call, String> {
    let g = &case.graph;
    let NodeKind::Op(op) = &g.node(node).kind else {
        return Err("not an operator".into());
    };
    let writer = registry()[op.spec]
        .torch_form()
        .ok_or_else(|| format!("no TorchScript lowering for {}", op.op_type()))?;
    let input_ranks: Vec<usize> = g.inputs_of(node).iter().map(|v| g.ty(*v).rank()).collect();
    let cx = TorchCx {
        attrs: &op.attrs,
        input_ranks: &input_ranks,
        out_shape: &g.ty(ValueRef { node, output: 0 }).shape,
    };
    let form = writer.write(&cx)?;
    Ok(Call {
        template: form.template,
        args,
        elementwise: form.elementwise,
        fresh: form.fresh,
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
