//! Normalizations: BatchNormalization (inference mode), InstanceNormalization and
//! LayerNormalization. Each emits one output of the input's shape.

use super::accumulation::{self, Affine, Terms};
use super::eval;
use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::shape::norm_axis;
use super::{
    uniform_sigs_with_arities, AttrCx, AttrValue, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor,
    ValueDomain,
};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use tch::{Kind, Tensor};

/// An `epsilon` attribute: the ONNX default `1e-5` or a larger value on a 1/16 grid.
fn epsilon(cx: &mut AttrCx, attrs: &mut SymAttrs) {
    let eps = if cx.flip() {
        1e-5
    } else {
        cx.float(0.0625, 1.0)
    };
    attrs.set("epsilon", AttrValue::Float(eps));
}

/// A normalization with per-channel 1-D parameters of size `C = X.shape[1]`.
#[derive(Clone)]
struct ChannelNorm {
    /// ONNX op type.
    name: &'static str,
    /// Number of 1-D parameter inputs after X.
    params: usize,
    /// Accepted ranks of X.
    x_ranks: RangeInclusive<usize>,
    /// Whether the last parameter is a variance (must be positive).
    last_is_variance: bool,
    /// Its evaluation on the reference.
    evaluate: fn(&Args) -> Result<Vec<Tensor>, RefError>,
}

/// The per-channel normalizations.
const CHANNEL_NORMS: &[ChannelNorm] = &[
    ChannelNorm {
        name: "BatchNormalization",
        params: 4,
        x_ranks: 2..=4,
        last_is_variance: true,
        evaluate: batch_norm,
    },
    ChannelNorm {
        name: "InstanceNormalization",
        params: 2,
        x_ranks: 3..=4,
        last_is_variance: false,
        evaluate: instance_norm,
    },
];

impl OpSpec for ChannelNorm {
    fn affine_form(&self, node: &Terms) -> Result<Option<Affine>, RefError> {
        let get = |i: usize| node.inputs.get(i).and_then(Option::as_ref);
        let Some(x) = get(0) else { return Ok(None) };
        let rank = x.dim();
        let p = |i: usize| get(i).map(|t| per_channel(t, rank)).transpose();
        if self.name == "BatchNormalization" {
            // Inference mode: its moments are given.
            let (Some(scale), Some(bias), Some(mean), Some(var)) = (p(1)?, p(2)?, p(3)?, p(4)?)
            else {
                return Ok(None);
            };
            return Ok(Some(Affine {
                mean,
                var,
                scale,
                bias: Some(bias),
                dims: None,
            }));
        }
        let dims: Vec<i64> = (2..rank as i64).collect();
        let (mean, var) = moments(x, &dims)?;
        let (Some(scale), Some(bias)) = (p(1)?, p(2)?) else {
            return Ok(None);
        };
        Ok(Some(Affine {
            mean,
            var,
            scale,
            bias: Some(bias),
            dims: Some(dims),
        }))
    }

    fn accumulated_terms(&self, node: &Terms) -> f64 {
        match self.name {
            // Statistics over each instance's spatial elements.
            "InstanceNormalization" => accumulation::product(node.size(0).get(2..).unwrap_or(&[])),
            // Inference mode: given statistics, an affine form per element.
            _ => 1.0,
        }
    }

    fn ambiguous(&self, node: &NodeValues) -> fragility::Verdict {
        // InstanceNormalization leaves the precision of its mean and variance open (unlike
        // LayerNormalization's `stash_type`): on float16, a kernel that computes them in
        // float16 overflows where an instance's sum of squares leaves the float16 range, one
        // that computes them in float32 (ONNX Runtime) does not.
        if self.name != "InstanceNormalization" || node.in_dtype() != DType::F16 {
            return Ok(None);
        }
        let x = node.double(0);
        let spatial: Vec<i64> = (2..x.dim() as i64).collect();
        let overflows = !spatial.is_empty()
            && fragility::any(
                &x.square()
                    .sum_dim_intlist(spatial.as_slice(), false, Kind::Double)
                    .gt(f64::from(half::f16::MAX)),
            );
        Ok(overflows.then_some("InstanceNormalization: float16 statistics whose sum of squares leaves the float16 range (their precision is unspecified)"))
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        (self.evaluate)(a)
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::ElementaryAccumulating
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        DType::FLOATS
            .iter()
            .map(|t| Sig::uniform(*t, 1 + self.params))
            .collect()
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        let mut ranks = vec![self.x_ranks.clone()];
        ranks.extend(std::iter::repeat_n(1..=1, self.params));
        ranks
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        _u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        self.x_ranks.contains(&out_rank).then(|| {
            let mut ranks = vec![out_rank];
            ranks.extend(std::iter::repeat_n(1, self.params));
            ranks
        })
    }

