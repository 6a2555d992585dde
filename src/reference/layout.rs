//! Layout ops, which move or replicate elements: Reshape, Flatten, Transpose, Squeeze,
//! Unsqueeze, Expand and Tile. Shape-like operands are int64 inputs (opset 13 form).

use super::{norm_axis, Args, RefError};
use tch::Tensor;

/// The op types of this family.
pub(super) const OPS: &[&str] = &[
    "Reshape",
    "Flatten",
    "Transpose",
    "Squeeze",
    "Unsqueeze",
    "Expand",
    "Tile",
];

/// The numpy broadcast of two shapes; `None` when they do not broadcast.
pub(super) fn broadcast_shapes(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let dim = |s: &[i64]| {
                if i + s.len() >= rank {
                    s[i + s.len() - rank]
                } else {
                    1
                }
            };
            match (dim(a), dim(b)) {
                (x, y) if x == y || y == 1 => Some(x),
                (1, y) => Some(y),
                _ => None,
            }
        })
        .collect()
}

/// The target shape of `Reshape`: `0` copies the input dim (unless `allowzero`), one `-1` is
/// inferred.
fn reshape_target(a: &Args, input: &[i64], shape: &[i64]) -> Result<Vec<i64>, RefError> {
    let allow_zero = a.int("allowzero", 0) != 0;
    let mut out: Vec<i64> = shape
        .iter()
        .enumerate()
        .map(|(j, s)| match s {
            0 if !allow_zero => input
                .get(j)
                .copied()
                .ok_or_else(|| a.fail("a 0 entry past the input rank")),
            s => Ok(*s),
        })
        .collect::<Result<_, _>>()?;
    let numel: i64 = input.iter().product();
    let inferred: Vec<usize> = (0..out.len()).filter(|j| out[*j] == -1).collect();
    match inferred.as_slice() {
        [] => {}
        [j] => {
            let known: i64 = out.iter().filter(|d| **d != -1).product();
            if known == 0 || numel % known != 0 {
                return Err(a.fail("the -1 entry cannot be inferred"));
            }
            out[*j] = numel / known;
        }
        _ => return Err(a.fail("more than one -1 entry")),
    }
    Ok(out)
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let size = x.size();
    let rank = size.len();
    let y = match a.op {
        "Reshape" => {
            let shape = a
                .int_values(1)?
                .ok_or_else(|| a.fail("shape is required"))?;
            x.f_reshape(reshape_target(a, &size, &shape)?.as_slice())?
        }
        "Flatten" => {
            let axis = a.int("axis", 1);
            let axis = if axis < 0 { axis + rank as i64 } else { axis };
            if !(0..=rank as i64).contains(&axis) {
                return Err(a.fail(format!("axis {axis}")));
            }
            let outer: i64 = size[..axis as usize].iter().product();
            let inner: i64 = size[axis as usize..].iter().product();
            x.f_reshape([outer, inner])?
        }
        "Transpose" => {
            let perm = a
                .ints("perm")
                .unwrap_or_else(|| (0..rank as i64).rev().collect());
            x.f_permute(perm.as_slice())?
        }
        "Squeeze" => {
            let axes: Vec<usize> = match a.int_values(1)? {
                Some(axes) => axes
                    .iter()
                    .map(|v| norm_axis(*v, rank))
                    .collect::<Result<_, _>>()?,
                None => (0..rank).filter(|d| size[*d] == 1).collect(),
            };
            if axes.iter().any(|d| size[*d] != 1) {
                return Err(a.fail("squeezing a dim that is not 1"));
            }
            let keep: Vec<i64> = (0..rank)
                .filter(|d| !axes.contains(d))
                .map(|d| size[d])
                .collect();
            x.f_reshape(keep.as_slice())?
        }
        "Unsqueeze" => {
            let axes = a.int_values(1)?.ok_or_else(|| a.fail("axes is required"))?;
            let out_rank = rank + axes.len();
            let axes: Vec<usize> = axes
                .iter()
                .map(|v| norm_axis(*v, out_rank))
                .collect::<Result<_, _>>()?;
            let mut rest = size.iter();
            let shape: Vec<i64> = (0..out_rank)
                .map(|d| {
                    if axes.contains(&d) {
                        1
                    } else {
                        rest.next().copied().unwrap_or(1)
                    }
                })
                .collect();
            x.f_reshape(shape.as_slice())?
        }
        "Expand" => {
            let shape = a
                .int_values(1)?
                .ok_or_else(|| a.fail("shape is required"))?;
            let out = broadcast_shapes(&size, &shape)
                .ok_or_else(|| a.fail(format!("{size:?} does not broadcast to {shape:?}")))?;
            x.f_expand(out.as_slice(), false)?
        }
        "Tile" => {
            let reps = a
                .int_values(1)?
                .ok_or_else(|| a.fail("repeats is required"))?;
            if reps.len() != rank {
                return Err(a.fail("repeats must have one entry per dim"));
            }
            x.f_repeat(reps.as_slice())?
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
    fn reshape_copies_zero_entries_and_infers_minus_one() {
        let x = f32s(&[0.0; 24], &[2, 3, 4]);
        let y = run1(
            "Reshape",
            &[],
            vec![Some(x), Some(i64s(&[0, -1, 2], &[3]))],
            DType::F32,
        );
        assert_eq!(y.size(), vec![2, 6, 2]);
    }

    #[test]
    fn expand_broadcasts_both_ways_and_squeeze_defaults_to_ones() {
        let x = f32s(&[1.0, 2.0, 3.0], &[3, 1]);
        let y = run1(
            "Expand",
            &[],
            vec![Some(x), Some(i64s(&[2, 1, 4], &[3]))],
            DType::F32,
        );
        assert_eq!(y.size(), vec![2, 3, 4]);
        let z = run1(
            "Squeeze",
            &[],
            vec![Some(f32s(&[1.0, 2.0], &[1, 2, 1]))],
            DType::F32,
        );
        assert_eq!(z.size(), vec![2]);
        let u = run1(
            "Unsqueeze",
            &[],
            vec![Some(f32s(&[1.0, 2.0], &[2])), Some(i64s(&[-1, 0], &[2]))],
            DType::F32,
        );
        assert_eq!(u.size(), vec![1, 2, 1]);
        let t = run1(
            "Transpose",
            &[],
            vec![Some(f32s(&[0.0; 6], &[1, 2, 3]))],
            DType::F32,
        );
        assert_eq!(t.size(), vec![3, 2, 1]);
        let f = run1(
            "Flatten",
            &[("axis", AttrValue::Int(-1))],
            vec![Some(f32s(&[0.0; 6], &[1, 2, 3]))],
            DType::F32,
        );
        assert_eq!(f.size(), vec![2, 3]);
    }
}
