//! Culprit-pass bisection for ONNX Runtime findings: the lowest optimization level that
//! reproduces the finding, and a 1-minimal set of graph transformers and rewrite rules that
//! still trigger it (ddmin over `disabled_optimizers`).
//!
//! ONNX Runtime's C API, which the `ort` crate wraps, cannot disable single optimizers; its
//! Python `InferenceSession` can. So the bisection is a script (`scripts/ort_bisect.py`,
//! embedded here) written into the finding folder as `bisect.py`, where it reads `model.onnx`
//! and the feeds of `repro.py`, and anyone can re-run it with only onnxruntime and numpy.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The bisection script.
pub const SCRIPT: &str = include_str!("../../scripts/ort_bisect.py");

/// What the bisection found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Culprits {
    /// Lowest level that reproduces (`basic`, `extended` or `all`).
    pub level: String,
    /// The failure kind reproduced (`error` or `mismatch` against the unoptimized run).
    pub kind: String,
    /// The minimal set of transformers and rules left enabled that still triggers it.
    pub culprits: Vec<String>,
    /// Sessions the bisection ran.
    pub runs: u64,
    /// A remark, e.g. when the failure needs no known transformer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Runs the bisection in finding folder `dir` (holding `model.onnx` and `repro.py`), from
/// optimization level `level` down.
pub fn bisect(dir: &Path, level: &str) -> Result<Culprits, String> {
    let script = dir.join("bisect.py");
    std::fs::write(&script, SCRIPT).map_err(|e| format!("{}: {e}", script.display()))?;
    let out = crate::paths::python()
        .arg(&script)
        .arg(level)
        .output()
        .map_err(|e| format!("running python: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        format!(
            "bisect.py gave no result ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(400)
                .collect::<String>()
        )
    })?;
    if let Some(error) = value.get("error").and_then(|e| e.as_str()) {
        return Err(error.to_string());
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}
