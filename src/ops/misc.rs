//! Where, Cast and Clip; Dropout (inference: the identity) and Shape.

use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::numeric;
use super::shape::{broadcast, broadcast_input_ranks};
use super::torch_form::{TorchForm, TorchWriter};
#[cfg(test)]
use super::DEFAULT_CLASS;
use super::{AttrCx, AttrValue, ConstInput, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use tch::Tensor;

/// `Where(cond, x, y)` with three-way broadcasting.
struct Where;

impl OpSpec for Where {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![a.x(1)?.f_where_self(a.x(0)?, a.x(2)?)?])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Where"
    }
    fn sigs(&self) -> Vec<Sig> {
        DType::ALL
            .iter()
            .map(|t| Sig::new(vec![DType::Bool, *t, *t], vec![*t]))
            .collect()
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        Some(broadcast_input_ranks(3, out_rank, u))
    }
    fn requires(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Bool> {
        broadcast(&[&ins[0].dims, &ins[1].dims, &ins[2].dims]).0
    }
    fn type_transfer(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![broadcast(&[&ins[0].dims, &ins[1].dims, &ins[2].dims]).1]
    }
}

/// `Cast(x, to)`: one signature per (from, to) pair.
struct Cast;

impl OpSpec for Cast {
    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        if !node.float_input() {
            return Ok(false);
        }
        let x = node.double(0);
        let mx = node.margin_of(0, &x);
        // Truncation jumps at every integer; a float cast to bool jumps at zero.
        Ok(match node.out_dtype {
            DType::Bool => fragility::any(&x.abs().le_tensor(&mx)),
            out => !out.is_float() && fragility::near_grid(&x, &mx, 0.0),
        })
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        if let Some(rule) = fragility::nan_to_integer(node)? {
            return Ok(Some(rule));
        }
        // "Casting from floating point to fixed point: undefined if OOR" (out of range).
        if node.float_input() && node.out_dtype.is_int() {
            let t = node.exact(0)?.f_trunc()?;
            return Ok(fragility::outside(&t, node.out_dtype)
                .then_some("Cast: float to integer out of range is undefined"));
        }
        Ok(None)
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        // The conversion itself is the final wrap into the output carrier (see
        // `carrier::wrap`): floats truncate toward zero, integers wrap, anything nonzero is
        // true. Only `u64` sources need their bit patterns read as values first.
        Ok(vec![if a.dtype(0) == DType::U64 && a.out0().is_float() {
            numeric::to_double(a.x(0)?, DType::U64)?
        } else {
            a.x(0)?.shallow_clone()
        }])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Cast"
    }
    fn sigs(&self) -> Vec<Sig> {
        let mut sigs = Vec::new();
        for from in DType::ALL {
            for to in DType::ALL {
                sigs.push(Sig::new(vec![from], vec![to]));
            }
        }
        sigs
    }
    fn attrs(&self, cx: &mut AttrCx, _ins: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        attrs.set(
            "to",
            AttrValue::Int(Int::from(i64::from(cx.sig.outputs[0].onnx_code()))),
        );
        attrs
    }
    fn requires(&self, _a: &SymAttrs, _ins: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }
    fn type_transfer(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![ins[0].dims.clone()]
    }
}

/// `Clip(x, min, max)` with constant scalar bounds, `min <= max`.
struct Clip;

