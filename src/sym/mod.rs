//! Symbolic integers and predicates over shapes and attributes.
//!
//! Op specifications state `requires` and `type_transfer` with these expressions. Constant
//! sub-expressions fold as they are built, so an expression over concrete dimensions is just a
//! number and needs no solver; only expressions over free variables ([`Int::var`]) go to z3.

pub mod vars;

use std::ops::{Add, Div, Mul, Rem, Sub};
use std::rc::Rc;

/// Index of a solver variable in a [`vars::VarTable`].
pub type VarId = usize;

#[derive(Debug, PartialEq, Eq, Hash)]
enum IntNode {
    Const(i64),
    Var(VarId),
    Add(Int, Int),
    Sub(Int, Int),
    Mul(Int, Int),
    /// Floor division (operands are non-negative in every spec).
    Div(Int, Int),
    Mod(Int, Int),
    Max(Int, Int),
    Min(Int, Int),
}

/// A symbolic integer expression (equal and hashed by structure).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Int(Rc<IntNode>);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Cmp {
    Eq,
    Ne,
    Le,
    Lt,
}

#[derive(Debug, PartialEq, Eq, Hash)]
enum BoolNode {
    Const(bool),
    Cmp(Cmp, Int, Int),
    And(Vec<Bool>),
    Or(Vec<Bool>),
    Not(Bool),
}

/// A symbolic predicate (equal and hashed by structure).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bool(Rc<BoolNode>);

impl From<i64> for Int {
    fn from(v: i64) -> Self {
        Int(Rc::new(IntNode::Const(v)))
    }
}

impl From<usize> for Int {
    fn from(v: usize) -> Self {
        Int::from(v as i64)
    }
}

impl From<&Int> for Int {
    fn from(v: &Int) -> Self {
        v.clone()
    }
}

fn floor_div(a: i64, b: i64) -> Option<i64> {
    (b != 0).then(|| a.div_euclid(b))
}

impl Int {
    /// A reference to solver variable `id`.
    pub fn var(id: VarId) -> Int {
        Int(Rc::new(IntNode::Var(id)))
    }

    /// The value, when the expression is constant.
    pub fn as_const(&self) -> Option<i64> {
        match *self.0 {
            IntNode::Const(v) => Some(v),
            _ => None,
        }
    }

    fn fold(node: IntNode) -> Int {
        let konst = |a: &Int, b: &Int| Some((a.as_const()?, b.as_const()?));
        let folded = match &node {
            IntNode::Add(a, b) => konst(a, b).and_then(|(x, y)| x.checked_add(y)),
            IntNode::Sub(a, b) => konst(a, b).and_then(|(x, y)| x.checked_sub(y)),
            IntNode::Mul(a, b) => konst(a, b).and_then(|(x, y)| x.checked_mul(y)),
            IntNode::Div(a, b) => konst(a, b).and_then(|(x, y)| floor_div(x, y)),
            IntNode::Mod(a, b) => konst(a, b).and_then(|(x, y)| (y != 0).then(|| x.rem_euclid(y))),
            IntNode::Max(a, b) => konst(a, b).map(|(x, y)| x.max(y)),
            IntNode::Min(a, b) => konst(a, b).map(|(x, y)| x.min(y)),
            _ => None,
        };
        match folded {
            Some(v) => Int::from(v),
            None => Int(Rc::new(node)),
        }
    }

    /// `max(self, other)`.
    pub fn max(&self, other: impl Into<Int>) -> Int {
        Int::fold(IntNode::Max(self.clone(), other.into()))
    }

    /// `min(self, other)`.
    pub fn min(&self, other: impl Into<Int>) -> Int {
        Int::fold(IntNode::Min(self.clone(), other.into()))
    }

    /// Euclidean remainder.
    pub fn modulo(&self, other: impl Into<Int>) -> Int {
        Int::fold(IntNode::Mod(self.clone(), other.into()))
    }

