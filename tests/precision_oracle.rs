//! The precision-aware oracle on ONNX Runtime: rounding-sized differences at an optimized
//! level are never findings, and the value errors a bug makes are.

mod common;

use dlcfuzz::backend::ort::OrtCpu;
use dlcfuzz::backend::{Backend, BackendError};
use dlcfuzz::emit::onnx::OnnxModel;
use dlcfuzz::gen::Limits;
use dlcfuzz::ir::{Buffer, DType, Tensor};
use dlcfuzz::oracle::{Blame, Verdict};
use dlcfuzz::pipeline::Pipeline;
use half::f16;

/// What the skewed backend does to the outputs of its `basic` level.
#[derive(Clone, Copy)]
enum Change {
    /// Every float element one unit in the last place up: rounding.
    OneUlp,
    /// Element 0 of output 0 moved up by 1 % of its size plus 0.05 (floats) or by one
    /// (integers): a bug.
    Bug,
}

/// ONNX Runtime with its `basic` level's outputs changed.
struct Skewed {
    ort: OrtCpu,
    change: Change,
}

fn next_up(t: &mut Tensor) {
    match &mut t.data {
        Buffer::F16(v) => v
            .iter_mut()
            .for_each(|x| *x = f16::from_bits(x.to_bits().wrapping_add(1))),
        Buffer::F32(v) => v
            .iter_mut()
            .for_each(|x| *x = f32::from_bits(x.to_bits().wrapping_add(1))),
        Buffer::F64(v) => v
            .iter_mut()
            .for_each(|x| *x = f64::from_bits(x.to_bits().wrapping_add(1))),
        _ => {}
    }
}

fn break_first(t: &mut Tensor) {
    let mut values = t.data.to_f64_vec();
    let Some(first) = values.first_mut() else {
        return;
    };
    let dtype = t.data.dtype();
    *first = if dtype.is_float() {
        // Always away from the original (x * 1.01 + 0.05 is x itself at x = -5).
        *first + 0.01 * first.abs() + 0.05
    } else if dtype == DType::Bool {
        1.0 - *first
    } else if *first > 0.0 {
        *first - 1.0
    } else {
        *first + 1.0
    };
    t.data = Buffer::from_f64(dtype, &values);
}

impl Backend for Skewed {
    fn name(&self) -> &'static str {
        self.ort.name()
    }
    fn version(&self) -> String {
        self.ort.version()
    }
    fn levels(&self) -> &'static [&'static str] {
        self.ort.levels()
    }
    fn python_runner(&self) -> Option<&'static dlcfuzz::backend::PythonRunner> {
        Some(&dlcfuzz::backend::ort::PYTHON)
    }
    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        let mut outs = self.ort.run(model, inputs, level)?;
        if level == 1 {
            match self.change {
                Change::OneUlp => outs.iter_mut().for_each(next_up),
                Change::Bug => outs.iter_mut().take(1).for_each(break_first),
            }
        }
        Ok(outs)
    }
}

fn harness(change: Change) -> Pipeline {
    let skewed = Skewed {
        ort: OrtCpu::new().expect("ONNX Runtime (scripts/setup.sh)"),
        change,
    };
    Pipeline::of(
        "ort",
        Limits {
            min_nodes: 1,
            max_nodes: 6,
        },
    )
    .expect("ONNX Runtime harness")
    .with_backend(Box::new(skewed))
}

#[test]
fn rounding_at_an_optimized_level_is_never_a_finding() {
    let h = harness(Change::OneUlp);
    let mut judged = 0;
    for (k, bytes) in common::random_inputs(41, 300, 700).iter().enumerate() {
        let run = h.test(bytes);
        match &run.verdict {
            Verdict::Found(f) if f.blame == Some(Blame::Optimizer) || f.level == "basic" => {
                panic!("input {k}: one ulp at `basic` became a finding: {f:?}")
            }
            Verdict::Pass | Verdict::Found(_) => judged += 1,
            Verdict::Skipped(_) => {}
        }
    }
    assert!(judged >= 200, "only {judged} of 300 inputs were judged");
}

#[test]
fn a_wrong_value_at_an_optimized_level_is_found() {
    let h = harness(Change::Bug);
    let (mut comparable, mut found) = (0, 0);
    for bytes in common::random_inputs(43, 300, 700) {
        let run = h.test(&bytes);
        if matches!(run.verdict, Verdict::Skipped(_)) || run.fragile().first() != Some(&false) {
            continue;
        }
        // A wrong value is a bug whatever rounding allows only where rounding allows less.
        let Some(env) = &run.envelope else { continue };
        let Some((_, truth, allowed)) = env.expected(0) else {
            continue;
        };
        if truth.is_empty() || allowed[0] > 0.01 * truth[0].abs().max(1.0) {
            continue;
        }
        // The skew goes through float64: beyond 2^53 an integer cannot be moved by one.
        if truth[0].abs() >= 2f64.powi(53) {
            continue;
        }
        comparable += 1;
        match &run.verdict {
            // Ambiguous where the unoptimized level also departs (ORT's documented integer
            // Resize truncation), Optimizer elsewhere: found at `basic` either way.
            Verdict::Found(f)
                if f.level == "basic"
                    && matches!(f.blame, Some(Blame::Optimizer | Blame::Ambiguous)) =>
            {
                found += 1
            }
            other => eprintln!(
                "missed: {other:?} (allowed {}, exact {})",
                allowed[0], truth[0]
            ),
        }
    }
    assert!(comparable >= 150, "only {comparable} comparable cases");
    assert_eq!(
        found, comparable,
        "{found} of {comparable} wrong values found at `basic`"
    );
}

#[test]
fn a_finding_repro_runs_without_dlcfuzz_and_judges_against_the_exact_result() {
    // The skewed level is this test's own: real ONNX Runtime computes every level right, so
    // the standalone reproducer, judging ORT's runs against the embedded exact results,
    // must say "not reproduced" (exit status 0), and the newest-release check must agree.
    let h = harness(Change::Bug);
    let out = tempfile::tempdir().unwrap();
    let mut written = 0;
    for bytes in common::random_inputs(47, 80, 700) {
        let run = h.test(&bytes);
        let Verdict::Found(f) = &run.verdict else {
            continue;
        };
        if run.envelope.is_none() {
            continue;
        }
        let target =
            dlcfuzz::targets::differential::Differential::new("ort_cpu", harness(Change::Bug))
                .unwrap();
        let run = dlcfuzz::targets::FuzzTarget::run(&target, &bytes, &[], None);
        let Some(dir) =
            dlcfuzz::campaign::finding::write_new(out.path(), &bytes, &run, f, &target).unwrap()
        else {
            continue;
        };
        let check = dlcfuzz::campaign::verify::recheck_on_newest(
            &dir,
            &dlcfuzz::targets::NewestEnv::onnx_runtime(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert!(!check.live, "{}: {}", dir.display(), check.output);
        assert!(
            check.output.contains("unoptimized (disable): right"),
            "{}",
            check.output
        );
        written += 1;
        if written == 5 {
            break;
        }
    }
    assert_eq!(written, 5, "too few findings to check");
}
