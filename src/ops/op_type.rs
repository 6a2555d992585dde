//! Typed op identities: code outside the operator declarations that builds or recognizes a
//! node (pattern graphs, defusions, bridges, EMI rewrites, the faulty backend's trigger ops)
//! names its op as [`OpType::MatMul`], not as a string, so a misspelled op is a build error.
//! A variant exists for each op type such code names (adding an operator adds none: its
//! declaration is its one file), the conformance test below checks that each one is a
//! registered op type, and `tests/architecture.rs` that no registered op type is spelled as a
//! string outside `ops/`. The name is the variant's own spelling ([`OpType::name`]).

/// Declares [`OpType`] with one variant per op type and its name table.
macro_rules! op_types {
    ($($op:ident),* $(,)?) => {
        /// An ONNX op type the registry declares and code outside the declarations names.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpType {
            $(
                #[doc = concat!("ONNX `", stringify!($op), "`.")]
                $op,
            )*
        }

        impl OpType {
            /// Every op type, in declaration order.
            pub const ALL: &'static [OpType] = &[$(OpType::$op),*];

            /// The ONNX spelling (the node's `op_type`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(OpType::$op => stringify!($op),)*
                }
            }
        }
    };
}

op_types! {
    Abs, Acos, Add, Asin, Atan, BatchNormalization, Cast, Clip, Concat, Conv, Cos,
    DequantizeLinear, Div, Dropout, Erf, Exp, Expand, Gemm, GreaterOrEqual, HardSigmoid,
    Identity, LayerNormalization, LeakyRelu, MatMul, MaxPool, Mul, Neg, Not, Pad, Pow,
    QuantizeLinear, ReduceMax, ReduceMean, Relu, Reshape, Sigmoid, Sin, Slice, Softmax,
    Sqrt, Squeeze, Sub, Tan, Tanh, Transpose, Where,
}

impl OpType {
    /// The identity of the op type spelled `name`, if it has one.
    pub fn parse(name: &str) -> Option<OpType> {
        Self::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// Whether `op_type` (a node's) is this op.
    pub fn is(self, op_type: &str) -> bool {
        self.name() == op_type
    }
}

impl std::fmt::Display for OpType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<OpType> for String {
    fn from(op: OpType) -> String {
        op.name().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_identity_is_a_registered_op_type() {
        let declared: BTreeSet<&str> = super::super::registry()
            .iter()
            .map(|spec| spec.op_type())
            .collect();
        let undeclared: Vec<&str> = OpType::ALL
            .iter()
            .map(|op| op.name())
            .filter(|name| !declared.contains(name))
            .collect();
        assert!(undeclared.is_empty(), "not registered: {undeclared:?}");
        let distinct: BTreeSet<OpType> = OpType::ALL.iter().copied().collect();
        assert_eq!(distinct.len(), OpType::ALL.len(), "an op type named twice");
    }

    #[test]
    fn names_parse_back_to_their_identity() {
        for &op in OpType::ALL {
            assert_eq!(OpType::parse(op.name()), Some(op));
            assert!(op.is(&op.to_string()));
        }
        assert_eq!(OpType::parse("MatMull"), None);
    }
}
