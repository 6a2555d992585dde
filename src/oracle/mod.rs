//! Oracles: a three-way differential between a backend's optimized levels, its unoptimized
//! level, and (when present) an independent reference (libtorch eager).
//!
//! - **Crash:** the unoptimized level succeeds and an optimized level fails (other than with an
//!   unsupported-op error), or any level fails with an internal error (not a rejection of the
//!   model, not an unsupported op).
//! - **Inconsistency:** outputs differ beyond the per-dtype tolerance ([`compare`]). The
//!   reference names the side at fault ([`Blame`]), as NNSmith narrows bugs down with O0: an
//!   optimized level that disagrees with both the unoptimized level and the reference is the
//!   optimizer's bug; an unoptimized level that alone disagrees is a kernel bug; all levels
//!   agreeing against the reference means shared kernels (or the reference) are wrong.
//! - NaN or Inf anywhere in the unoptimized outputs makes the test a skip, never a finding.
//! - Outputs marked *fragile* by the reference (they depend on an ArgMax tie, or on a Floor,
//!   Round, Cast or comparison input sitting on a boundary) are not compared at all.

pub mod accuracy;
pub mod exceptions;
pub mod localize;
pub mod near_miss;

use crate::backend::{Backend, BackendError, ErrorClass};
use crate::emit::onnx::OnnxModel;
use crate::ir::Tensor;
use crate::reference::compare::closeness;
use crate::reference::envelope::Envelope;
use near_miss::Nearest;
use serde::{Deserialize, Serialize};

/// What kind of bug a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FindingKind {
    /// An optimized level failed where the reference succeeded, or execution failed internally.
    Crash,
    /// Outputs differ between levels.
    Inconsistency,
    /// The backend did not finish within the campaign's per-test timeout (isolated runs only).
    Hang,
    /// The backend's process grew past the campaign's RSS limit (isolated runs only).
    OutOfMemory,
}

/// A suspected backend bug.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Crash or inconsistency.
    pub kind: FindingKind,
    /// The level that disagrees with the reference (or fails).
    pub level: String,
    /// Normalized signature used to tell distinct bugs apart.
    pub signature: String,
    /// Human-readable details.
    pub detail: String,
    /// Which side is at fault, for inconsistencies.
    pub blame: Option<Blame>,
}

/// The side at fault in an inconsistency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Blame {
    /// An optimized level disagrees with the unoptimized level and the reference, which
    /// agree: the optimizer.
    Optimizer,
    /// An optimized level disagrees with the unoptimized level and no reference could judge.
    OptimizerUnconfirmed,
    /// The unoptimized level alone disagrees with the reference; the optimized levels agree
    /// with it: the unoptimized kernels.
    UnoptimizedKernels,
    /// Every level agrees and the reference differs: kernels every level shares, or the
    /// reference itself.
    KernelsOrReference,
    /// The optimized level, the unoptimized level and the reference all differ.
    Ambiguous,
}

pub use crate::reference::torch_reference::ReferenceRun;

/// Why a test was not judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Skip {
    /// The backend does not implement something in the model.
    Unsupported(String),
    /// The backend rejected the model (counts against validity).
    Invalid(String),
    /// The reference outputs hold NaN or Inf.
    NonFinite,
    /// A deliberately invalid (constraint level 0) model was rejected with a clean error, as
    /// it should be.
    Rejected(String),
    /// Every level disagreed with the reference, and localization explained why without a
    /// bug ([`localize`]): a documented kernel deviation or amplified rounding.
    Explained(String),
}

/// The outcome of one differential test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// Every level agrees.
    Pass,
    /// Not judged.
    Skipped(Skip),
    /// A suspected bug.
    Found(Finding),
}

pub use crate::reference::compare::{
    compare, compare_within, normalize_message, normalize_text, tolerance,
};

fn has_non_finite(outputs: &[Tensor]) -> bool {
    outputs.iter().any(|t| !t.is_finite())
}

