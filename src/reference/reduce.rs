//! Reductions (`Reduce*` with the opset-18 `axes` input and `noop_with_empty_axes`),
//! `ArgMax`/`ArgMin`, and `Softmax`/`LogSoftmax` along one axis (opset 13 form).
//!
//! Integer reductions follow ONNX Runtime's integer kernels: sums and products wrap in the
//! dtype, `ReduceMean` divides the (wrapped) sum by the count with truncation, and `ReduceL2`
//! and `ReduceLogSumExp` take the square root or logarithm in `f64` and truncate.

use super::{norm_axis, Args, RefError};
use crate::ir::DType;
use crate::ops::numeric;
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &[
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSumExp",
    "ReduceSumSquare",
    "ArgMax",
    "ArgMin",
    "Softmax",
    "LogSoftmax",
];

/// The axes a `Reduce*` node reduces (sorted, distinct); `None` for the no-op case.
fn reduce_axes(a: &Args, rank: usize) -> Result<Option<Vec<i64>>, RefError> {
    let given = a.int_values(1)?.unwrap_or_default();
    if given.is_empty() {
        if a.int("noop_with_empty_axes", 0) != 0 {
            return Ok(None);
        }
        return Ok(Some((0..rank as i64).collect()));
    }
    let mut axes = given
        .iter()
        .map(|x| norm_axis(*x, rank).map(|v| v as i64))
        .collect::<Result<Vec<_>, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    Ok(Some(axes))
}

/// The sum over `axes` (integers wrap in `dtype`).
fn sum(x: &Tensor, axes: &[i64], keep: bool, dtype: DType) -> Result<Tensor, RefError> {
    if axes.is_empty() {
        return Ok(x.shallow_clone());
    }
    let s = x.f_sum_dim_intlist(axes, keep, None::<Kind>)?;
    if dtype.is_int() {
        super::convert::wrap(&s, dtype)
    } else {
        Ok(s)
    }
}

/// Runs a `Reduce*` op.
fn reduce(a: &Args) -> Result<Tensor, RefError> {
    let x = a.x(0)?;
    let dtype = a.dtype(0);
    let keep = a.int("keepdims", 1) != 0;
    let Some(axes) = reduce_axes(a, x.dim())? else {
        return Ok(x.shallow_clone());
    };
    let float = x.is_floating_point();
    let count: i64 = axes.iter().map(|d| x.size()[*d as usize]).product();
    let order = |t: &Tensor| numeric::ordered(t, dtype);
    Ok(match a.op {
        "ReduceSum" => sum(x, &axes, keep, dtype)?,
        "ReduceSumSquare" => sum(&x.f_mul(x)?, &axes, keep, dtype)?,
        "ReduceL1" if dtype.is_unsigned() => sum(x, &axes, keep, dtype)?,
        "ReduceL1" => sum(&x.f_abs()?, &axes, keep, dtype)?,
        "ReduceL2" if float => sum(&x.f_mul(x)?, &axes, keep, dtype)?.f_sqrt()?,
        "ReduceL2" => {
            let squares = sum(&x.f_mul(x)?, &axes, keep, dtype)?;
            numeric::to_double(&squares, dtype)?.f_sqrt()?.f_trunc()?
        }
        "ReduceMean" if float => {
            if axes.is_empty() {
                x.shallow_clone()
            } else {
                x.f_mean_dim(axes.as_slice(), keep, None::<Kind>)?
            }
        }
        "ReduceMean" => {
            let s = sum(x, &axes, keep, dtype)?;
            numeric::int_div(&s, &s.f_full_like(count)?, dtype)?
        }
        "ReduceMax" | "ReduceMin" if axes.is_empty() => x.shallow_clone(),
        "ReduceMax" => order(&order(x)?.f_amax(axes.as_slice(), keep)?)?,
        "ReduceMin" => order(&order(x)?.f_amin(axes.as_slice(), keep)?)?,
        "ReduceProd" => {
            let mut p = x.shallow_clone();
            for axis in axes.iter().rev() {
                p = p.f_prod_dim_int(*axis, keep, None::<Kind>)?;
            }
            if dtype.is_int() {
                super::convert::wrap(&p, dtype)?
            } else {
                p
            }
        }
        "ReduceLogSumExp" if float => {
            if axes.is_empty() {
                x.shallow_clone()
            } else {
                x.f_logsumexp(axes.as_slice(), keep)?
            }
        }
        "ReduceLogSumExp" => {
            let d = numeric::to_double(x, dtype)?;
            if axes.is_empty() {
                d
            } else {
                d.f_logsumexp(axes.as_slice(), keep)?.f_trunc()?
            }
        }
        other => return Err(RefError::Unsupported(other.to_string())),
    })
}