    fn input_domains(&self, _sig: &Sig) -> Vec<ValueDomain> {
        let mut domains = vec![ValueDomain::Any; 1 + self.params];
        if self.last_is_variance {
            domains[self.params] = ValueDomain::Positive;
        }
        domains
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        epsilon(cx, &mut attrs);
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let channels = &inputs[0].dims[1];
        inputs[1..].iter().map(|p| p.dims[0].eq(channels)).collect()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// `LayerNormalization(X, Scale[, B])` over the trailing axes `axis..`; Scale and B have the
/// shape `X.shape[axis:]`, so their rank fixes `axis`. Only output Y is emitted.
struct LayerNorm;

impl OpSpec for LayerNorm {
    fn affine_form(&self, node: &Terms) -> Result<Option<Affine>, RefError> {
        let get = |i: usize| node.inputs.get(i).and_then(Option::as_ref);
        let (Some(x), Some(scale)) = (get(0), get(1)) else {
            return Ok(None);
        };
        let axis = norm_axis(node.int("axis", -1), x.dim()) as i64;
        let dims: Vec<i64> = (axis..x.dim() as i64).collect();
        let (mean, var) = moments(x, &dims)?;
        Ok(Some(Affine {
            mean,
            var,
            scale: scale.shallow_clone(),
            bias: get(2).map(Tensor::shallow_clone),
            dims: Some(dims),
        }))
    }

    fn accumulated_terms(&self, node: &Terms) -> f64 {
        let x = node.size(0);
        accumulation::product(&x[node.axis(node.int("axis", -1))..])
    }

    fn working_type(&self, attrs: &[(String, AttrValue<i64>)]) -> Option<DType> {
        // "stash_type: Type of Mean and InvStdDev. This also specifies stage one's
        // computation precision." (default 1, float32): a float64 LayerNormalization may
        // compute its statistics in float32.
        let stash = eval::int_attr(attrs, "stash_type", 1);
        DType::ALL
            .into_iter()
            .find(|d| i64::from(d.onnx_code()) == stash && d.is_float())
    }

    fn ambiguous(&self, node: &NodeValues) -> fragility::Verdict {
        // LayerNormalization-17 on float64 with the default `stash_type` (1, float32): its
        // function body casts X to float32 for stage one ("This also specifies stage one's
        // computation precision"), where a large mean cancels; ONNX Runtime and
        // `onnx.reference` (before onnx/onnx#8439) compute it in float64. Both readings are in
        // use.
        Ok((node.in_dtype() == DType::F64 && node.int("stash_type", 1) == 1)
            .then_some("LayerNormalization: float64 with stage one stashed in float32 (function body vs onnx.reference)"))
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let x = a.x(0)?;
        let rank = x.dim();
        let eps = a.float("epsilon", 1e-5);
        let axis = eval::norm_axis(a.int("axis", -1), rank)?;
        let dims: Vec<i64> = (axis as i64..rank as i64).collect();
        let (mean, var) = moments(x, &dims)?;
        let inv = var.f_add_scalar(eps)?.f_rsqrt()?;
        let mut y = x.f_sub(&mean)?.f_mul(&inv)?.f_mul(a.x(1)?)?;
        if let Some(b) = a.opt(2) {
            y = y.f_add(b)?;
        }
        Ok(vec![y, mean, inv])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::ElementaryAccumulating
    }

    fn name(&self) -> &'static str {
        "LayerNormalization"
    }

    fn sigs(&self) -> Vec<Sig> {
        uniform_sigs_with_arities(&DType::FLOATS, &[2, 3])
    }

    fn input_ranks(&self, sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=super::MAX_RANK; sig.inputs.len()]
    }

