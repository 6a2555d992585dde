//! HirFuzz's ONNX rewrites and constraint levels, end to end on ONNX Runtime: every rewrite
//! preserves semantics (≥ 500 graphs each, identical unoptimized outputs; float16 graphs
//! within the float16 tolerance), rewritten
//! models pass the ONNX checker, decoding and rewriting replay exactly, and level-0 verdicts
//! tell clean errors from assertions.

mod common;

use dlcfuzz::backend::{Backend, BackendError, ErrorClass, Stage};
use dlcfuzz::emit::onnx::{emit_plain, OnnxModel};
use dlcfuzz::emit::rewrites::violation::Violation;
use dlcfuzz::emit::rewrites::{Rewrite, RewritePlan};
use dlcfuzz::emit::{emit, emit_with_applied};
use dlcfuzz::gen::{Limits, TestCase};
use dlcfuzz::ir::{DType, Tensor};
use dlcfuzz::mutate::levels::{Level, Mutations};
use dlcfuzz::oracle::exceptions::exception_handling;
use dlcfuzz::oracle::{compare, tolerance, Skip, Verdict};
use dlcfuzz::pipeline::Pipeline;
use std::sync::OnceLock;

fn harness() -> &'static Pipeline {
    static H: OnceLock<Pipeline> = OnceLock::new();
    H.get_or_init(|| {
        Pipeline::of("ort", Limits::default()).expect("ONNX Runtime (run scripts/setup.sh)")
    })
}

/// Element-wise agreement: equal (any NaN matching any NaN: kernels on different paths may
/// set a NaN's sign or payload differently), or within `(atol, rtol)`.
fn agree(a: &[Tensor], b: &[Tensor], (atol, rtol): (f64, f64)) -> bool {
    let same = |x: &Tensor, y: &Tensor| {
        x.shape == y.shape
            && (x.data.to_le_bytes() == y.data.to_le_bytes()
                || (x.data.dtype().is_float()
                    && x.data
                        .to_f64_vec()
                        .iter()
                        .zip(y.data.to_f64_vec())
                        .all(|(p, q)| {
                            *p == q
                                || (p.is_nan() && q.is_nan())
                                || (p - q).abs() <= atol + rtol * q.abs()
                        })))
    };
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

fn run0(model: &OnnxModel, case: &TestCase) -> Result<Vec<Tensor>, BackendError> {
    harness()
        .backend
        .run(model, &Pipeline::inputs(case, model), 0)
}

/// `case` with `plan` at constraint level 1.
fn planned(mut case: TestCase, rewrites: Vec<Rewrite>) -> TestCase {
    case.mutations = Some(Mutations {
        level: Level::One,
        violation: None,
        plan: RewritePlan { rewrites },
    });
    case
}

/// Applies `plan(k)` to up to 1,500 random graphs until `needed` of them had every rewrite of
/// the plan apply, and checks the rewritten model's unoptimized outputs equal the original's
/// (within the float16 tolerance for graphs with float16 values). A mismatch leaves both
/// models in a temporary folder.
fn preserves(name: &str, needed: usize, plan: impl Fn(u8) -> Vec<Rewrite>) {
    let h = harness();
    let mut checked = 0;
    for (k, bytes) in common::random_inputs(61, 1500, 1200).iter().enumerate() {
        let plain = TestCase::decode(bytes, &h.menu, &h.limits);
        let rewrites = plan(k as u8);
        let case = planned(plain, rewrites.clone());
        let (model, applied) = emit_with_applied(&case);
        if applied.len() != rewrites.len() {
            continue;
        }
        let Ok(expected) = run0(&emit_plain(&case), &case) else {
            continue;
        };
        let got = run0(&model, &case).unwrap_or_else(|e| {
            panic!("{name}: the original runs, the rewritten model fails: {e}\n{applied:?}")
        });
        // ONNX Runtime computes float16 ops without float16 kernels in float32 and keeps chains
        // of them in float32; a function, branch or loop boundary cuts such a chain, so a
        // float16 value may round once more. Graphs with float16 values get the oracle's
        // float16 tolerance, all others must match exactly.
        let has_f16 = case
            .graph
            .values()
            .into_iter()
            .any(|v| case.graph.ty(v).dtype == DType::F16);
        let tolerance = if has_f16 {
            tolerance(DType::F16)
        } else {
            (0.0, 0.0)
        };
        if !agree(&expected, &got, tolerance) {
            let dir = std::env::temp_dir().join(format!("dlcfuzz-rewrite-{name}-{k}"));
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join("original.onnx"), emit_plain(&case).bytes);
            let _ = std::fs::write(dir.join("rewritten.onnx"), &model.bytes);
            panic!(
                "{name}: outputs differ after {applied:?} on input {k} (ops {}; float16 graph: \
                 {has_f16}; models in {}); per output: {:?}",
                case.op_types(),
                dir.display(),
                expected
                    .iter()
                    .zip(&got)
                    .map(|(e, a)| compare(e, a))
                    .collect::<Vec<_>>(),
            );
        }
        checked += 1;
        if checked == needed {
            return;
        }
    }
    panic!("{name}: only {checked} graphs took the rewrite");
}

#[test]
fn outline_preserves_semantics() {
    preserves("outline", 500, |k| {
        vec![Rewrite::Outline {
            start: k,
            len: k / 3,
        }]
    });
}

