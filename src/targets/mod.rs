//! One fuzz iteration per fuzz target, on `&[u8]`, so `fuzz/fuzz_targets/*` stay a few lines
//! of glue and integration tests run exactly the code libFuzzer runs.
//!
//! - Differential targets ([`ort_cpu`], [`ort_cpu_patterns`], [`ort_cpu_mutated`], [`tract`]): bytes → test case → ONNX → every level of
//!   one backend → [`Verdict`](crate::oracle::Verdict); the glue panics on a finding
//!   ([`assert_no_finding`]).
//! - Load targets ([`ort_load`], [`tract_load`]): bytes are an untrusted ONNX file; load
//!   errors are expected, only crashes (panics, sanitizer reports) are findings.

mod differential;
mod load;
pub mod torchscript;

pub use differential::{assert_no_finding, ort_cpu, ort_cpu_mutated, ort_cpu_patterns, tract};
pub use load::{ort_load, tract_load};

use std::sync::OnceLock;
use torchscript::TorchScriptHarness;

/// `torchscript_cpu`: TorchProbe on TorchScript (CPU): the input starts with a program
/// mutation plan ([`ProgramPlan`](crate::mutate::program::ProgramPlan)); see
/// [`torchscript`].
pub fn torchscript_cpu(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TorchScriptHarness> = OnceLock::new();
    HARNESS
        .get_or_init(|| TorchScriptHarness::cpu(crate::gen::Limits::default()))
        .test(data)
        .verdict
}

/// `torchscript_cuda`: [`torchscript_cpu`] with the compiled program on CUDA device 0 (the
/// reference stays libtorch eager on the CPU). Panics at setup, naming what is missing, when
/// libtorch sees no CUDA device.
pub fn torchscript_cuda(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TorchScriptHarness> = OnceLock::new();
    HARNESS
        .get_or_init(|| {
            TorchScriptHarness::cuda(crate::gen::Limits::default())
                .unwrap_or_else(|e| panic!("torchscript_cuda setup: {e}"))
        })
        .test(data)
        .verdict
}
