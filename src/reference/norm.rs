//! Normalizations: BatchNormalization (inference mode), InstanceNormalization and
//! LayerNormalization (with its optional Mean and InvStdDev outputs). Variances are biased
//! (divided by the count), as ONNX specifies.

use super::{norm_axis, Args, RefError};
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &[
    "BatchNormalization",
    "InstanceNormalization",
    "LayerNormalization",
];

/// A per-channel `[C]` parameter shaped to broadcast against an `N, C, spatial...` tensor.
fn per_channel(p: &Tensor, rank: usize) -> Result<Tensor, RefError> {
    let mut shape = vec![-1i64];
    shape.extend(std::iter::repeat_n(1, rank.saturating_sub(2)));
    Ok(p.f_reshape(shape.as_slice())?)
}

/// The mean and biased variance of `x` over `dims`, keeping them.
fn moments(x: &Tensor, dims: &[i64]) -> Result<(Tensor, Tensor), RefError> {
    let mean = x.f_mean_dim(dims, true, None::<Kind>)?;
    let centered = x.f_sub(&mean)?;
    let var = centered
        .f_mul(&centered)?
        .f_mean_dim(dims, true, None::<Kind>)?;
    Ok((mean, var))
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let rank = x.dim();
    let eps = a.float("epsilon", 1e-5);
    match a.op {
        "BatchNormalization" => {
            if a.int("training_mode", 0) != 0 || a.out.len() > 1 {
                return Err(a.unsupported("training mode"));
            }
            let [scale, bias, mean, var] =
                [1, 2, 3, 4].map(|i| a.x(i).and_then(|t| per_channel(t, rank)));
            let inv = var?.f_add_scalar(eps)?.f_rsqrt()?;
            let y = x
                .f_sub(&mean?)?
                .f_mul(&inv)?
                .f_mul(&scale?)?
                .f_add(&bias?)?;
            Ok(vec![y])
        }
        "InstanceNormalization" => {
            let dims: Vec<i64> = (2..rank as i64).collect();
            let (mean, var) = moments(x, &dims)?;
            let y = x
                .f_sub(&mean)?
                .f_mul(&var.f_add_scalar(eps)?.f_rsqrt()?)?
                .f_mul(&per_channel(a.x(1)?, rank)?)?
                .f_add(&per_channel(a.x(2)?, rank)?)?;
            Ok(vec![y])
        }
        "LayerNormalization" => {
            let axis = norm_axis(a.int("axis", -1), rank)?;
            let dims: Vec<i64> = (axis as i64..rank as i64).collect();
            let (mean, var) = moments(x, &dims)?;
            let inv = var.f_add_scalar(eps)?.f_rsqrt()?;
            let mut y = x.f_sub(&mean)?.f_mul(&inv)?.f_mul(a.x(1)?)?;
            if let Some(b) = a.opt(2) {
                y = y.f_add(b)?;
            }
            Ok(vec![y, mean, inv])
        }
        other => Err(RefError::Unsupported(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;

    #[test]
    fn batch_norm_uses_running_statistics_and_epsilon() {
        let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 2, 2]);
        let p = |v: [f32; 2]| Some(f32s(&v, &[2]));
        let y = run1(
            "BatchNormalization",
            &[("epsilon", AttrValue::Float(0.0))],
            vec![
                Some(x),
                p([2.0, 1.0]),
                p([0.0, 1.0]),
                p([1.0, 3.0]),
                p([4.0, 1.0]),
            ],
            DType::F32,
        );
        // Channel 0: 2 * (x - 1) / 2; channel 1: (x - 3) / 1 + 1.
        assert_eq!(values(&y), vec![0.0, 1.0, 1.0, 2.0]);
    }

    #[test]
    fn layer_norm_normalizes_trailing_axes() {
        let x = f32s(&[1.0, 3.0, 10.0, 30.0], &[2, 2]);
        let y = run1(
            "LayerNormalization",
            &[("epsilon", AttrValue::Float(0.0))],
            vec![
                Some(x),
                Some(f32s(&[1.0, 2.0], &[2])),
                Some(f32s(&[0.5, 0.0], &[2])),
            ],
            DType::F32,
        );
        assert_eq!(values(&y), vec![-0.5, 2.0, -0.5, 2.0]);
    }

    #[test]
    fn instance_norm_is_per_sample_and_channel() {
        let x = f32s(&[1.0, 3.0, 5.0, 5.0], &[1, 2, 2]);
        let eps = 0.25f32;
        let y = run1(
            "InstanceNormalization",
            &[("epsilon", AttrValue::Float(eps))],
            vec![
                Some(x),
                Some(f32s(&[1.0, 1.0], &[2])),
                Some(f32s(&[0.0, 7.0], &[2])),
            ],
            DType::F32,
        );
        let k = 1.0 / (1.0f64 + 0.25).sqrt();
        let got = values(&y);
        for (g, w) in got.iter().zip([-k, k, 7.0, 7.0]) {
            assert!((g - w).abs() < 1e-6, "{got:?}");
        }
    }
}