#[test]
fn wrapper_chains_preserve_semantics() {
    preserves("wrap", 500, |k| {
        vec![
            Rewrite::Outline {
                start: k,
                len: k / 5,
            },
            Rewrite::Wrap { function: 0 },
            Rewrite::Wrap { function: 1 },
        ]
    });
}

#[test]
fn inline_preserves_semantics() {
    preserves("inline", 500, |k| {
        vec![
            Rewrite::Outline {
                start: k,
                len: k / 2,
            },
            Rewrite::Wrap { function: 0 },
            Rewrite::Inline { call: 0 },
        ]
    });
}

#[test]
fn constant_and_emi_ifs_preserve_semantics() {
    preserves("if-const", 500, |k| {
        vec![Rewrite::If {
            start: k,
            len: k / 4,
            emi: false,
        }]
    });
    preserves("if-emi", 500, |k| {
        vec![Rewrite::If {
            start: k,
            len: k / 4,
            emi: true,
        }]
    });
}

#[test]
fn loop_once_preserves_semantics() {
    preserves("loop", 500, |k| {
        vec![Rewrite::Loop {
            start: k,
            len: k / 3,
        }]
    });
}

#[test]
fn rewritten_models_pass_the_onnx_checker_and_replay() {
    let h = Pipeline::of("ort", Limits::default())
        .expect("ONNX Runtime")
        .with_mutations();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut written = 0;
    for (k, bytes) in common::random_inputs(62, 400, 1200).iter().enumerate() {
        let mut bytes = bytes.clone();
        bytes[0] = 200; // level 1
        let case = h.decode(&bytes);
        let (model, applied) = emit_with_applied(&case);
        assert_eq!(
            model.bytes,
            emit(&h.decode(&bytes)).bytes,
            "replay of input {k}"
        );
        if applied.is_empty() {
            continue;
        }
        std::fs::write(dir.path().join(format!("m{k:04}.onnx")), &model.bytes).expect("write");
        written += 1;
    }
    assert!(written >= 250, "only {written} of 400 plans applied");
    let available = common::python_has_onnx();
    if !available {
        eprintln!("SKIPPED the checker: python3 cannot import onnx (run scripts/setup.sh)");
        return;
    }
    let report = common::check_models(dir.path());
    let failed = report["failed"].as_array().expect("failed list");
    assert!(
        failed.is_empty(),
        "{} fail the checker, e.g. {:?}",
        failed.len(),
        &failed[..failed.len().min(3)]
    );
}

/// A backend that fails every run with one scripted error.
struct Failing(BackendError);

impl Backend for Failing {
    fn name(&self) -> &'static str {
        "failing"
    }
    fn version(&self) -> String {
        "0".into()
    }
    fn levels(&self) -> &'static [&'static str] {
        &["o0", "o1"]
    }
    fn run(&self, _: &OnnxModel, _: &[&Tensor], _: usize) -> Result<Vec<Tensor>, BackendError> {
        Err(self.0.clone())
    }
}

#[test]
fn level_zero_clean_errors_are_no_finding_and_assertions_are() {
    let h = harness();
    let case = TestCase::decode(&[9u8; 600], &h.menu, &h.limits);
    let model = emit_plain(&case);
    let inputs = Pipeline::inputs(&case, &model);
    let clean = Failing(BackendError {
        class: ErrorClass::Rejected,
        stage: Stage::Compile,
        message: "[ShapeInferenceError] Incompatible dimensions".into(),
    });
    let verdict = exception_handling(&clean, &model, &inputs, &mut Vec::new());
    assert!(
        matches!(verdict, Verdict::Skipped(Skip::Rejected(_))),
        "{verdict:?}"
    );
    let assertion = Failing(BackendError {
        class: ErrorClass::Internal,
        stage: Stage::Compile,
        message: "/src/onnxruntime/core/optimizer/utils.cc:7 bool F() n != nullptr was false."
            .into(),
    });
    let verdict = exception_handling(&assertion, &model, &inputs, &mut Vec::new());
    assert!(matches!(verdict, Verdict::Found(_)), "{verdict:?}");

    // Real level-0 models on ONNX Runtime: a dtype mismatch between operands is rejected
    // cleanly, so it is never a finding.
    let mut rejected = 0;
    for (k, bytes) in common::random_inputs(63, 200, 1200).iter().enumerate() {
        let mut case = TestCase::decode(bytes, &h.menu, &h.limits);
        case.mutations = Some(Mutations {
            level: Level::Zero,
            violation: Some(Violation::DtypeMismatch {
                node: k as u8,
                pick: 5,
            }),
            plan: RewritePlan::default(),
        });
        let (model, applied) = emit_with_applied(&case);
        if applied.is_empty() {
            continue;
        }
        let verdict = exception_handling(
            h.backend.as_ref(),
            &model,
            &Pipeline::inputs(&case, &model),
            &mut Vec::new(),
        );
        assert!(
            !matches!(verdict, Verdict::Found(_)),
            "input {k}: {verdict:?}"
        );
        rejected += usize::from(matches!(verdict, Verdict::Skipped(Skip::Rejected(_))));
    }
    assert!(
        rejected >= 100,
        "only {rejected} of 200 dtype mismatches were rejected"
    );
}