    fn infer_input_types(
        &self,
        sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        if out_rank == 0 {
            return None;
        }
        let normalized = u.int_in_range(1..=out_rank).unwrap_or(1);
        let mut ranks = vec![out_rank, normalized];
        if sig.inputs.len() == 3 {
            ranks.push(normalized);
        }
        Some(ranks)
    }

    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let rank = inputs[0].rank() as i64;
        let axis = rank - inputs[1].rank() as i64;
        let axis = if axis > 0 && cx.flip() {
            axis - rank
        } else {
            axis
        };
        let mut attrs = SymAttrs::default();
        attrs.set("axis", AttrValue::Int(Int::from(axis)));
        epsilon(cx, &mut attrs);
        attrs
    }

    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let x = &inputs[0];
        let axis = attrs.int("axis").as_const().unwrap_or(0);
        if axis < -(x.rank() as i64) || axis >= x.rank() as i64 {
            return vec![Bool::from(false)];
        }
        let tail = &x.dims[norm_axis(axis, x.rank())..];
        let mut reqs = Vec::new();
        for p in &inputs[1..] {
            if p.rank() != tail.len() {
                return vec![Bool::from(false)];
            }
            reqs.extend(p.dims.iter().zip(tail).map(|(a, b)| a.eq(b)));
        }
        reqs
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// The normalization family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    let mut all: Vec<Box<dyn OpSpec>> = CHANNEL_NORMS
        .iter()
        .map(|n| Box::new(n.clone()) as Box<dyn OpSpec>)
        .collect();
    all.push(Box::new(LayerNorm));
    all
}

/// A per-channel `[C]` parameter shaped to broadcast against an `N, C, spatial...` tensor.
fn per_channel(p: &Tensor, rank: usize) -> Result<Tensor, RefError> {
    let mut shape = vec![-1i64];
    shape.extend(std::iter::repeat_n(1, rank.saturating_sub(2)));
    Ok(p.f_reshape(shape.as_slice())?)
}

/// The mean and biased variance of `x` over `dims`, keeping them.
fn moments(x: &Tensor, dims: &[i64]) -> Result<(Tensor, Tensor), RefError> {
    let mean = x.f_mean_dim(dims, true, None::<Kind>)?;
    let centered = x.f_sub(&mean)?;
    let var = centered
        .f_mul(&centered)?
        .f_mean_dim(dims, true, None::<Kind>)?;
    Ok((mean, var))
}

/// BatchNormalization in inference mode.
fn batch_norm(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let rank = x.dim();
    let eps = a.float("epsilon", 1e-5);
    if a.int("training_mode", 0) != 0 || a.out.len() > 1 {
        return Err(a.unsupported("training mode"));
    }
    let [scale, bias, mean, var] = [1, 2, 3, 4].map(|i| a.x(i).and_then(|t| per_channel(t, rank)));
    let inv = var?.f_add_scalar(eps)?.f_rsqrt()?;
    let y = x
        .f_sub(&mean?)?
        .f_mul(&inv)?
        .f_mul(&scale?)?
        .f_add(&bias?)?;
    Ok(vec![y])
}

