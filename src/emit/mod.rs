//! Emitters: graphs to ONNX models, the structural rules an emitted model keeps, and reading
//! an ONNX file back for standalone reproducers. (Programs are rendered by
//! [`crate::mutate::program::render`].)

pub mod check;
pub mod onnx;
pub mod read;
