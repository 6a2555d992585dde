//! Ops that select, join or pad parts of tensors: Concat, Split, Slice, Pad, Gather and Trilu.
//! Index arithmetic (ONNX's clamping of slice bounds, pad modes) is done on the host and
//! applied with `index_select`, which keeps the data on the autograd tape.

use super::{norm_axis, Args, RefError};
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &["Concat", "Split", "Slice", "Pad", "Gather", "Trilu"];

/// Selects `indices` along `axis`.
fn select(x: &Tensor, axis: usize, indices: &[i64]) -> Result<Tensor, RefError> {
    let idx = Tensor::f_from_slice(indices)?;
    Ok(x.f_index_select(axis as i64, &idx)?)
}

/// The source index of output position `p` (from `-begin`) on an axis of size `d` in a
/// non-constant pad mode.
fn pad_source(mode: &str, p: i64, d: i64) -> i64 {
    match mode {
        "edge" => p.clamp(0, d - 1),
        "wrap" => p.rem_euclid(d),
        _ if d == 1 => 0,
        _ => {
            // reflect: mirror without repeating the edge, period 2 (d - 1).
            let period = 2 * (d - 1);
            let q = p.rem_euclid(period);
            if q < d {
                q
            } else {
                period - q
            }
        }
    }
}

/// `Pad(x, pads, constant_value, axes)` in any mode; negative pads crop.
fn pad(a: &Args, x: &Tensor) -> Result<Tensor, RefError> {
    let size = x.size();
    let rank = size.len();
    let pads = a.int_values(1)?.ok_or_else(|| a.fail("pads is required"))?;
    let axes: Vec<usize> = match a.int_values(3)? {
        Some(axes) => axes
            .iter()
            .map(|v| norm_axis(*v, rank))
            .collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(a.fail("pads must have two entries per axis"));
    }
    let k = axes.len();
    let mode = a.string("mode", "constant");
    if mode == "constant" {
        let value = match a.float_values(2)? {
            Some(v) => v.first().copied().unwrap_or(0.0),
            None => 0.0,
        };
        let mut list = vec![0i64; 2 * rank];
        for (i, axis) in axes.iter().enumerate() {
            // libtorch lists (begin, end) from the last dim.
            let slot = rank - 1 - axis;
            list[2 * slot] = pads[i];
            list[2 * slot + 1] = pads[k + i];
        }
        return Ok(x.f_pad(list.as_slice(), "constant", value)?);
    }
    if !matches!(mode.as_str(), "reflect" | "edge" | "wrap") {
        return Err(a.unsupported(format!("mode {mode}")));
    }
    let mut y = x.shallow_clone();
    for (i, axis) in axes.iter().enumerate() {
        let (b, e, d) = (pads[i], pads[k + i], size[*axis]);
        if mode == "reflect" && (b >= d || e >= d) && d > 1 {
            return Err(a.fail("reflect pads must be below the dim"));
        }
        let src: Vec<i64> = (-b..d + e).map(|p| pad_source(&mode, p, d)).collect();
        y = select(&y, *axis, &src)?;
    }
    Ok(y)
}

/// ONNX's reading of a slice bound `v` on an axis of size `d`, clamped to `[lo, hi]`.
fn bound(v: i64, d: i64, lo: i64, hi: i64) -> i64 {
    let v = if v < 0 { v.saturating_add(d) } else { v };
    v.clamp(lo, hi)
}