fn skip_for(e: &BackendError) -> Skip {
    match e.class {
        ErrorClass::Unsupported => Skip::Unsupported(e.message.clone()),
        _ => Skip::Invalid(e.message.clone()),
    }
}

/// Per output, whether no comparison may use it: marked fragile by the reference, or NaN/Inf
/// on the reference while the backend's unoptimized level was finite (an input at a domain
/// edge, where the reference has nothing to say).
fn fragile_outputs(reference: Option<&ReferenceRun>) -> Vec<bool> {
    let Some(r) = reference else {
        return Vec::new();
    };
    let outputs = r.outputs.as_deref().unwrap_or(&[]);
    let marked = r.fragile();
    (0..marked.len().max(outputs.len()))
        .map(|i| {
            marked.get(i).copied().unwrap_or(false)
                || outputs
                    .get(i)
                    .is_some_and(|t| has_non_finite(std::slice::from_ref(t)))
        })
        .collect()
}

/// The first mismatch between `want` and `got` outside fragile outputs, described.
pub fn mismatch(want: &[Tensor], got: &[Tensor], fragile: &[bool]) -> Option<String> {
    first_mismatch(want, got, fragile).map(|(k, d)| format!("output {k}: {d}"))
}

/// The first mismatch between two output lists, skipping fragile outputs: `(output, detail)`.
/// The first output (index and description) where `actual` differs from `expected` within
/// per-dtype tolerances, skipping fragile outputs.
pub fn first_mismatch(
    expected: &[Tensor],
    actual: &[Tensor],
    fragile: &[bool],
) -> Option<(usize, String)> {
    first_mismatch_by(expected, actual, fragile, compare)
}

/// [`first_mismatch`] with another comparison of one output pair (looser tolerances, say).
pub fn first_mismatch_by(
    expected: &[Tensor],
    actual: &[Tensor],
    fragile: &[bool],
    compare: impl Fn(&Tensor, &Tensor) -> Option<String>,
) -> Option<(usize, String)> {
    if expected.len() != actual.len() {
        return Some((
            0,
            format!("output count {} vs {}", expected.len(), actual.len()),
        ));
    }
    expected
        .iter()
        .zip(actual)
        .enumerate()
        .filter(|(i, _)| !fragile.get(*i).copied().unwrap_or(false))
        .find_map(|(i, (e, a))| compare(e, a).map(|d| (i, d)))
}

fn crash(level: &str, e: &BackendError) -> Verdict {
    Verdict::Found(Finding {
        kind: FindingKind::Crash,
        level: level.into(),
        signature: format!("crash:{level}:{}", normalize_message(&e.message)),
        detail: e.to_string(),
        blame: None,
    })
}

fn inconsistency(level: &str, blame: Blame, ops: String, detail: String) -> Verdict {
    let prefix = match blame {
        Blame::KernelsOrReference => "reference-mismatch",
        _ => "inconsistency",
    };
    Verdict::Found(Finding {
        kind: FindingKind::Inconsistency,
        level: level.into(),
        signature: format!("{prefix}:{level}:{ops}"),
        detail,
        blame: Some(blame),
    })
}

