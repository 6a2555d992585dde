//! Emitters: graphs to ONNX models, programs to TorchScript or Python source, and reading an
//! ONNX file back for standalone reproducers.

pub mod onnx;
pub mod program;
pub mod read;