/// `Slice(x, starts, ends, axes, steps)`.
fn slice(a: &Args, x: &Tensor) -> Result<Tensor, RefError> {
    let size = x.size();
    let rank = size.len();
    let starts = a
        .int_values(1)?
        .ok_or_else(|| a.fail("starts is required"))?;
    let ends = a.int_values(2)?.ok_or_else(|| a.fail("ends is required"))?;
    let k = starts.len();
    let axes: Vec<usize> = match a.int_values(3)? {
        Some(axes) => axes
            .iter()
            .map(|v| norm_axis(*v, rank))
            .collect::<Result<_, _>>()?,
        None => (0..k).collect(),
    };
    let steps = a.int_values(4)?.unwrap_or_else(|| vec![1; k]);
    if ends.len() != k || axes.len() != k || steps.len() != k {
        return Err(a.fail("starts, ends, axes and steps differ in length"));
    }
    let mut y = x.shallow_clone();
    for i in 0..k {
        let (axis, step, d) = (axes[i], steps[i], size[axes[i]]);
        let indices: Vec<i64> = if step > 0 {
            let (s, e) = (bound(starts[i], d, 0, d), bound(ends[i], d, 0, d));
            (s..e.max(s)).step_by(step as usize).collect()
        } else if step < 0 {
            let (s, e) = (bound(starts[i], d, 0, d - 1), bound(ends[i], d, -1, d - 1));
            let mut v = Vec::new();
            let mut p = s;
            while p > e {
                v.push(p);
                p += step;
            }
            v
        } else {
            return Err(a.fail("a step of 0"));
        };
        y = select(&y, axis, &indices)?;
    }
    Ok(y)
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let rank = x.dim();
    let y = match a.op {
        "Concat" => {
            let axis = norm_axis(a.int("axis", 0), rank)?;
            Tensor::f_cat(&a.present(), axis as i64)?
        }
        "Split" => {
            let axis = norm_axis(a.int("axis", 0), rank)?;
            let d = x.size()[axis];
            let sizes = match a.int_values(1)? {
                Some(s) => s,
                None => {
                    let n = match a.int("num_outputs", 0) {
                        0 => a.out.len() as i64,
                        n => n,
                    }
                    .max(1);
                    let chunk = (d + n - 1) / n;
                    (0..n).map(|i| chunk.min(d - chunk * i).max(0)).collect()
                }
            };
            if sizes.iter().sum::<i64>() != d {
                return Err(a.fail(format!("split sizes {sizes:?} do not sum to {d}")));
            }
            return Ok(x.f_split_with_sizes(sizes.as_slice(), axis as i64)?);
        }
        "Slice" => slice(a, x)?,
        "Pad" => pad(a, x)?,
        "Gather" => {
            let axis = norm_axis(a.int("axis", 0), rank)?;
            let d = x.size()[axis];
            let idx = a.x(1)?.f_to_kind(Kind::Int64)?;
            let idx = idx.f_add(&idx.f_lt(0)?.f_to_kind(Kind::Int64)?.f_mul_scalar(d)?)?;
            let picked = x.f_index_select(axis as i64, &idx.f_reshape([-1])?)?;
            let mut shape = x.size()[..axis].to_vec();
            shape.extend(idx.size());
            shape.extend(&x.size()[axis + 1..]);
            picked.f_reshape(shape.as_slice())?
        }
        "Trilu" => {
            let k = a
                .int_values(1)?
                .and_then(|v| v.first().copied())
                .unwrap_or(0);
            if a.int("upper", 1) != 0 {
                x.f_triu(k)?
            } else {
                x.f_tril(k)?
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
    use tch::Tensor;

    fn ints(v: &[i64]) -> Option<Tensor> {
        Some(i64s(v, &[v.len() as i64]))
    }

    #[test]
    fn pad_modes_on_one_axis() {
        let x = f32s(&[1.0, 2.0, 3.0], &[3]);
        let run = |mode: &str, pads: &[i64]| {
            values(&run1(
                "Pad",
                &[("mode", AttrValue::Str(mode.into()))],
                vec![Some(x.shallow_clone()), ints(pads)],
                DType::F32,
            ))
        };
        assert_eq!(run("constant", &[2, 1]), vec![0.0, 0.0, 1.0, 2.0, 3.0, 0.0]);
        assert_eq!(run("constant", &[-1, 1]), vec![2.0, 3.0, 0.0]);
        assert_eq!(
            run("reflect", &[2, 2]),
            vec![3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]
        );
        assert_eq!(run("edge", &[2, 1]), vec![1.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
        assert_eq!(
            run("wrap", &[4, 1]),
            vec![3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0]
        );
    }

    #[test]
    fn pad_value_and_axes_inputs() {
        let x = i64s(&[1, 2, 3, 4], &[2, 2]);
        let y = run1(
            "Pad",
            &[],
            vec![Some(x), ints(&[1, 0]), Some(i64s(&[9], &[])), ints(&[-1])],
            DType::I64,
        );
        assert_eq!(y.size(), vec![2, 3]);
        assert_eq!(values(&y), vec![9.0, 1.0, 2.0, 9.0, 3.0, 4.0]);
    }

    #[test]
    fn slice_clamps_and_steps_backward() {
        let x = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0], &[5]);
        let run = |s: i64, e: i64, step: i64| {
            values(&run1(
                "Slice",
                &[],
                vec![
                    Some(x.shallow_clone()),
                    ints(&[s]),
                    ints(&[e]),
                    ints(&[0]),
                    ints(&[step]),
                ],
                DType::F32,
            ))
        };
        assert_eq!(run(1, 1000, 2), vec![1.0, 3.0]);
        assert_eq!(run(-1, i64::MIN, -2), vec![4.0, 2.0, 0.0]);
        assert_eq!(run(10, -4, -1), vec![4.0, 3.0, 2.0]);
        assert_eq!(run(i64::MIN, -2, 1), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn gather_negative_indices_and_split_num_outputs() {
        let x = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
        let g = run1(
            "Gather",
            &[("axis", AttrValue::Int(1))],
            vec![Some(x.shallow_clone()), Some(i64s(&[-1, 0], &[2, 1]))],
            DType::F32,
        );
        assert_eq!(g.size(), vec![2, 2, 1]);
        assert_eq!(values(&g), vec![2.0, 0.0, 5.0, 3.0]);
        let attrs: Vec<(String, AttrValue<i64>)> = vec![
            ("axis".into(), AttrValue::Int(0)),
            ("num_outputs".into(), AttrValue::Int(3)),
        ];
        let seven = Some(f32s(&[0.0; 7], &[7]));
        let outs = super::super::apply("Split", &attrs, &[seven], &[DType::F32; 3]).unwrap();
        let sizes: Vec<i64> = outs.iter().map(|t| t.size()[0]).collect();
        assert_eq!(sizes, vec![3, 3, 1]);
    }

    #[test]
    fn trilu_keeps_a_band() {
        let x = f32s(&[1.0; 9], &[3, 3]);
        let up = run1(
            "Trilu",
            &[],
            vec![Some(x.shallow_clone()), Some(i64s(&[1], &[]))],
            DType::F32,
        );
        assert_eq!(
            values(&up),
            vec![0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
        );
        let low = run1(
            "Trilu",
            &[("upper", AttrValue::Int(0))],
            vec![Some(x)],
            DType::F32,
        );
        assert_eq!(
            values(&low),
            vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
        );
    }
}
