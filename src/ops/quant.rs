//! Per-tensor quantization: `QuantizeLinear` and `DequantizeLinear` (opset 19), the Q/DQ
//! pairs that ONNX Runtime's QDQ transformers look for.
//!
//! Scales are powers of two, so `x / scale` and `x * (1 / scale)` round identically and a
//! kernel may use either; zero points are constant scalars of the quantized type.

use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::{AttrCx, ConstInput, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use tch::{Kind, Tensor};

/// The quantized types (`T2` of both ops).
const QUANTIZED: [DType; 2] = [DType::U8, DType::I8];

/// Smallest and largest power-of-two exponent of a scale.
const SCALE_EXPONENTS: (i64, i64) = (-4, 1);

/// The scale our specs use for a wanted scale `value`: the nearest power of two in
/// `[1/16, 2]` (equal wanted scales stay equal).
pub fn nearest_scale(value: f64) -> f64 {
    let exponent = value.abs().max(f64::MIN_POSITIVE).log2().round() as i64;
    2f64.powi(exponent.clamp(SCALE_EXPONENTS.0, SCALE_EXPONENTS.1) as i32)
}

/// A power-of-two scale in `[1/16, 2]` and a zero point of `quantized` near the middle of its
/// range, from the bytes.
fn scale_and_zero_point(cx: &mut AttrCx, quantized: DType) -> Vec<ConstInput<Int>> {
    let scale = 2f64.powi(cx.pick(SCALE_EXPONENTS.0, SCALE_EXPONENTS.1) as i32);
    let zero_point = if quantized == DType::U8 {
        cx.pick(96, 160)
    } else {
        cx.pick(-32, 32)
    };
    vec![
        ConstInput::Scalar(DType::F32, scale),
        ConstInput::Scalar(quantized, zero_point as f64),
    ]
}

/// `QuantizeLinear(x: f32, scale, zero_point) -> u8 | i8` or, with `dequantize`,
/// `DequantizeLinear(x: u8 | i8, scale, zero_point) -> f32`: the same constants, the
/// quantized type on the other side.
struct Linear {
    dequantize: bool,
}

impl Linear {
    /// The signature with quantized type `q`.
    fn sig(&self, q: DType) -> Sig {
        if self.dequantize {
            Sig::new(vec![q], vec![DType::F32])
        } else {
            Sig::new(vec![DType::F32], vec![q])
        }
    }
}

impl OpSpec for Linear {
    /// Constant operand 0 is the scale.
    fn pin_roles(&self) -> super::pattern_roles::PinRoles {
        super::pattern_roles::PinRoles {
            scale_operand: true,
            ..Default::default()
        }
    }

    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        if self.dequantize || !node.float_input() {
            return Ok(false);
        }
        // Rounding to the nearest integer jumps at every half of the scale.
        let x = node.double(0);
        let mx = node.margin_of(0, &x);
        let scale = match node.attrs.consts.first() {
            Some(ConstInput::Scalar(_, scale)) => *scale,
            _ => 1.0,
        };
        Ok(fragility::near_grid(
            &(&x / scale),
            &(&mx / scale.abs()),
            0.5,
        ))
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        if self.dequantize {
            return Ok(None);
        }
        fragility::nan_to_integer(node)
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let scale = a.x(1)?.f_to_kind(Kind::Float)?;
        let zero_point = a.opt(2).map(|z| z.f_to_kind(Kind::Float)).transpose()?;
        let y = if self.dequantize {
            range(a.dtype(0))?;
            let x = a.x(0)?.f_to_kind(Kind::Float)?;
            let x = match zero_point {
                Some(z) => x.f_sub(&z)?,
                None => x,
            };
            x.f_mul(&scale)?
        } else {
            let quantized = a.out0();
            let (lo, hi) = range(quantized)?;
            let zero_point = match zero_point {
                Some(z) => z,
                None => Tensor::f_zeros([], (Kind::Float, tch::Device::Cpu))?,
            };
            // torch's round is half to even, as ONNX asks.
            (a.x(0)?.f_div(&scale)?.f_round()? + zero_point)
                .f_clamp(lo, hi)?
                .f_to_kind(super::carrier::carrier(quantized))?
        };
        Ok(vec![y])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        if self.dequantize {
            "DequantizeLinear"
        } else {
            "QuantizeLinear"
        }
    }
    fn sigs(&self) -> Vec<Sig> {
        QUANTIZED.iter().map(|q| self.sig(*q)).collect()
    }
    fn attrs(&self, cx: &mut AttrCx, _ins: &[SymTensor]) -> SymAttrs {
        let quantized = if self.dequantize {
            cx.sig.inputs[0]
        } else {
            cx.sig.outputs[0]
        };
        SymAttrs {
            consts: scale_and_zero_point(cx, quantized),
            ..SymAttrs::default()
        }
    }
    fn requires(&self, _a: &SymAttrs, _ins: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }
    fn type_transfer(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![ins[0].dims.clone()]
    }
}

/// QuantizeLinear and DequantizeLinear.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![
        Box::new(Linear { dequantize: false }),
        Box::new(Linear { dequantize: true }),
    ]
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::Unstructured;

    #[test]
    fn scales_are_powers_of_two_and_zero_points_fit_the_type() {
        for byte in 0..=255u8 {
            let bytes = [byte; 8];
            let mut u = Unstructured::new(&bytes);
            let mut vars = crate::sym::vars::VarTable::default();
            let sig = Sig::new(vec![DType::I8], vec![DType::F32]);
            let mut cx = AttrCx {
                u: &mut u,
                vars: &mut vars,
                sig: &sig,
                class: super::super::DEFAULT_CLASS,
                out_rank: None,
            };
            let attrs = Linear { dequantize: true }.attrs(&mut cx, &[]);
            let ConstInput::Scalar(DType::F32, scale) = attrs.consts[0] else {
                panic!("scale is an f32 scalar: {:?}", attrs.consts[0]);
            };
            assert_eq!(scale.log2().fract(), 0.0, "{scale}");
            let ConstInput::Scalar(DType::I8, zp) = attrs.consts[1] else {
                panic!("zero point is an i8 scalar: {:?}", attrs.consts[1]);
            };
            assert!((-128.0..=127.0).contains(&zp));
        }
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
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