    fn cmp(&self, op: Cmp, other: Int) -> Bool {
        if let (Some(a), Some(b)) = (self.as_const(), other.as_const()) {
            return Bool::from(match op {
                Cmp::Eq => a == b,
                Cmp::Ne => a != b,
                Cmp::Le => a <= b,
                Cmp::Lt => a < b,
            });
        }
        Bool(Rc::new(BoolNode::Cmp(op, self.clone(), other)))
    }

    /// `self == other`.
    pub fn eq(&self, other: impl Into<Int>) -> Bool {
        self.cmp(Cmp::Eq, other.into())
    }
    /// `self != other`.
    pub fn ne(&self, other: impl Into<Int>) -> Bool {
        self.cmp(Cmp::Ne, other.into())
    }
    /// `self <= other`.
    pub fn le(&self, other: impl Into<Int>) -> Bool {
        self.cmp(Cmp::Le, other.into())
    }
    /// `self < other`.
    pub fn lt(&self, other: impl Into<Int>) -> Bool {
        self.cmp(Cmp::Lt, other.into())
    }
    /// `self >= other`.
    pub fn ge(&self, other: impl Into<Int>) -> Bool {
        other.into().cmp(Cmp::Le, self.clone())
    }
    /// `self > other`.
    pub fn gt(&self, other: impl Into<Int>) -> Bool {
        other.into().cmp(Cmp::Lt, self.clone())
    }

    /// `lo <= self <= hi`.
    pub fn within(&self, lo: impl Into<Int>, hi: impl Into<Int>) -> Bool {
        Bool::and([self.ge(lo), self.le(hi)])
    }

    /// Evaluates under an assignment of every variable; `None` on division by zero or overflow.
    pub fn eval(&self, env: &[i64]) -> Option<i64> {
        let bin = |a: &Int, b: &Int| Some((a.eval(env)?, b.eval(env)?));
        match &*self.0 {
            IntNode::Const(v) => Some(*v),
            IntNode::Var(id) => env.get(*id).copied(),
            IntNode::Add(a, b) => bin(a, b).and_then(|(x, y)| x.checked_add(y)),
            IntNode::Sub(a, b) => bin(a, b).and_then(|(x, y)| x.checked_sub(y)),
            IntNode::Mul(a, b) => bin(a, b).and_then(|(x, y)| x.checked_mul(y)),
            IntNode::Div(a, b) => bin(a, b).and_then(|(x, y)| floor_div(x, y)),
            IntNode::Mod(a, b) => bin(a, b).and_then(|(x, y)| (y != 0).then(|| x.rem_euclid(y))),
            IntNode::Max(a, b) => bin(a, b).map(|(x, y)| x.max(y)),
            IntNode::Min(a, b) => bin(a, b).map(|(x, y)| x.min(y)),
        }
    }

    /// Adds the variables the expression mentions to `out`.
    pub fn collect_vars(&self, out: &mut Vec<VarId>) {
        match &*self.0 {
            IntNode::Const(_) => {}
            IntNode::Var(v) => out.push(*v),
            IntNode::Add(a, b)
            | IntNode::Sub(a, b)
            | IntNode::Mul(a, b)
            | IntNode::Div(a, b)
            | IntNode::Mod(a, b)
            | IntNode::Max(a, b)
            | IntNode::Min(a, b) => {
                a.collect_vars(out);
                b.collect_vars(out);
            }
        }
    }

