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