/// `ArgMax`/`ArgMin`: the first index of the extreme value, or the last one with
/// `select_last_index`.
fn arg(a: &Args) -> Result<Tensor, RefError> {
    let x = numeric::ordered(a.x(0)?, a.dtype(0))?;
    let keep = a.int("keepdims", 1) != 0;
    let axis = norm_axis(a.int("axis", 0), x.dim())? as i64;
    let last = a.int("select_last_index", 0) != 0;
    let pick = |t: &Tensor| -> Result<Tensor, RefError> {
        Ok(if a.op == "ArgMax" {
            t.f_argmax(axis, keep)?
        } else {
            t.f_argmin(axis, keep)?
        })
    };
    if last {
        let d = x.size()[axis as usize];
        let flipped = pick(&x.f_flip([axis])?)?;
        Ok(flipped.f_neg()?.f_add_scalar(d - 1)?)
    } else {
        pick(&x)
    }
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let y = match a.op {
        "ArgMax" | "ArgMin" => arg(a)?,
        "Softmax" | "LogSoftmax" => {
            let x = a.x(0)?;
            let axis = norm_axis(a.int("axis", -1), x.dim())? as i64;
            if a.op == "Softmax" {
                x.f_softmax(axis, None::<Kind>)?
            } else {
                x.f_log_softmax(axis, None::<Kind>)?
            }
        }
        _ => reduce(a)?,
    };
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;

    #[test]
    fn reduce_axes_input_keepdims_and_noop() {
        let x = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let axes = Some(i64s(&[-1], &[1]));
        let keep0 = [("keepdims", AttrValue::Int(0))];
        let s = run1(
            "ReduceSum",
            &keep0,
            vec![
                Some(x.shallow_clone()),
                axes.as_ref().map(tch::Tensor::shallow_clone),
            ],
            DType::F32,
        );
        assert_eq!((s.size(), values(&s)), (vec![2], vec![6.0, 15.0]));
        let m = run1(
            "ReduceMean",
            &[],
            vec![Some(x.shallow_clone()), axes],
            DType::F32,
        );
        assert_eq!((m.size(), values(&m)), (vec![2, 1], vec![2.0, 5.0]));
        let all = run1(
            "ReduceMax",
            &keep0,
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!((all.size(), values(&all)), (vec![], vec![6.0]));
        let noop = run1(
            "ReduceProd",
            &[("noop_with_empty_axes", AttrValue::Int(1))],
            vec![Some(x.shallow_clone()), Some(i64s(&[], &[0]))],
            DType::F32,
        );
        assert_eq!(noop.size(), vec![2, 3]);
        let l2 = run1(
            "ReduceL2",
            &keep0,
            vec![Some(f32s(&[3.0, 4.0], &[2]))],
            DType::F32,
        );
        assert_eq!(values(&l2), vec![5.0]);
    }

    #[test]
    fn integer_mean_truncates_and_keeps_the_reduced_shape() {
        let all = run1(
            "ReduceMean",
            &[("keepdims", AttrValue::Int(0))],
            vec![Some(i64s(&[-7, 0, 1, 2], &[2, 2]))],
            DType::I64,
        );
        assert_eq!((all.size(), values(&all)), (vec![], vec![-1.0]));
        let x = i64s(&[-7, 0, 1, 2], &[2, 2]);
        let m = run1(
            "ReduceMean",
            &[("keepdims", AttrValue::Int(0))],
            vec![Some(x), Some(i64s(&[1], &[1]))],
            DType::I64,
        );
        assert_eq!(values(&m), vec![-3.0, 1.0]);
    }

    #[test]
    fn argmax_ties_pick_first_or_last() {
        let x = f32s(&[1.0, 3.0, 3.0, 0.0], &[1, 4]);
        let first = run1(
            "ArgMax",
            &[("axis", AttrValue::Int(1))],
            vec![Some(x.shallow_clone())],
            DType::I64,
        );
        assert_eq!((first.size(), values(&first)), (vec![1, 1], vec![1.0]));
        let last = run1(
            "ArgMax",
            &[
                ("axis", AttrValue::Int(-1)),
                ("keepdims", AttrValue::Int(0)),
                ("select_last_index", AttrValue::Int(1)),
            ],
            vec![Some(x.shallow_clone())],
            DType::I64,
        );
        assert_eq!((last.size(), values(&last)), (vec![1], vec![2.0]));
        let min_last = run1(
            "ArgMin",
            &[
                ("axis", AttrValue::Int(0)),
                ("select_last_index", AttrValue::Int(1)),
            ],
            vec![Some(f32s(&[2.0, 1.0, 1.0], &[3]))],
            DType::I64,
        );
        assert_eq!(values(&min_last), vec![2.0]);
    }
}
