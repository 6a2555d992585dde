//! Element-wise unary math and activations: one output of the input's shape.

use super::{AttrCx, AttrValue, OpSpec, Sig, SymAttrs, SymTensor};
use crate::gen::sym::{Bool, Int};
use crate::ir::DType;

/// Which dtypes a unary op accepts and what it outputs.
#[derive(Clone, Copy)]
enum Types {
    /// Floats in, same type out.
    Float,
    /// Floats and signed integers.
    Signed,
    /// Every numeric type.
    Numeric,
    /// Bool in, bool out.
    Bool,
    /// Every type.
    Any,
    /// Exactly these types, same type out.
    Only(&'static [DType]),
    /// Exactly these types in, bool out.
    OnlyToBool(&'static [DType]),
}

/// A float attribute with its range.
type FloatAttr = (&'static str, f32, f32);

/// An element-wise unary op.
struct Unary {
    name: &'static str,
    types: Types,
    floats: &'static [FloatAttr],
}

const ALPHA: &[FloatAttr] = &[("alpha", 0.0625, 2.0)];

const TABLE: &[Unary] = &[
    Unary {
        name: "Abs",
        types: Types::Numeric,
        floats: &[],
    },
    Unary {
        name: "Neg",
        types: Types::Signed,
        floats: &[],
    },
    Unary {
        name: "Sign",
        types: Types::Numeric,
        floats: &[],
    },
    Unary {
        name: "Identity",
        types: Types::Any,
        floats: &[],
    },
    Unary {
        name: "Not",
        types: Types::Bool,
        floats: &[],
    },
    Unary {
        name: "Exp",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Log",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Sqrt",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Reciprocal",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Sin",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Cos",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Tan",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Atan",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Sinh",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Cosh",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Asinh",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Tanh",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Erf",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Floor",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Ceil",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Round",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Sigmoid",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Relu",
        types: Types::Signed,
        floats: &[],
    },
    Unary {
        name: "LeakyRelu",
        types: Types::Float,
        floats: ALPHA,
    },
    Unary {
        name: "Elu",
        types: Types::Float,
        floats: ALPHA,
    },
    Unary {
        name: "Celu",
        types: Types::Only(&[DType::F32]),
        floats: &[("alpha", 0.25, 2.0)],
    },
    Unary {
        name: "Selu",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "ThresholdedRelu",
        types: Types::Float,
        floats: ALPHA,
    },
    Unary {
        name: "HardSigmoid",
        types: Types::Float,
        floats: &[("alpha", 0.0625, 1.0), ("beta", 0.0, 1.0)],
    },
    Unary {
        name: "HardSwish",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Softplus",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Softsign",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Mish",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "IsNaN",
        types: Types::OnlyToBool(&DType::FLOATS),
        floats: &[],
    },
    Unary {
        name: "IsInf",
        types: Types::OnlyToBool(&[DType::F32, DType::F64]),
        floats: &[],
    },
];

/// Ops defined only on part of the reals (NaN outside), which NNSmith's value search exists
/// for. They come last in the registry so that adding them left earlier spec ids unchanged.
const DOMAIN_RESTRICTED: &[Unary] = &[
    Unary {
        name: "Asin",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Acos",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Acosh",
        types: Types::Float,
        floats: &[],
    },
    Unary {
        name: "Atanh",
        types: Types::Float,
        floats: &[],
    },
];

impl OpSpec for Unary {
    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        let same = |types: Vec<DType>| types.into_iter().map(|t| Sig::uniform(t, 1)).collect();
        match self.types {
            Types::Float => same(DType::FLOATS.to_vec()),
            Types::Signed => same(DType::signed_numeric()),
            Types::Numeric => same(DType::numeric()),
            Types::Bool => same(vec![DType::Bool]),
            Types::Any => same(DType::ALL.to_vec()),
            Types::Only(types) => same(types.to_vec()),
            Types::OnlyToBool(types) => types
                .iter()
                .map(|t| Sig::new(vec![*t], vec![DType::Bool]))
                .collect(),
        }
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        for (name, lo, hi) in self.floats {
            let v = cx.float(*lo, *hi);
            attrs.set(name, AttrValue::Float(v));
        }
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// The unary family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    boxed(TABLE)
}

/// The domain-restricted unary ops (Asin, Acos, Acosh, Atanh).
pub fn domain_restricted_specs() -> Vec<Box<dyn OpSpec>> {
    boxed(DOMAIN_RESTRICTED)
}

fn boxed(table: &[Unary]) -> Vec<Box<dyn OpSpec>> {
    table
        .iter()
        .map(|u| {
            Box::new(Unary {
                name: u.name,
                types: u.types,
                floats: u.floats,
            }) as Box<dyn OpSpec>
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_shape_is_input_shape() {
        let x = SymTensor {
            dtype: DType::F32,
            dims: vec![Int::from(2usize), Int::from(3usize)],
        };
        for spec in specs().into_iter().chain(domain_restricted_specs()) {
            let out = spec.type_transfer(&SymAttrs::default(), std::slice::from_ref(&x));
            assert_eq!(out[0].len(), 2, "{}", spec.name());
        }
    }
}
