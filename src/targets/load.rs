//! The model-loading targets: the input is an untrusted ONNX file.

use crate::backend::ort::OrtCpu;
use crate::backend::tract::Tract;
use crate::backend::BackendError;
use std::sync::OnceLock;

/// `ort_load`: ONNX Runtime session creation (all optimizations) from the bytes, then one run
/// on ones when the declared inputs are static and small. Errors are returned, not findings.
pub fn ort_load(data: &[u8]) -> Result<(), BackendError> {
    static ORT: OnceLock<OrtCpu> = OnceLock::new();
    ORT.get_or_init(|| OrtCpu::new().unwrap_or_else(|e| panic!("ort_load setup: {e}")))
        .load_only(data)
}

/// `tract_load`: tract parses, analyses and optimizes the bytes, then runs the model once on
/// ones when its declared inputs are static and small. Panics propagate: a panic on an
/// untrusted file is a finding.
pub fn tract_load(data: &[u8]) -> Result<(), BackendError> {
    Tract::new_propagating_panics().load_only(data)
}
