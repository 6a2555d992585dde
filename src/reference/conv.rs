//! Sliding-window ops over `N, C, spatial...` tensors: Conv, MaxPool, AveragePool,
//! GlobalAveragePool and GlobalMaxPool, for any number of spatial dims.
//!
//! ONNX pads may be asymmetric and (for pools) as large as the kernel minus one, which
//! libtorch's own padding does not cover, so inputs are padded explicitly first. Pools then
//! cut the padded input into dilated windows (`unfold`, then every `dilation`-th element) and
//! reduce each window; a mask of the same windows tells which elements are real input (for
//! MaxPool) and which count toward AveragePool's divisor.

use super::{Args, RefError};
use tch::{Kind, Tensor};

/// The op types of this family.
pub(super) const OPS: &[&str] = &[
    "Conv",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
];

/// Window geometry of one node, per spatial dim.
struct Window {
    kernel: Vec<i64>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    /// Padding before each spatial dim.
    begin: Vec<i64>,
    /// Padding after each spatial dim, including what ceil mode adds.
    end: Vec<i64>,
    /// The part of `end` that ceil mode added (not counted as padding by AveragePool).
    extra: Vec<i64>,
}

impl Window {
    /// Reads the window attributes for input spatial sizes `input`; `kernel` defaults to the
    /// `kernel_shape` attribute.
    fn new(a: &Args, input: &[i64], kernel: Vec<i64>, ceil: bool) -> Result<Window, RefError> {
        let n = input.len();
        let list = |name: &str, default: i64| {
            let v = a.ints(name).unwrap_or_else(|| vec![default; n]);
            if v.len() == n {
                Ok(v)
            } else {
                Err(a.fail(format!(
                    "{name} has {} entries for {n} spatial dims",
                    v.len()
                )))
            }
        };
        let strides = list("strides", 1)?;
        let dilations = list("dilations", 1)?;
        if kernel.len() != n {
            return Err(a.fail("kernel rank differs from the spatial rank"));
        }
        let effective: Vec<i64> = (0..n).map(|i| dilations[i] * (kernel[i] - 1) + 1).collect();
        let (begin, mut end) = match a.string("auto_pad", "NOTSET").as_str() {
            "NOTSET" => {
                let pads = a.ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
                if pads.len() != 2 * n {
                    return Err(a.fail("pads must have two entries per spatial dim"));
                }
                (pads[..n].to_vec(), pads[n..].to_vec())
            }
            "VALID" => (vec![0; n], vec![0; n]),
            mode @ ("SAME_UPPER" | "SAME_LOWER") => {
                let mut b = Vec::with_capacity(n);
                let mut e = Vec::with_capacity(n);
                for i in 0..n {
                    let out = (input[i] + strides[i] - 1) / strides[i];
                    let total = ((out - 1) * strides[i] + effective[i] - input[i]).max(0);
                    let small = total / 2;
                    if mode == "SAME_UPPER" {
                        b.push(small);
                        e.push(total - small);
                    } else {
                        b.push(total - small);
                        e.push(small);
                    }
                }
                (b, e)
            }
            other => return Err(a.fail(format!("auto_pad {other}"))),
        };
        let mut extra = vec![0; n];
        for i in 0..n {
            let span = input[i] + begin[i] + end[i] - effective[i];
            if span < 0 {
                return Err(a.fail("the window is larger than the padded input"));
            }
            if ceil {
                let out = (span + strides[i] - 1) / strides[i] + 1;
                extra[i] = (out - 1) * strides[i] + effective[i] - (input[i] + begin[i] + end[i]);
                end[i] += extra[i];
            }
        }
        Ok(Window {
            kernel,
            strides,
            dilations,
            begin,
            end,
            extra,
        })
    }

    /// libtorch's pad list (last dim first) for `begin`/`end`.
    fn pad_list(begin: &[i64], end: &[i64]) -> Vec<i64> {
        (0..begin.len())
            .rev()
            .flat_map(|i| [begin[i], end[i]])
            .collect()
    }

    /// The dilated windows of `t` (already padded): `[.., out..., k...]`, window dims last.
    fn windows(&self, t: &Tensor) -> Result<Tensor, RefError> {
        let first = t.dim() as i64 - self.kernel.len() as i64;
        let mut w = t.shallow_clone();
        for i in 0..self.kernel.len() {
            let ek = self.dilations[i] * (self.kernel[i] - 1) + 1;
            w = w.f_unfold(first + i as i64, ek, self.strides[i])?.f_slice(
                -1,
                0,
                ek,
                self.dilations[i],
            )?;
        }
        Ok(w)
    }

    /// The window dims of [`Window::windows`]' result.
    fn window_dims(&self, rank: usize) -> Vec<i64> {
        let n = self.kernel.len();
        (rank..rank + n).map(|d| d as i64).collect()
    }
}

/// Spatial sizes of an `N, C, spatial...` tensor.
fn spatial(x: &Tensor) -> Vec<i64> {
    x.size()[2..].to_vec()
}

/// A `[1, 1, sizes...]` block of ones of `kind`, padded with `lead` zeros before and `trail`
/// zeros after each spatial dim.
fn region_mask(sizes: &[i64], lead: &[i64], trail: &[i64], kind: Kind) -> Result<Tensor, RefError> {
    let mut shape = vec![1, 1];
    shape.extend_from_slice(sizes);
    let ones = Tensor::f_ones(shape.as_slice(), (kind, tch::Device::Cpu))?;
    Ok(ones.f_constant_pad_nd(Window::pad_list(lead, trail))?)
}

