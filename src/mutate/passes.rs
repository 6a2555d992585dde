//! Compiler pass sequences decoded from bytes (HirFuzz's pass-sequence mutation, for TVM
//! Relax): which passes run, in which order, before the build.
//!
//! Each of [`PASS_BYTES`] header bytes names a pass of [`MENU`] or none. The sequence keeps
//! each pass's documented preconditions, so a failure is the pass's fault and not the
//! order's: a pass that works on TensorIR-level functions (fusion, memory planning) is
//! preceded by `LegalizeOps` + `AnnotateTIROpPattern` when the sequence has not legalized
//! yet, and `FuseTIR` by `FuseOps`.

use serde::{Deserialize, Serialize};

/// Bytes a [`PassPlan`] occupies at the head of an input.
pub const PASS_BYTES: usize = 8;

/// Where a pass may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// On any Relax module, before or after legalization.
    Any,
    /// Needs legalized operators (`call_tir` to TensorIR functions).
    Lowered,
}

/// A pass of the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassSpec {
    /// `tvm.relax.transform` name.
    pub name: &'static str,
    /// Its precondition.
    pub phase: Phase,
    /// It changes numerics on purpose (lower precision, fast math): compared with float16
    /// tolerances.
    pub lossy: bool,
}

const fn pass(name: &'static str, phase: Phase, lossy: bool) -> PassSpec {
    PassSpec { name, phase, lossy }
}

/// The passes a plan picks from.
pub const MENU: [PassSpec; 20] = [
    pass("FoldConstant", Phase::Any, false),
    pass("CanonicalizeBindings", Phase::Any, false),
    pass("EliminateCommonSubexpr", Phase::Any, false),
    pass("DeadCodeElimination", Phase::Any, false),
    pass("LambdaLift", Phase::Any, false),
    pass("ConvertToDataflow", Phase::Any, false),
    pass("DecomposeOpsForInference", Phase::Any, false),
    pass("CombineParallelMatmul", Phase::Any, false),
    pass("FuseTransposeMatmul", Phase::Any, false),
    pass("RemoveRedundantReshape", Phase::Any, false),
    pass("ReorderPermuteDimsAfterConcat", Phase::Any, false),
    pass("ExpandMatmulOfSum", Phase::Any, false),
    pass("ToMixedPrecision", Phase::Any, true),
    pass("FastMathTransform", Phase::Any, true),
    pass("LegalizeOps", Phase::Any, false),
    pass("AnnotateTIROpPattern", Phase::Lowered, false),
    pass("FuseOps", Phase::Lowered, false),
    pass("FuseTIR", Phase::Lowered, false),
    pass("AlterOpImpl", Phase::Lowered, false),
    pass("StaticPlanBlockMemory", Phase::Lowered, false),
];

fn spec(name: &str) -> &'static PassSpec {
    MENU.iter()
        .find(|p| p.name == name)
        .expect("a pass of the menu")
}

/// A decoded pass sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassPlan {
    /// Pass names, in order, preconditions included.
    pub passes: Vec<String>,
}

impl PassPlan {
    /// Decodes the first [`PASS_BYTES`] of `bytes` (missing bytes read as zero; a byte
    /// picks `MENU[b % (len + 1) - 1]`, or nothing at 0) and returns the plan with the rest.
    pub fn split(bytes: &[u8]) -> (PassPlan, &[u8]) {
        let (head, rest) = crate::gen::padded_head::<PASS_BYTES>(bytes);
        let mut plan = PassPlan::default();
        for b in head {
            let k = usize::from(b) % (MENU.len() + 1);
            if k > 0 {
                plan.push(MENU[k - 1].name);
            }
        }
        (plan, rest)
    }

    /// Appends `name` after whatever its precondition needs.
    fn push(&mut self, name: &str) {
        let has = |plan: &PassPlan, n: &str| plan.passes.iter().any(|p| p == n);
        if spec(name).phase == Phase::Lowered && !has(self, "LegalizeOps") {
            self.passes.push("LegalizeOps".into());
        }
        if spec(name).phase == Phase::Lowered
            && name != "AnnotateTIROpPattern"
            && !has(self, "AnnotateTIROpPattern")
        {
            self.passes.push("AnnotateTIROpPattern".into());
        }
        if name == "FuseTIR" && !has(self, "FuseOps") {
            self.passes.push("FuseOps".into());
        }
        self.passes.push(name.into());
    }

    /// Whether a pass changes numerics on purpose.
    pub fn lossy(&self) -> bool {
        self.passes.iter().any(|p| spec(p).lossy)
    }

    /// The first `n` passes.
    pub fn prefix(&self, n: usize) -> Vec<String> {
        self.passes[..n].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_is_total_and_keeps_preconditions() {
        let (plan, rest) = PassPlan::split(&[0, 1, 18, 21 + 4, 9]);
        assert_eq!(rest, &[] as &[u8]);
        assert_eq!(
            plan.passes,
            [
                "FoldConstant",
                "LegalizeOps",
                "AnnotateTIROpPattern",
                "FuseOps",
                "FuseTIR",
                "DeadCodeElimination",
                "FuseTransposeMatmul"
            ]
        );
        assert!(!plan.lossy());
        let (plan, rest) = PassPlan::split(&[13, 0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(plan.passes, ["ToMixedPrecision"]);
        assert!(plan.lossy());
        assert_eq!(rest, &[7]);
        for b in 0..=255u8 {
            let (plan, _) = PassPlan::split(&[b; PASS_BYTES]);
            for (k, p) in plan.passes.iter().enumerate() {
                if spec(p).phase == Phase::Lowered {
                    assert!(plan.passes[..k].contains(&"LegalizeOps".to_string()));
                }
            }
        }
    }
}