/// Runs `model` at every level of `backend`, compares the levels with each other and with
/// `reference` (when given), and judges the results. `op_types` names the model's op types
/// for inconsistency signatures; it is only called when one is found. The optimizations the
/// backend reports as having changed the model are appended to `fired`.
///
/// With the reference's precision envelope, every level is judged against the exact result
/// ([`Envelope`]): a level that stays within rounding of it is right, whatever the other
/// levels computed, so levels that round differently (float16 kept in float32 at one level,
/// a reassociated reduction at another) are not an inconsistency. Without it, levels are
/// compared with each other under the fixed tolerances of [`compare`].
///
/// On a pass, `nearest` holds the output that came closest to a mismatch and how close
/// ([`near_miss`]): against the envelope, or the fixed tolerances of the reference (the
/// unoptimized level without one).
pub fn differential(
    backend: &dyn Backend,
    model: &OnnxModel,
    inputs: &[&Tensor],
    reference: Option<&ReferenceRun>,
    op_types: impl FnOnce() -> String,
    fired: &mut Vec<String>,
    nearest: &mut Nearest,
) -> Verdict {
    let levels = backend.levels();
    let mut runs = LevelRuns::start(backend, model, inputs, fired);
    let unoptimized = match runs.run(0) {
        Ok(outs) => outs,
        Err(e) if e.class == ErrorClass::Internal => return crash(levels[0], &e),
        Err(e) => return Verdict::Skipped(skip_for(&e)),
    };
    let non_finite = has_non_finite(&unoptimized);
    let reference_outputs = reference
        .and_then(|r| r.outputs.as_ref().ok())
        .filter(|_| !non_finite);
    let envelope = reference_outputs
        .and(reference)
        .and_then(|r| r.envelope.as_ref());
    // The fixed tolerances' fragile outputs (the envelope knows its own).
    let fragile = match envelope {
        Some(_) => Vec::new(),
        None => fragile_outputs(reference),
    };
    let fragile = fragile.as_slice();
    // `Some(detail)` when the unoptimized level disagrees with the reference.
    let unoptimized_vs_reference = match envelope {
        Some(env) => Some(env.deviation(&unoptimized)),
        None => reference_outputs.map(|r| first_mismatch(r, &unoptimized, fragile)),
    };
    let mut op_types = Some(op_types);
    let mut ops = move || op_types.take().map(|f| f()).unwrap_or_default();
    let mut closest = Nearest::default();
    let mut grade = |outs: &[Tensor]| match (envelope, reference_outputs) {
        (Some(env), _) => closest.see_all(env.closeness(outs)),
        (None, want) => {
            let want = want.map_or(unoptimized.as_slice(), Vec::as_slice);
            closest.see_all(want.iter().zip(outs).enumerate().filter_map(|(i, (w, o))| {
                let compared = !fragile.get(i).copied().unwrap_or(false);
                compared.then(|| closeness(w, o)).flatten().map(|r| (i, r))
            }));
        }
    };
    if !non_finite {
        grade(&unoptimized);
    }
    for (level, name) in levels.iter().enumerate().skip(1) {
        let outs = match runs.run(level) {
            // A level that lacks something the unoptimized one has (OpenVINO's dynamic
            // shapes, say) is left out; the levels that ran are still judged.
            Err(e) if e.class == ErrorClass::Unsupported => continue,
            Err(e) => return crash(name, &e),
            Ok(_) if non_finite => continue,
            Ok(outs) => outs,
        };
        let judged = match envelope {
            Some(env) => judge_level(env, &unoptimized, &outs, &unoptimized_vs_reference),
            None => judge_fixed(reference_outputs, &unoptimized, &outs, fragile),
        };
        let Some((blame, i, d)) = judged else {
            grade(&outs);
            continue;
        };
        let versus = if envelope.is_some() {
            "exact result"
        } else {
            levels[0]
        };
        let detail = format!("output {i}: {d} ({name} vs {versus})");
        let level = if blame == Blame::UnoptimizedKernels {
            levels[0]
        } else {
            name
        };
        return inconsistency(level, blame, ops(), detail);
    }
    if non_finite {
        return Verdict::Skipped(Skip::NonFinite);
    }
    match unoptimized_vs_reference {
        Some(Some((i, d))) => inconsistency(
            "all",
            Blame::KernelsOrReference,
            ops(),
            format!("output {i}: {d} (reference vs every level)"),
        ),
        _ => {
            *nearest = closest;
            Verdict::Pass
        }
    }
}

