//! The torch program surface: programs written directly in torch (not lowered from an ONNX
//! graph), generated from one declaration per operator.
//! - [`ops`]: the operator rows (element-wise rows derived from the ONNX-side declarations,
//!   plus torch-only rows);
//! - [`family`]: how each family of rows picks arguments, adds weights and shapes its
//!   result;
//! - [`builder`]: the state of one generation, which the families instantiate rows with;
//! - [`gen`]: bytes → typed program ([`gen::generate`]);
//! - [`promote`]: torch's type promotion; [`template`]: attribute holes.
//!
//! The result feeds the TorchProbe program mutations ([`crate::mutate::program`]) and the
//! torch.compile target; the oracle is torch eager itself.

pub mod builder;
pub mod family;
pub mod gen;
pub mod ops;
pub mod promote;
pub mod template;
