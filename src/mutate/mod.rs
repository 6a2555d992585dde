//! Test-case synthesis beyond plain generation: splicing optimizer patterns (OATest) into
//! generated graphs, HirFuzz's constraint levels, TorchProbe's program mutations and rendering,
//! TVM pass plans. HirFuzz's function and control-flow rewrites of the emitted ONNX model are
//! applied by emission ([`crate::emit::rewrites`]), the last stage a test case passes.

pub mod levels;
pub mod passes;
pub mod patterns;
pub mod program;