/// A backend's runs of one model, level by level. A backend that can tell which levels
/// compile the model exactly as its top level does ([`Backend::levels_like_top`]) has the top
/// level run first; the levels like it then take its outputs instead of compiling again (the
/// same compiled model on the same inputs computes the same values), which saves most
/// sessions of a test. The verdict reads the levels in order either way.
struct LevelRuns<'a> {
    backend: &'a dyn Backend,
    model: &'a OnnxModel,
    inputs: &'a [&'a Tensor],
    fired: &'a mut Vec<String>,
    /// The top level's run, when it ran first.
    top: Option<Result<Vec<Tensor>, BackendError>>,
    /// Per level, whether it compiles to the top level's model (empty: unknown).
    like_top: Vec<bool>,
}

impl<'a> LevelRuns<'a> {
    fn start(
        backend: &'a dyn Backend,
        model: &'a OnnxModel,
        inputs: &'a [&'a Tensor],
        fired: &'a mut Vec<String>,
    ) -> LevelRuns<'a> {
        let top_level = backend.levels().len() - 1;
        let mut runs = LevelRuns {
            backend,
            model,
            inputs,
            fired,
            top: None,
            like_top: Vec::new(),
        };
        if top_level > 0 && backend.levels_like_top(&[]).is_some() {
            let mut at_top = Vec::new();
            let top = backend.run_observed(model, inputs, top_level, &mut at_top);
            if top.is_ok() {
                runs.like_top = backend.levels_like_top(&at_top).unwrap_or_default();
            }
            runs.fired.extend(at_top);
            runs.top = Some(top);
        }
        runs
    }

    /// The outputs at `level`: the top level's when it compiles alike, else a run.
    fn run(&mut self, level: usize) -> Result<Vec<Tensor>, BackendError> {
        let top_level = self.backend.levels().len() - 1;
        if let Some(top) = &self.top {
            if level == top_level || self.like_top.get(level) == Some(&true) {
                return top.clone();
            }
        }
        if level == 0 {
            self.backend.run(self.model, self.inputs, 0)
        } else {
            self.backend
                .run_observed(self.model, self.inputs, level, self.fired)
        }
    }
}

/// An optimized level's outputs `outs` judged against the exact result: `(blame, output,
/// detail)`, or `None` when nothing is wrong at this level (a level that deviates like the
/// unoptimized one is left to the every-level verdict).
fn judge_level(
    env: &Envelope,
    unoptimized: &[Tensor],
    outs: &[Tensor],
    unoptimized_deviation: &Option<Option<(usize, String)>>,
) -> Option<(Blame, usize, String)> {
    let deviation = env.deviation(outs);
    match (
        unoptimized_deviation.as_ref().and_then(Option::as_ref),
        deviation,
    ) {
        (None, None) => None,
        (None, Some((i, d))) => Some((Blame::Optimizer, i, d)),
        (Some((i, d)), None) => Some((Blame::UnoptimizedKernels, *i, d.clone())),
        (Some(_), Some(_)) if env.all_agree(unoptimized, outs) => None,
        (Some(_), Some((i, d))) => Some((Blame::Ambiguous, i, d)),
    }
}

