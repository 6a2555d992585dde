//! Broadcasting element-wise ops of two (or, for `Max`/`Min`/`Sum`/`Mean`, any number of)
//! inputs: arithmetic, comparison, logical and bitwise. libtorch broadcasts like numpy, which
//! is ONNX's multidirectional broadcasting.

use super::{numeric, Args, RefError};
use crate::ir::DType;
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Mod",
    "Pow",
    "Max",
    "Min",
    "Mean",
    "Sum",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "And",
    "Or",
    "Xor",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitShift",
];

/// Folds the variadic `Max`/`Min`/`Sum`/`Mean` over `inputs`.
fn fold(
    a: &Args,
    inputs: &[Tensor],
    f: impl Fn(&Tensor, &Tensor) -> Result<Tensor, tch::TchError>,
) -> Result<Tensor, RefError> {
    let (first, rest) = inputs.split_first().ok_or_else(|| a.fail("no inputs"))?;
    rest.iter()
        .try_fold(first.shallow_clone(), |acc, x| Ok(f(&acc, x)?))
}

/// `Pow(x, y)`: the result has `x`'s type. Integer bases are computed in `f64` and truncated,
/// as ONNX Runtime's `std::pow` on doubles does (negative exponents included).
fn pow(a: &Args, x: &Tensor, y: &Tensor) -> Result<Tensor, RefError> {
    if x.is_floating_point() {
        let y = if y.kind() == x.kind() {
            y.shallow_clone()
        } else {
            numeric::to_double(y, a.dtype(1))?.f_to_kind(x.kind())?
        };
        return Ok(x.f_pow(&y)?);
    }
    let xd = numeric::to_double(x, a.dtype(0))?;
    let yd = numeric::to_double(y, a.dtype(1))?;
    Ok(xd.f_pow(&yd)?.f_trunc()?.f_to_kind(Kind::Int64)?)
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let dtype = a.dtype(0);
    let order = |t: &Tensor| numeric::ordered(t, dtype);
    let y = match a.op {
        "Max" | "Min" | "Sum" | "Mean" => {
            // Max and Min compare in the order-preserving view of the dtype.
            let minmax = matches!(a.op, "Max" | "Min");
            let inputs: Vec<Tensor> = a
                .present()
                .into_iter()
                .map(|t| {
                    if minmax {
                        order(t)
                    } else {
                        Ok(t.shallow_clone())
                    }
                })
                .collect::<Result<_, _>>()?;
            match a.op {
                "Max" => order(&fold(a, &inputs, |p, q| p.f_maximum(q))?)?,
                "Min" => order(&fold(a, &inputs, |p, q| p.f_minimum(q))?)?,
                "Sum" => fold(a, &inputs, |p, q| p.f_add(q))?,
                _ => fold(a, &inputs, |p, q| p.f_add(q))?.f_div_scalar(inputs.len() as f64)?,
            }
        }
        op => {
            let (x, y) = (a.x(0)?, a.x(1)?);
            match op {
                "Add" => x.f_add(y)?,
                "Sub" => x.f_sub(y)?,
                "Mul" => x.f_mul(y)?,
                "Div" if x.is_floating_point() => x.f_div(y)?,
                "Div" => numeric::int_div(x, y, dtype)?,
                "Mod" => {
                    let fmod = a.int("fmod", 0) != 0;
                    match (x.is_floating_point(), fmod) {
                        (true, true) => x.f_fmod_tensor(y)?,
                        (true, false) => x.f_remainder_tensor(y)?,
                        (false, _) => numeric::int_rem(x, y, dtype, fmod)?,
                    }
                }
                "Pow" => pow(a, x, y)?,
                "Equal" => x.f_eq_tensor(y)?,
                "Less" => order(x)?.f_lt_tensor(&order(y)?)?,
                "Greater" => order(x)?.f_gt_tensor(&order(y)?)?,
                "LessOrEqual" => order(x)?.f_le_tensor(&order(y)?)?,
                "GreaterOrEqual" => order(x)?.f_ge_tensor(&order(y)?)?,
                "And" => x.f_logical_and(y)?,
                "Or" => x.f_logical_or(y)?,
                "Xor" => x.f_logical_xor(y)?,
                "BitwiseAnd" => x.f_bitwise_and_tensor(y)?,
                "BitwiseOr" => x.f_bitwise_or_tensor(y)?,
                "BitwiseXor" => x.f_bitwise_xor_tensor(y)?,
                "BitShift" => match a.string("direction", "").as_str() {
                    "LEFT" => x.f_bitwise_left_shift(y)?,
                    "RIGHT" if dtype == DType::U64 => numeric::u64_shift_right(x, y)?,
                    "RIGHT" => x.f_bitwise_right_shift(y)?,
                    d => return Err(a.fail(format!("direction {d:?}"))),
                },
                other => return Err(RefError::Unsupported(other.to_string())),
            }
        }
    };
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;
    use tch::{Kind, Tensor};

    fn ints(v: &[i64]) -> Tensor {
        i64s(v, &[v.len() as i64])
    }

    #[test]
    fn integer_div_truncates_and_mod_follows_fmod() {
        let a = ints(&[7, -7, 7, -7]);
        let b = ints(&[2, 2, -2, -2]);
        let div = run1(
            "Div",
            &[],
            vec![Some(a.shallow_clone()), Some(b.shallow_clone())],
            DType::I64,
        );
        assert_eq!(values(&div), vec![3.0, -3.0, -3.0, 3.0]);
        let py = run1(
            "Mod",
            &[("fmod", AttrValue::Int(0))],
            vec![Some(a.shallow_clone()), Some(b.shallow_clone())],
            DType::I64,
        );
        assert_eq!(values(&py), vec![1.0, 1.0, -1.0, -1.0]);
        let c = run1(
            "Mod",
            &[("fmod", AttrValue::Int(1))],
            vec![Some(a), Some(b)],
            DType::I64,
        );
        assert_eq!(values(&c), vec![1.0, -1.0, 1.0, -1.0]);
        let fa = f32s(&[5.5, -5.5], &[2]);
        let fb = f32s(&[2.0, 2.0], &[2]);
        let f = run1(
            "Mod",
            &[("fmod", AttrValue::Int(1))],
            vec![Some(fa), Some(fb)],
            DType::F32,
        );
        assert_eq!(values(&f), vec![1.5, -1.5]);
    }

    #[test]
    fn broadcasting_is_multidirectional() {
        let a = f32s(&[1.0, 2.0, 3.0], &[3, 1]);
        let b = f32s(&[10.0, 20.0], &[1, 2]);
        let y = run1("Add", &[], vec![Some(a), Some(b)], DType::F32);
        assert_eq!(y.size(), vec![3, 2]);
        assert_eq!(values(&y), vec![11.0, 21.0, 12.0, 22.0, 13.0, 23.0]);
    }

    #[test]
    fn unsigned_arithmetic_wraps_and_compares_unsigned() {
        // u32 carried in i64: 1 - 2 wraps to 2^32 - 1.
        let d = run1(
            "Sub",
            &[],
            vec![Some(ints(&[1])), Some(ints(&[2]))],
            DType::U32,
        );
        assert_eq!(values(&d), vec![4294967295.0]);
        // u16 carried in i32: 300 * 300 = 90000 wraps to 24464.
        let m = Tensor::from_slice(&[300i32]);
        let p = run1(
            "Mul",
            &[],
            vec![Some(m.shallow_clone()), Some(m)],
            DType::U16,
        );
        assert_eq!(values(&p), vec![24464.0]);
        // u64 bit patterns: 2^64 - 1 > 1.
        let outs = super::super::apply_typed(
            "Greater",
            &[],
            &[Some(ints(&[-1])), Some(ints(&[1]))],
            &[Some(DType::U64), Some(DType::U64)],
            &[DType::Bool],
        )
        .unwrap();
        assert_eq!(outs[0].kind(), Kind::Bool);
        assert_eq!(values(&outs[0]), vec![1.0]);
        let u8s = Tensor::from_slice(&[200u8, 3]);
        let shifted = run1(
            "BitShift",
            &[("direction", AttrValue::Str("LEFT".into()))],
            vec![Some(u8s), Some(Tensor::from_slice(&[1u8, 2]))],
            DType::U8,
        );
        assert_eq!(values(&shifted), vec![144.0, 12.0]);
    }

    #[test]
    fn variadic_ops_fold_every_input() {
        let xs: Vec<Option<Tensor>> = [1.0f32, 4.0, 2.5]
            .iter()
            .map(|v| Some(f32s(&[*v], &[1])))
            .collect();
        assert_eq!(values(&run1("Max", &[], dup(&xs), DType::F32)), vec![4.0]);
        assert_eq!(values(&run1("Sum", &[], dup(&xs), DType::F32)), vec![7.5]);
        assert_eq!(values(&run1("Mean", &[], xs, DType::F32)), vec![2.5]);
    }
}