    /// Lowers to a z3 integer term; `vars` holds the z3 constant of each variable.
    pub fn to_z3(&self, vars: &[z3::ast::Int]) -> z3::ast::Int {
        use z3::ast::Int as Z;
        let pair = |a: &Int, b: &Int| (a.to_z3(vars), b.to_z3(vars));
        match &*self.0 {
            IntNode::Const(v) => Z::from_i64(*v),
            IntNode::Var(id) => vars[*id].clone(),
            IntNode::Add(a, b) => {
                let (x, y) = pair(a, b);
                Z::add(&[x, y])
            }
            IntNode::Sub(a, b) => {
                let (x, y) = pair(a, b);
                Z::sub(&[x, y])
            }
            IntNode::Mul(a, b) => {
                let (x, y) = pair(a, b);
                Z::mul(&[x, y])
            }
            IntNode::Div(a, b) => {
                let (x, y) = pair(a, b);
                x.div(&y)
            }
            IntNode::Mod(a, b) => {
                let (x, y) = pair(a, b);
                x.modulo(&y)
            }
            IntNode::Max(a, b) => {
                let (x, y) = pair(a, b);
                x.ge(&y).ite(&x, &y)
            }
            IntNode::Min(a, b) => {
                let (x, y) = pair(a, b);
                x.le(&y).ite(&x, &y)
            }
        }
    }
}

macro_rules! int_binop {
    ($tr:ident, $f:ident, $node:ident) => {
        impl<T: Into<Int>> $tr<T> for Int {
            type Output = Int;
            fn $f(self, rhs: T) -> Int {
                Int::fold(IntNode::$node(self, rhs.into()))
            }
        }
        impl<T: Into<Int>> $tr<T> for &Int {
            type Output = Int;
            fn $f(self, rhs: T) -> Int {
                Int::fold(IntNode::$node(self.clone(), rhs.into()))
            }
        }
    };
}
int_binop!(Add, add, Add);
int_binop!(Sub, sub, Sub);
int_binop!(Mul, mul, Mul);
int_binop!(Div, div, Div);
int_binop!(Rem, rem, Mod);

impl From<bool> for Bool {
    fn from(b: bool) -> Self {
        Bool(Rc::new(BoolNode::Const(b)))
    }
}

impl Bool {
    /// The value, when the predicate is constant.
    pub fn as_const(&self) -> Option<bool> {
        match *self.0 {
            BoolNode::Const(b) => Some(b),
            _ => None,
        }
    }