impl OpSpec for Clip {
    /// Its `min` and `max` attributes became operands 1 and 2 in opset 11.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm::operands(&["min", "max"])
    }

    /// Its class names which bounds are given (inputs 1 and 2).
    fn class_of_node(&self, node: &super::pattern_roles::NodeView) -> Option<String> {
        let class = match (node.given(1), node.given(2)) {
            (true, true) => "min_max",
            (true, false) => "min_only",
            (false, true) => "max_only",
            (false, false) => return None,
        };
        Some(class.into())
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let dtype = a.dtype(0);
        let order = |t: &Tensor| numeric::ordered(t, dtype);
        let x = order(a.x(0)?)?;
        let lo = a.opt(1).map(order).transpose()?;
        let hi = a.opt(2).map(order).transpose()?;
        let y = match (lo, hi) {
            (None, None) => x,
            (lo, hi) => x.f_clamp_tensor(lo.as_ref(), hi.as_ref())?,
        };
        Ok(vec![order(&y)?])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn proxy(&self) -> Option<super::validity::Proxy> {
        Some(super::validity::Proxy::Leaky)
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        Some(TorchWriter::new(|cx| {
            let bound = |k| cx.scalar(k).unwrap_or_else(|| "None".into());
            let template = format!("torch.clamp({{0}}, {}, {})", bound(0), bound(1));
            Ok(TorchForm::elementwise(template))
        }))
    }

    fn name(&self) -> &'static str {
        "Clip"
    }
    fn sigs(&self) -> Vec<Sig> {
        DType::numeric()
            .into_iter()
            .map(|t| Sig::uniform(t, 1))
            .collect()
    }
    fn classes(&self) -> Vec<&'static str> {
        vec!["min_max", "min_only", "max_only"]
    }
    fn attrs(&self, cx: &mut AttrCx, _ins: &[SymTensor]) -> SymAttrs {
        let dtype = cx.sig.inputs[0];
        let (lo_range, hi_range) = if dtype.is_unsigned() {
            (0.0, 6.0)
        } else {
            (-3.0, 3.0)
        };
        let a = cx.float(lo_range, hi_range) as f64;
        let b = cx.float(lo_range, hi_range) as f64;
        let (lo, hi) = if dtype.is_float() {
            (a.min(b), a.max(b))
        } else {
            (a.min(b).round(), a.max(b).round())
        };
        let consts = match cx.class {
            "min_only" => vec![ConstInput::Scalar(dtype, lo)],
            "max_only" => vec![ConstInput::Absent, ConstInput::Scalar(dtype, hi)],
            _ => vec![ConstInput::Scalar(dtype, lo), ConstInput::Scalar(dtype, hi)],
        };
        SymAttrs {
            class: cx.class.into(),
            named: Vec::new(),
            consts,
        }
    }
    fn requires(&self, _a: &SymAttrs, _ins: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }
    fn type_transfer(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![ins[0].dims.clone()]
    }
}

/// `Dropout(x)` at inference: the identity, which ONNX Runtime's `EliminateDropout` removes.
struct Dropout;

impl OpSpec for Dropout {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![a.x(0)?.shallow_clone()])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Dropout"
    }
    fn sigs(&self) -> Vec<Sig> {
        DType::FLOATS.iter().map(|t| Sig::uniform(*t, 1)).collect()
    }
    fn requires(&self, _a: &SymAttrs, _ins: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }
    fn type_transfer(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![ins[0].dims.clone()]
    }
}

/// `Shape(x)`: the dims of `x` as a 1-D `int64` tensor (rank ≥ 1, so the output is not empty).
struct Shape;

impl OpSpec for Shape {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![Tensor::from_slice(&a.x(0)?.size())])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Correct
    }

    fn name(&self) -> &'static str {
        "Shape"
    }
    fn sigs(&self) -> Vec<Sig> {
        DType::ALL
            .iter()
            .map(|t| Sig::new(vec![*t], vec![DType::I64]))
            .collect()
    }
    fn input_ranks(&self, _sig: &Sig) -> Vec<std::ops::RangeInclusive<usize>> {
        vec![1..=super::MAX_RANK]
    }
    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        (out_rank == 1)
            .then(|| vec![1 + usize::from(u.arbitrary::<u8>().unwrap_or(0)) % super::MAX_RANK])
    }
    fn requires(&self, _a: &SymAttrs, _ins: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }
    fn type_transfer(&self, _a: &SymAttrs, ins: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![vec![Int::from(ins[0].rank())]]
    }
}

/// Where, Cast and Clip.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![Box::new(Where), Box::new(Cast), Box::new(Clip)]
}

/// Dropout and Shape (registered after every earlier family, to keep the decoder stable).
pub fn late_specs() -> Vec<Box<dyn OpSpec>> {
    vec![Box::new(Dropout), Box::new(Shape)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_covers_every_pair_and_sets_to() {
        assert_eq!(Cast.sigs().len(), 144);
        let bytes = [0u8; 4];
        let mut u = Unstructured::new(&bytes);
        let mut vars = crate::sym::vars::VarTable::default();
        let sig = Sig::new(vec![DType::F32], vec![DType::I64]);
        let mut cx = AttrCx {
            u: &mut u,
            vars: &mut vars,
            sig: &sig,
            class: DEFAULT_CLASS,
            out_rank: None,
        };
        let attrs = Cast.attrs(&mut cx, &[]);
        assert_eq!(attrs.int("to").as_const(), Some(7));
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
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
