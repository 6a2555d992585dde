//! Integer helpers with ONNX semantics on the carriers of [`super::carrier`]: an order-preserving
//! view of the `u64` carrier, unsigned division, and division guards against the one signed
//! quotient that traps on x86 (`MIN / -1`).

use crate::ir::DType;
use tch::{Kind, TchError, Tensor};

/// A signed tensor whose order is the order of the values of `t` as `dtype`: the `u64`
/// carrier with its sign bit flipped, anything else unchanged. Its own inverse.
pub fn ordered(t: &Tensor, dtype: DType) -> Result<Tensor, TchError> {
    Ok(if dtype == DType::U64 {
        t.f_bitwise_xor(i64::MIN)?
    } else {
        t.shallow_clone()
    })
}

/// The value range of an integer (or bool) dtype, as `f64`; floats get the `i64` range.
pub fn int_range(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::U8 => (0.0, u8::MAX as f64),
        DType::U16 => (0.0, u16::MAX as f64),
        DType::U32 => (0.0, u32::MAX as f64),
        DType::U64 => (0.0, u64::MAX as f64),
        DType::Bool => (0.0, 1.0),
        _ => (i64::MIN as f64, i64::MAX as f64),
    }
}

/// `a >= b` as unsigned 64-bit numbers (both `u64` carriers).
fn ge_unsigned(a: &Tensor, b: &Tensor) -> Result<Tensor, TchError> {
    ordered(a, DType::U64)?.f_ge_tensor(&ordered(b, DType::U64)?)
}

/// `u64` division and remainder on carriers (bit patterns in `Int64`), `d != 0`.
///
/// For `d` below 2^63: halve `n` with a logical shift (now non-negative), divide, double, and
/// correct by one: `r = n - q d` is then below `2 d`. For `d` from 2^63 up the quotient is 0 or
/// 1.
fn u64_divrem(n: &Tensor, d: &Tensor) -> Result<(Tensor, Tensor), TchError> {
    let half = n
        .f_bitwise_right_shift_tensor_scalar(1)?
        .f_bitwise_and(i64::MAX)?;
    let q1 = half
        .f_div_tensor_mode(d, "trunc")?
        .f_bitwise_left_shift_tensor_scalar(1)?;
    let r1 = n.f_sub(&q1.f_mul(d)?)?;
    let q_small = q1.f_add(&ge_unsigned(&r1, d)?.f_to_kind(Kind::Int64)?)?;
    let q_big = ge_unsigned(n, d)?.f_to_kind(Kind::Int64)?;
    let q = q_big.f_where_self(&d.f_lt(0)?, &q_small)?;
    let r = n.f_sub(&q.f_mul(d)?)?;
    Ok((q, r))
}

/// `b` with its `-1` entries replaced by `1`, and the mask of those entries (signed types).
fn without_minus_one(b: &Tensor) -> Result<(Tensor, Tensor), TchError> {
    let minus_one = b.f_eq(-1)?;
    Ok((b.f_masked_fill(&minus_one, 1)?, minus_one))
}

/// ONNX integer `Div`: the quotient truncated toward zero, wrapping (`MIN / -1 == MIN`).
pub fn int_div(a: &Tensor, b: &Tensor, dtype: DType) -> Result<Tensor, TchError> {
    if dtype == DType::U64 {
        return Ok(u64_divrem(a, b)?.0);
    }
    if dtype.is_unsigned() {
        return a.f_div_tensor_mode(b, "trunc");
    }
    let (safe, minus_one) = without_minus_one(b)?;
    let q = a.f_div_tensor_mode(&safe, "trunc")?;
    a.f_neg()?.f_where_self(&minus_one, &q)
}

/// ONNX integer `Mod`: with `fmod` the remainder takes the sign of the dividend (C `%`),
/// without it the sign of the divisor (Python `%`).
pub fn int_rem(a: &Tensor, b: &Tensor, dtype: DType, fmod: bool) -> Result<Tensor, TchError> {
    if dtype == DType::U64 {
        return Ok(u64_divrem(a, b)?.1);
    }
    if dtype.is_unsigned() {
        return a.f_fmod_tensor(b);
    }
    let (safe, minus_one) = without_minus_one(b)?;
    let r = if fmod {
        a.f_fmod_tensor(&safe)?
    } else {
        a.f_remainder_tensor(&safe)?
    };
    r.f_masked_fill(&minus_one, 0)
}

/// The values of an integer or bool tensor of `dtype` as `f64` (the `u64` carrier's negative
/// bit patterns read as values from 2^63 up).
pub fn to_double(t: &Tensor, dtype: DType) -> Result<Tensor, TchError> {
    let d = t.f_to_kind(Kind::Double)?;
    if dtype == DType::U64 {
        let negative = t.f_lt(0)?;
        return d.f_add(
            &negative
                .f_to_kind(Kind::Double)?
                .f_mul_scalar(18446744073709551616.0)?,
        );
    }
    Ok(d)
}

