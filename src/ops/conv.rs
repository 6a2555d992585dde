//! Sliding-window ops over `N, C, spatial...` tensors: Conv (1-D and 2-D), MaxPool,
//! AveragePool, GlobalAveragePool and GlobalMaxPool.
//!
//! Kernel sizes, strides, pads and dilations are solver variables, so backward insertion can
//! hit a wanted output size: each spatial output is
//! `floor((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1` (or the
//! ceil-mode variant of pools, see [`window`]).

use super::{
    same_rank_within, uniform_sigs, uniform_sigs_with_arities, AttrCx, AttrValue, OpSpec,
    RoundingClass, Sig, SymAttrs, SymTensor,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;

/// Ranks of the `N, C, spatial...` tensors these ops take: 1-D and 2-D windows.
const WINDOW_RANKS: RangeInclusive<usize> = 3..=4;

/// Largest kernel size a pool draws.
const MAX_KERNEL: i64 = 5;
/// Largest stride.
const MAX_STRIDE: i64 = 3;
/// Largest pad on either side.
const MAX_PAD: i64 = 2;
/// Largest dilation.
const MAX_DILATION: i64 = 2;

/// Attribute classes of the pools: `ceil_mode` 0 or 1.
const CEIL_CLASSES: [&str; 2] = ["floor", "ceil"];

/// `n` solver variables `name0..` in `[lo, hi]`.
fn vars(cx: &mut AttrCx, name: &str, n: usize, lo: i64, hi: i64) -> Vec<Int> {
    (0..n)
        .map(|i| cx.var(&format!("{name}{i}"), lo, hi))
        .collect()
}

/// Sets `kernel_shape`, `strides`, `pads` and (when `dilate`) `dilations` for `spatial` dims.
/// `kernel` is the kernel size per dim (Conv takes it from its weight); pools pass `None`
/// and get solver variables.
fn window_attrs(
    cx: &mut AttrCx,
    attrs: &mut SymAttrs,
    spatial: usize,
    kernel: Option<Vec<Int>>,
    dilate: bool,
) {
    let kernel = kernel.unwrap_or_else(|| vars(cx, "kernel", spatial, 1, MAX_KERNEL));
    let strides = vars(cx, "stride", spatial, 1, MAX_STRIDE);
    let pads = vars(cx, "pad", 2 * spatial, 0, MAX_PAD);
    attrs.set("kernel_shape", AttrValue::Ints(kernel));
    attrs.set("strides", AttrValue::Ints(strides));
    attrs.set("pads", AttrValue::Ints(pads));
    if dilate {
        let dilations = vars(cx, "dilation", spatial, 1, MAX_DILATION);
        attrs.set("dilations", AttrValue::Ints(dilations));
    }
}

/// The requires and output sizes of the window attributes over the spatial dims of `x`.
///
/// Floor mode: `out = (in + pb + pe - ek) / s + 1` with effective kernel
/// `ek = d * (k - 1) + 1`, requiring `in + pb + pe >= ek`. Ceil mode (pools):
/// `out = ceil((in + pb + pe - ek) / s) + 1`. ONNX Runtime then drops a last window that would
/// start at or past `in + pb`, while ONNX shape inference (onnx 1.23) keeps it; ceil mode
/// therefore requires that the last window starts before `in + pb`, where both agree.
fn window(attrs: &SymAttrs, x: &[Int], pads_below_kernel: bool) -> (Vec<Bool>, Vec<Int>) {
    let spatial = &x[2..];
    let n = spatial.len();
    let kernel = attrs.ints("kernel_shape");
    let strides = attrs.ints("strides");
    let pads = attrs.ints("pads");
    let dilations = match attrs.get("dilations") {
        Some(AttrValue::Ints(d)) => d.clone(),
        _ => vec![Int::from(1i64); n],
    };
    let ceil = matches!(attrs.get("ceil_mode"), Some(AttrValue::Int(c)) if c.as_const() == Some(1));
    let mut reqs = Vec::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (k, s, d) = (&kernel[i], &strides[i], &dilations[i]);
        let (pb, pe) = (&pads[i], &pads[n + i]);
        let effective = d * (k - 1i64) + 1i64;
        let span = &spatial[i] + pb + pe - effective;
        reqs.push(span.ge(0i64));
        if pads_below_kernel {
            reqs.push(pb.lt(k));
            reqs.push(pe.lt(k));
        }
        out.push(if ceil {
            let full = (&span + s - 1i64) / s + 1i64;
            reqs.push(((&full - 1i64) * s).lt(&spatial[i] + pb));
            full
        } else {
            &span / s + 1i64
        });
    }
    (reqs, out)
}

/// `Conv(X, W[, B])`: W is `(M, C / group, k...)`, B is `(M)`.
struct Conv;

