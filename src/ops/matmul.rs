//! Matrix products: `MatMul` (numpy semantics, 1-D promotion and batch broadcasting) and
//! `Gemm` (2-D, optional transposes, `alpha`/`beta`, optional broadcast bias `C`).

use super::accumulation::Terms;
use super::eval::{Args, RefError};
use super::shape::broadcast;
use super::torch_form::{TorchForm, TorchWriter};
use super::{AttrCx, AttrValue, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor, MAX_RANK};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use tch::Tensor;

/// Types both `MatMul` and `Gemm` take (bfloat16 aside).
const TYPES: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
];

/// Output rank of `MatMul` on inputs of ranks `a` and `b` (both at least 1).
fn matmul_rank(a: usize, b: usize) -> usize {
    a.saturating_sub(2).max(b.saturating_sub(2)) + usize::from(a >= 2) + usize::from(b >= 2)
}

/// `MatMul` of shapes `a` and `b`: (requires, output dims). A 1-D operand is promoted to a
/// row (left) or column (right) vector whose extra dim is then dropped.
fn matmul_shape(a: &[Int], b: &[Int]) -> (Vec<Bool>, Vec<Int>) {
    let (a_batch, n, ka) = match a.len() {
        1 => (&a[..0], None, &a[0]),
        r => (&a[..r - 2], Some(&a[r - 2]), &a[r - 1]),
    };
    let (b_batch, kb, m) = match b.len() {
        1 => (&b[..0], &b[0], None),
        r => (&b[..r - 2], &b[r - 2], Some(&b[r - 1])),
    };
    let (mut reqs, mut out) = broadcast(&[a_batch, b_batch]);
    reqs.push(ka.eq(kb));
    out.extend(n.cloned());
    out.extend(m.cloned());
    (reqs, out)
}

/// `MatMul(A, B)` with inputs of rank 1 to 4.
struct MatMul;

impl OpSpec for MatMul {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        node.along(-1)
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        Ok(vec![a.x(0)?.f_matmul(a.x(1)?)?])
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        Some(TorchWriter::new(|_| {
            Ok(TorchForm::whole("torch.matmul({0}, {1})".into(), true))
        }))
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "MatMul"
    }

    fn sigs(&self) -> Vec<Sig> {
        TYPES.iter().map(|t| Sig::uniform(*t, 2)).collect()
    }

    fn input_ranks(&self, _sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![1..=MAX_RANK, 1..=MAX_RANK]
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        let pairs: Vec<Vec<usize>> = (1..=MAX_RANK)
            .flat_map(|a| (1..=MAX_RANK).map(move |b| vec![a, b]))
            .filter(|p| matmul_rank(p[0], p[1]) == out_rank)
            .collect();
        let i = u.choose_index(pairs.len()).ok()?;
        Some(pairs[i].clone())
    }

    fn requires(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        matmul_shape(&inputs[0].dims, &inputs[1].dims).0
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![matmul_shape(&inputs[0].dims, &inputs[1].dims).1]
    }
}

/// `Gemm(A, B[, C])`: `alpha * A' * B' + beta * C` with `A'`, `B'` optionally transposed and
/// `C` unidirectionally broadcast to `(M, N)`. Signatures with 2 and with 3 inputs.
struct Gemm;

impl Gemm {
    /// `(M, K)` of `A` and `(K, N)` of `B` after the transposes.
    fn operands<'a>(
        attrs: &SymAttrs,
        inputs: &'a [SymTensor],
    ) -> ((&'a Int, &'a Int), (&'a Int, &'a Int)) {
        let trans = |name| attrs.int(name).as_const() == Some(1);
        let (a, b) = (&inputs[0].dims, &inputs[1].dims);
        let a = if trans("transA") {
            (&a[1], &a[0])
        } else {
            (&a[0], &a[1])
        };
        let b = if trans("transB") {
            (&b[1], &b[0])
        } else {
            (&b[0], &b[1])
        };
        (a, b)
    }
}

/// An `alpha`/`beta` value: on a 1/16 grid for floats, a small integer for integer types.
fn scale(cx: &mut AttrCx) -> f32 {
    if cx.sig.inputs[0].is_float() {
        cx.float(-2.0, 2.0)
    } else {
        cx.pick(-2, 2) as f32
    }
}

impl OpSpec for Gemm {
    fn accumulated_terms(&self, node: &Terms) -> f64 {
        // The inner dimension: A's second dim, or its first when A is transposed.
        node.along(if node.int("transA", 0) != 0 { 0 } else { 1 })
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let t = |x: &Tensor, attr: &str| -> Result<Tensor, RefError> {
            Ok(if a.int(attr, 0) != 0 {
                x.f_transpose(0, 1)?
            } else {
                x.shallow_clone()
            })
        };
        let ab = t(a.x(0)?, "transA")?.f_matmul(&t(a.x(1)?, "transB")?)?;
        let y = scaled(&ab, a.float("alpha", 1.0))?;
        Ok(vec![match a.opt(2) {
            Some(c) => y.f_add(&scaled(c, a.float("beta", 1.0))?)?,
            None => y,
        }])
    }

    fn rounding(&self) -> RoundingClass {
        RoundingClass::Accumulating
    }