/// InstanceNormalization: each channel of each sample normalized over its spatial dims.
fn instance_norm(a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let rank = x.dim();
    let eps = a.float("epsilon", 1e-5);
    let dims: Vec<i64> = (2..rank as i64).collect();
    let (mean, var) = moments(x, &dims)?;
    let y = x
        .f_sub(&mean)?
        .f_mul(&var.f_add_scalar(eps)?.f_rsqrt()?)?
        .f_mul(&per_channel(a.x(1)?, rank)?)?
        .f_add(&per_channel(a.x(2)?, rank)?)?;
    Ok(vec![y])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::*;
    use crate::sym::vars::VarTable;

    fn holds(reqs: &[Bool]) -> bool {
        reqs.iter().all(|r| r.as_const().expect("constant"))
    }

    fn spec(name: &str) -> Box<dyn OpSpec> {
        specs()
            .into_iter()
            .find(|s| s.name() == name)
            .expect("registered")
    }

    #[test]
    fn batch_norm_params_have_size_c_and_positive_variance() {
        let bn = spec("BatchNormalization");
        let sig = Sig::uniform(DType::F32, 5);
        assert_eq!(bn.input_domains(&sig)[4], ValueDomain::Positive);
        assert_eq!(bn.input_domains(&sig)[1], ValueDomain::Any);
        let mut ins = vec![tensor(&[2, 3, 4])];
        ins.extend((0..4).map(|_| tensor(&[3])));
        assert!(holds(&bn.requires(&SymAttrs::default(), &ins)));
        assert_eq!(bn.type_transfer(&SymAttrs::default(), &ins)[0].len(), 3);
        ins[3] = tensor(&[4]);
        assert!(!holds(&bn.requires(&SymAttrs::default(), &ins)));
        assert_eq!(
            bn.infer_input_types(&sig, 1, &mut Unstructured::new(&[])),
            None
        );
    }

    #[test]
    fn layer_norm_axis_follows_scale_rank() {
        let ln = spec("LayerNormalization");
        let sig = Sig::uniform(DType::F32, 3);
        let ins = [tensor(&[2, 4, 5]), tensor(&[4, 5]), tensor(&[4, 5])];
        for byte in [0u8, 1] {
            let bytes = [byte; 8];
            let mut u = Unstructured::new(&bytes);
            let mut vars = VarTable::default();
            let mut cx = AttrCx {
                u: &mut u,
                vars: &mut vars,
                sig: &sig,
                class: super::super::DEFAULT_CLASS,
                out_rank: None,
            };
            let attrs = ln.attrs(&mut cx, &ins);
            let axis = attrs.int("axis").as_const().unwrap();
            assert!(axis == 1 || axis == -2, "{axis}");
            assert!(holds(&ln.requires(&attrs, &ins)));
            let swapped = [tensor(&[2, 4, 5]), tensor(&[5, 4]), tensor(&[4, 5])];
            assert!(!holds(&ln.requires(&attrs, &swapped)));
        }
        let ranks = ln
            .infer_input_types(&sig, 3, &mut Unstructured::new(&[7]))
            .unwrap();
        assert_eq!(ranks[0], 3);
        assert_eq!(ranks[1], ranks[2]);
        assert!((1..=3).contains(&ranks[1]));
    }

    #[test]
    fn instance_norm_needs_spatial_dims() {
        let inorm = spec("InstanceNormalization");
        let sig = Sig::uniform(DType::F16, 3);
        assert_eq!(
            inorm.infer_input_types(&sig, 2, &mut Unstructured::new(&[])),
            None
        );
        assert_eq!(
            inorm.infer_input_types(&sig, 4, &mut Unstructured::new(&[])),
            Some(vec![4, 1, 1])
        );
        let ins = [tensor(&[1, 6, 3, 3]), tensor(&[6]), tensor(&[6])];
        assert!(holds(&inorm.requires(&SymAttrs::default(), &ins)));
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;

    #[test]
    fn batch_norm_uses_running_statistics_and_epsilon() {
        let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 2, 2]);
        let p = |v: [f32; 2]| Some(f32s(&v, &[2]));
        let y = run1(
            "BatchNormalization",
            &[("epsilon", AttrValue::Float(0.0))],
            vec![
                Some(x),
                p([2.0, 1.0]),
                p([0.0, 1.0]),
                p([1.0, 3.0]),
                p([4.0, 1.0]),
            ],
            DType::F32,
        );
        // Channel 0: 2 * (x - 1) / 2; channel 1: (x - 3) / 1 + 1.
        assert_eq!(values(&y), vec![0.0, 1.0, 1.0, 2.0]);
    }

    #[test]
    fn layer_norm_normalizes_trailing_axes() {
        let x = f32s(&[1.0, 3.0, 10.0, 30.0], &[2, 2]);
        let y = run1(
            "LayerNormalization",
            &[("epsilon", AttrValue::Float(0.0))],
            vec![
                Some(x),
                Some(f32s(&[1.0, 2.0], &[2])),
                Some(f32s(&[0.5, 0.0], &[2])),
            ],
            DType::F32,
        );
        assert_eq!(values(&y), vec![-0.5, 2.0, -0.5, 2.0]);
    }

    #[test]
    fn instance_norm_is_per_sample_and_channel() {
        let x = f32s(&[1.0, 3.0, 5.0, 5.0], &[1, 2, 2]);
        let eps = 0.25f32;
        let y = run1(
            "InstanceNormalization",
            &[("epsilon", AttrValue::Float(eps))],
            vec![
                Some(x),
                Some(f32s(&[1.0, 1.0], &[2])),
                Some(f32s(&[0.0, 7.0], &[2])),
            ],
            DType::F32,
        );
        let k = 1.0 / (1.0f64 + 0.25).sqrt();
        let got = values(&y);
        for (g, w) in got.iter().zip([-k, k, 7.0, 7.0]) {
            assert!((g - w).abs() < 1e-6, "{got:?}");
        }
    }
}
