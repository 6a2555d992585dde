//! ONNX Runtime end to end: validity, shape agreement per op spec, deterministic replay.

mod common;

use dlcfuzz::emit::emit;
use dlcfuzz::gen::{Limits, Menu, TestCase};
use dlcfuzz::ir::{NodeKind, TensorType};
use dlcfuzz::ops::registry;
use dlcfuzz::pipeline::Pipeline;
use std::sync::OnceLock;

fn harness() -> &'static Pipeline {
    static H: OnceLock<Pipeline> = OnceLock::new();
    H.get_or_init(|| {
        Pipeline::of("ort", Limits::default()).expect("ONNX Runtime (run scripts/setup.sh)")
    })
}

#[test]
fn unoptimized_sessions_run_for_at_least_99_5_percent() {
    let h = harness();
    let inputs = common::random_inputs(5, 2000, 1200);
    let mut failures = Vec::new();
    for bytes in &inputs {
        let case = TestCase::decode(bytes, &h.menu, &h.limits);
        let model = emit(&case);
        if let Err(e) = h.backend.run(&model, &Pipeline::inputs(&case, &model), 0) {
            failures.push(e.message);
        }
    }
    let rate = 1.0 - failures.len() as f64 / inputs.len() as f64;
    eprintln!("ORT O0 valid: {rate:.4}");
    assert!(
        rate >= 0.995,
        "only {rate:.4} ran; first failures: {:?}",
        &failures[..failures.len().min(5)]
    );
}

#[test]
fn type_transfer_matches_the_shapes_ort_produces_for_every_op() {
    let h = harness();
    let mut exercised = 0;
    for entry in &h.menu.entries {
        let menu = Menu::from_entries(vec![entry.clone()]);
        let mut ran = 0;
        for bytes in common::random_inputs(6 + entry.spec as u64, 12, 600) {
            let case = TestCase::decode(&bytes, &menu, &Limits::exact(2));
            let has_op = case.graph.op_nodes().iter().any(
                |n| matches!(&case.graph.node(*n).kind, NodeKind::Op(op) if op.spec == entry.spec),
            );
            if !has_op {
                continue;
            }
            let model = emit(&case);
            let outs = h
                .backend
                .run(&model, &Pipeline::inputs(&case, &model), 0)
                .unwrap_or_else(|e| panic!("{}: {e}", registry()[entry.spec].name()));
            for (t, declared) in outs.iter().zip(&model.output_types) {
                assert_eq!(
                    &t.ty(),
                    declared,
                    "{}: ORT's output type differs from type_transfer",
                    registry()[entry.spec].name()
                );
            }
            ran += 1;
        }
        if ran > 0 {
            exercised += 1;
        }
    }
    eprintln!(
        "ops exercised against ORT: {exercised} of {}",
        h.menu.entries.len()
    );
    assert!(exercised >= 60, "only {exercised} ops were instantiated");
}

#[test]
fn replay_gives_the_same_model_and_verdict() {
    let h = harness();
    for bytes in common::random_inputs(7, 60, 1000) {
        let a = h.test(&bytes);
        let b = h.test(&bytes);
        assert_eq!(a.model.bytes, b.model.bytes);
        assert_eq!(a.verdict, b.verdict);
    }
}

#[test]
fn declared_output_types_are_graph_types() {
    let h = harness();
    let case = TestCase::decode(&[9u8; 500], &h.menu, &h.limits);
    let model = emit(&case);
    let expected: Vec<TensorType> = case
        .graph
        .outputs()
        .iter()
        .map(|v| case.graph.ty(*v).clone())
        .collect();
    assert_eq!(model.output_types, expected);
}

#[test]
fn transformers_that_modify_the_model_are_reported() {
    let h = harness();
    let mut fired = std::collections::BTreeMap::<String, usize>::new();
    for bytes in common::random_inputs(8, 300, 1200) {
        for name in h.test(&bytes).fired {
            *fired.entry(name).or_default() += 1;
        }
    }
    eprintln!("transformers fired over 300 tests: {fired:?}");
    assert!(
        fired.len() >= 3,
        "expected several distinct transformers to fire, got {fired:?}"
    );
    assert!(fired.keys().all(|n| !n.is_empty() && !n.contains(' ')));
}

#[test]
fn optimization_stages_are_read_from_onnx_runtime_itself() {
    let backend = &harness().backend;
    let like = |fired: &[&str]| {
        let fired: Vec<String> = fired.iter().map(|f| f.to_string()).collect();
        backend
            .levels_like_top(&fired)
            .expect("ORT knows its stages")
    };
    assert_eq!(like(&[]), vec![true; 4]);
    assert_eq!(like(&["ConstantFolding"]), vec![false, true, true, true]);
    assert_eq!(
        like(&["GemmActivationFusion"]),
        vec![false, false, true, true]
    );
    assert_eq!(like(&["NchwcTransformer"]), vec![false, false, false, true]);
    // A name no stage's log showed could run anywhere.
    assert_eq!(
        like(&["NoSuchTransformer"]),
        vec![false, false, false, true]
    );
}

/// The oracle takes a level's outputs from the top level when ORT says the level compiles
/// the same model: on generated models, every such level computes bit for bit what the top
/// level computes.
#[test]
fn levels_said_to_compile_like_the_top_level_compute_the_same_bits() {
    let h = harness();
    let top = h.backend.levels().len() - 1;
    let (mut reused, mut checked) = (0, 0);
    for bytes in common::random_inputs(21, 250, 1200) {
        let case = h.prepare(&bytes);
        let model = emit(&case);
        let inputs = Pipeline::inputs(&case, &model);
        let mut fired = Vec::new();
        let Ok(at_top) = h.backend.run_observed(&model, &inputs, top, &mut fired) else {
            continue;
        };
        let like = h
            .backend
            .levels_like_top(&fired)
            .expect("ORT knows its stages");
        for level in (0..top).filter(|l| like[*l]) {
            let outs = h
                .backend
                .run(&model, &inputs, level)
                .expect("runs like the top");
            assert_eq!(
                format!("{outs:?}"),
                format!("{at_top:?}"),
                "level {level} said to compile like the top (fired: {fired:?})"
            );
            reused += 1;
        }
        checked += top;
    }
    eprintln!("{reused} of {checked} lower-level runs compile like the top level");
    assert!(
        reused * 4 >= checked,
        "only {reused} of {checked} levels reused"
    );
}