/// MaxPool or AveragePool.
fn pool(a: &Args) -> Result<Tensor, RefError> {
    let x = a.x(0)?;
    if a.out.len() > 1 {
        return Err(a.unsupported("the Indices output"));
    }
    let input = spatial(x);
    let kernel = a
        .ints("kernel_shape")
        .ok_or_else(|| a.fail("kernel_shape is required"))?;
    let w = Window::new(a, &input, kernel, a.int("ceil_mode", 0) != 0)?;
    let rank = x.dim();
    let dims = w.window_dims(rank);
    let padded = x.f_constant_pad_nd(Window::pad_list(&w.begin, &w.end))?;
    let zeros = vec![0; input.len()];
    if a.op == "MaxPool" {
        let real = region_mask(&input, &w.begin, &w.end, Kind::Bool)?;
        let fill = if x.is_floating_point() {
            f64::NEG_INFINITY
        } else if x.kind() == Kind::Uint8 {
            0.0
        } else {
            -128.0
        };
        let filled = padded.f_where_scalarother(&real, fill)?;
        return Ok(w.windows(&filled)?.f_amax(dims.as_slice(), false)?);
    }
    let sums = w
        .windows(&padded)?
        .f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?;
    let counted = if a.int("count_include_pad", 0) != 0 {
        // The input and its explicit pads count, ceil mode's extra end does not.
        let explicit: Vec<i64> = w.end.iter().zip(&w.extra).map(|(e, x)| e - x).collect();
        let inner: Vec<i64> = (0..input.len())
            .map(|i| input[i] + w.begin[i] + explicit[i])
            .collect();
        region_mask(&inner, &zeros, &w.extra, x.kind())?
    } else {
        region_mask(&input, &w.begin, &w.end, x.kind())?
    };
    let counts = w
        .windows(&counted)?
        .f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?;
    Ok(sums.f_div(&counts)?)
}

/// Conv with explicit (possibly asymmetric) padding.
fn conv(a: &Args) -> Result<Tensor, RefError> {
    let (x, weight) = (a.x(0)?, a.x(1)?);
    let input = spatial(x);
    let kernel = a.ints("kernel_shape").unwrap_or_else(|| spatial(weight));
    let w = Window::new(a, &input, kernel, false)?;
    let padded = x.f_constant_pad_nd(Window::pad_list(&w.begin, &w.end))?;
    let n = input.len();
    Ok(padded.f_convolution(
        weight,
        a.opt(2),
        w.strides.as_slice(),
        vec![0i64; n].as_slice(),
        w.dilations.as_slice(),
        false,
        vec![0i64; n].as_slice(),
        a.int("group", 1),
    )?)
}

/// Runs one op of the family.
pub(super) fn apply(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let y = match a.op {
        "Conv" => conv(a)?,
        "MaxPool" | "AveragePool" => pool(a)?,
        "GlobalAveragePool" | "GlobalMaxPool" => {
            let x = a.x(0)?;
            let dims: Vec<i64> = (2..x.dim() as i64).collect();
            if a.op == "GlobalAveragePool" {
                x.f_mean_dim(dims.as_slice(), true, None::<Kind>)?
            } else {
                x.f_amax(dims.as_slice(), true)?
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

    fn ints(v: &[i64]) -> AttrValue<i64> {
        AttrValue::Ints(v.to_vec())
    }

    #[test]
    fn average_pool_counts_or_skips_padding() {
        let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 4]);
        let attrs = |include: i64| {
            vec![
                ("kernel_shape", ints(&[3])),
                ("pads", ints(&[1, 1])),
                ("strides", ints(&[2])),
                ("count_include_pad", AttrValue::Int(include)),
            ]
        };
        // Windows over [0, 1, 2, 3, 4, 0]: [0,1,2] and [2,3,4].
        let y = run1(
            "AveragePool",
            &attrs(1),
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&y), vec![1.0, 3.0]);
        let y = run1("AveragePool", &attrs(0), vec![Some(x)], DType::F32);
        assert_eq!(values(&y), vec![1.5, 3.0]);
    }

    #[test]
    fn max_pool_ceil_mode_dilation_and_negative_inputs() {
        let x = f32s(&[-5.0, -1.0, -3.0, -2.0, -4.0], &[1, 1, 5]);
        let y = run1(
            "MaxPool",
            &[
                ("kernel_shape", ints(&[2])),
                ("strides", ints(&[2])),
                ("pads", ints(&[1, 0])),
                ("ceil_mode", AttrValue::Int(1)),
            ],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        // Padded [pad, -5, -1, -3, -2, -4]: windows [pad,-5], [-1,-3], [-2,-4].
        assert_eq!(values(&y), vec![-5.0, -1.0, -2.0]);
        let d = run1(
            "MaxPool",
            &[("kernel_shape", ints(&[2])), ("dilations", ints(&[3]))],
            vec![Some(x)],
            DType::F32,
        );
        // Pairs (0,3), (1,4): max(-5,-2), max(-1,-4).
        assert_eq!(values(&d), vec![-2.0, -1.0]);
    }

    #[test]
    fn grouped_conv_with_asymmetric_pads() {
        // Two channels, depthwise kernel [1, 1] per channel, pads (1 before, 0 after).
        let x = f32s(&[1.0, 2.0, 3.0, 10.0, 20.0, 30.0], &[1, 2, 3]);
        let w = f32s(&[1.0, 1.0, 2.0, 0.0], &[2, 1, 2]);
        let y = run1(
            "Conv",
            &[("group", AttrValue::Int(2)), ("pads", ints(&[1, 0]))],
            vec![Some(x), Some(w)],
            DType::F32,
        );
        assert_eq!(y.size(), vec![1, 2, 3]);
        assert_eq!(values(&y), vec![1.0, 3.0, 5.0, 0.0, 20.0, 40.0]);
    }
}
