//! The precision analysis seen from a model's outputs, made in two stages so that a test
//! whose outputs are plainly right never pays for the whole analysis.
//!
//! The complete analysis ([`Precision::completed`]) costs five or six graph evaluations (the truth in `float64`, the
//! float16-in-float32 evaluation, four perturbed ones) and the fragility walk. Most backend
//! outputs lie so close to the truth that the declared evaluation's own distance from it
//! already covers them. So an [`Envelope`] starts from [`Precision::first_stage`] (the truth
//! only; every spread the declared evaluation's distance, a lower bound of the complete
//! spread; nothing fragile) and completes the analysis the first time a question needs it:
//!
//! - a comparison that passes within the first stage passes within the complete envelope
//!   (the allowed deviation grows with the spread, and fragility only removes comparisons),
//!   so its answer stands;
//! - a comparison that fails, or a question about fragility or the exact bounds, completes
//!   the analysis and is answered from it.
//!
//! The oracle's verdicts are therefore the complete analysis's, bit for bit. When the second
//! stage fails (a libtorch error on a perturbed graph), every output counts as fragile and is
//! never compared: a verdict the analysis cannot back is not given.

use super::precision::{Precision, Values};
use super::RefError;
use crate::gen::TestCase;
use crate::ir::{Tensor, ValueRef};
use std::sync::{Arc, OnceLock};

/// The precision analysis of one test case, completed on demand.
struct Staged {
    case: TestCase,
    first: Precision,
    complete: OnceLock<Option<Precision>>,
}

impl Staged {
    /// The complete analysis (`None` when it failed), made on the first call.
    fn complete(&self) -> Option<&Precision> {
        self.complete
            .get_or_init(|| Precision::completed(&self.case, &self.first).ok())
            .as_ref()
    }

    /// `judge`'s finding under the complete analysis, asked only when the first stage
    /// finds something too (`judge` must be monotone: what passes within narrower
    /// spreads and no fragile value passes within the complete envelope).
    fn settle<T>(&self, judge: impl Fn(&Precision) -> Option<T>) -> Option<T> {
        if self.complete.get().is_none() {
            judge(&self.first)?;
        }
        self.complete().and_then(judge)
    }
}

/// How far rounding alone can move each output of a model ([`super::precision`]): what the
/// oracle compares a backend's output list with. Cheap to clone (shared).
#[derive(Clone)]
pub struct Envelope {
    analysis: Arc<Staged>,
    /// The value behind each model output, in output order.
    outputs: Vec<ValueRef>,
}

impl std::fmt::Debug for Envelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Envelope")
            .field("outputs", &self.outputs)
            .field("completed", &self.analysis.complete.get().is_some())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Envelope {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.analysis, &other.analysis) && self.outputs == other.outputs
    }
}

impl Envelope {
    /// The envelope of the model outputs `outputs` of `case`, whose values at the declared
    /// precision are `declared`: the first stage now, the rest on demand.
    pub fn new(
        case: &TestCase,
        declared: &Values,
        outputs: Vec<ValueRef>,
    ) -> Result<Envelope, RefError> {
        let first = Precision::first_stage(case, declared)?;
        Ok(Envelope {
            analysis: Arc::new(Staged {
                case: case.clone(),
                first,
                complete: OnceLock::new(),
            }),
            outputs,
        })
    }

    /// Whether the analysis went past its first stage (a comparison or a question needed it).
    pub fn completed(&self) -> bool {
        self.analysis.complete.get().is_some()
    }

    /// Whether output `i` is fragile (never compared).
    pub fn fragile(&self, i: usize) -> bool {
        match self.analysis.complete() {
            Some(p) => self.outputs.get(i).is_some_and(|v| p.is_fragile(*v)),
            None => true,
        }
    }

    /// Per output, whether it is fragile (completes the analysis).
    pub fn fragile_outputs(&self) -> Vec<bool> {
        (0..self.outputs.len()).map(|i| self.fragile(i)).collect()
    }

    /// The first output of `actual` (in output order) that is farther from the truth than
    /// rounding explains: `(output, description)`.
    pub fn deviation(&self, actual: &[Tensor]) -> Option<(usize, String)> {
        if actual.len() != self.outputs.len() {
            return Some((
                0,
                format!("output count {} vs {}", self.outputs.len(), actual.len()),
            ));
        }
        self.analysis.settle(|p| {
            self.outputs
                .iter()
                .zip(actual)
                .enumerate()
                .find_map(|(i, (v, a))| p.check(*v, a).map(|d| (i, d)))
        })
    }

    /// How close each output of `actual` came to leaving the envelope, as
    /// `(output, ratio)` pairs for the outputs that have a grade
    /// ([`Precision::closeness`]), under the analysis as far as it went: the complete one when
    /// a question already needed it, the first stage otherwise (whose narrower spreads
    /// overstate the ratio, never understate it). Never completes the analysis.
    pub fn closeness(&self, actual: &[Tensor]) -> Vec<(usize, f64)> {
        let precision = match self.analysis.complete.get() {
            Some(Some(complete)) => complete,
            Some(None) => return Vec::new(),
            None => &self.analysis.first,
        };
        self.outputs
            .iter()
            .zip(actual)
            .enumerate()
            .filter_map(|(i, (v, a))| precision.closeness(*v, a).map(|r| (i, r)))
            .collect()
    }

