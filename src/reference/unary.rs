//! Element-wise unary math and activations.

use super::{Args, RefError};
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &[
    "Abs",
    "Neg",
    "Sign",
    "Identity",
    "Not",
    "Exp",
    "Log",
    "Sqrt",
    "Reciprocal",
    "Sin",
    "Cos",
    "Tan",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Asin",
    "Acos",
    "Acosh",
    "Atanh",
    "Tanh",
    "Erf",
    "Floor",
    "Ceil",
    "Round",
    "Sigmoid",
    "Relu",
    "LeakyRelu",
    "Elu",
    "Celu",
    "Selu",
    "ThresholdedRelu",
    "HardSigmoid",
    "HardSwish",
    "Softplus",
    "Softsign",
    "Mish",
    "IsNaN",
    "IsInf",
];

/// `alpha * (exp(min(x, 0) / scale) - 1)` for `x <= 0`, else `x`: the ELU family without
/// overflowing `exp` on the branch `where` discards (which would poison gradients).
fn elu(x: &Tensor, alpha: f64, input_scale: f64) -> Result<Tensor, RefError> {
    let negative = x
        .f_clamp_max(0.0)?
        .f_mul_scalar(input_scale)?
        .f_expm1()?
        .f_mul_scalar(alpha)?;
    Ok(x.f_where_self(&x.f_gt(0.0)?, &negative)?)
}

/// `log(1 + exp(x))` to full precision, as `max(x, 0) + log1p(exp(-|x|))`. libtorch's
/// `softplus` returns `x` itself above a threshold of 20, which is off by `log1p(exp(-x))`
/// (2e-12 at 27): invisible in float32, a wrong float64 result.
fn softplus(x: &Tensor) -> Result<Tensor, RefError> {
    Ok(x.f_clamp_min(0.0)?
        .f_add(&x.f_abs()?.f_neg()?.f_exp()?.f_log1p()?)?)
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let dtype = a.dtype(0);
    let y = match a.op {
        "Abs" if dtype.is_unsigned() => x.shallow_clone(),
        "Abs" => x.f_abs()?,
        "Neg" => x.f_neg()?,
        "Sign" if dtype.is_unsigned() => x.f_ne(0)?.f_to_kind(x.kind())?,
        "Sign" => x.f_sign()?,
        "Identity" => x.shallow_clone(),
        "Not" => x.f_logical_not()?,
        "Exp" => x.f_exp()?,
        "Log" => x.f_log()?,
        "Sqrt" => x.f_sqrt()?,
        "Reciprocal" => x.f_reciprocal()?,
        "Sin" => x.f_sin()?,
        "Cos" => x.f_cos()?,
        "Tan" => x.f_tan()?,
        "Atan" => x.f_atan()?,
        "Sinh" => x.f_sinh()?,
        "Cosh" => x.f_cosh()?,
        "Asinh" => x.f_asinh()?,
        "Asin" => x.f_asin()?,
        "Acos" => x.f_acos()?,
        "Acosh" => x.f_acosh()?,
        "Atanh" => x.f_atanh()?,
        "Tanh" => x.f_tanh()?,
        "Erf" => x.f_erf()?,
        "Floor" => x.f_floor()?,
        "Ceil" => x.f_ceil()?,
        // libtorch rounds half to even, as ONNX does.
        "Round" => x.f_round()?,
        "Sigmoid" => x.f_sigmoid()?,
        "Relu" if x.is_floating_point() => x.f_relu()?,
        "Relu" => x.f_clamp_min(0)?,
        "LeakyRelu" => {
            let alpha = a.float("alpha", 0.01);
            x.f_where_self(&x.f_ge(0.0)?, &x.f_mul_scalar(alpha)?)?
        }
        "Elu" => elu(x, a.float("alpha", 1.0), 1.0)?,
        "Celu" => {
            let alpha = a.float("alpha", 1.0);
            elu(x, alpha, 1.0 / alpha)?
        }
        "Selu" => {
            let alpha = a.float("alpha", 1.673_263_2);
            let gamma = a.float("gamma", 1.050_701);
            elu(x, alpha, 1.0)?.f_mul_scalar(gamma)?
        }
        "ThresholdedRelu" => {
            let alpha = a.float("alpha", 1.0);
            x.f_where_scalarother(&x.f_gt(alpha)?, 0.0)?
        }
        "HardSigmoid" => {
            let (alpha, beta) = (a.float("alpha", 0.2), a.float("beta", 0.5));
            x.f_mul_scalar(alpha)?
                .f_add_scalar(beta)?
                .f_clamp(0.0, 1.0)?
        }
        "HardSwish" => x.f_mul(
            &x.f_mul_scalar(1.0 / 6.0)?
                .f_add_scalar(0.5)?
                .f_clamp(0.0, 1.0)?,
        )?,
        "Softplus" => softplus(x)?,
        "Softsign" => x.f_div(&x.f_abs()?.f_add_scalar(1.0)?)?,
        "Mish" => x.f_mul(&softplus(x)?.f_tanh()?)?,
        "IsNaN" => x.f_isnan()?,
        "IsInf" => {
            let pos = a.int("detect_positive", 1) != 0;
            let neg = a.int("detect_negative", 1) != 0;
            let inf = x.f_isinf()?;
            match (pos, neg) {
                (true, true) => inf,
                (true, false) => inf.f_logical_and(&x.f_gt(0.0)?)?,
                (false, true) => inf.f_logical_and(&x.f_lt(0.0)?)?,
                (false, false) => inf.f_zeros_like()?,
            }
        }
        other => return Err(RefError::Unsupported(other.to_string())),
    };
    // Integer results (Abs, Neg, Sign, Relu) keep the input's carrier.
    let y = if dtype.is_int() && y.kind() != x.kind() && y.kind() != Kind::Bool {
        y.f_to_kind(x.kind())?
    } else {
        y
    };
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;

    #[test]
    fn round_is_half_to_even() {
        let x = f32s(&[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6], &[8]);
        let y = run1("Round", &[], vec![Some(x)], DType::F32);
        assert_eq!(values(&y), vec![0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -3.0]);
    }

    #[test]
    fn activations_match_their_onnx_formulas() {
        let x = f32s(&[-2.0, 0.0, 1.0], &[3]);
        let leaky = run1(
            "LeakyRelu",
            &[("alpha", AttrValue::Float(0.5))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&leaky), vec![-1.0, 0.0, 1.0]);
        let hs = run1(
            "HardSigmoid",
            &[
                ("alpha", AttrValue::Float(0.25)),
                ("beta", AttrValue::Float(0.5)),
            ],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&hs), vec![0.0, 0.5, 0.75]);
        let thr = run1(
            "ThresholdedRelu",
            &[("alpha", AttrValue::Float(1.0))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&thr), vec![0.0, 0.0, 0.0]);
        let celu = run1(
            "Celu",
            &[("alpha", AttrValue::Float(2.0))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        let want = 2.0 * ((-1.0f64).exp() - 1.0);
        assert!((values(&celu)[0] - want).abs() < 1e-6);
    }

    #[test]
    fn unsigned_abs_and_sign_read_u64_bit_patterns_as_unsigned() {
        let x = i64s(&[-1, 0, 3], &[3]);
        assert_eq!(
            values(&run1("Abs", &[], vec![Some(x.shallow_clone())], DType::U64))[0],
            -1.0
        );
        assert_eq!(
            values(&run1("Sign", &[], vec![Some(x)], DType::U64)),
            vec![1.0, 0.0, 1.0]
        );
    }
}
