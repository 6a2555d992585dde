//! tract's culprit-pass bisection on the reduced models of two tract findings in
//! `docs/findings/`, run on `dlcfuzz run-model`'s pattern inputs.

use dlcfuzz::backend::tract_bisect::culprits;
use dlcfuzz::emit::read::{pattern_input, read_model};
use dlcfuzz::ir::Tensor;
use std::path::Path;

fn bisect(finding: &str, level: usize) -> Result<dlcfuzz::backend::bisect::Culprits, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/findings")
        .join(finding)
        .join("model.onnx");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (model, input_types) = read_model(bytes).expect("a valid model");
    let inputs: Vec<Tensor> = input_types.iter().map(pattern_input).collect();
    let feeds: Vec<&Tensor> = inputs.iter().collect();
    culprits(&model, &feeds, level)
}

#[test]
fn the_dummy_op_crash_comes_from_push_split_down_alone() {
    let found = bisect("tract-push-split-down-dummy", 1).expect("bisects");
    assert_eq!(found.level, "decluttered");
    assert_eq!(found.kind, "error");
    assert_eq!(found.culprits, vec!["declutter:PushSplitDown".to_string()]);
    assert!(found.runs >= 2, "{found:?}");
    // At the optimized level the codegen list (which runs PushSplitDown again) follows
    // declutter: either copy of the pass alone suffices, and ddmin keeps one.
    let optimized = bisect("tract-push-split-down-dummy", 2).expect("bisects");
    assert_eq!(optimized.culprits.len(), 1, "{optimized:?}");
    assert!(
        optimized.culprits[0].ends_with(":PushSplitDown"),
        "{optimized:?}"
    );
}

#[test]
fn the_mod_operand_swap_is_a_wrong_value_of_one_pass_and_the_typed_level_has_none() {
    let found = bisect("tract-mod-operand-swap", 1).expect("bisects");
    assert_eq!(found.kind, "mismatch", "{found:?}");
    // The swap happens in Mod's own declutter rule, one of the per-op rewrites.
    assert_eq!(
        found.culprits,
        vec!["declutter:OpOptim(declutter)".to_string()]
    );
    let typed = bisect("tract-mod-operand-swap", 0).unwrap_err();
    assert!(typed.contains("optimizes nothing"), "{typed}");
}
