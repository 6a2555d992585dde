//! Seeded sampling of input and weight values in safe ranges, done while decoding (the value
//! search in [`crate::values`] starts from these).

use crate::ir::{Buffer, DType, Tensor, TensorType};
use crate::ops::ValueDomain;
use rand::Rng;

/// Samples a tensor of type `ty` in the safe range of its dtype and `domain`:
/// floats in [-2, 2] (positive: [0.25, 2]), signed integers in [-8, 8] (positive: [1, 8]),
/// unsigned integers in [0, 7] (positive: [1, 7]), booleans fair.
pub fn sample_tensor(ty: &TensorType, domain: ValueDomain, rng: &mut impl Rng) -> Tensor {
    let positive = domain == ValueDomain::Positive;
    let n = ty.numel();
    let values: Vec<f64> = match ty.dtype {
        DType::Bool => (0..n)
            .map(|_| f64::from(u8::from(rng.random::<bool>())))
            .collect(),
        d if d.is_float() => {
            let lo = if positive { 0.25 } else { -2.0 };
            // A grid of 1/64 keeps values exact in f16 as well as f32 and f64.
            (0..n)
                .map(|_| (rng.random_range(lo..=2.0f64) * 64.0).round() / 64.0)
                .collect()
        }
        d => {
            let lo = if positive {
                1
            } else if d.is_unsigned() {
                0
            } else {
                -8
            };
            let hi = if d.is_unsigned() { 7 } else { 8 };
            (0..n).map(|_| rng.random_range(lo..=hi) as f64).collect()
        }
    };
    Tensor {
        shape: ty.shape.clone(),
        data: Buffer::from_f64(ty.dtype, &values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn positive_domain_is_positive_and_sampling_is_seeded() {
        let ty = TensorType::new(DType::I32, vec![64]);
        let mut a = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut b = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let x = sample_tensor(&ty, ValueDomain::Positive, &mut a);
        assert!(x.data.to_f64_vec().iter().all(|v| *v >= 1.0));
        assert_eq!(x, sample_tensor(&ty, ValueDomain::Positive, &mut b));
    }
}
