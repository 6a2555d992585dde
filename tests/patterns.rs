//! OATest pattern synthesis end to end: extraction from ONNX Runtime's optimizer-test models
//! (when present), validity of synthesized graphs on ONNX Runtime, and a spliced Conv+BN
//! pattern making ONNX Runtime's fusion fire.

use dlcfuzz::backend::ort::{OrtCpu, LEVELS};
use dlcfuzz::campaign::Stats;
use dlcfuzz::emit::emit;
use dlcfuzz::emit::onnx::pb;
use dlcfuzz::gen::Limits;
use dlcfuzz::mutate::patterns::{builtin, extract, Library};
use dlcfuzz::ops::retype::check_graph;
use dlcfuzz::pipeline::Pipeline;
use prost::Message;
use rand::{Rng, SeedableRng};
use std::path::Path;

fn random_input(rng: &mut impl Rng) -> Vec<u8> {
    let mut b = vec![0u8; 1400];
    rng.fill(b.as_mut_slice());
    b
}

#[test]
fn extraction_over_ort_optimizer_tests_counts_patterns_per_pass() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ort-pass-tests");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let library = extract::extract(&dir).expect("extraction");
    eprint!("{}", library.stats());
    let models: usize = library.models.values().sum();
    let dropped: usize = library.dropped.values().sum();
    assert_eq!(
        models,
        library.patterns.len() + library.duplicates + dropped,
        "every model is a pattern, a duplicate or a counted drop"
    );
    assert!(
        library.models.len() >= 40,
        "{} passes",
        library.models.len()
    );
    assert!(
        library.patterns.len() >= 200,
        "{} patterns",
        library.patterns.len()
    );
    for p in &library.patterns {
        p.validate().unwrap();
        assert_eq!(
            p.transformer.is_some(),
            !matches!(p.pass.as_str(), "Test" | "test_transformer")
        );
    }
    let per_pass = library.per_pass();
    for pass in [
        "ConvActivationFusion",
        "TransposeOptimizer",
        "QDQSelectorActionTransformer",
    ] {
        assert!(per_pass.contains_key(pass), "no pattern for {pass}");
    }
    let path = std::env::temp_dir().join(format!("dlcfuzz-extracted-{}.json", std::process::id()));
    library.save(&path).unwrap();
    assert_eq!(Library::load(&path).unwrap(), library);
    let _ = std::fs::remove_file(path);
}

#[test]
fn synthesized_graphs_are_valid_on_onnx_runtime() {
    let harness = Pipeline::of("ort", Limits::default())
        .expect("ONNX Runtime")
        .with_patterns(builtin::library());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let cases = 1000;
    let mut with_pattern = 0;
    let mut stats = Stats::default();
    let start = std::time::Instant::now();
    for _ in 0..cases {
        let run = harness.test(&random_input(&mut rng));
        check_graph(&run.case.graph).expect("spliced graphs re-type with the specs");
        with_pattern += usize::from(!run.case.spliced.is_empty());
        stats.record(
            &run.verdict,
            run.case.graph.op_count(),
            &run.fired,
            LEVELS[0],
        );
    }
    stats.finish(start.elapsed());
    eprintln!(
        "{cases} cases: {with_pattern} with a pattern, valid {:.3}, numerically valid {:.3}",
        stats.valid_fraction,
        stats.valid_fraction - stats.non_finite_fraction
    );
    for (s, n) in &stats.signatures {
        eprintln!("finding x{n}: {s}");
    }
    for m in &stats.sample_skips {
        eprintln!("invalid: {m}");
    }
    assert!(
        with_pattern * 100 >= cases * 95,
        "{with_pattern} of {cases}"
    );
    assert!(
        stats.valid_fraction >= 0.99,
        "valid fraction {:.3}",
        stats.valid_fraction
    );
}

/// Number of nodes of type `op` in a serialized model.
fn count_ops(model: &[u8], op: &str) -> usize {
    let proto = pb::ModelProto::decode(model).expect("a model");
    proto
        .graph
        .iter()
        .flat_map(|g| &g.node)
        .filter(|n| n.op_type.as_deref() == Some(op))
        .count()
}

#[test]
fn a_spliced_conv_bn_pattern_makes_the_fusion_fire() {
    let ort = OrtCpu::new().expect("ONNX Runtime");
    let mut library = builtin::library();
    library.patterns.retain(|p| p.name == "conv_bn");
    assert_eq!(library.patterns.len(), 1);
    let harness = Pipeline::of("ort", Limits::default())
        .expect("ONNX Runtime")
        .with_patterns(library);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let (mut spliced, mut fused, mut signalled) = (0, 0, 0);
    for _ in 0..60 {
        let bytes = random_input(&mut rng);
        let case = harness.decode(&bytes);
        if case.spliced.is_empty() {
            continue;
        }
        spliced += 1;
        let model = emit(&case);
        let before = count_ops(&model.bytes, "BatchNormalization");
        assert!(before >= 1);
        let Ok(optimized) = ort.optimized_model(&model.bytes, 1) else {
            continue;
        };
        // ConvBNFusion folds the BatchNormalization into the Conv's weights and bias.
        if count_ops(&optimized, "BatchNormalization") < before {
            fused += 1;
            let run = harness.test(&bytes);
            signalled += usize::from(run.fired.iter().any(|t| t == "Level1_RuleBasedTransformer"));
        }
    }
    eprintln!("conv_bn: {spliced} spliced, {fused} fused, {signalled} with the transformer signal");
    assert!(spliced >= 40, "{spliced} of 60 spliced");
    assert!(fused * 2 >= spliced, "only {fused} of {spliced} fused");
    assert_eq!(
        signalled, fused,
        "the transformer-fired signal agrees with the model diff"
    );
}

/// The patterns whose passes match on attribute and constant values (issue 19: each fired
/// 0 times in 10–16 tries before pins) fire in most synthesized cases now: LayerNormFusion
/// (last-axis ReduceMeans), SkipLayerNormFusion (equal-shape 3-D Add, axis -1),
/// DoubleQDQPairsRemover (equal Q/DQ constants per pair), ConvAddFusion (a per-channel
/// constant).
#[test]
fn pinned_patterns_fire_their_passes() {
    for (pattern, transformer) in [
        ("layer_norm", "LayerNormFusionL1"),
        ("skip_layer_norm", "SkipLayerNormFusion"),
        ("qdq_pair_uint8", "DoubleQDQPairsRemover"),
        ("conv_add_const", "Level1_RuleBasedTransformer"),
    ] {
        let mut library = builtin::library();
        library.patterns.retain(|p| p.name == pattern);
        assert_eq!(library.patterns.len(), 1, "{pattern}");
        let harness = Pipeline::of("ort", Limits::default())
            .expect("ONNX Runtime")
            .with_patterns(library);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut spliced, mut fired) = (0, 0);
        for _ in 0..30 {
            let run = harness.test(&random_input(&mut rng));
            if run.case.spliced.is_empty() {
                continue;
            }
            spliced += 1;
            fired += usize::from(run.fired.iter().any(|t| t == transformer));
        }
        eprintln!("{pattern}: {transformer} fired in {fired} of {spliced} spliced cases");
        assert!(
            spliced >= 20,
            "{pattern}: only {spliced} of 30 cases spliced"
        );
        assert!(
            fired * 10 >= spliced * 6,
            "{pattern}: {transformer} fired in {fired} of {spliced}"
        );
    }
}