impl OpSpec for Conv {
    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "Conv"
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs_with_arities(&DType::FLOATS, &[2, 3])
    }

    fn input_ranks(&self, sig: &Sig) -> Vec<RangeInclusive<usize>> {
        let mut ranks = vec![WINDOW_RANKS, WINDOW_RANKS];
        if sig.inputs.len() == 3 {
            ranks.push(1..=1);
        }
        ranks
    }

    fn infer_input_types(
        &self,
        sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        WINDOW_RANKS.contains(&out_rank).then(|| {
            let mut ranks = vec![out_rank, out_rank];
            if sig.inputs.len() == 3 {
                ranks.push(1);
            }
            ranks
        })
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let (x, w) = (&inputs[0], &inputs[1]);
        let spatial = x.rank() - 2;
        let kernel = (0..spatial)
            .map(|i| {
                w.dims
                    .get(2 + i)
                    .cloned()
                    .unwrap_or_else(|| Int::from(1i64))
            })
            .collect();
        let channels = x.dims[1].clone();
        // Mostly plain convolution, sometimes depthwise (group = C) or a small divisor of C.
        let group = match cx.pick(0, 3) {
            0 | 1 => Int::from(1i64),
            2 => channels,
            _ => match channels.as_const() {
                Some(c) => {
                    let divisors: Vec<i64> = (2..=c.min(8)).filter(|g| c % g == 0).collect();
                    Int::from(
                        divisors
                            .get(cx.pick(0, divisors.len() as i64 - 1) as usize)
                            .copied()
                            .unwrap_or(1),
                    )
                }
                None => Int::from(cx.pick(2, 4)),
            },
        };
        let mut attrs = SymAttrs::default();
        window_attrs(cx, &mut attrs, spatial, Some(kernel), true);
        attrs.set("group", AttrValue::Int(group));
        attrs
    }

    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let (x, w) = (&inputs[0], &inputs[1]);
        if w.rank() != x.rank() {
            return vec![Bool::from(false)];
        }
        let group = attrs.int("group");
        let mut reqs = window(attrs, &x.dims, false).0;
        reqs.push((&w.dims[1] * &group).eq(&x.dims[1]));
        reqs.push(w.dims[0].modulo(&group).eq(0i64));
        if let Some(b) = inputs.get(2) {
            reqs.push(b.dims[0].eq(&w.dims[0]));
        }
        reqs
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let x = &inputs[0];
        let mut out = vec![x.dims[0].clone(), inputs[1].dims[0].clone()];
        out.extend(window(attrs, &x.dims, false).1);
        vec![out]
    }
}

/// MaxPool or AveragePool over the spatial dims.
struct Pool {
    /// ONNX op type.
    name: &'static str,
    /// Element types the schema allows.
    types: &'static [DType],
}

/// Element types of MaxPool (opset 12+).
const POOL_TYPES_MAX: &[DType] = &[DType::F16, DType::F32, DType::F64, DType::I8, DType::U8];

impl Pool {
    /// AveragePool (which has `count_include_pad`) rather than MaxPool.
    fn is_average(&self) -> bool {
        self.name == "AveragePool"
    }
}

impl OpSpec for Pool {
    fn rounding(&self) -> RoundingClass {
        if self.is_average() {
            RoundingClass::Accumulating
        } else {
            RoundingClass::Correct
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(self.types, 1)
    }

    fn classes(&self) -> Vec<&'static str> {
        CEIL_CLASSES.to_vec()
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WINDOW_RANKS]
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        same_rank_within(&WINDOW_RANKS, out_rank)
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs {
            class: cx.class.into(),
            ..Default::default()
        };
        window_attrs(cx, &mut attrs, inputs[0].rank() - 2, None, true);
        attrs.set(
            "ceil_mode",
            AttrValue::Int(Int::from(i64::from(cx.class == CEIL_CLASSES[1]))),
        );
        if self.is_average() {
            let include = cx.flip();
            attrs.set(
                "count_include_pad",
                AttrValue::Int(Int::from(i64::from(include))),
            );
        }
        attrs
    }

    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        window(attrs, &inputs[0].dims, true).0
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let x = &inputs[0];
        let mut out = x.dims[..2].to_vec();
        out.extend(window(attrs, &x.dims, true).1);
        vec![out]
    }
}

/// GlobalAveragePool or GlobalMaxPool: `N, C, 1...`.
struct GlobalPool {
    /// ONNX op type.
    name: &'static str,
}

