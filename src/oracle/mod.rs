//! Oracles: compare a backend's optimized levels against its unoptimized run.
//!
//! - **Crash:** the unoptimized level succeeds and an optimized level fails (other than with an
//!   unsupported-op error), or any level fails with an internal error (not a rejection of the
//!   model, not an unsupported op).
//! - **Inconsistency:** an optimized level's outputs differ from the unoptimized ones beyond
//!   the per-dtype tolerance.
//! - NaN or Inf anywhere in the reference outputs makes the test a skip, never a finding.

use crate::backend::{Backend, BackendError, ErrorClass};
use crate::emit::onnx::OnnxModel;
use crate::ir::{DType, Tensor};
use serde::{Deserialize, Serialize};

/// What kind of bug a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FindingKind {
    /// An optimized level failed where the reference succeeded, or execution failed internally.
    Crash,
    /// Outputs differ between levels.
    Inconsistency,
}

/// A suspected backend bug.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Crash or inconsistency.
    pub kind: FindingKind,
    /// The level that disagrees with the reference (or fails).
    pub level: String,
    /// Normalized signature used to tell distinct bugs apart.
    pub signature: String,
    /// Human-readable details.
    pub detail: String,
}

/// Why a test was not judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Skip {
    /// The backend does not implement something in the model.
    Unsupported(String),
    /// The backend rejected the model (counts against validity).
    Invalid(String),
    /// The reference outputs hold NaN or Inf.
    NonFinite,
}

/// The outcome of one differential test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    /// Every level agrees.
    Pass,
    /// Not judged.
    Skipped(Skip),
    /// A suspected bug.
    Found(Finding),
}

/// Absolute and relative tolerance for a dtype.
pub fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (1e-2, 1e-2),
        DType::F32 => (1e-3, 1e-3),
        DType::F64 => (1e-6, 1e-6),
        _ => (0.0, 0.0),
    }
}

/// Describes the first mismatch between a reference and an optimized output, if any.
pub fn compare(reference: &Tensor, actual: &Tensor) -> Option<String> {
    if reference.shape != actual.shape {
        return Some(format!("shape {:?} vs {:?}", reference.shape, actual.shape));
    }
    if reference.data.dtype() != actual.data.dtype() {
        return Some(format!(
            "dtype {} vs {}",
            reference.data.dtype(),
            actual.data.dtype()
        ));
    }
    let (atol, rtol) = tolerance(reference.data.dtype());
    let (r, a) = (reference.data.to_f64_vec(), actual.data.to_f64_vec());
    let bad = r.iter().zip(&a).position(|(x, y)| {
        let same_nan = x.is_nan() && y.is_nan();
        let close = (x - y).abs() <= atol + rtol * x.abs();
        !same_nan && !close
    })?;
    let max_err = r
        .iter()
        .zip(&a)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    Some(format!(
        "element {bad}: {} vs {} (max abs error {max_err:e})",
        r[bad], a[bad]
    ))
}

/// Replaces every alphanumeric token that holds a digit (numbers, addresses, node names like
/// `n12`) with `N`, so that messages of one bug compare equal.
pub fn normalize_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if token.chars().any(|c| c.is_ascii_digit()) {
            out.push('N');
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in message.chars() {
        if c.is_ascii_alphanumeric() {
            token.push(c);
        } else {
            flush(&mut token, &mut out);
            out.push(c);
        }
    }
    flush(&mut token, &mut out);
    out.chars().take(200).collect()
}

fn has_non_finite(outputs: &[Tensor]) -> bool {
    outputs
        .iter()
        .any(|t| t.data.to_f64_vec().iter().any(|v| !v.is_finite()))
}

fn skip_for(e: &BackendError) -> Skip {
    match e.class {
        ErrorClass::Unsupported => Skip::Unsupported(e.message.clone()),
        _ => Skip::Invalid(e.message.clone()),
    }
}

/// Runs `model` at every level of `backend` and judges the results. `op_types` names the
/// model's op types for inconsistency signatures; it is only called when one is found.
pub fn differential(
    backend: &dyn Backend,
    model: &OnnxModel,
    inputs: &[&Tensor],
    op_types: impl FnOnce() -> String,
) -> Verdict {
    let levels = backend.levels();
    let reference = match backend.run(model, inputs, 0) {
        Ok(outs) => outs,
        Err(e) if e.class == ErrorClass::Internal => {
            return Verdict::Found(Finding {
                kind: FindingKind::Crash,
                level: levels[0].into(),
                signature: format!("crash:{}:{}", levels[0], normalize_message(&e.message)),
                detail: e.to_string(),
            })
        }
        Err(e) => return Verdict::Skipped(skip_for(&e)),
    };
    let non_finite = has_non_finite(&reference);
    for (level, name) in levels.iter().enumerate().skip(1) {
        match backend.run(model, inputs, level) {
            Err(e) if e.class == ErrorClass::Unsupported => return Verdict::Skipped(skip_for(&e)),
            Err(e) => {
                return Verdict::Found(Finding {
                    kind: FindingKind::Crash,
                    level: (*name).into(),
                    signature: format!("crash:{name}:{}", normalize_message(&e.message)),
                    detail: e.to_string(),
                })
            }
            Ok(_) if non_finite => {}
            Ok(outs) => {
                let diff = reference
                    .iter()
                    .zip(&outs)
                    .enumerate()
                    .find_map(|(i, (r, a))| compare(r, a).map(|d| (i, d)));
                if let Some((i, d)) = diff
                    .or_else(|| (outs.len() != reference.len()).then(|| (0, "output count".into())))
                {
                    return Verdict::Found(Finding {
                        kind: FindingKind::Inconsistency,
                        level: (*name).into(),
                        signature: format!("inconsistency:{name}:{}", op_types()),
                        detail: format!("output {i}: {d}"),
                    });
                }
            }
        }
    }
    if non_finite {
        Verdict::Skipped(Skip::NonFinite)
    } else {
        Verdict::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Buffer;

    fn t(v: Vec<f32>) -> Tensor {
        Tensor {
            shape: vec![v.len()],
            data: Buffer::F32(v),
        }
    }

    #[test]
    fn tolerance_accepts_rounding_and_rejects_real_differences() {
        assert!(compare(&t(vec![1.0, 2.0]), &t(vec![1.0005, 2.0])).is_none());
        assert!(compare(&t(vec![1.0, 2.0]), &t(vec![1.1, 2.0])).is_some());
        assert!(compare(&t(vec![1.0]), &t(vec![1.0, 1.0])).is_some());
        let ints = Tensor {
            shape: vec![1],
            data: Buffer::I32(vec![3]),
        };
        let other = Tensor {
            shape: vec![1],
            data: Buffer::I32(vec![4]),
        };
        assert!(compare(&ints, &other).is_some());
    }

    #[test]
    fn messages_normalize_numbers() {
        assert_eq!(
            normalize_message("node n12_Add at 0x7f3a"),
            normalize_message("node n3_Add at 0x10")
        );
    }
}
