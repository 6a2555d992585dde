//! Emitters: graphs to ONNX models (the model a backend tests: [`emit`], with a case's HirFuzz
//! rewrites and level-0 violation applied to the proto, [`rewrites`]), the structural rules an
//! emitted model keeps, and reading an ONNX file back for standalone reproducers. (Programs are rendered by
//! [`crate::mutate::program::render`].)

pub mod check;
pub mod onnx;
pub mod read;
pub mod rewrites;

use crate::gen::TestCase;
use onnx::{emit_plain, model_proto, OnnxModel};
use prost::Message;

/// Emits `case` as the ONNX model a backend tests: the plain emission ([`emit_plain`]) with
/// the case's level-0 violation and rewrites, if any, applied.
pub fn emit(case: &TestCase) -> OnnxModel {
    match &case.mutations {
        Some(_) => emit_with_applied(case).0,
        None => emit_plain(case),
    }
}

/// [`emit`], plus the names of the mutations that applied (empty for plain cases). The
/// mutations rewrite the `ModelProto` before it is encoded, once.
pub fn emit_with_applied(case: &TestCase) -> (OnnxModel, Vec<String>) {
    let (mut proto, mut model) = model_proto(case, case.graph.outputs());
    let applied = match &case.mutations {
        Some(m) => rewrites::apply(case, &mut proto, &model.inputs, m),
        None => Vec::new(),
    };
    model.bytes = proto.encode_to_vec();
    (model, applied)
}
