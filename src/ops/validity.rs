//! Where an operator's outputs stay finite, and how a value search steps through its flat
//! parts: facts each operator declares ([`super::OpSpec::finite`], [`super::OpSpec::proxy`])
//! and the value search ([`crate::values`]) reads, so that no stage keeps a list of op names.

/// The open part of the reals where an element-wise operator is defined (NaN or infinite
/// outside), for generators that keep their inputs inside it by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// `x > 0`.
    Positive,
    /// `x != 0`.
    NonZero,
    /// `-1 < x < 1`.
    Symmetric,
    /// `x > 1`.
    AboveOne,
}

impl Domain {
    /// A point on the domain's edge (its boundary), where an operator may or may not stay
    /// finite (`sqrt(0)` does, `log(0)` does not).
    pub fn edge(self) -> f64 {
        match self {
            Domain::Positive | Domain::NonZero => 0.0,
            Domain::Symmetric | Domain::AboveOne => 1.0,
        }
    }
}

/// Which way an exponential-like operator's output overflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// For large positive inputs (`exp`, `softplus` as the spec writes it).
    Up,
    /// For inputs of large magnitude either way (`cosh`, `sinh`).
    Both,
}

/// Where an operator's outputs are finite, when not for every input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finite {
    /// Input 0 inside `domain`; `edge_finite`: the output is finite on the domain's edge too,
    /// so the edge itself is allowed.
    Domain {
        /// The domain.
        domain: Domain,
        /// Whether the edge is allowed.
        edge_finite: bool,
    },
    /// Input 0 below the float type's overflow limit.
    Growth(Growth),
    /// Input `slot` divides: non-zero.
    Divisor {
        /// The divisor's input slot.
        slot: usize,
    },
    /// `Pow(x, y)`: a positive base, and `y · log(x)` below the overflow limit.
    Power,
}

/// How a value search steps through the parts where an operator's true derivative is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proxy {
    /// Slope 1: rounding functions (`Floor`, `Ceil`, `Round`), whose outputs track the input
    /// but whose derivative is zero almost everywhere.
    Identity,
    /// A small positive slope, as in LeakyReLU: operators flat on part of the line (`Relu`'s
    /// negative side, `Clip`'s clipped regions, `Sign`).
    Leaky,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every registry op's declaration, by ONNX op type (specs sharing a type must agree).
    fn declared<T: PartialEq + std::fmt::Debug>(
        fact: impl Fn(&dyn crate::ops::OpSpec) -> Option<T>,
    ) -> BTreeMap<&'static str, T> {
        let mut out = BTreeMap::new();
        for spec in crate::ops::registry() {
            if let Some(v) = fact(spec.as_ref()) {
                if let Some(before) = out.insert(spec.op_type(), v) {
                    assert_eq!(Some(&before), out.get(spec.op_type()), "{}", spec.op_type());
                }
            }
        }
        out
    }

    #[test]
    fn the_value_search_domains_are_declared_where_it_expects_them() {
        let domain = |domain, edge_finite| Finite::Domain {
            domain,
            edge_finite,
        };
        let want: BTreeMap<&str, Finite> = [
            ("Log", domain(Domain::Positive, false)),
            ("Sqrt", domain(Domain::Positive, true)),
            ("Reciprocal", domain(Domain::NonZero, false)),
            ("Asin", domain(Domain::Symmetric, true)),
            ("Acos", domain(Domain::Symmetric, true)),
            ("Atanh", domain(Domain::Symmetric, false)),
            ("Acosh", domain(Domain::AboveOne, true)),
            ("Exp", Finite::Growth(Growth::Up)),
            ("Softplus", Finite::Growth(Growth::Up)),
            ("Cosh", Finite::Growth(Growth::Both)),
            ("Sinh", Finite::Growth(Growth::Both)),
            ("Div", Finite::Divisor { slot: 1 }),
            ("Mod", Finite::Divisor { slot: 1 }),
            ("Pow", Finite::Power),
        ]
        .into();
        assert_eq!(declared(|s| s.finite()), want);
    }

    #[test]
    fn flat_ops_declare_their_proxy() {
        let want: BTreeMap<&str, Proxy> = [
            ("Floor", Proxy::Identity),
            ("Ceil", Proxy::Identity),
            ("Round", Proxy::Identity),
            ("Relu", Proxy::Leaky),
            ("Sign", Proxy::Leaky),
            ("Clip", Proxy::Leaky),
            ("HardSigmoid", Proxy::Leaky),
            ("HardSwish", Proxy::Leaky),
            ("ThresholdedRelu", Proxy::Leaky),
        ]
        .into();
        assert_eq!(declared(|s| s.proxy()), want);
    }
}
