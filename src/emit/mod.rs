//! Emitters: graphs to ONNX models, and reading an ONNX file back for standalone
//! reproducers. (Programs are rendered by [`crate::mutate::program::render`].)

pub mod onnx;
pub mod read;
