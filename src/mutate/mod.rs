//! Test-case synthesis beyond plain generation: splicing optimizer patterns (OATest) into
//! generated graphs, HirFuzz's function and control-flow rewrites of emitted ONNX models and
//! its constraint levels.

pub mod functions;
pub mod levels;
pub mod passes;
pub mod patterns;
pub mod program;
pub mod violation;
