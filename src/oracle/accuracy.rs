//! The accuracy oracle of the torch targets, after PyTorch's own (`torch._dynamo.utils.same`
//! with an fp64 reference): a compiled output that differs from eager beyond its type's
//! tolerance is a bug only if it is farther from the exact result than eager is, and only
//! on a well-conditioned output. The exact result is the *widened* run (every float as
//! float64, every integer as int64); conditioning is checked by *perturbed* eager runs
//! (float parameters moved by a few ulps).
//! - Float outputs: a bug when `err(compiled, widened) > max(2·err(eager, widened), 1)`,
//!   errors in units of the type's tolerance.
//! - Integer and bool outputs: when eager itself differs from the widened run, the program
//!   overflowed or cast an out-of-range float (undefined behaviour): never a bug.
//! - Any output eager moves under perturbation (a rounding, comparison or index that sits
//!   on a jump) is fragile: never compared.

use crate::ir::{ScalarType, Tensor};

/// How far `got` is from `want`, in units of `scalar`'s tolerance (`(rtol, atol)` per
/// element): 0 when equal, above 1 when beyond tolerance, infinite when the shapes differ,
/// a NaN or infinity appears on one side only, or an integer differs.
pub fn error(got: &Tensor, want: &Tensor, scalar: ScalarType) -> f64 {
    if got.shape != want.shape {
        return f64::INFINITY;
    }
    let (rtol, atol) = scalar.tolerance();
    let (g, w) = (got.data.to_f64_vec(), want.data.to_f64_vec());
    g.iter().zip(&w).fold(0.0, |worst: f64, (a, b)| {
        let e = if a == b || (a.is_nan() && b.is_nan()) {
            0.0
        } else if !a.is_finite() || !b.is_finite() || !scalar.is_float() {
            f64::INFINITY
        } else {
            (a - b).abs() / (atol + rtol * b.abs())
        };
        worst.max(e)
    })
}

/// The runs of one output the oracle weighs.
pub struct Evidence<'a> {
    /// The type whose tolerance judges the output: its torch type in eager, or a looser
    /// float type its value passed through.
    pub scalar: ScalarType,
    /// Eager.
    pub eager: &'a Tensor,
    /// The compiled run.
    pub compiled: &'a Tensor,
    /// The widened eager run.
    pub widened: &'a Tensor,
    /// Perturbed eager runs.
    pub perturbed: &'a [&'a Tensor],
}

/// The judgement of one output that differs from eager.
#[derive(Clone, Debug, PartialEq)]
pub enum Judgement {
    /// The compiled output is wrong: the detail says by how much.
    Wrong(String),
    /// Eager moves under a perturbation of a few ulps: not compared.
    Fragile,
    /// Eager itself is not the exact result (overflow, out-of-range cast): undefined.
    Undefined,
    /// The compiled output is at least as accurate as eager: rounding.
    Rounding,
}

/// Judges an output whose compiled value differs from eager beyond tolerance.
pub fn judge(e: &Evidence) -> Judgement {
    if e.compiled.shape != e.eager.shape {
        return Judgement::Wrong(format!(
            "shape {:?} where eager has {:?}",
            e.compiled.shape, e.eager.shape
        ));
    }
    if e.perturbed
        .iter()
        .any(|p| error(p, e.eager, e.scalar) > 1.0)
    {
        return Judgement::Fragile;
    }
    let eager_err = error(e.eager, e.widened, e.scalar);
    let compiled_err = error(e.compiled, e.widened, e.scalar);
    if !e.scalar.is_float() {
        return if eager_err > 0.0 {
            Judgement::Undefined
        } else {
            Judgement::Wrong(format!(
                "{} of {} elements differ from eager (which the widened run confirms)",
                differing(e.compiled, e.eager),
                e.eager.data.len()
            ))
        };
    }
    if compiled_err > (2.0 * eager_err).max(1.0) {
        Judgement::Wrong(format!(
            "{:.3e}× the {} tolerance from the float64 result (eager: {:.3e}×)",
            compiled_err, e.scalar, eager_err
        ))
    } else {
        Judgement::Rounding
    }
}

fn differing(a: &Tensor, b: &Tensor) -> usize {
    let (a, b) = (a.data.to_f64_vec(), b.data.to_f64_vec());
    a.iter()
        .zip(&b)
        .filter(|(x, y)| x != y && !(x.is_nan() && y.is_nan()))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Buffer;

    fn f32s(v: &[f32]) -> Tensor {
        Tensor {
            shape: vec![v.len()],
            data: Buffer::F32(v.to_vec()),
        }
    }

    fn i64s(v: &[i64]) -> Tensor {
        Tensor {
            shape: vec![v.len()],
            data: Buffer::I64(v.to_vec()),
        }
    }

    #[test]
    fn a_compiled_result_farther_from_exact_than_eager_is_wrong() {
        let exact = f32s(&[1.0, 2.0]);
        let eager = f32s(&[1.0, 2.0]);
        let compiled = f32s(&[1.0, 2.5]);
        let e = Evidence {
            scalar: ScalarType::F32,
            eager: &eager,
            compiled: &compiled,
            widened: &exact,
            perturbed: &[&eager],
        };
        assert!(matches!(judge(&e), Judgement::Wrong(_)));
    }

    #[test]
    fn a_compiled_result_closer_to_exact_than_eager_is_rounding() {
        let exact = f32s(&[1.0]);
        let eager = f32s(&[1.01]);
        let compiled = f32s(&[1.0001]);
        let e = Evidence {
            scalar: ScalarType::BF16,
            eager: &eager,
            compiled: &compiled,
            widened: &exact,
            perturbed: &[],
        };
        assert_eq!(judge(&e), Judgement::Rounding);
    }

    #[test]
    fn integer_overflow_in_eager_is_undefined_and_jumps_are_fragile() {
        let eager = i64s(&[-128]);
        let wide = i64s(&[128]);
        let compiled = i64s(&[127]);
        let e = Evidence {
            scalar: ScalarType::I8,
            eager: &eager,
            compiled: &compiled,
            widened: &wide,
            perturbed: &[],
        };
        assert_eq!(judge(&e), Judgement::Undefined);
        let moved = i64s(&[127]);
        let e = Evidence {
            perturbed: &[&moved],
            widened: &eager,
            ..e
        };
        assert_eq!(judge(&e), Judgement::Fragile);
    }

    #[test]
    fn errors_are_in_units_of_tolerance() {
        let a = f32s(&[1.0, f32::NAN]);
        assert_eq!(error(&a, &a, ScalarType::F32), 0.0);
        let b = f32s(&[1.0 + 2e-4, f32::NAN]);
        let e = error(&b, &a, ScalarType::F32);
        assert!(e > 1.0 && e < 3.0, "{e}");
        assert_eq!(
            error(&i64s(&[1]), &i64s(&[2]), ScalarType::I64),
            f64::INFINITY
        );
    }
}