    /// The variables the predicate mentions, sorted and de-duplicated.
    pub fn vars(&self) -> Vec<VarId> {
        fn walk(b: &Bool, out: &mut Vec<VarId>) {
            match &*b.0 {
                BoolNode::Const(_) => {}
                BoolNode::Cmp(_, x, y) => {
                    x.collect_vars(out);
                    y.collect_vars(out);
                }
                BoolNode::And(items) | BoolNode::Or(items) => {
                    items.iter().for_each(|i| walk(i, out))
                }
                BoolNode::Not(i) => walk(i, out),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// `Some((v, c))` when the predicate is `v == c` (either way round) for a variable `v`
    /// and a constant `c`.
    pub fn as_var_equals_const(&self) -> Option<(VarId, i64)> {
        let BoolNode::Cmp(Cmp::Eq, a, b) = &*self.0 else {
            return None;
        };
        match (&*a.0, &*b.0) {
            (IntNode::Var(v), IntNode::Const(c)) | (IntNode::Const(c), IntNode::Var(v)) => {
                Some((*v, *c))
            }
            _ => None,
        }
    }

    /// Conjunction; folds constants.
    pub fn and(items: impl IntoIterator<Item = Bool>) -> Bool {
        let mut rest = Vec::new();
        for b in items {
            match b.as_const() {
                Some(false) => return Bool::from(false),
                Some(true) => {}
                None => rest.push(b),
            }
        }
        match rest.len() {
            0 => Bool::from(true),
            1 => rest.pop().expect("one item"),
            _ => Bool(Rc::new(BoolNode::And(rest))),
        }
    }

    /// Disjunction; folds constants.
    pub fn or(items: impl IntoIterator<Item = Bool>) -> Bool {
        let mut rest = Vec::new();
        for b in items {
            match b.as_const() {
                Some(true) => return Bool::from(true),
                Some(false) => {}
                None => rest.push(b),
            }
        }
        match rest.len() {
            0 => Bool::from(false),
            1 => rest.pop().expect("one item"),
            _ => Bool(Rc::new(BoolNode::Or(rest))),
        }
    }

    /// Negation.
    pub fn not(&self) -> Bool {
        match self.as_const() {
            Some(b) => Bool::from(!b),
            None => Bool(Rc::new(BoolNode::Not(self.clone()))),
        }
    }

    /// `self => other`.
    pub fn implies(&self, other: Bool) -> Bool {
        Bool::or([self.not(), other])
    }

    /// Evaluates under a full assignment; `None` when a term is undefined.
    pub fn eval(&self, env: &[i64]) -> Option<bool> {
        match &*self.0 {
            BoolNode::Const(b) => Some(*b),
            BoolNode::Cmp(op, a, b) => {
                let (x, y) = (a.eval(env)?, b.eval(env)?);
                Some(match op {
                    Cmp::Eq => x == y,
                    Cmp::Ne => x != y,
                    Cmp::Le => x <= y,
                    Cmp::Lt => x < y,
                })
            }
            BoolNode::And(items) => {
                for b in items {
                    if !b.eval(env)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            BoolNode::Or(items) => {
                for b in items {
                    if b.eval(env)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            BoolNode::Not(b) => b.eval(env).map(|v| !v),
        }
    }

    /// Lowers to a z3 predicate.
    pub fn to_z3(&self, vars: &[z3::ast::Int]) -> z3::ast::Bool {
        use z3::ast::Bool as B;
        match &*self.0 {
            BoolNode::Const(b) => B::from_bool(*b),
            BoolNode::Cmp(op, a, b) => {
                let (x, y) = (a.to_z3(vars), b.to_z3(vars));
                match op {
                    Cmp::Eq => x.eq(&y),
                    Cmp::Ne => x.eq(&y).not(),
                    Cmp::Le => x.le(&y),
                    Cmp::Lt => x.lt(&y),
                }
            }
            BoolNode::And(items) => {
                B::and(&items.iter().map(|b| b.to_z3(vars)).collect::<Vec<_>>())
            }
            BoolNode::Or(items) => B::or(&items.iter().map(|b| b.to_z3(vars)).collect::<Vec<_>>()),
            BoolNode::Not(b) => b.to_z3(vars).not(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_fold_without_a_solver() {
        let e = (Int::from(7i64) + 3i64) / 4i64 * 2i64 - 1i64;
        assert_eq!(e.as_const(), Some(3));
        assert_eq!(Int::from(5i64).le(4i64).as_const(), Some(false));
        assert_eq!(
            Bool::and([Bool::from(true), Int::from(1i64).eq(1i64)]).as_const(),
            Some(true)
        );
    }

    #[test]
    fn vars_are_collected_once() {
        let p = Bool::and([
            (Int::var(2) + Int::var(0)).le(Int::var(2)),
            Int::var(5).gt(0i64),
        ]);
        assert_eq!(p.vars(), vec![0, 2, 5]);
    }

    #[test]
    fn unit_equalities_are_recognized_either_way_round() {
        assert_eq!(Int::var(3).eq(5i64).as_var_equals_const(), Some((3, 5)));
        assert_eq!(
            Int::from(5i64).eq(Int::var(3)).as_var_equals_const(),
            Some((3, 5))
        );
        assert_eq!((Int::var(3) + 1i64).eq(5i64).as_var_equals_const(), None);
    }

    #[test]
    fn eval_matches_floor_semantics() {
        let x = Int::var(0);
        let e = (&x + 1i64) / 2i64 + x.modulo(3i64);
        assert_eq!(e.eval(&[4]), Some(2 + 1));
        assert_eq!((&x / Int::var(1)).eval(&[4, 0]), None);
        let p = Bool::or([x.lt(0i64), x.within(3i64, 5i64)]);
        assert_eq!(p.eval(&[4]), Some(true));
        assert_eq!(p.eval(&[6]), Some(false));
    }
}
