//! What a pass matches on beyond op types: attribute values, constant operands, equal-shape
//! relations and the rank of a node's first input, kept per pattern node ([`Pin`]) and
//! imposed on the spec's own draw when the node is spliced.
//!
//! A pin replaces one value the spec drew (an attribute or a constant operand after the data
//! inputs) or adds a requirement the solver must meet (two inputs of the same shape). Pins are
//! re-checked before they apply: a value of another kind or length than the spec draws, an
//! axis out of range or repeated, a `perm` that is no permutation of the rank leaves the
//! insertion attempt failed, never an ill-typed node; the spec's own requirements are then
//! solved on the pinned values as on drawn ones.

use super::roles_of;
use crate::ir::DType;
use crate::ops::numeric::int_range;
use crate::ops::pattern_roles::PinRoles;
use crate::ops::quant::nearest_scale;
use crate::ops::{AttrValue, ConstInput, SymAttrs, SymTensor};
use crate::sym::{Bool, Int};
use serde::{Deserialize, Serialize};

/// A pinned value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PinValue {
    /// An integer.
    Int(i64),
    /// Integers, used as they are (strides, kernel shapes, `perm`).
    Ints(Vec<i64>),
    /// Axis indices; a negative one counts from the end of the rank, so `[-1]` is "the last
    /// axis" whatever the rank the splice picks.
    Axes(Vec<i64>),
    /// A float (an attribute, or a scalar constant operand such as a Q/DQ scale).
    Float(f64),
    /// As many ones as the spec drew, no more than the input's rank: a target shape that
    /// broadcasts nothing (an `Expand` that changes nothing).
    Ones,
}

/// One thing a pass matches on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Pin {
    /// The named attribute takes `value`.
    Attr {
        /// ONNX attribute name.
        name: String,
        /// Its value.
        value: PinValue,
    },
    /// Constant operand `slot` (counted after the data inputs) takes `value`.
    Const {
        /// Index among the spec's constant operands.
        slot: usize,
        /// Its value.
        value: PinValue,
    },
    /// Data inputs `a` and `b` have the same shape (no broadcasting between them).
    SameShape {
        /// One data input.
        a: usize,
        /// The other.
        b: usize,
    },
    /// Data input `slot` has rank `rank` (a fresh input is made with it, a reused one must
    /// have it).
    Rank {
        /// The data input.
        slot: usize,
        /// Its rank.
        rank: usize,
    },
    /// Data input `slot` is `[C, 1, …, 1]` of one rank less than input 0, `C` being input 0's
    /// channel dimension (axis 1): a per-channel constant after a convolution.
    PerChannel {
        /// The data input.
        slot: usize,
    },
    /// The output has the input's dtype (a `Cast` that changes nothing).
    KeepsDtype,
}

/// Whether `axes` fit `rank`: each in `[-rank, rank)`, none twice once normalized.
fn axes_fit(axes: &[i64], rank: usize) -> bool {
    let r = rank as i64;
    let mut seen = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = if a < 0 { a + r } else { a };
        if !(0..r).contains(&n) || seen.contains(&n) {
            return false;
        }
        seen.push(n);
    }
    true
}

/// The integers `value` stands for where the spec drew `drawn` integers, or `None` when it
/// does not fit (other length, axes out of range, no permutation).
fn pinned_ints(
    roles: PinRoles,
    name: &str,
    value: &PinValue,
    drawn: usize,
    rank: usize,
) -> Option<Vec<Int>> {
    let ints = match value {
        PinValue::Axes(axes) => {
            axes_fit(axes, roles.axis_rank(rank, axes.len())).then(|| axes.clone())?
        }
        PinValue::Ints(v) if name == "perm" => {
            let mut sorted = v.clone();
            sorted.sort_unstable();
            (sorted == (0..rank as i64).collect::<Vec<_>>()).then(|| v.clone())?
        }
        PinValue::Ints(v) if v.len() == drawn => v.clone(),
        PinValue::Ones if drawn <= rank => vec![1; drawn],
        _ => return None,
    };
    Some(ints.into_iter().map(Int::from).collect())
}