/// The inverse of [`to_double`]: integral `f64` values of `dtype` (within its range) as the
/// `f64` reading of its carrier, ready for a plain kind conversion. Only `u64` changes: values
/// from 2^63 up become their negative bit patterns (and 2^64, where `u64::MAX` rounds to in
/// `f64`, the largest `f64` below it).
pub fn carrier_reading(t: &Tensor, dtype: DType) -> Result<Tensor, TchError> {
    if dtype != DType::U64 {
        return Ok(t.shallow_clone());
    }
    let t = t.f_clamp_max(18446744073709549568.0)?;
    let high = t.f_ge(9223372036854775808.0)?;
    t.f_sub(
        &high
            .f_to_kind(Kind::Double)?
            .f_mul_scalar(18446744073709551616.0)?,
    )
}

/// Logical right shift of the `u64` carrier by `s` (an `Int64` tensor of shift amounts).
pub fn u64_shift_right(a: &Tensor, s: &Tensor) -> Result<Tensor, TchError> {
    // Arithmetic shift, then clear the copies of the sign bit: keep the low 64 - s bits.
    let shifted = a.f_bitwise_right_shift(s)?;
    // Rank-0 constants, so that scalar operands keep a scalar result.
    let scalar = |v: i64| Tensor::f_from_slice(&[v])?.f_reshape([0i64; 0]);
    let keep = scalar(-1)?
        .f_bitwise_left_shift(&scalar(64)?.f_sub(s)?)?
        .f_bitwise_not()?;
    let positive_shift = s.f_gt(0)?;
    let masked = shifted.f_bitwise_and_tensor(&keep)?;
    masked.f_where_self(&positive_shift, &shifted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i64s(v: &[i64]) -> Tensor {
        Tensor::from_slice(v)
    }

    fn vals(t: &Tensor) -> Vec<i64> {
        crate::ops::eval::int_values(t).unwrap()
    }

    #[test]
    fn u64_values_round_trip_through_double() {
        let carrier = i64s(&[0, 5, -3, i64::MIN, -1]);
        let values = to_double(&carrier, DType::U64).unwrap();
        assert_eq!(values.double_value(&[2]), 18446744073709551613.0);
        let back = carrier_reading(&values, DType::U64).unwrap();
        assert_eq!(
            vals(&back.to_kind(Kind::Int64)),
            [0, 5, -2048, i64::MIN, -2048]
        );
    }

    #[test]
    fn u64_shift_right_keeps_scalars_scalar() {
        let a = Tensor::from_slice(&[-8i64]).reshape([0i64; 0]);
        let s = Tensor::from_slice(&[1i64]).reshape([0i64; 0]);
        let r = u64_shift_right(&a, &s).unwrap();
        assert_eq!(
            r.size(),
            Vec::<i64>::new(),
            "found by localization: [] >> [] gave [1]"
        );
        assert_eq!(r.int64_value(&[]), (u64::MAX - 7) as i64 >> 1 & i64::MAX);
    }

    #[test]
    fn signed_division_truncates_and_survives_min_over_minus_one() {
        let a = i64s(&[7, -7, 7, -7, i64::MIN, 5]);
        let b = i64s(&[2, 2, -2, -2, -1, -1]);
        assert_eq!(
            vals(&int_div(&a, &b, DType::I64).unwrap()),
            vec![3, -3, -3, 3, i64::MIN, -5]
        );
        // Python sign (divisor) and C sign (dividend).
        assert_eq!(
            vals(&int_rem(&a, &b, DType::I64, false).unwrap()),
            vec![1, 1, -1, -1, 0, 0]
        );
        assert_eq!(
            vals(&int_rem(&a, &b, DType::I64, true).unwrap()),
            vec![1, -1, 1, -1, 0, 0]
        );
    }

    #[test]
    fn u64_division_and_order_on_bit_patterns() {
        let big = u64::MAX - 4; // 2^64 - 5
        let n: Vec<u64> = vec![big, big, 100, 1 << 63, 7, big];
        let d: Vec<u64> = vec![3, 1 << 63, 7, 1 << 63, u64::MAX, big];
        let nt = i64s(&n.iter().map(|v| *v as i64).collect::<Vec<_>>());
        let dt = i64s(&d.iter().map(|v| *v as i64).collect::<Vec<_>>());
        let q = vals(&int_div(&nt, &dt, DType::U64).unwrap());
        let r = vals(&int_rem(&nt, &dt, DType::U64, false).unwrap());
        for i in 0..n.len() {
            assert_eq!(q[i] as u64, n[i] / d[i], "q {i}");
            assert_eq!(r[i] as u64, n[i] % d[i], "r {i}");
        }
        let lt = ordered(&nt, DType::U64)
            .unwrap()
            .f_lt_tensor(&ordered(&dt, DType::U64).unwrap())
            .unwrap();
        let want: Vec<i64> = n.iter().zip(&d).map(|(a, b)| i64::from(a < b)).collect();
        assert_eq!(vals(&lt), want);
    }

    #[test]
    fn u64_values_widen_and_shift_logically() {
        let t = i64s(&[-1, 5]);
        let d = crate::ops::eval::float_values(&to_double(&t, DType::U64).unwrap()).unwrap();
        assert_eq!(d, vec![u64::MAX as f64, 5.0]);
        let s = u64_shift_right(&i64s(&[-1, -1, 8]), &i64s(&[0, 60, 1])).unwrap();
        assert_eq!(vals(&s), vec![-1, 15, 4]);
    }
}
