//! Numeric-validity loss functions of vulnerable operators (NNSmith §3.3, Tables 1–2).
//!
//! Each vulnerable op declares where it produces finite outputs ([`Finite`], from
//! [`crate::ops::OpSpec::finite`]); here that becomes a conjunction of tensor inequalities
//! `f(X) ≤ 0` or `f(X) < 0`. An inequality becomes the loss
//! `Σ max(f(x), 0)` (non-strict) or `Σ max(f(x) + ε, 0)` (strict), with ε = 1e-10: positive
//! exactly when the inequality is violated somewhere. The search uses the first positive loss
//! of the first op that produces NaN or Inf.
//!
//! Ops that declare nothing get a generic fallback: shrink the magnitude of their float
//! inputs (`|x| - 1 ≤ 0`), which cures overflow in products, sums and powers.

use crate::ops::validity::{Domain, Finite, Growth};
use tch::{Kind, Tensor};

/// ε of the strict inequalities.
pub const EPSILON: f64 = 1e-10;

/// Largest argument of `exp` (and the like) that stays finite, by element kind, with margin.
fn exp_limit(kind: Kind) -> f64 {
    match kind {
        Kind::Half => 10.0,
        Kind::Double => 700.0,
        _ => 80.0,
    }
}

/// `|x|` with a usable gradient at 0: `x · s` with `s = 1` where `x ≥ 0`, else `-1` (held
/// constant). `abs`'s derivative at 0 is 0, which would leave `|Y| > 0` stuck exactly where
/// it is violated (a Relu or Ceil that produced an exact 0 before a division).
fn magnitude(x: &Tensor) -> Tensor {
    let sign = x.ge(0.0).to_kind(x.kind()) * 2.0 - 1.0;
    x * sign.detach()
}

/// One tensor inequality over an op's inputs.
pub enum Inequality {
    /// `f(X) ≤ 0`.
    AtMost(Tensor),
    /// `f(X) < 0`.
    Below(Tensor),
}

impl Inequality {
    /// The inequality's loss (a scalar tensor on the autograd tape).
    pub fn loss(&self) -> Tensor {
        match self {
            Inequality::AtMost(f) => f.relu().sum(Kind::Double),
            Inequality::Below(f) => (f + EPSILON).relu().sum(Kind::Double),
        }
    }
}

/// The tensor inequalities of an op that is finite where `finite` says, on its float inputs
/// `x` (absent or non-float inputs are `None`). `None` when an input it constrains is absent.
pub fn inequalities(finite: Finite, x: &[Option<&Tensor>]) -> Option<Vec<Inequality>> {
    use Inequality::{AtMost, Below};
    let a = x.first().copied().flatten()?;
    // The domain's own inequality `f(X) ≤ 0`, strict where the edge is not finite.
    let edge = |f: Tensor, edge_finite: bool| match edge_finite {
        true => AtMost(f),
        false => Below(f),
    };
    let ineqs = match finite {
        // Log(X): X > 0; Sqrt(X): X ≥ 0.
        Finite::Domain {
            domain: Domain::Positive,
            edge_finite,
        } => vec![edge(-a, edge_finite)],
        // Reciprocal(X): |X| > 0.
        Finite::Domain {
            domain: Domain::NonZero,
            edge_finite,
        } => vec![edge(-magnitude(a), edge_finite)],
        // Asin, Acos: |X| ≤ 1; Atanh: |X| < 1.
        Finite::Domain {
            domain: Domain::Symmetric,
            edge_finite,
        } => vec![edge(a.abs() - 1.0, edge_finite)],
        // Acosh(X): X ≥ 1.
        Finite::Domain {
            domain: Domain::AboveOne,
            edge_finite,
        } => vec![edge(1.0 - a, edge_finite)],
        // Exp-like growth: X ≤ limit (Cosh and Sinh in both directions).
        Finite::Growth(Growth::Up) => vec![AtMost(a - exp_limit(a.kind()))],
        Finite::Growth(Growth::Both) => vec![AtMost(a.abs() - exp_limit(a.kind()))],
        // Div(X, Y): |Y| > 0.
        Finite::Divisor { slot } => vec![Below(-magnitude(x.get(slot).copied().flatten()?))],
        // Pow(X, Y): X > 0 and Y·log(X) ≤ limit (the logarithm keeps the loss finite).
        Finite::Power => {
            let y = x.get(1).copied().flatten()?;
            let positive = a.clamp_min(EPSILON);
            vec![
                Below(-a),
                AtMost(y * positive.log() - exp_limit(a.kind()) / 2.0),
            ]
        }
    };
    Some(ineqs)
}