impl OpSpec for GlobalPool {
    fn rounding(&self) -> RoundingClass {
        match self.name {
            "GlobalAveragePool" => RoundingClass::Accumulating,
            _ => RoundingClass::Correct,
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs(&DType::FLOATS, 1)
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![WINDOW_RANKS]
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        same_rank_within(&WINDOW_RANKS, out_rank)
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let x = &inputs[0];
        let mut out = x.dims[..2].to_vec();
        out.resize(x.rank(), Int::from(1i64));
        vec![out]
    }
}

/// The convolution and pooling family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![
        Box::new(Conv),
        Box::new(Pool {
            name: "MaxPool",
            types: POOL_TYPES_MAX,
        }),
        Box::new(Pool {
            name: "AveragePool",
            types: &DType::FLOATS,
        }),
        Box::new(GlobalPool {
            name: "GlobalAveragePool",
        }),
        Box::new(GlobalPool {
            name: "GlobalMaxPool",
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::*;

    fn ints(v: &[i64]) -> AttrValue<Int> {
        AttrValue::Ints(v.iter().map(|d| Int::from(*d)).collect())
    }

    fn window_attrs_of(
        kernel: &[i64],
        strides: &[i64],
        pads: &[i64],
        dilations: &[i64],
    ) -> SymAttrs {
        let mut a = SymAttrs::default();
        a.set("kernel_shape", ints(kernel));
        a.set("strides", ints(strides));
        a.set("pads", ints(pads));
        a.set("dilations", ints(dilations));
        a
    }

    #[test]
    fn grouped_strided_padded_conv_2d() {
        let mut a = window_attrs_of(&[3, 3], &[2, 2], &[1, 1, 1, 1], &[1, 1]);
        a.set("group", AttrValue::Int(Int::from(2i64)));
        let ins = [tensor(&[1, 4, 7, 7]), tensor(&[6, 2, 3, 3]), tensor(&[6])];
        assert!(all_true(&Conv.requires(&a, &ins)));
        assert_eq!(consts(&Conv.type_transfer(&a, &ins)[0]), vec![1, 6, 4, 4]);
        let bad_bias = [tensor(&[1, 4, 7, 7]), tensor(&[6, 2, 3, 3]), tensor(&[5])];
        assert!(!all_true(&Conv.requires(&a, &bad_bias)));
        let bad_group = [tensor(&[1, 4, 7, 7]), tensor(&[6, 4, 3, 3])];
        assert!(!all_true(&Conv.requires(&a, &bad_group)));
    }

    #[test]
    fn dilated_conv_1d_and_rank_mismatch() {
        let mut a = window_attrs_of(&[3], &[1], &[0, 0], &[2]);
        a.set("group", AttrValue::Int(Int::from(1i64)));
        let ins = [tensor(&[2, 3, 10]), tensor(&[5, 3, 3])];
        assert!(all_true(&Conv.requires(&a, &ins)));
        assert_eq!(consts(&Conv.type_transfer(&a, &ins)[0]), vec![2, 5, 6]);
        let too_small = [tensor(&[2, 3, 4]), tensor(&[5, 3, 3])];
        assert!(!all_true(&Conv.requires(&a, &too_small)));
        let mismatch = [tensor(&[2, 3, 10]), tensor(&[5, 3, 3, 3])];
        assert!(!all_true(&Conv.requires(&a, &mismatch)));
    }

    #[test]
    fn pool_floor_and_ceil_modes() {
        let pool = Pool {
            name: "MaxPool",
            types: POOL_TYPES_MAX,
        };
        let x = [tensor(&[1, 2, 8, 5])];
        let mut a = window_attrs_of(&[3, 2], &[2, 2], &[0, 1, 0, 0], &[1, 1]);
        a.set("ceil_mode", AttrValue::Int(Int::from(0i64)));
        assert!(all_true(&pool.requires(&a, &x)));
        // floor((8 - 3) / 2) + 1 = 3; floor((5 + 1 - 2) / 2) + 1 = 3.
        assert_eq!(consts(&pool.type_transfer(&a, &x)[0]), vec![1, 2, 3, 3]);
        let mut a = window_attrs_of(&[3, 2], &[2, 2], &[0, 1, 0, 0], &[1, 1]);
        a.set("ceil_mode", AttrValue::Int(Int::from(1i64)));
        assert!(all_true(&pool.requires(&a, &x)));
        // ceil((8 - 3) / 2) + 1 = 4; ceil((5 + 1 - 2) / 2) + 1 = 3.
        assert_eq!(consts(&pool.type_transfer(&a, &x)[0]), vec![1, 2, 4, 3]);
    }

    #[test]
    fn pool_rejects_ambiguous_ceil_windows_and_large_pads() {
        let pool = Pool {
            name: "AveragePool",
            types: &DType::FLOATS,
        };
        let x = [tensor(&[1, 1, 8])];
        // ceil(7 / 3) + 1 = 4 windows, but the last starts at 9 >= 8: ORT drops it, ONNX keeps it.
        let mut a = window_attrs_of(&[1], &[3], &[0, 0], &[2]);
        a.set("ceil_mode", AttrValue::Int(Int::from(1i64)));
        assert!(!all_true(&pool.requires(&a, &x)));
        let mut a = window_attrs_of(&[2], &[1], &[2, 0], &[1]);
        a.set("ceil_mode", AttrValue::Int(Int::from(0i64)));
        assert!(!all_true(&pool.requires(&a, &x)));
    }

    #[test]
    fn global_pools_keep_batch_and_channels() {
        let g = GlobalPool {
            name: "GlobalMaxPool",
        };
        let out = g.type_transfer(&SymAttrs::default(), &[tensor(&[3, 5, 7, 2])]);
        assert_eq!(consts(&out[0]), vec![3, 5, 1, 1]);
        assert_eq!(
            g.infer_input_types(&Sig::uniform(DType::F32, 1), 2, &mut Unstructured::new(&[])),
            None
        );
    }
}