    fn name(&self) -> &'static str {
        "Gemm"
    }

    fn sigs(&self) -> Vec<Sig> {
        TYPES
            .iter()
            .flat_map(|t| [Sig::uniform(*t, 2), Sig::uniform(*t, 3)])
            .collect()
    }

    fn input_ranks(&self, sig: &Sig) -> Vec<RangeInclusive<usize>> {
        let mut ranks = vec![2..=2, 2..=2];
        if sig.inputs.len() == 3 {
            ranks.push(0..=2);
        }
        ranks
    }

    fn infer_input_types(
        &self,
        sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        let mut ranks = vec![2, 2];
        if sig.inputs.len() == 3 {
            ranks.push(u.int_in_range(0..=2).unwrap_or(2));
        }
        (out_rank == 2).then_some(ranks)
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        let (trans_a, trans_b) = (cx.flip(), cx.flip());
        attrs.set("transA", AttrValue::Int(Int::from(i64::from(trans_a))));
        attrs.set("transB", AttrValue::Int(Int::from(i64::from(trans_b))));
        attrs.set("alpha", AttrValue::Float(scale(cx)));
        if cx.sig.inputs.len() == 3 {
            attrs.set("beta", AttrValue::Float(scale(cx)));
        }
        attrs
    }

    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        let ((m, ka), (kb, n)) = Gemm::operands(attrs, inputs);
        let mut reqs = vec![ka.eq(kb)];
        if let Some(c) = inputs.get(2) {
            let target = [m, n];
            let aligned = target[2 - c.rank()..].iter();
            reqs.extend(
                c.dims
                    .iter()
                    .zip(aligned)
                    .map(|(d, t)| Bool::or([d.eq(1i64), d.eq(*t)])),
            );
        }
        reqs
    }

    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        let ((m, _), (_, n)) = Gemm::operands(attrs, inputs);
        vec![vec![m.clone(), n.clone()]]
    }
}

/// The matrix-product family, in registry order.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    vec![Box::new(MatMul), Box::new(Gemm)]
}

/// `t * s`: a float scalar on floats; on integers an integral `s` multiplies exactly (and
/// wraps), any other is applied in `f64` and truncated.
fn scaled(t: &Tensor, s: f64) -> Result<Tensor, RefError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::*;

    /// Output shape of `spec` on concrete inputs, or `None` when a constant require fails.
    fn infer(spec: &dyn OpSpec, attrs: &SymAttrs, inputs: &[SymTensor]) -> Option<Vec<i64>> {
        let ok = spec
            .requires(attrs, inputs)
            .iter()
            .all(|r| r.as_const() == Some(true));
        let out = spec.type_transfer(attrs, inputs);
        ok.then(|| out[0].iter().map(|d| d.as_const().unwrap()).collect())
    }

    #[test]
    fn matmul_follows_numpy() {
        let none = SymAttrs::default();
        let mm = |a: &[i64], b: &[i64]| infer(&MatMul, &none, &[tensor(a), tensor(b)]);
        assert_eq!(mm(&[3], &[2, 3, 4]), Some(vec![2, 4]));
        assert_eq!(mm(&[5, 2, 3], &[3]), Some(vec![5, 2]));
        assert_eq!(mm(&[5, 2, 3], &[3, 4]), Some(vec![5, 2, 4]));
        assert_eq!(mm(&[2, 1, 3, 4], &[6, 4, 5]), Some(vec![2, 6, 3, 5]));
        assert_eq!(mm(&[3], &[3]), Some(vec![]));
        assert_eq!(mm(&[2, 3], &[4, 5]), None);
        assert_eq!(mm(&[2, 2, 3], &[3, 3, 4]), None);
        for a in 1..=MAX_RANK {
            for b in 1..=MAX_RANK {
                let (x, y) = (vec![2; a], vec![2; b]);
                assert_eq!(mm(&x, &y).unwrap().len(), matmul_rank(a, b));
            }
        }
    }

    #[test]
    fn gemm_transposes_and_broadcasts_c() {
        let mut attrs = SymAttrs::default();
        attrs.set("transA", AttrValue::Int(Int::from(1i64)));
        attrs.set("transB", AttrValue::Int(Int::from(0i64)));
        let (a, b) = (tensor(&[4, 3]), tensor(&[4, 5]));
        assert_eq!(
            infer(&Gemm, &attrs, &[a.clone(), b.clone()]),
            Some(vec![3, 5])
        );
        assert_eq!(
            infer(&Gemm, &attrs, &[a.clone(), b.clone(), tensor(&[5])]),
            Some(vec![3, 5])
        );
        assert_eq!(
            infer(&Gemm, &attrs, &[a.clone(), b.clone(), tensor(&[3, 1])]),
            Some(vec![3, 5])
        );
        assert_eq!(
            infer(&Gemm, &attrs, &[a.clone(), b.clone(), tensor(&[])]),
            Some(vec![3, 5])
        );
        assert_eq!(
            infer(&Gemm, &attrs, &[a.clone(), b.clone(), tensor(&[3])]),
            None
        );
        assert_eq!(infer(&Gemm, &attrs, &[tensor(&[3, 4]), b]), None);
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
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
