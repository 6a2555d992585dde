//! Emitters: graphs to ONNX models (later: TorchScript and Python programs), and reading an
//! ONNX file back for standalone reproducers.

pub mod onnx;
pub mod read;
pub mod torchscript;
