//! The level-0 oracle (HirFuzz's exception-handling tests): a deliberately invalid model must
//! be rejected with a clean error. Only an internal assertion is a finding here; a segfault,
//! abort, hang or runaway allocation kills the process and is caught by the campaign's
//! isolation (or by libFuzzer).

use super::{normalize_message, Finding, FindingKind, Skip, Verdict};
use crate::backend::{Backend, BackendError};
use crate::emit::onnx::OnnxModel;
use crate::ir::Tensor;

/// Messages of checks that fail on invalid input by design: a clean, user-facing rejection
/// even though ONNX Runtime raises them through `ORT_ENFORCE`.
const VALIDATION_ENFORCES: &[&str] =
    &["Attempting to broadcast an axis by a dimension other than 1"];

/// Source folders of ONNX Runtime's own machinery (graph, optimizer, framework, session):
/// an `ORT_ENFORCE` there is an internal invariant, while one in a kernel
/// (`core/providers/...`) validates the kernel's runtime input.
const INTERNAL_SOURCES: &[&str] = &[
    "core/graph/",
    "core/optimizer/",
    "core/framework/",
    "core/session/",
];

/// Whether a backend error is an internal assertion rather than a clean rejection: a failed
/// `ORT_ENFORCE` (`… was false.`) while the model compiles, or in ONNX Runtime's graph,
/// optimizer, framework or session code; a failed C `assert`; or a Rust panic. Kernels that
/// reject their runtime input through `ORT_ENFORCE` (reshape, squeeze, broadcasting) give
/// clean errors.
pub fn is_internal_assertion(e: &BackendError) -> bool {
    let m = &e.message;
    let internal_place =
        e.stage == crate::backend::Stage::Compile || INTERNAL_SOURCES.iter().any(|s| m.contains(s));
    let enforce = m.contains(" was false.")
        && internal_place
        && !VALIDATION_ENFORCES.iter().any(|v| m.contains(v));
    enforce || m.contains("Assertion `") || m.contains("panicked at")
}

/// Runs a level-0 `model` at every level of `backend`. An internal assertion at any level is
/// a crash finding; clean errors make the test [`Skip::Rejected`]; a model every level runs
/// passes (the broken constraint happened to be harmless, e.g. it broadcasts).
pub fn exception_handling(
    backend: &dyn Backend,
    model: &OnnxModel,
    inputs: &[&Tensor],
    fired: &mut Vec<String>,
) -> Verdict {
    let mut rejection = None;
    for (level, name) in backend.levels().iter().enumerate() {
        match backend.run_observed(model, inputs, level, fired) {
            Ok(_) => {}
            Err(e) if is_internal_assertion(&e) => {
                return Verdict::Found(Finding {
                    kind: FindingKind::Crash,
                    level: (*name).into(),
                    signature: format!("assertion:{name}:{}", normalize_message(&e.message)),
                    detail: format!("level-0 model: {e}"),
                    blame: None,
                })
            }
            Err(e) => {
                rejection.get_or_insert(e.message);
            }
        }
    }
    match rejection {
        Some(message) => Verdict::Skipped(Skip::Rejected(message)),
        None => Verdict::Pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{ErrorClass, Stage};

    fn error(message: &str) -> BackendError {
        BackendError {
            class: ErrorClass::Internal,
            stage: Stage::Run,
            message: message.into(),
        }
    }

    #[test]
    fn assertions_are_told_from_clean_errors() {
        assert!(is_internal_assertion(&error(
            "/src/onnxruntime/core/optimizer/x.cc:12 void F() node != nullptr was false. "
        )));
        let kernel_check = "/onnxruntime_src/onnxruntime/core/providers/cpu/tensor/reshape_helper.h:44 onnxruntime::ReshapeHelper::ReshapeHelper size != 0 && (input_shape_size % size) == 0 was false. The input tensor cannot be reshaped to the requested shape.";
        assert!(!is_internal_assertion(&error(kernel_check)));
        let at_compile = BackendError {
            stage: Stage::Compile,
            ..error(kernel_check)
        };
        assert!(is_internal_assertion(&at_compile));
        assert!(is_internal_assertion(&error(
            "thread 'main' panicked at src/a.rs:1"
        )));
        assert!(is_internal_assertion(&error(
            "x.cc:3: f: Assertion `n > 0' failed."
        )));
        assert!(!is_internal_assertion(&error(
            "x.h:540 void onnxruntime::BroadcastIterator::Init(ptrdiff_t, ptrdiff_t) axis == 1 || axis == largest was false. Attempting to broadcast an axis by a dimension other than 1. 3 by 6"
        )));
        assert!(!is_internal_assertion(&error(
            "[ShapeInferenceError] Incompatible dimensions"
        )));
    }
}
