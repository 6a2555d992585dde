//! Broadcasting binary ops: arithmetic, comparison, logical and bitwise.

use super::shape::{broadcast, broadcast_input_ranks};
use super::{AttrCx, AttrValue, OpSpec, Sig, SymAttrs, SymTensor, ValueDomain};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;

/// The dtypes a binary op takes (both inputs share one) and whether it outputs bool.
#[derive(Clone, Copy, PartialEq)]
enum Types {
    /// Numeric in, same type out.
    Numeric,
    /// Floats only.
    Float,
    /// Numeric in, bool out.
    Compare,
    /// Every type in (bool included), bool out.
    Equality,
    /// Bool in, bool out.
    Logical,
    /// Integers in, same type out.
    Bitwise,
    /// Unsigned integers in, same type out.
    Unsigned,
}

/// A broadcasting binary op.
struct Binary {
    name: &'static str,
    types: Types,
    /// The divisor must not be zero for integers.
    int_divisor: bool,
}

const TABLE: &[Binary] = &[
    Binary {
        name: "Add",
        types: Types::Numeric,
        int_divisor: false,
    },
    Binary {
        name: "Sub",
        types: Types::Numeric,
        int_divisor: false,
    },
    Binary {
        name: "Mul",
        types: Types::Numeric,
        int_divisor: false,
    },
    Binary {
        name: "Div",
        types: Types::Numeric,
        int_divisor: true,
    },
    Binary {
        name: "Mod",
        types: Types::Numeric,
        int_divisor: true,
    },
    Binary {
        name: "Pow",
        types: Types::Float,
        int_divisor: false,
    },
    Binary {
        name: "Max",
        types: Types::Numeric,
        int_divisor: false,
    },
    Binary {
        name: "Min",
        types: Types::Numeric,
        int_divisor: false,
    },
    Binary {
        name: "Mean",
        types: Types::Float,
        int_divisor: false,
    },
    Binary {
        name: "Sum",
        types: Types::Float,
        int_divisor: false,
    },
    Binary {
        name: "Equal",
        types: Types::Equality,
        int_divisor: false,
    },
    Binary {
        name: "Less",
        types: Types::Compare,
        int_divisor: false,
    },
    Binary {
        name: "Greater",
        types: Types::Compare,
        int_divisor: false,
    },
    Binary {
        name: "LessOrEqual",
        types: Types::Compare,
        int_divisor: false,
    },
    Binary {
        name: "GreaterOrEqual",
        types: Types::Compare,
        int_divisor: false,
    },
    Binary {
        name: "And",
        types: Types::Logical,
        int_divisor: false,
    },
    Binary {
        name: "Or",
        types: Types::Logical,
        int_divisor: false,
    },
    Binary {
        name: "Xor",
        types: Types::Logical,
        int_divisor: false,
    },
    Binary {
        name: "BitwiseAnd",
        types: Types::Bitwise,
        int_divisor: false,
    },
    Binary {
        name: "BitwiseOr",
        types: Types::Bitwise,
        int_divisor: false,
    },
    Binary {
        name: "BitwiseXor",
        types: Types::Bitwise,
        int_divisor: false,
    },
    Binary {
        name: "BitShift",
        types: Types::Unsigned,
        int_divisor: false,
    },
];

impl OpSpec for Binary {
    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        let (ins, to_bool) = match self.types {
            Types::Numeric => (DType::numeric(), false),
            Types::Float => (DType::FLOATS.to_vec(), false),
            Types::Compare => (DType::numeric(), true),
            Types::Equality => (DType::ALL.to_vec(), true),
            Types::Logical => (vec![DType::Bool], false),
            Types::Bitwise => (DType::ints(), false),
            Types::Unsigned => (DType::UNSIGNED.to_vec(), false),
        };
        ins.into_iter()
            .map(|t| Sig::new(vec![t, t], vec![if to_bool { DType::Bool } else { t }]))
            .collect()
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        Some(broadcast_input_ranks(2, out_rank, u))
    }

    fn input_domains(&self, sig: &Sig) -> Vec<ValueDomain> {
        if self.int_divisor && sig.inputs[1].is_int() {
            vec![ValueDomain::Any, ValueDomain::Positive]
        } else {
            vec![ValueDomain::Any, ValueDomain::Any]
        }
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        match self.name {
            "Mod" => {
                // Mod-13 (the text published with opsets 10 to 13): "If the input type is
                // floating point, then `fmod` attribute must be set to 1", and `fmod = 1`
                // forces C's floating-point `fmod`, whose precision on 64-bit integers the spec
                // does not fix (ONNX Runtime goes through `double`). So floats get `fmod = 1`
                // and integers `fmod = 0`, the only pairings every reading defines. The byte
                // the old choice drew is still drawn, so that existing inputs decode as before.
                let fmod = cx.sig.inputs[0].is_float();
                if !fmod {
                    let _ = cx.flip();
                }
                attrs.set("fmod", AttrValue::Int(Int::from(fmod as i64)));
            }
            "BitShift" => {
                let dir = if cx.flip() { "LEFT" } else { "RIGHT" };
                attrs.set("direction", AttrValue::Str(dir.into()));
            }
            _ => {}
        }
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        broadcast(&[&inputs[0].dims, &inputs[1].dims]).0
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![broadcast(&[&inputs[0].dims, &inputs[1].dims]).1]
    }
}

/// The binary family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    TABLE
        .iter()
        .map(|b| {
            Box::new(Binary {
                name: b.name,
                types: b.types,
                int_divisor: b.int_divisor,
            }) as Box<dyn OpSpec>
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_output_bool_and_broadcast() {
        let less = specs().into_iter().find(|s| s.name() == "Less").unwrap();
        assert!(less.sigs().iter().all(|s| s.outputs == vec![DType::Bool]));
        let a = SymTensor {
            dtype: DType::F32,
            dims: vec![Int::from(2usize), Int::from(1usize)],
        };
        let b = SymTensor {
            dtype: DType::F32,
            dims: vec![Int::from(5usize)],
        };
        let ins = [a, b];
        assert!(less
            .requires(&SymAttrs::default(), &ins)
            .iter()
            .all(|r| r.as_const() == Some(true)));
        let out = less.type_transfer(&SymAttrs::default(), &ins);
        assert_eq!(
            out[0]
                .iter()
                .map(|d| d.as_const().unwrap())
                .collect::<Vec<_>>(),
            vec![2, 5]
        );
    }

    #[test]
    fn integer_division_gets_a_positive_divisor() {
        let div = specs().into_iter().find(|s| s.name() == "Div").unwrap();
        let int_sig = Sig::uniform(DType::I32, 2);
        assert_eq!(div.input_domains(&int_sig)[1], ValueDomain::Positive);
        assert_eq!(
            div.input_domains(&Sig::uniform(DType::F32, 2))[1],
            ValueDomain::Any
        );
    }
}
