//! What an operator's older opsets wrote differently: the reference loads models of any
//! opset (`reference::onnx_models`, ONNX Runtime's pass-test models) by rewriting each node
//! into the opset-19 form its declaration evaluates, and each operator states here, in its own
//! declaration ([`super::OpSpec::legacy_form`]), what that rewrite must know. The loader never
//! lists op names.

/// The older forms of an operator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyForm {
    /// Attributes that later opsets take as operands, in operand order after the data input
    /// (`Slice`'s `starts`, `ends`, `axes`; `Pad`'s `pads`, `value`; `Clip`'s `min`, `max`;
    /// a reduction's `axes`): a node holding any of them takes them as inputs 1, 2, …
    /// (integer lists as int64 tensors, floats as scalars of the data input's type, a missing
    /// one as an absent input).
    pub operands_from_attributes: &'static [&'static str],
    /// Before this opset the op coerced its input to 2-D at `axis` (default 1) and worked over
    /// the whole trailing block (`Softmax`, `LogSoftmax` before 13).
    pub coerced_to_2d_before: Option<i64>,
    /// Opset-6 element-wise broadcasting: with `broadcast = 1` and an `axis`, operand B is
    /// aligned at that axis of A (the arithmetic and comparison ops).
    pub axis_broadcast: bool,
}

impl LegacyForm {
    /// The form of an op whose `names` attributes became operands.
    pub const fn operands(names: &'static [&'static str]) -> LegacyForm {
        LegacyForm {
            operands_from_attributes: names,
            coerced_to_2d_before: None,
            axis_broadcast: false,
        }
    }

    /// Either's forms (the specs sharing one op type).
    pub fn or(self, other: LegacyForm) -> LegacyForm {
        LegacyForm {
            operands_from_attributes: if self.operands_from_attributes.is_empty() {
                other.operands_from_attributes
            } else {
                self.operands_from_attributes
            },
            coerced_to_2d_before: self.coerced_to_2d_before.or(other.coerced_to_2d_before),
            axis_broadcast: self.axis_broadcast || other.axis_broadcast,
        }
    }
}

impl LegacyForm {
    /// The older forms of op type `op_type` (every spec of it), nothing for an op the
    /// registry does not declare.
    pub fn of(op_type: &str) -> LegacyForm {
        super::specs_of_op_type(op_type)
            .map(|(_, spec)| spec.legacy_form())
            .fold(LegacyForm::default(), LegacyForm::or)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_state_their_older_forms() {
        assert_eq!(
            LegacyForm::of("Slice").operands_from_attributes,
            ["starts", "ends", "axes"]
        );
        assert_eq!(
            LegacyForm::of("ReduceL2").operands_from_attributes,
            ["axes"]
        );
        assert_eq!(LegacyForm::of("LogSoftmax").coerced_to_2d_before, Some(13));
        assert!(LegacyForm::of("Pow").axis_broadcast && LegacyForm::of("Less").axis_broadcast);
        assert!(!LegacyForm::of("Sum").axis_broadcast);
        assert_eq!(LegacyForm::of("Relu"), LegacyForm::default());
        assert_eq!(LegacyForm::of("NotAnOp"), LegacyForm::default());
    }
}
