//! Emitters: graphs to ONNX models (later: TorchScript and Python programs).

pub mod onnx;
