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

pub use differential::{assert_no_finding, ort_cpu, ort_cpu_mutated, ort_cpu_patterns, tract};
pub use load::{ort_load, tract_load};
