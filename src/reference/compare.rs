//! Output comparison with per-dtype tolerances, and message normalization for signatures.

use crate::ir::{DType, Tensor};

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
    compare_within(reference, actual, tolerance(reference.data.dtype()))
}

/// [`compare`] with an explicit `(atol, rtol)`.
pub fn compare_within(
    reference: &Tensor,
    actual: &Tensor,
    (atol, rtol): (f64, f64),
) -> Option<String> {
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

/// How close `actual` came to differing from `reference` under the per-dtype tolerances: the
/// largest `|actual − reference| / (atol + rtol·|reference|)` over finite element pairs (1: on
/// the edge); `None` for integer outputs (their tolerance is 0) or another shape or dtype.
pub fn closeness(reference: &Tensor, actual: &Tensor) -> Option<f64> {
    let dtype = reference.data.dtype();
    let comparable =
        dtype.is_float() && reference.shape == actual.shape && actual.data.dtype() == dtype;
    if !comparable {
        return None;
    }
    let (atol, rtol) = tolerance(dtype);
    let (r, a) = (reference.data.to_f64_vec(), actual.data.to_f64_vec());
    r.iter()
        .zip(&a)
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|(x, y)| ((x - y).abs(), atol + rtol * x.abs()))
        .filter(|(_, allowed)| *allowed > 0.0)
        .map(|(err, allowed)| err / allowed)
        .reduce(f64::max)
}

/// `message` with hex addresses, numbers and directories removed: `0x7ffd…` → `ADDR`,
/// tokens holding digits → `N`, `/a/b/file.cc` → `file.cc`.
pub fn normalize_text(message: &str) -> String {
    let words: Vec<String> = message
        .split_whitespace()
        .map(|w| {
            let w = w.rsplit('/').next().unwrap_or(w);
            if w.starts_with("0x") && w.len() > 2 {
                "ADDR".to_string()
            } else {
                normalize_message(w)
            }
        })
        .collect();
    let joined = words.join(" ");
    joined.chars().take(200).collect()
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
