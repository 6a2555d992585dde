//! Broadcasting element-wise ops of two (or, for `Max`/`Min`/`Sum`/`Mean`, any number of)
//! inputs: the reference runs each op's declared evaluation ([`crate::ops::binary`]). libtorch
//! broadcasts like numpy, which is ONNX's multidirectional broadcasting.

use super::{Args, RefError};
use crate::ops::binary::{evaluate, Arity, Binary, EvalArgs};
use tch::Tensor;

/// Runs the declared op `row`.
pub(super) fn apply(row: &Binary, a: &Args) -> Result<Vec<Tensor>, RefError> {
    let inputs = match row.arity {
        Arity::Two => vec![a.x(0)?, a.x(1)?],
        Arity::Fold | Arity::Mean => a.present(),
    };
    let int = |name: &str, default: i64| a.int(name, default);
    let string = |name: &str| a.string(name, "");
    let args = EvalArgs {
        dtype: a.dtype(0),
        dtype1: a.dtype(1),
        int: &int,
        string: &string,
    };
    Ok(vec![evaluate(row, &inputs, &args)?])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;
    use tch::{Kind, Tensor};

    fn ints(v: &[i64]) -> Tensor {
        i64s(v, &[v.len() as i64])
    }

    #[test]
    fn integer_div_truncates_and_mod_follows_fmod() {
        let a = ints(&[7, -7, 7, -7]);
        let b = ints(&[2, 2, -2, -2]);
        let div = run1(
            "Div",
            &[],
            vec![Some(a.shallow_clone()), Some(b.shallow_clone())],
            DType::I64,
        );
        assert_eq!(values(&div), vec![3.0, -3.0, -3.0, 3.0]);
        let py = run1(
            "Mod",
            &[("fmod", AttrValue::Int(0))],
            vec![Some(a.shallow_clone()), Some(b.shallow_clone())],
            DType::I64,
        );
        assert_eq!(values(&py), vec![1.0, 1.0, -1.0, -1.0]);
        let c = run1(
            "Mod",
            &[("fmod", AttrValue::Int(1))],
            vec![Some(a), Some(b)],
            DType::I64,
        );
        assert_eq!(values(&c), vec![1.0, -1.0, 1.0, -1.0]);
        let fa = f32s(&[5.5, -5.5], &[2]);
        let fb = f32s(&[2.0, 2.0], &[2]);
        let f = run1(
            "Mod",
            &[("fmod", AttrValue::Int(1))],
            vec![Some(fa), Some(fb)],
            DType::F32,
        );
        assert_eq!(values(&f), vec![1.5, -1.5]);
    }

    #[test]
    fn broadcasting_is_multidirectional() {
        let a = f32s(&[1.0, 2.0, 3.0], &[3, 1]);
        let b = f32s(&[10.0, 20.0], &[1, 2]);
        let y = run1("Add", &[], vec![Some(a), Some(b)], DType::F32);
        assert_eq!(y.size(), vec![3, 2]);
        assert_eq!(values(&y), vec![11.0, 21.0, 12.0, 22.0, 13.0, 23.0]);
    }

    #[test]
    fn unsigned_arithmetic_wraps_and_compares_unsigned() {
        // u32 carried in i64: 1 - 2 wraps to 2^32 - 1.
        let d = run1(
            "Sub",
            &[],
            vec![Some(ints(&[1])), Some(ints(&[2]))],
            DType::U32,
        );
        assert_eq!(values(&d), vec![4294967295.0]);
        // u16 carried in i32: 300 * 300 = 90000 wraps to 24464.
        let m = Tensor::from_slice(&[300i32]);
        let p = run1(
            "Mul",
            &[],
            vec![Some(m.shallow_clone()), Some(m)],
            DType::U16,
        );
        assert_eq!(values(&p), vec![24464.0]);
        // u64 bit patterns: 2^64 - 1 > 1.
        let outs = super::super::apply_typed(
            "Greater",
            &[],
            &[Some(ints(&[-1])), Some(ints(&[1]))],
            &[Some(DType::U64), Some(DType::U64)],
            &[DType::Bool],
        )
        .unwrap();
        assert_eq!(outs[0].kind(), Kind::Bool);
        assert_eq!(values(&outs[0]), vec![1.0]);
        let u8s = Tensor::from_slice(&[200u8, 3]);
        let shifted = run1(
            "BitShift",
            &[("direction", AttrValue::Str("LEFT".into()))],
            vec![Some(u8s), Some(Tensor::from_slice(&[1u8, 2]))],
            DType::U8,
        );
        assert_eq!(values(&shifted), vec![144.0, 12.0]);
    }

    #[test]
    fn variadic_ops_fold_every_input() {
        let xs: Vec<Option<Tensor>> = [1.0f32, 4.0, 2.5]
            .iter()
            .map(|v| Some(f32s(&[*v], &[1])))
            .collect();
        assert_eq!(values(&run1("Max", &[], dup(&xs), DType::F32)), vec![4.0]);
        assert_eq!(values(&run1("Sum", &[], dup(&xs), DType::F32)), vec![7.5]);
        assert_eq!(values(&run1("Mean", &[], xs, DType::F32)), vec![2.5]);
    }
}
