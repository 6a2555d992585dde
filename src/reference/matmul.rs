//! Matrix products: `MatMul` (numpy semantics, which libtorch's `matmul` shares: 1-D
//! promotion and batch broadcasting) and `Gemm`.

use super::{Args, RefError};
use tch::Tensor;

/// The op types of this family.
pub(super) const OPS: &[&str] = &["MatMul", "Gemm"];

/// `t * s`: a float scalar on floats; on integers an integral `s` multiplies exactly (and
/// wraps), any other is applied in `f64` and truncated.
fn scale(t: &Tensor, s: f64) -> Result<Tensor, RefError> {
    if t.is_floating_point() {
        Ok(t.f_mul_scalar(s)?)
    } else if s.fract() == 0.0 {
        Ok(t.f_mul_scalar(s as i64)?)
    } else {
        let kind = t.kind();
        Ok(t.f_to_kind(tch::Kind::Double)?
            .f_mul_scalar(s)?
            .f_trunc()?
            .f_to_kind(kind)?)
    }
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let y = match a.op {
        "MatMul" => a.x(0)?.f_matmul(a.x(1)?)?,
        "Gemm" => {
            let t = |x: &Tensor, attr: &str| -> Result<Tensor, RefError> {
                Ok(if a.int(attr, 0) != 0 {
                    x.f_transpose(0, 1)?
                } else {
                    x.shallow_clone()
                })
            };
            let ab = t(a.x(0)?, "transA")?.f_matmul(&t(a.x(1)?, "transB")?)?;
            let y = scale(&ab, a.float("alpha", 1.0))?;
            match a.opt(2) {
                Some(c) => y.f_add(&scale(c, a.float("beta", 1.0))?)?,
                None => y,
            }
        }
        other => return Err(RefError::Unsupported(other.to_string())),
    };
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;

    #[test]
    fn gemm_transposes_scales_and_broadcasts_c() {
        // A is 3x2 stored transposed (transA), B is 3x2 -> A'B = (2x3)(3x2).
        let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
        let b = f32s(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
        let c = f32s(&[10.0, 20.0], &[2]);
        let y = run1(
            "Gemm",
            &[
                ("transA", AttrValue::Int(1)),
                ("alpha", AttrValue::Float(2.0)),
                ("beta", AttrValue::Float(0.5)),
            ],
            vec![Some(a), Some(b), Some(c)],
            DType::F32,
        );
        // A' = [[1,3,5],[2,4,6]]; A'B = [[6,8],[8,10]]; 2 * that + [5, 10].
        assert_eq!(values(&y), vec![17.0, 26.0, 21.0, 30.0]);
    }

    #[test]
    fn matmul_promotes_vectors_and_broadcasts_batches() {
        let v = f32s(&[1.0, 2.0], &[2]);
        let m = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[2, 2, 2]);
        let y = run1("MatMul", &[], vec![Some(v), Some(m)], DType::F32);
        assert_eq!(
            (y.size(), values(&y)),
            (vec![2, 2], vec![7.0, 10.0, 19.0, 22.0])
        );
        let ints = i64s(&[1, 2, 3, 4], &[2, 2]);
        let p = run1(
            "MatMul",
            &[],
            vec![Some(ints.shallow_clone()), Some(ints)],
            DType::I64,
        );
        assert_eq!(values(&p), vec![7.0, 10.0, 15.0, 22.0]);
    }
}
