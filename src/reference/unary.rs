//! Element-wise unary math and activations: the reference runs each op's declared
//! evaluation ([`crate::ops::unary`]) with the node's float attributes (defaults filled in).

use super::{Args, RefError};
use crate::ops::unary::{evaluate, EvalArgs, Unary};
use tch::Tensor;

/// Runs the declared op `row`.
pub(super) fn apply(row: &Unary, a: &Args) -> Result<Vec<Tensor>, RefError> {
    let x = a.x(0)?;
    let floats = row.float_values(a.attrs);
    let int = |name: &str, default: i64| a.int(name, default);
    let args = EvalArgs {
        floats: &floats,
        dtype: a.dtype(0),
        int: &int,
    };
    Ok(vec![evaluate(row, x, &args)?])
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::DType;
    use crate::ops::AttrValue;

    #[test]
    fn round_is_half_to_even() {
        let x = f32s(&[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6], &[8]);
        let y = run1("Round", &[], vec![Some(x)], DType::F32);
        assert_eq!(values(&y), vec![0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -3.0]);
    }

    #[test]
    fn activations_match_their_onnx_formulas() {
        let x = f32s(&[-2.0, 0.0, 1.0], &[3]);
        let leaky = run1(
            "LeakyRelu",
            &[("alpha", AttrValue::Float(0.5))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&leaky), vec![-1.0, 0.0, 1.0]);
        let hs = run1(
            "HardSigmoid",
            &[
                ("alpha", AttrValue::Float(0.25)),
                ("beta", AttrValue::Float(0.5)),
            ],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&hs), vec![0.0, 0.5, 0.75]);
        let thr = run1(
            "ThresholdedRelu",
            &[("alpha", AttrValue::Float(1.0))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&thr), vec![0.0, 0.0, 0.0]);
        let celu = run1(
            "Celu",
            &[("alpha", AttrValue::Float(2.0))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        let want = 2.0 * ((-1.0f64).exp() - 1.0);
        assert!((values(&celu)[0] - want).abs() < 1e-6);
        let selu = run1("Selu", &[], vec![Some(x.shallow_clone())], DType::F32);
        assert!((values(&selu)[2] - 1.050_701).abs() < 1e-6);
    }

    #[test]
    fn unsigned_abs_and_sign_read_u64_bit_patterns_as_unsigned() {
        let x = i64s(&[-1, 0, 3], &[3]);
        assert_eq!(
            values(&run1("Abs", &[], vec![Some(x.shallow_clone())], DType::U64))[0],
            -1.0
        );
        assert_eq!(
            values(&run1("Sign", &[], vec![Some(x)], DType::U64)),
            vec![1.0, 0.0, 1.0]
        );
    }
}
