//! The reference backend ([`TorchReference`]): a generated test case evaluated on libtorch
//! eager with ONNX semantics ([`super::graph`]), its outputs in model order and their
//! precision envelope ([`super::envelope`]), as the oracle reads them ([`ReferenceRun`]).

use super::envelope::Envelope;
use super::graph::evaluate;
use super::{convert, RefError};
use crate::emit::onnx::OnnxModel;
use crate::gen::TestCase;
use crate::ir::{Tensor, ValueRef};
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeMap;

/// What the reference computed for a test.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceRun {
    /// The reference outputs (in model-output order), or why the reference could not run.
    pub outputs: Result<Vec<Tensor>, String>,
    /// Per output, whether it is fragile, given outright: what [`fragile`](Self::fragile)
    /// says for a run without an envelope (with one, the envelope says it).
    pub marks: Vec<bool>,
    /// How far rounding alone can move each output ([`super::precision`]); `None`
    /// when the reference could not run, or stands for another run (then the fixed per-dtype
    /// tolerances of [`super::compare`] judge).
    pub envelope: Option<Envelope>,
}

impl ReferenceRun {
    /// Per output: whether it is fragile (depends on a tie or a rounding boundary), so that
    /// no comparison may judge it. With an envelope this completes its analysis.
    pub fn fragile(&self) -> Vec<bool> {
        match (&self.envelope, &self.outputs) {
            (Some(e), Ok(_)) => e.fragile_outputs(),
            _ => self.marks.clone(),
        }
    }
}

/// A reference run's outputs and envelope.
type Judged = (Vec<Tensor>, Envelope);

/// The reference backend: runs a generated test case on libtorch eager with ONNX semantics.
#[derive(Clone, Copy, Debug, Default)]
pub struct TorchReference;

impl TorchReference {
    /// What the oracle needs from the reference for `case`: its outputs (in `model.outputs`
    /// order) or why it failed, and which outputs are fragile ([`super::fragile`]).
    pub fn judge(&self, case: &TestCase, model: &OnnxModel) -> ReferenceRun {
        let values = tch::no_grad(|| evaluate(&case.graph, &Self::leaves(case)));
        Self::reference_run(values.and_then(|v| Self::judged(case, model, &v)))
    }

    /// [`judge`](Self::judge) plus every value of the graph in its declared dtype (the
    /// profile of the seed run that program mutations read), from one evaluation.
    pub fn judge_profiled(
        &self,
        case: &TestCase,
        model: &OnnxModel,
    ) -> (ReferenceRun, Result<BTreeMap<ValueRef, Tensor>, RefError>) {
        let values = match tch::no_grad(|| evaluate(&case.graph, &Self::leaves(case))) {
            Ok(v) => v,
            Err(e) => {
                let run = ReferenceRun {
                    outputs: Err(e.to_string()),
                    marks: Vec::new(),
                    envelope: None,
                };
                return (run, Err(e));
            }
        };
        let profile = values
            .iter()
            .map(|(v, t)| Ok((*v, convert::from_tch(t, case.graph.ty(*v).dtype)?)))
            .collect();
        let run = Self::reference_run(Self::judged(case, model, &values));
        (run, profile)
    }

    /// The outputs and precision envelope of `model` from evaluated `values`
    /// ([`Envelope`]).
    fn judged(
        case: &TestCase,
        model: &OnnxModel,
        values: &BTreeMap<ValueRef, tch::Tensor>,
    ) -> Result<Judged, RefError> {
        let outputs = Self::collect_outputs(values, model)?;
        let envelope = Envelope::new(
            case,
            values,
            model.outputs.iter().map(|(v, _)| *v).collect(),
        )?;
        Ok((outputs, envelope))
    }

    fn reference_run(run: Result<Judged, RefError>) -> ReferenceRun {
        match run {
            Ok((outputs, envelope)) => ReferenceRun {
                outputs: Ok(outputs),
                marks: Vec::new(),
                envelope: Some(envelope),
            },
            Err(e) => ReferenceRun {
                outputs: Err(e.to_string()),
                marks: Vec::new(),
                envelope: None,
            },
        }
    }

    fn leaves(case: &TestCase) -> BTreeMap<NodeIndex, tch::Tensor> {
        case.values
            .iter()
            .map(|(n, t)| (*n, convert::to_tch(t)))
            .collect()
    }

    fn collect_outputs(
        values: &BTreeMap<ValueRef, tch::Tensor>,
        model: &OnnxModel,
    ) -> Result<Vec<Tensor>, RefError> {
        model
            .outputs
            .iter()
            .zip(&model.output_types)
            .map(|((v, _), ty)| {
                let t = values
                    .get(v)
                    .ok_or_else(|| RefError::Failed(format!("output {v:?} not computed")))?;
                convert::from_tch(t, ty.dtype)
            })
            .collect()
    }

    /// The values `wanted` of `case`, each in its declared dtype (what a reducer feeds in place
    /// of the nodes it cuts away).
    pub fn values_of(&self, case: &TestCase, wanted: &[ValueRef]) -> Result<Vec<Tensor>, RefError> {
        let leaves = Self::leaves(case);
        let values = tch::no_grad(|| evaluate(&case.graph, &leaves))?;
        wanted
            .iter()
            .map(|v| {
                let t = values
                    .get(v)
                    .ok_or_else(|| RefError::Failed(format!("value {v:?} not computed")))?;
                convert::from_tch(t, case.graph.ty(*v).dtype)
            })
            .collect()
    }

    /// The outputs of `case` in `model.outputs` order, with `model.output_types` dtypes.
    pub fn run(&self, case: &TestCase, model: &OnnxModel) -> Result<Vec<Tensor>, RefError> {
        let leaves = Self::leaves(case);
        let values = evaluate(&case.graph, &leaves)?;
        Self::collect_outputs(&values, model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::emit_plain as emit;
    use crate::gen::{Limits, Menu};

    #[test]
    fn generated_cases_evaluate_with_declared_types() {
        let menu = Menu::everything();
        let mut ran = 0;
        for seed in 0..40u8 {
            let bytes: Vec<u8> = (0..600u32)
                .map(|i| (i.wrapping_mul(131) ^ (u32::from(seed) * 7919)) as u8)
                .collect();
            let case = TestCase::decode(&bytes, &menu, &Limits::exact(4));
            let model = emit(&case);
            let outs = TorchReference
                .run(&case, &model)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            for (t, ty) in outs.iter().zip(&model.output_types) {
                assert_eq!(&t.ty(), ty, "seed {seed}");
            }
            ran += 1;
        }
        assert_eq!(ran, 40);
    }
}