/// An optimized level's outputs `outs` compared with the unoptimized ones under the fixed
/// per-dtype tolerances, the reference (when any) naming the side at fault.
fn judge_fixed(
    reference: Option<&Vec<Tensor>>,
    unoptimized: &[Tensor],
    outs: &[Tensor],
    fragile: &[bool],
) -> Option<(Blame, usize, String)> {
    let (i, d) = first_mismatch(unoptimized, outs, fragile)?;
    let blame = match reference {
        None => Blame::OptimizerUnconfirmed,
        Some(r) => match (
            first_mismatch(r, unoptimized, fragile),
            first_mismatch(r, outs, fragile),
        ) {
            (None, _) => Blame::Optimizer,
            (Some(_), None) => Blame::UnoptimizedKernels,
            (Some(_), Some(_)) => Blame::Ambiguous,
        },
    };
    Some((blame, i, d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::OnnxModel;
    use crate::ir::Buffer;

    /// A backend whose level `i` returns `outputs[i]` and which counts the runs it makes.
    /// With `fired` (the optimizations its top level reports), it also says which levels
    /// compile like the top: levels 0 and 1 unless `O2pass` fired, level 1 unless
    /// `O1pass` or `O2pass` did.
    #[derive(Default)]
    struct Scripted {
        outputs: Vec<Vec<f32>>,
        fired: Option<Vec<String>>,
        runs: std::sync::Mutex<Vec<usize>>,
    }

    impl Backend for Scripted {
        fn name(&self) -> &'static str {
            "scripted"
        }
        fn version(&self) -> String {
            "scripted".into()
        }
        fn levels(&self) -> &'static [&'static str] {
            &["O0", "O1", "O2"]
        }
        fn run(
            &self,
            _: &OnnxModel,
            _: &[&Tensor],
            level: usize,
        ) -> Result<Vec<Tensor>, BackendError> {
            self.runs.lock().unwrap().push(level);
            Ok(vec![t(&self.outputs[level])])
        }
        fn run_observed(
            &self,
            model: &OnnxModel,
            inputs: &[&Tensor],
            level: usize,
            fired: &mut Vec<String>,
        ) -> Result<Vec<Tensor>, BackendError> {
            if level == 2 {
                fired.extend(self.fired.iter().flatten().cloned());
            }
            self.run(model, inputs, level)
        }
        fn levels_like_top(&self, fired_at_top: &[String]) -> Option<Vec<bool>> {
            self.fired.as_ref()?;
            let o2 = fired_at_top.iter().any(|f| f == "O2pass");
            let o1 = fired_at_top.iter().any(|f| f == "O1pass");
            Some(vec![!o1 && !o2, !o2, true])
        }
    }

    fn t(v: &[f32]) -> Tensor {
        Tensor {
            shape: vec![v.len()],
            data: Buffer::F32(v.to_vec()),
        }
    }

    fn model() -> OnnxModel {
        OnnxModel {
            bytes: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            output_types: Vec::new(),
        }
    }

    fn judge(levels: &[&[f32]], reference: Option<&[f32]>, fragile: bool) -> Verdict {
        let backend = Scripted {
            outputs: levels.iter().map(|v| v.to_vec()).collect(),
            ..Default::default()
        };
        let reference = reference.map(|r| ReferenceRun {
            outputs: Ok(vec![t(r)]),
            marks: vec![fragile],
            envelope: None,
        });
        differential(
            &backend,
            &model(),
            &[],
            reference.as_ref(),
            || "Op".into(),
            &mut Vec::new(),
            &mut Nearest::default(),
        )
    }

    /// [`differential`] on `backend` against the one-output reference `want` (not fragile):
    /// the verdict, the optimizations fired and the nearest miss.
    fn against(backend: &Scripted, want: &[f32]) -> (Verdict, Vec<String>, Nearest) {
        let reference = ReferenceRun {
            outputs: Ok(vec![t(want)]),
            marks: vec![false],
            envelope: None,
        };
        let (mut fired, mut nearest) = (Vec::new(), Nearest::default());
        let v = differential(
            backend,
            &model(),
            &[],
            Some(&reference),
            || "Op".into(),
            &mut fired,
            &mut nearest,
        );
        (v, fired, nearest)
    }

    fn blame(v: &Verdict) -> Option<(Blame, String)> {
        match v {
            Verdict::Found(f) => f.blame.map(|b| (b, f.level.clone())),
            _ => None,
        }
    }

    #[test]
    fn the_reference_names_the_side_at_fault() {
        let (a, b) = (&[1.0f32][..], &[2.0f32][..]);
        assert_eq!(judge(&[a, a, a], Some(a), false), Verdict::Pass);
        assert_eq!(
            blame(&judge(&[a, b, a], Some(a), false)),
            Some((Blame::Optimizer, "O1".into()))
        );
        assert_eq!(
            blame(&judge(&[a, a, b], None, false)),
            Some((Blame::OptimizerUnconfirmed, "O2".into()))
        );
        assert_eq!(
            blame(&judge(&[a, b, b], Some(b), false)),
            Some((Blame::UnoptimizedKernels, "O0".into()))
        );
        assert_eq!(
            blame(&judge(&[a, a, a], Some(b), false)),
            Some((Blame::KernelsOrReference, "all".into()))
        );
        assert_eq!(
            blame(&judge(&[a, b, a], Some(&[3.0]), false)),
            Some((Blame::Ambiguous, "O1".into()))
        );
    }

    #[test]
    fn levels_that_compile_like_the_top_level_are_not_run_again() {
        let (a, b) = (&[1.0f32][..], &[2.0f32][..]);
        let verdict_and_runs = |fired: &[&str], outputs: &[&[f32]]| {
            let backend = Scripted {
                outputs: outputs.iter().map(|v| v.to_vec()).collect(),
                fired: Some(fired.iter().map(|f| f.to_string()).collect()),
                ..Default::default()
            };
            let (v, seen, _) = against(&backend, a);
            let runs = backend.runs.lock().unwrap().clone();
            (v, runs, seen)
        };
        // Nothing fired: one compile serves every level.
        let (v, runs, _) = verdict_and_runs(&[], &[a, a, a]);
        assert_eq!((v, runs), (Verdict::Pass, vec![2]));
        // A level-1 optimization fired: level 0 runs, level 1 takes the top's outputs.
        let (v, runs, seen) = verdict_and_runs(&["O1pass"], &[a, a, a]);
        assert_eq!(
            (v, runs, seen),
            (Verdict::Pass, vec![2, 0], vec!["O1pass".to_string()])
        );
        // A top-level optimization fired: every level runs, and the verdict names the
        // level at fault as it would in level order.
        let (v, runs, _) = verdict_and_runs(&["O2pass"], &[a, b, b]);
        assert_eq!(runs, vec![2, 0, 1]);
        assert_eq!(blame(&v), Some((Blame::Optimizer, "O1".into())));
    }

    #[test]
    fn fragile_outputs_and_non_finite_references_are_never_findings() {
        let (a, b) = (&[1.0f32][..], &[2.0f32][..]);
        assert_eq!(judge(&[a, b, a], Some(a), true), Verdict::Pass);
        assert_eq!(judge(&[a, a, a], Some(b), true), Verdict::Pass);
        let nan = &[f32::NAN][..];
        assert_eq!(
            judge(&[nan, a, a], Some(a), false),
            Verdict::Skipped(Skip::NonFinite)
        );
        assert_eq!(judge(&[a, a, a], Some(nan), false), Verdict::Pass);
        // At a domain edge the levels may legitimately differ too (0 vs a tiny value).
        assert_eq!(judge(&[a, b, b], Some(nan), false), Verdict::Pass);
    }

    #[test]
    fn a_pass_reports_the_output_nearest_to_a_mismatch() {
        let nearest_of = |levels: [f32; 3]| {
            let backend = Scripted {
                outputs: levels.iter().map(|x| vec![*x]).collect(),
                ..Default::default()
            };
            let (v, _, nearest) = against(&backend, &[2.0]);
            (v, nearest.get())
        };
        // Level 1 is off by 1e-3 of 2.0 where 1e-3 + 2e-3 is allowed: a third of the way.
        let (v, near) = nearest_of([2.0, 2.001, 2.0]);
        assert_eq!(v, Verdict::Pass);
        let (output, ratio) = near.expect("graded");
        assert_eq!(output, 0);
        assert!((ratio - 1.0 / 3.0).abs() < 1e-3, "{ratio}");
        // A finding reports no near miss.
        let (v, near) = nearest_of([2.0, 2.5, 2.0]);
        assert!(matches!(v, Verdict::Found(_)));
        assert_eq!(near, None);
    }
}
