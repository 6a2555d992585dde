//! One fuzz iteration per fuzz target, on `&[u8]`, so `fuzz/fuzz_targets/*` stay a few lines
//! of glue and integration tests run exactly the code libFuzzer runs.
//!
//! - Differential targets ([`ort_cpu`], [`ort_cpu_patterns`], [`ort_cpu_mutated`], [`tract`]): bytes → test case → ONNX → every level of
//!   one backend → [`Verdict`](crate::oracle::Verdict); the glue panics on a finding
//!   ([`assert_no_finding`]).
//! - Load targets ([`ort_load`], [`tract_load`]): bytes are an untrusted ONNX file; load
//!   errors are expected, only crashes (panics, sanitizer reports) are findings.

mod differential;
pub mod hosted;
mod load;
pub mod program;
pub mod repro;
pub mod torch_compile;
pub mod torchscript;
pub mod tvm;

pub use differential::{assert_no_finding, ort_cpu, ort_cpu_mutated, ort_cpu_patterns, tract};
pub use load::{ort_load, tract_load};

use crate::gen::Limits;
use std::sync::OnceLock;
use torch_compile::TorchCompileHarness;
use torchscript::TorchScriptHarness;
use tvm::TvmHarness;

/// `torchscript_cpu`: TorchProbe on TorchScript (CPU): the input starts with a program
/// mutation plan ([`ProgramPlan`](crate::mutate::program::ProgramPlan)); see
/// [`torchscript`].
pub fn torchscript_cpu(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TorchScriptHarness> = OnceLock::new();
    HARNESS
        .get_or_init(|| TorchScriptHarness::cpu(Limits::default()))
        .test(data)
        .verdict
}

/// `torchscript_cuda`: [`torchscript_cpu`] with the compiled program on CUDA device 0 (the
/// reference stays libtorch eager on the CPU). Panics at setup, naming what is missing, when
/// libtorch sees no CUDA device.
pub fn torchscript_cuda(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TorchScriptHarness> = OnceLock::new();
    set_up(&HARNESS, "torchscript_cuda", || {
        TorchScriptHarness::cuda(Limits::default())
    })
    .test(data)
    .verdict
}

/// The harness in `cell`, built by `make` on first use; a setup failure panics naming what
/// is missing (the target cannot run at all).
fn set_up<H>(
    cell: &'static OnceLock<H>,
    target: &str,
    make: impl FnOnce() -> Result<H, String>,
) -> &'static H {
    cell.get_or_init(|| make().unwrap_or_else(|e| panic!("{target} setup: {e}")))
}

/// `torch_compile_cpu`: TorchProbe programs as plain Python, eager vs
/// `torch.compile(backend="inductor")` on the CPU, in the Python host; the input starts with
/// a mode byte (`dynamic`) and a program plan. See [`torch_compile`].
pub fn torch_compile_cpu(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TorchCompileHarness> = OnceLock::new();
    set_up(&HARNESS, "torch_compile_cpu", || {
        TorchCompileHarness::cpu(Limits::default())
    })
    .test(data)
    .verdict
}

/// `torch_compile_cuda`: [`torch_compile_cpu`] on CUDA device 0 (Inductor's Triton backend).
/// Panics at setup when torch sees no CUDA device.
pub fn torch_compile_cuda(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TorchCompileHarness> = OnceLock::new();
    set_up(&HARNESS, "torch_compile_cuda", || {
        TorchCompileHarness::cuda(Limits::default())
    })
    .test(data)
    .verdict
}

/// `tvm_llvm`: a generated model through TVM Relax for the CPU, plain and after a pass
/// sequence decoded from the input's head. See [`tvm`].
pub fn tvm_llvm(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TvmHarness> = OnceLock::new();
    set_up(&HARNESS, "tvm_llvm", || TvmHarness::llvm(Limits::default()))
        .test(data)
        .verdict
}

/// `tvm_cuda`: [`tvm_llvm`] built for CUDA device 0. Panics at setup when TVM sees no CUDA
/// device.
pub fn tvm_cuda(data: &[u8]) -> crate::oracle::Verdict {
    static HARNESS: OnceLock<TvmHarness> = OnceLock::new();
    set_up(&HARNESS, "tvm_cuda", || TvmHarness::cuda(Limits::default()))
        .test(data)
        .verdict
}

/// A differential fuzz target by its cargo-fuzz name.
pub fn differential_by_name(name: &str) -> Option<fn(&[u8]) -> crate::oracle::Verdict> {
    Some(match name {
        "ort_cpu" => ort_cpu,
        "ort_cpu_patterns" => ort_cpu_patterns,
        "ort_cpu_mutated" => ort_cpu_mutated,
        "tract" => tract,
        "torchscript_cpu" => torchscript_cpu,
        "torchscript_cuda" => torchscript_cuda,
        "torch_compile_cpu" => torch_compile_cpu,
        "torch_compile_cuda" => torch_compile_cuda,
        "tvm_llvm" => tvm_llvm,
        "tvm_cuda" => tvm_cuda,
        _ => return None,
    })
}
