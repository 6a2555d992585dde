//! Where, Cast and Clip; Dropout and Shape.

use super::{Args, RefError};
use crate::ir::DType;
use crate::ops::numeric;
use tch::Tensor;

/// The op types of this family.
pub(super) const OPS: &[&str] = &["Where", "Cast", "Clip", "Dropout", "Shape"];

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let y = match a.op {
        "Where" => a.x(1)?.f_where_self(a.x(0)?, a.x(2)?)?,
        // The conversion itself is the final wrap into the output carrier (see
        // `convert::wrap`): floats truncate toward zero, integers wrap, anything nonzero is
        // true. Only `u64` sources need their bit patterns read as values first.
        "Cast" if a.dtype(0) == DType::U64 && a.out0().is_float() => {
            numeric::to_double(a.x(0)?, DType::U64)?
        }
        "Cast" | "Dropout" => a.x(0)?.shallow_clone(),
        "Shape" => Tensor::from_slice(&a.x(0)?.size()),
        "Clip" => {
            let dtype = a.dtype(0);
            let order = |t: &Tensor| numeric::ordered(t, dtype);
            let x = order(a.x(0)?)?;
            let lo = a.opt(1).map(order).transpose()?;
            let hi = a.opt(2).map(order).transpose()?;
            let y = match (lo, hi) {
                (None, None) => x,
                (lo, hi) => x.f_clamp_tensor(lo.as_ref(), hi.as_ref())?,
            };
            order(&y)?
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
    fn cast_truncates_floats_and_wraps_integers() {
        let x = f32s(&[-1.75, 2.5, 300.0], &[3]);
        assert_eq!(
            values(&run1(
                "Cast",
                &[],
                vec![Some(x.shallow_clone())],
                DType::I32
            )),
            vec![-1.0, 2.0, 300.0]
        );
        assert_eq!(
            values(&run1("Cast", &[], vec![Some(x.shallow_clone())], DType::U8)),
            vec![255.0, 2.0, 44.0]
        );
        assert_eq!(
            values(&run1("Cast", &[], vec![Some(x)], DType::Bool)),
            vec![1.0, 1.0, 1.0]
        );
        let i = i64s(&[-1, 70000], &[2]);
        assert_eq!(
            values(&run1("Cast", &[], vec![Some(i)], DType::U16)),
            vec![65535.0, 4464.0]
        );
    }

    #[test]
    fn clip_with_absent_bounds() {
        let x = f32s(&[-3.0, 0.0, 3.0], &[3]);
        let lo = Some(f32s(&[-1.0], &[]));
        let hi = Some(f32s(&[2.0], &[]));
        let only_hi = run1(
            "Clip",
            &[],
            vec![
                Some(x.shallow_clone()),
                None,
                hi.as_ref().map(Tensor::shallow_clone),
            ],
            DType::F32,
        );
        assert_eq!(values(&only_hi), vec![-3.0, 0.0, 2.0]);
        let only_lo = run1(
            "Clip",
            &[],
            vec![
                Some(x.shallow_clone()),
                lo.as_ref().map(Tensor::shallow_clone),
            ],
            DType::F32,
        );
        assert_eq!(values(&only_lo), vec![-1.0, 0.0, 3.0]);
        let none = run1("Clip", &[], vec![Some(x.shallow_clone())], DType::F32);
        assert_eq!(values(&none), vec![-3.0, 0.0, 3.0]);
        let both = run1("Clip", &[], vec![Some(x), lo, hi], DType::F32);
        assert_eq!(values(&both), vec![-1.0, 0.0, 2.0]);
    }

    #[test]
    fn where_broadcasts_three_ways() {
        let c = Tensor::from_slice(&[true, false]).reshape([2, 1]);
        let x = f32s(&[1.0, 2.0, 3.0], &[3]);
        let y = f32s(&[0.0], &[]);
        let w = run1("Where", &[], vec![Some(c), Some(x), Some(y)], DType::F32);
        assert_eq!(values(&w), vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
    }
}