/// The fallback inequality of an op without a specific domain: every float input's magnitude
/// at most 1, so products, sums and reductions stop overflowing.
pub fn fallback(x: &[Option<&Tensor>]) -> Vec<Inequality> {
    x.iter()
        .flatten()
        .map(|t| Inequality::AtMost(t.abs() - 1.0))
        .collect()
}

fn first_positive(ineqs: &[Inequality]) -> Option<Tensor> {
    ineqs
        .iter()
        .map(Inequality::loss)
        .find(|l| l.double_value(&[]) > 0.0)
}

/// The first positive loss among an op's own domain inequalities (`finite`, what it
/// declares): `Some` exactly when its inputs leave the op's domain.
pub fn domain_loss(finite: Option<Finite>, x: &[Option<&Tensor>]) -> Option<Tensor> {
    first_positive(&inequalities(finite?, x)?)
}

/// The loss the search minimizes for an op whose outputs are not finite: its first positive
/// domain loss, else the first positive fallback loss.
pub fn first_positive_loss(finite: Option<Finite>, x: &[Option<&Tensor>]) -> Option<Tensor> {
    domain_loss(finite, x).or_else(|| first_positive(&fallback(x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f32]) -> Tensor {
        Tensor::from_slice(v)
    }

    /// What the registry's op `name` declares.
    fn of(name: &str) -> Option<Finite> {
        crate::ops::registry()[crate::ops::spec_id(name).expect("a registry op")].finite()
    }

    #[test]
    fn losses_are_positive_exactly_when_violated() {
        let pos = t(&[0.5, 2.0]);
        let neg = t(&[0.5, -2.0]);
        let zero = t(&[0.0]);
        assert!(domain_loss(of("Log"), &[Some(&pos)]).is_none());
        assert!(domain_loss(of("Log"), &[Some(&neg)]).is_some());
        assert!(domain_loss(of("Log"), &[Some(&zero)]).is_some(), "strict");
        assert!(
            domain_loss(of("Sqrt"), &[Some(&zero)]).is_none(),
            "non-strict"
        );
        assert!(domain_loss(of("Asin"), &[Some(&t(&[0.9]))]).is_none());
        assert!(domain_loss(of("Asin"), &[Some(&t(&[1.5]))]).is_some());
        assert!(domain_loss(of("Div"), &[Some(&pos), Some(&zero)]).is_some());
        assert!(domain_loss(of("Div"), &[Some(&zero), Some(&pos)]).is_none());
        assert!(domain_loss(of("Exp"), &[Some(&t(&[100.0]))]).is_some());
        assert!(domain_loss(of("Exp"), &[Some(&t(&[10.0]))]).is_none());
        assert!(
            domain_loss(of("Mul"), &[Some(&pos), Some(&pos)]).is_none(),
            "no own domain"
        );
        assert!(first_positive_loss(of("Log"), &[Some(&neg)]).is_some());
        assert!(first_positive_loss(of("Mul"), &[Some(&t(&[3.0])), Some(&pos)]).is_some());
        assert!(first_positive_loss(of("Mul"), &[Some(&t(&[0.5])), Some(&t(&[-1.0]))]).is_none());
    }

    #[test]
    fn pow_constrains_base_and_growth() {
        let base = t(&[2.0]);
        assert!(domain_loss(of("Pow"), &[Some(&base), Some(&t(&[3.0]))]).is_none());
        assert!(domain_loss(of("Pow"), &[Some(&base), Some(&t(&[500.0]))]).is_some());
        assert!(domain_loss(of("Pow"), &[Some(&t(&[-2.0])), Some(&t(&[0.5]))]).is_some());
    }

    #[test]
    fn a_zero_divisor_still_gets_a_gradient() {
        let y = t(&[0.0, 2.0]).set_requires_grad(true);
        let loss = domain_loss(of("Reciprocal"), &[Some(&y)]).expect("violated at 0");
        loss.backward();
        assert!(y.grad().double_value(&[0]) != 0.0);
    }

    #[test]
    fn the_loss_gradient_points_into_the_domain() {
        let x = t(&[-1.0]).set_requires_grad(true);
        let loss = first_positive_loss(of("Log"), &[Some(&x)]).expect("violated");
        loss.backward();
        // Gradient descent moves x up, towards the domain x > 0.
        assert!(x.grad().double_value(&[0]) < 0.0);
    }
}
