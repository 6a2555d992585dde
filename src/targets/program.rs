//! The program side shared by the TorchScript and torch.compile targets: bytes → program
//! plan and generated float32 graph → value search → libtorch reference (with the EMI
//! profile) → SSA program → TorchProbe mutations.

use crate::emit::onnx::emit_plain;
use crate::gen::{Limits, Menu, TestCase};
use crate::ir::Tensor;
use crate::mutate::program::lower::{lower, supported};
use crate::mutate::program::{Program, ProgramPlan};
use crate::ops::registry;
use crate::oracle::Skip;
use crate::reduce::{apply_all, Edit};
use crate::reference::TorchReference;
use crate::values::repair::search_with_repair;
use crate::values::search::SearchConfig;

/// The lowerable menu and graph size of program targets.
pub struct ProgramSource {
    /// Ops and signatures the program lowering writes (float32).
    pub menu: Menu,
    /// Graph-size bounds.
    pub limits: Limits,
}

/// A mutated program with what it must compute.
pub struct ProgramTest {
    /// The graph it was lowered from.
    pub case: TestCase,
    /// The mutated program; its `profile` holds the parameters' values.
    pub program: Program,
    /// The program mutations that applied.
    pub applied: Vec<String>,
    /// libtorch eager's outputs of the original graph (all finite).
    pub expected: Vec<Tensor>,
    /// Outputs never compared (ties, boundaries).
    pub fragile: Vec<bool>,
    /// How far rounding alone can move each output (`None` when the analysis failed).
    pub envelope: Option<crate::reference::envelope::Envelope>,
    /// Sorted op types, for signatures.
    pub ops: String,
}

impl ProgramTest {
    /// Whether `got` is wrong where `want` (a run already judged right, or the reference) is
    /// right: with the precision envelope, `got` strays from the exact result farther than
    /// rounding explains; without it, the fixed tolerances against `want`. Fragile outputs
    /// are never compared.
    pub fn deviation(&self, want: &[Tensor], got: &[Tensor]) -> Option<String> {
        match &self.envelope {
            Some(env) => env.deviation(got).map(|(k, d)| format!("output {k}: {d}")),
            None => crate::oracle::mismatch(want, got, &self.fragile),
        }
    }

    /// The parameters' values, in call order.
    pub fn inputs(&self) -> Vec<&Tensor> {
        self.program
            .params
            .iter()
            .map(|p| &self.program.profile[p])
            .collect()
    }
}

impl ProgramSource {
    /// Programs over float32 graphs of `limits`.
    pub fn new(limits: Limits) -> ProgramSource {
        ProgramSource {
            menu: Menu::new(|spec, sig, _| {
                let dtypes: Vec<_> = sig.inputs.iter().chain(&sig.outputs).copied().collect();
                supported(registry()[spec].as_ref(), &dtypes)
            }),
            limits,
        }
    }

    /// Decodes `bytes` (program plan, then graph recipe) and searches finite values.
    pub fn prepare(&self, bytes: &[u8]) -> (ProgramPlan, TestCase) {
        let (plan, rest) = ProgramPlan::split(bytes);
        let mut case = TestCase::decode(rest, &self.menu, &self.limits);
        let config = SearchConfig {
            seed: case.config.value_seed,
            ..SearchConfig::default()
        };
        search_with_repair(&mut case, &config);
        (plan, case)
    }

    /// The mutated program of `bytes` (its graph with reduction `edits` applied) and the
    /// reference's outputs, or why there is nothing to test (the edits do not apply, the
    /// reference fails or is not finite, or the graph does not lower).
    pub fn program(&self, bytes: &[u8], edits: &[Edit]) -> Result<ProgramTest, Skip> {
        let (plan, mut case) = self.prepare(bytes);
        apply_all(&mut case, edits).map_err(|e| Skip::Invalid(format!("reduction edits: {e}")))?;
        let (reference, values) = TorchReference.judge_profiled(&case, &emit_plain(&case));
        let values = values.map_err(|e| Skip::Invalid(format!("reference: {e}")))?;
        let mut program = lower(&case, &values).map_err(Skip::Unsupported)?;
        let applied = plan.apply(&mut program);
        let fragile = reference.fragile();
        let expected = reference
            .outputs
            .map_err(|_| Skip::Invalid("the reference failed".into()))?;
        if expected.iter().any(|t| !t.is_finite()) {
            return Err(Skip::NonFinite);
        }
        let ops = case.op_types();
        Ok(ProgramTest {
            case,
            program,
            applied,
            expected,
            fragile,
            envelope: reference.envelope,
            ops,
        })
    }
}