    /// Whether output `i`, computed as `actual`, is farther from the truth than rounding
    /// explains.
    pub fn deviation_of(&self, i: usize, actual: &Tensor) -> Option<String> {
        let v = *self.outputs.get(i)?;
        self.analysis.settle(|p| p.check(v, actual))
    }

    /// Output `i`'s exact values and allowed deviations, flattened (`None` when it is
    /// fragile): what a standalone reproducer compares with. Elements whose exact value is
    /// not finite are allowed anything.
    pub fn expected(&self, i: usize) -> Option<(Vec<usize>, Vec<f64>, Vec<f64>)> {
        let v = *self.outputs.get(i)?;
        let precision = self.analysis.complete()?;
        if precision.is_fragile(v) {
            return None;
        }
        let (shape, truth, allowed) = precision.expected(v)?;
        let allowed = truth
            .iter()
            .zip(allowed)
            .map(|(t, a)| if t.is_finite() { a } else { f64::INFINITY })
            .collect();
        Some((shape, truth, allowed))
    }

    /// Whether output `i` computed twice (`a`, `b`) agrees within rounding.
    pub fn agree(&self, i: usize, a: &Tensor, b: &Tensor) -> bool {
        match self.outputs.get(i) {
            Some(v) => self
                .analysis
                .settle(|p| (!p.agree(*v, a, b)).then_some(()))
                .is_none(),
            None => a == b,
        }
    }

    /// Whether two output lists agree within rounding, output by output (fragile outputs
    /// always agree).
    pub fn all_agree(&self, a: &[Tensor], b: &[Tensor]) -> bool {
        a.len() == b.len()
            && self
                .analysis
                .settle(|p| {
                    a.iter().zip(b).enumerate().find(|(i, (x, y))| {
                        let v = self.outputs.get(*i);
                        let fragile = v.is_some_and(|v| p.is_fragile(*v));
                        !fragile && v.map_or(x != y, |v| !p.agree(*v, x, y))
                    })
                })
                .is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Buffer, DType};
    use crate::reference::from_tch;
    use crate::reference::testing::{case_of, declared};

    /// `t` with every float element moved by `f` (other dtypes unchanged).
    fn moved(t: &Tensor, f: impl Fn(f64) -> f64) -> Tensor {
        let data = match &t.data {
            Buffer::F32(xs) => Buffer::F32(xs.iter().map(|x| f(f64::from(*x)) as f32).collect()),
            Buffer::F64(xs) => Buffer::F64(xs.iter().map(|x| f(*x)).collect()),
            other => other.clone(),
        };
        Tensor {
            shape: t.shape.clone(),
            data,
        }
    }

    #[test]
    fn the_staged_envelope_judges_as_the_complete_analysis_does() {
        let mut lazy = 0;
        for dtype in [DType::F32, DType::F64] {
            for seed in 0..20u8 {
                let case = case_of(seed, dtype);
                let values = declared(&case);
                let outputs = case.graph.outputs();
                let env = Envelope::new(&case, &values, outputs.clone()).unwrap();
                let full = Precision::analyze(&case, &values).unwrap();
                let declared: Vec<Tensor> = outputs
                    .iter()
                    .map(|v| from_tch(&values[v], case.graph.ty(*v).dtype).unwrap())
                    .collect();
                // The reference's own outputs lie within the first stage: nothing completes.
                assert_eq!(env.deviation(&declared), None, "{dtype} seed {seed}");
                lazy += usize::from(!env.completed());
                // Near and far values get the complete analysis's answer.
                for (i, (v, t)) in outputs.iter().zip(&declared).enumerate() {
                    for f in [|x: f64| x * (1.0 + 1e-7), |x: f64| x * 1.01 + 0.1] {
                        let x = moved(t, f);
                        assert_eq!(
                            env.deviation_of(i, &x),
                            full.check(*v, &x),
                            "{dtype} seed {seed} output {i}"
                        );
                        assert_eq!(env.agree(i, t, &x), full.agree(*v, t, &x));
                    }
                    assert_eq!(env.fragile(i), full.is_fragile(*v));
                }
                assert!(env.completed());
            }
        }
        assert!(
            lazy > 30,
            "only {lazy} of 40 cases judged without completing"
        );
    }

    #[test]
    fn closeness_grades_passes_below_one_and_deviations_above_without_completing() {
        for seed in 0..10u8 {
            let case = case_of(seed, DType::F32);
            let values = declared(&case);
            let outputs = case.graph.outputs();
            let env = Envelope::new(&case, &values, outputs.clone()).unwrap();
            let declared: Vec<Tensor> = outputs
                .iter()
                .map(|v| from_tch(&values[v], case.graph.ty(*v).dtype).unwrap())
                .collect();
            for (i, r) in env.closeness(&declared) {
                assert!(
                    r <= 1.0,
                    "seed {seed} output {i}: the reference's own value at {r}"
                );
            }
            assert!(!env.completed(), "grading never completes the analysis");
            let far: Vec<Tensor> = declared
                .iter()
                .map(|t| moved(t, |x| x * 1.01 + 0.1))
                .collect();
            for (i, r) in env.closeness(&far) {
                assert!(r > 1.0, "seed {seed} output {i}: a deviation graded {r}");
                assert!(env.deviation_of(i, &far[i]).is_some() || env.fragile(i));
            }
        }
    }
}