/// `value` as a scalar of `dtype`: floats as they are, integers rounded and only within the
/// type's range (a `uint8` zero point of 128 does not fit `int8`).
fn representable(dtype: DType, value: f64) -> Option<f64> {
    if dtype.is_float() {
        return Some(value);
    }
    let (lo, hi) = int_range(dtype);
    let v = value.round();
    (lo..=hi).contains(&v).then_some(v)
}

/// Imposes `pins` on the attributes `attrs` a spec of `op` drew for `inputs`; returns the
/// requirements the pins add, or `None` when one does not fit this instance.
pub fn apply(
    op: &str,
    pins: &[Pin],
    attrs: &mut SymAttrs,
    inputs: &[SymTensor],
) -> Option<Vec<Bool>> {
    let rank = inputs.first().map_or(0, SymTensor::rank);
    let roles = roles_of(op);
    let mut reqs = Vec::new();
    for pin in pins {
        match pin {
            Pin::Attr { name, value } => {
                // An attribute the spec does not model keeps ONNX's default; an axis that
                // the spec's other draws depend on stays as drawn.
                let derived = name == "axis" && roles.axis_derives;
                let Some(slot) = attrs.named.iter_mut().find(|(n, _)| n == name && !derived) else {
                    continue;
                };
                slot.1 = match (&slot.1, value) {
                    (AttrValue::Int(_), PinValue::Int(v)) => AttrValue::Int(Int::from(*v)),
                    (AttrValue::Int(_), PinValue::Axes(a)) if a.len() == 1 => {
                        axes_fit(a, roles.axis_rank(rank, 1)).then_some(())?;
                        AttrValue::Int(Int::from(a[0]))
                    }
                    (AttrValue::Ints(d), v) => {
                        AttrValue::Ints(pinned_ints(roles, name, v, d.len(), rank)?)
                    }
                    (AttrValue::Float(_), PinValue::Float(f)) => AttrValue::Float(*f as f32),
                    _ => return None,
                };
            }
            Pin::Const { slot, value } => {
                let Some(c) = attrs.consts.get_mut(*slot) else {
                    continue;
                };
                *c = match (&*c, value) {
                    (ConstInput::Ints(d), v) => {
                        ConstInput::Ints(pinned_ints(roles, "", v, d.len(), rank)?)
                    }
                    (ConstInput::Scalar(dtype, _), PinValue::Float(f)) => {
                        let f = if *slot == 0 && roles.scale_operand {
                            nearest_scale(*f)
                        } else {
                            *f
                        };
                        ConstInput::Scalar(*dtype, representable(*dtype, f)?)
                    }
                    (ConstInput::Floats(d), PinValue::Float(f)) => {
                        ConstInput::Floats(vec![*f as f32; d.len()])
                    }
                    _ => return None,
                };
            }
            Pin::SameShape { a, b } => {
                let (a, b) = (inputs.get(*a)?, inputs.get(*b)?);
                if a.rank() != b.rank() {
                    return None;
                }
                reqs.extend(a.dims.iter().zip(&b.dims).map(|(x, y)| x.eq(y)));
            }
            Pin::Rank { slot, rank } => {
                if inputs.get(*slot)?.rank() != *rank {
                    return None;
                }
            }
            Pin::PerChannel { slot } => {
                let (x, c) = (inputs.first()?, inputs.get(*slot)?);
                if x.rank() < 2 || c.rank() + 1 != x.rank() {
                    return None;
                }
                reqs.push(c.dims[0].eq(&x.dims[1]));
                reqs.extend(c.dims[1..].iter().map(|d| d.eq(1i64)));
            }
            // Met by the signature the splice picks.
            Pin::KeepsDtype => {}
        }
    }
    Some(reqs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(rank: usize) -> SymTensor {
        SymTensor {
            dtype: DType::F32,
            dims: (0..rank).map(|i| Int::from(i as i64 + 2)).collect(),
        }
    }

    #[test]
    fn axes_count_from_the_end_and_are_checked() {
        let mut attrs = SymAttrs::default();
        attrs.consts.push(ConstInput::Ints(vec![Int::from(0i64)]));
        let pin = Pin::Const {
            slot: 0,
            value: PinValue::Axes(vec![-1]),
        };
        assert!(apply(
            "ReduceMean",
            std::slice::from_ref(&pin),
            &mut attrs,
            &[tensor(3)]
        )
        .is_some());
        assert_eq!(attrs.const_ints(0)[0].as_const(), Some(-1));
        let repeated = Pin::Const {
            slot: 0,
            value: PinValue::Axes(vec![-1, 2]),
        };
        assert!(apply("ReduceMean", &[repeated], &mut attrs, &[tensor(3)]).is_none());
        // Unsqueeze's axes index the output rank.
        let out = Pin::Const {
            slot: 0,
            value: PinValue::Axes(vec![3]),
        };
        assert!(apply("Unsqueeze", &[out], &mut attrs, &[tensor(3)]).is_some());
    }

    #[test]
    fn a_perm_must_permute_the_rank_and_kinds_must_match() {
        let mut attrs = SymAttrs::default();
        attrs.set(
            "perm",
            AttrValue::Ints(vec![Int::from(0i64), Int::from(1i64)]),
        );
        let perm = |v: Vec<i64>| Pin::Attr {
            name: "perm".into(),
            value: PinValue::Ints(v),
        };
        assert!(apply("Transpose", &[perm(vec![1, 0])], &mut attrs, &[tensor(2)]).is_some());
        assert!(apply(
            "Transpose",
            &[perm(vec![1, 0, 2])],
            &mut attrs,
            &[tensor(2)]
        )
        .is_none());
        let float = Pin::Attr {
            name: "perm".into(),
            value: PinValue::Float(1.0),
        };
        assert!(apply("Transpose", &[float], &mut attrs, &[tensor(2)]).is_none());
        // An attribute the spec does not model is left to ONNX's default.
        let absent = Pin::Attr {
            name: "alpha".into(),
            value: PinValue::Float(1.0),
        };
        assert!(apply("Transpose", &[absent], &mut attrs, &[tensor(2)]).is_some());
    }

    #[test]
    fn ranks_are_checked_and_per_channel_constants_follow_axis_1() {
        let mut attrs = SymAttrs::default();
        let rank = [Pin::Rank { slot: 1, rank: 3 }];
        assert!(apply("Add", &rank, &mut attrs, &[tensor(4), tensor(3)]).is_some());
        assert!(apply("Add", &rank, &mut attrs, &[tensor(4), tensor(4)]).is_none());
        let per_channel = [Pin::PerChannel { slot: 1 }];
        let reqs = apply("Add", &per_channel, &mut attrs, &[tensor(4), tensor(3)]).unwrap();
        // dims 2, 3, 4, 5 and 2, 3, 4: C = 3 against 2, then 3 and 4 against 1.
        assert!(reqs.iter().all(|r| r.as_const() == Some(false)));
        assert_eq!(reqs.len(), 3);
    }

    #[test]
    fn equal_shapes_become_requirements_and_scalars_keep_their_dtype() {
        let mut attrs = SymAttrs::default();
        attrs.consts.push(ConstInput::Scalar(DType::U8, 128.0));
        let pins = [
            Pin::SameShape { a: 0, b: 1 },
            Pin::Const {
                slot: 0,
                value: PinValue::Float(127.6),
            },
        ];
        let reqs = apply("Add", &pins, &mut attrs, &[tensor(2), tensor(2)]).unwrap();
        assert_eq!(reqs.len(), 2);
        assert!(matches!(attrs.consts[0], ConstInput::Scalar(DType::U8, v) if v == 128.0));
        assert!(apply("Add", &pins[..1], &mut attrs, &[tensor(2), tensor(3)]).is_none());
        attrs.consts[0] = ConstInput::Scalar(DType::I8, 0.0);
        assert!(apply("Add", &pins[1..], &mut attrs, &[tensor(2)]).is_none());
    }
}
