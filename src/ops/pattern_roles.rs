//! What pattern synthesis (`mutate::patterns`) asks an operator about its nodes: which of its
//! attributes and constant operands carry axes or quantization scales, which values its spec
//! draws from its axis, and which of its attribute classes an ONNX node stands for. Each
//! operator answers in its own declaration ([`super::OpSpec::pin_roles`],
//! [`super::OpSpec::class_of_node`]); the pattern code never lists op names.

/// The roles of an operator's attributes and constant operands, as pins see them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PinRoles {
    /// The spec draws other values from its `axis` attribute (index bounds, split sizes):
    /// a pin must not move the axis, which would leave them out of range.
    pub axis_derives: bool,
    /// Constant operand 0 holds axes (counted from the end when extracted, so they keep their
    /// position at any rank).
    pub axes_operand: bool,
    /// Its axes index the output's rank (input rank plus the axes given), not the input's.
    pub axes_index_output: bool,
    /// Constant operand 0 is a quantization scale, which the spec keeps a power of two.
    pub scale_operand: bool,
}

impl PinRoles {
    /// Either's roles (the specs sharing one op type).
    pub fn or(self, other: PinRoles) -> PinRoles {
        PinRoles {
            axis_derives: self.axis_derives || other.axis_derives,
            axes_operand: self.axes_operand || other.axes_operand,
            axes_index_output: self.axes_index_output || other.axes_index_output,
            scale_operand: self.scale_operand || other.scale_operand,
        }
    }

    /// The rank `axes` given axes index on an input of rank `input_rank`.
    pub fn axis_rank(self, input_rank: usize, axes: usize) -> usize {
        if self.axes_index_output {
            input_rank + axes
        } else {
            input_rank
        }
    }
}

/// An ONNX node as a declaration reads it to name its attribute class: which inputs are
/// given and its string attributes.
#[derive(Clone, Debug, Default)]
pub struct NodeView {
    /// Whether input `i` is given (present and not the empty name).
    pub inputs_given: Vec<bool>,
    /// String attributes, by name.
    pub strings: Vec<(String, String)>,
}

impl NodeView {
    /// Whether input `i` is given.
    pub fn given(&self, i: usize) -> bool {
        self.inputs_given.get(i).copied().unwrap_or(false)
    }

    /// The string attribute `name`.
    pub fn string(&self, name: &str) -> Option<&str> {
        self.strings
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_combine_and_output_axes_count_the_new_dims() {
        let unsqueeze = PinRoles {
            axes_operand: true,
            axes_index_output: true,
            ..PinRoles::default()
        };
        assert_eq!(unsqueeze.axis_rank(2, 3), 5);
        assert_eq!(PinRoles::default().axis_rank(2, 3), 2);
        let both = PinRoles::default().or(unsqueeze);
        assert_eq!(both, unsqueeze);
        let node = NodeView {
            inputs_given: vec![true, false, true],
            strings: vec![("mode".into(), "edge".into())],
        };
        assert!(node.given(2) && !node.given(1) && !node.given(7));
        assert_eq!(node.string("mode"), Some("edge"));
        assert_eq!(node.string("other"), None);
    }
}
