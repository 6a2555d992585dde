//! torch's type promotion (`torch.result_type`) for tensor operands, so the generator knows
//! every value's element type without running it: categories bool < integer < floating,
//! `uint8` with `int8` gives `int16`, `float16` with `bfloat16` gives `float32`, and a 0-d
//! tensor only decides the result when its category is higher than every dimensioned
//! operand's.

use crate::ir::ScalarType;
use crate::mutate::program::VarType;

/// `torch.promote_types(a, b)`.
pub fn promote_types(a: ScalarType, b: ScalarType) -> ScalarType {
    use ScalarType::*;
    if a == b {
        return a;
    }
    match (a.category(), b.category()) {
        (x, y) if x != y => {
            if x > y {
                a
            } else {
                b
            }
        }
        (1, _) => match (a, b) {
            (U8, I8) | (I8, U8) => I16,
            (U8, other) | (other, U8) => other,
            _ => a.max(b),
        },
        (2, _) => match (a, b) {
            (F16, BF16) | (BF16, F16) => F32,
            _ => a.max(b),
        },
        _ => a,
    }
}

/// `torch.result_type` of tensor operands of types `operands`.
pub fn result_type(operands: &[&VarType]) -> ScalarType {
    let fold = |tys: Vec<ScalarType>| {
        tys.into_iter()
            .reduce(promote_types)
            .unwrap_or(ScalarType::F32)
    };
    let dimensioned: Vec<ScalarType> = operands
        .iter()
        .filter(|t| t.rank() > 0)
        .map(|t| t.scalar)
        .collect();
    let zero_dim: Vec<ScalarType> = operands
        .iter()
        .filter(|t| t.rank() == 0)
        .map(|t| t.scalar)
        .collect();
    let top = |tys: &[ScalarType]| tys.iter().map(|t| t.category()).max();
    match (top(&dimensioned), top(&zero_dim)) {
        (None, _) => fold(zero_dim),
        (Some(d), Some(z)) if z > d => {
            fold(zero_dim.into_iter().filter(|t| t.category() == z).collect())
        }
        _ => fold(dimensioned),
    }
}

/// The type of a computation that returns floats: integers and booleans become the default
/// float type (float32).
pub fn floating(t: ScalarType) -> ScalarType {
    if t.is_float() {
        t
    } else {
        ScalarType::F32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn ty(s: ScalarType, rank: usize) -> VarType {
        VarType::new(s, vec![2; rank])
    }

    #[test]
    fn promotion_follows_torch_rules() {
        assert_eq!(promote_types(U8, I8), I16);
        assert_eq!(promote_types(I32, F16), F16);
        assert_eq!(promote_types(F16, BF16), F32);
        assert_eq!(promote_types(Bool, U8), U8);
        assert_eq!(promote_types(I64, I8), I64);
        // A 0-d tensor of the same category does not widen a dimensioned one...
        assert_eq!(result_type(&[&ty(I8, 2), &ty(I64, 0)]), I8);
        assert_eq!(result_type(&[&ty(F16, 1), &ty(F64, 0)]), F16);
        // ...but a higher category does, at its own type.
        assert_eq!(result_type(&[&ty(I32, 2), &ty(F64, 0)]), F64);
        assert_eq!(result_type(&[&ty(F32, 0), &ty(F64, 0)]), F64);
    }
}
