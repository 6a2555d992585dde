//! Test-case synthesis beyond plain generation: splicing optimizer patterns (OATest) into
//! generated graphs, HirFuzz's function and control-flow rewrites of emitted ONNX models and
//! its constraint levels, TorchProbe's program mutations and rendering, TVM pass plans; [`emit`]
//! applies a case's ONNX mutations to its emitted model.

pub mod functions;
pub mod levels;
pub mod passes;
pub mod patterns;
pub mod program;
pub mod violation;

use crate::emit::onnx::{emit_plain, model_proto, OnnxModel};
use crate::gen::TestCase;
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
        Some(m) => functions::apply(case, &mut proto, &model.inputs, m),
        None => Vec::new(),
    };
    model.bytes = proto.encode_to_vec();
    (model, applied)
}
