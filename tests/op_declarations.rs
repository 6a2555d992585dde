//! Every operator is complete for the targets that need it: each declared torch form lowers
//! for the program targets, and what the program targets do not get is listed (not dropped
//! silently). (Each registry op's reference evaluation is `OpSpec::evaluate`, which the trait
//! requires: a missing one is a build error; `reference_vs_ort` runs each against ONNX
//! Runtime.)

use dlcfuzz::ir::DType;
use dlcfuzz::mutate::program::lower::supported;
use dlcfuzz::ops::registry;

#[test]
fn declared_torch_forms_reach_the_program_targets() {
    let mut lowered = Vec::new();
    let mut not_lowered = Vec::new();
    for spec in registry() {
        let f32s = vec![DType::F32; spec.sigs().first().map_or(1, |s| s.inputs.len() + 1)];
        match spec.torch_form() {
            Some(_) => {
                assert!(
                    supported(spec.as_ref(), &f32s),
                    "{}: declared torch form, not on the program menu",
                    spec.name()
                );
                lowered.push(spec.name());
            }
            None => not_lowered.push(spec.name()),
        }
    }
    // An element-wise row's `torch` field is its torch form.
    for (name, torch) in dlcfuzz::ops::unary::table()
        .iter()
        .map(|r| (r.name, r.torch.is_some()))
        .chain(
            dlcfuzz::ops::binary::table()
                .iter()
                .map(|r| (r.name, r.torch.is_some())),
        )
    {
        assert_eq!(lowered.contains(&name), torch, "{name}");
    }
    eprintln!(
        "ops written as programs: {lowered:?}\nnot written as programs (no torch form declared): {not_lowered:?}"
    );
    for op in [
        "Shrink",
        "Add",
        "MatMul",
        "Concat",
        "ReduceSum",
        "Softmax",
        "Clip",
    ] {
        assert!(lowered.contains(&op), "{op}");
    }
}

/// Every accumulating operator states how many terms it sums (the precision analysis widens
/// its envelope by them): a forgotten `accumulated_terms` would judge a long sum as one
/// rounding and report its rounding as a bug. Two accumulate for another reason, one term
/// per element: Resize (its interpolation error has its own rule) and BatchNormalization
/// (inference mode: given statistics, an affine form).
#[test]
fn every_accumulating_operator_declares_its_terms() {
    use dlcfuzz::gen::menu::{Menu, MenuEntry};
    use dlcfuzz::gen::{Limits, TestCase};
    use dlcfuzz::ir::NodeKind;
    use dlcfuzz::ops::accumulation::Terms;
    let everything = Menu::everything();
    let mut silent = Vec::new();
    for entry in &everything.entries {
        let spec = &registry()[entry.spec];
        let one_term = ["Resize", "BatchNormalization"].contains(&spec.op_type());
        if !spec.rounding().accumulates() || one_term {
            continue;
        }
        let menu = Menu::from_entries(vec![MenuEntry {
            spec: entry.spec,
            choices: entry.choices.clone(),
        }]);
        let most = (0..24u32)
            .filter_map(|k| {
                let bytes: Vec<u8> = (0..400u32)
                    .map(|i| (i.wrapping_mul(37) ^ (k * 101)) as u8)
                    .collect();
                let case = TestCase::decode(&bytes, &menu, &Limits::exact(1));
                let n = case.graph.op_nodes().into_iter().find(|n| {
                    matches!(&case.graph.node(*n).kind, NodeKind::Op(op) if op.spec == entry.spec)
                })?;
                let NodeKind::Op(op) = &case.graph.node(n).kind else {
                    return None;
                };
                let parts = dlcfuzz::emit::onnx::node_parts(op);
                let data = case.graph.inputs_of(n);
                let mut inputs: Vec<Option<tch::Tensor>> = data
                    .iter()
                    .map(|v| {
                        let shape: Vec<i64> =
                            case.graph.ty(*v).shape.iter().map(|d| *d as i64).collect();
                        Some(tch::Tensor::zeros(shape.as_slice(), tch::kind::FLOAT_CPU))
                    })
                    .collect();
                inputs.extend(
                    parts
                        .consts
                        .iter()
                        .map(|c| c.as_ref().map(dlcfuzz::reference::to_tch)),
                );
                let terms = spec.accumulated_terms(&Terms {
                    attrs: parts.attrs,
                    inputs: &inputs,
                    data: data.len(),
                });
                Some(terms)
            })
            .fold(1.0f64, f64::max);
        if most <= 1.0 {
            silent.push(spec.name());
        }
    }
    assert!(
        silent.is_empty(),
        "accumulating, but one term declared: {silent:?}"
    );
}
