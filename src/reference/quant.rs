//! QuantizeLinear and DequantizeLinear, per tensor (opset 19): `y = saturate(round_half_even(x
//! / scale) + zero_point)` and `y = (x - zero_point) * scale`.

use super::{Args, RefError};
use crate::ir::DType;
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &["QuantizeLinear", "DequantizeLinear"];

/// The representable range of a quantized dtype.
fn range(dtype: DType) -> Result<(f64, f64), RefError> {
    match dtype {
        DType::U8 => Ok((0.0, 255.0)),
        DType::I8 => Ok((-128.0, 127.0)),
        other => Err(RefError::Unsupported(format!(
            "quantized type {}",
            other.name()
        ))),
    }
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let scale = a.x(1)?.f_to_kind(Kind::Float)?;
    let y = match a.op {
        "QuantizeLinear" => {
            let quantized = a.out0();
            let (lo, hi) = range(quantized)?;
            let zero_point = match a.opt(2) {
                Some(z) => z.f_to_kind(Kind::Float)?,
                None => Tensor::f_zeros([], (Kind::Float, tch::Device::Cpu))?,
            };
            // torch's round is half to even, as ONNX asks.
            (a.x(0)?.f_div(&scale)?.f_round()? + zero_point)
                .f_clamp(lo, hi)?
                .f_to_kind(super::convert::carrier(quantized))?
        }
        "DequantizeLinear" => {
            range(a.dtype(0))?;
            let x = a.x(0)?.f_to_kind(Kind::Float)?;
            let x = match a.opt(2) {
                Some(z) => x.f_sub(&z.f_to_kind(Kind::Float)?)?,
                None => x,
            };
            x.f_mul(&scale)?
        }
        other => return Err(RefError::Unsupported(other.to_string())),
    };
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use tch::Tensor;

    #[test]
    fn quantize_rounds_half_to_even_and_saturates() {
        let x = f32s(&[0.25, 0.75, -3.0, 1000.0, -1000.0], &[5]);
        let scale = Some(f32s(&[0.5], &[]));
        let zero_point = Some(Tensor::from_slice(&[10i8]).reshape([]));
        let y = run1(
            "QuantizeLinear",
            &[],
            vec![Some(x), scale, zero_point],
            DType::I8,
        );
        // 0.5 → 0 (even), 1.5 → 2, -6, then saturation.
        assert_eq!(values(&y), vec![10.0, 12.0, 4.0, 127.0, -128.0]);
    }

    #[test]
    fn dequantize_subtracts_the_zero_point_then_scales() {
        let x = Tensor::from_slice(&[0u8, 128, 255]);
        let scale = Some(f32s(&[0.25], &[]));
        let zero_point = Some(Tensor::from_slice(&[128u8]).reshape([]));
        let y = run1(
            "DequantizeLinear",
            &[],
            vec![Some(x), scale, zero_point],
            DType::F32,
        );
        assert_eq!(values(&y), vec![-32.0, 0.0, 31.75]);
    }
}
