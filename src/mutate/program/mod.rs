//! TorchProbe on a program IR. A generated graph is lowered ([`lower`]) to straight-line SSA
//! code, one statement per operator, then rewritten by composable, semantics-preserving
//! mutations decoded from bytes ([`ProgramPlan`]):
//! - operator resolution ([`resolve`]): an element-wise op unrolled along one axis, as a
//!   for-loop or a list comprehension;
//! - mutate-then-recover ([`recover`]): back a value up, overwrite it in place, restore it
//!   right before its next use;
//! - functionalization ([`functionalize`]): a statement range becomes a function returning
//!   what it defines or mutates; TorchScript has no nested `def`, so captured values are
//!   passed as parameters (lambda lifting) and the function is hoisted to the unit's top;
//! - EMI true-conditional blocks ([`emi`]): a statement range under an `if` whose condition
//!   is synthesized from a profile of the seed run (element, shape, `len(shape)`, max/min,
//!   compared with >, <, >= or <=).
//!
//! [`crate::mutate::program::render`] renders the program as TorchScript or Python source;
//! [`working`] derives the precision each output is computed in, for the oracle.

pub mod emi;
pub mod functionalize;
pub mod lower;
pub mod recover;
pub mod render;
pub mod resolve;
pub mod working;

use crate::ir::{ScalarType, Tensor, TensorType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A variable name.
pub type Var = String;

/// An operator application: a TorchScript expression template whose `{k}` stand for `args[k]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Template, e.g. `torch.add({0}, {1})`.
    pub template: String,
    /// Argument variables.
    pub args: Vec<Var>,
    /// Element-wise (with broadcasting): may be unrolled along an axis.
    pub elementwise: bool,
    /// The result owns fresh storage (no view or alias of an argument): may be overwritten in
    /// place.
    pub fresh: bool,
}

/// A scalar of an EMI condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// `v[pos]`.
    Element(Var, Vec<usize>),
    /// `v.shape[k]`.
    Dim(Var, usize),
    /// `len(v.shape)`.
    Rank(Var),
    /// `v.max()`.
    Max(Var),
    /// `v.min()`.
    Min(Var),
}

/// A condition `lhs op rhs` that holds on the profiled inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    /// Left side.
    pub lhs: Scalar,
    /// `>`, `<`, `>=` or `<=`.
    pub op: &'static str,
    /// Constant right side.
    pub rhs: f64,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `var = call`.
    Let {
        /// Defined variable.
        var: Var,
        /// Operator application.
        call: Call,
    },
    /// `var` computed slice by slice along `axis` (operator resolution).
    Unrolled {
        /// Defined variable.
        var: Var,
        /// The element-wise call.
        call: Call,
        /// Axis of the result unrolled.
        axis: usize,
        /// A list comprehension (else a for-loop writing into an empty tensor).
        comprehension: bool,
    },
    /// `backup = of.clone()`.
    Backup {
        /// The copy.
        backup: Var,
        /// The original.
        of: Var,
    },
    /// `var.fill_(value)`: overwrite in place.
    Overwrite {
        /// The overwritten variable.
        var: Var,
        /// Fill value.
        value: f64,
    },
    /// `var.copy_(backup)`: restore in place.
    Restore {
        /// The restored variable.
        var: Var,
        /// Its backup.
        backup: Var,
    },
    /// `results = function(args)`.
    Invoke {
        /// Variables bound to the returned tuple.
        results: Vec<Var>,
        /// The called function's name.
        function: String,
        /// Arguments.
        args: Vec<Var>,
    },
    /// `if cond: body` with an else-branch that defines `defs` as zeros.
    If {
        /// Always true on the profiled inputs.
        cond: Cond,
        /// Guarded statements.
        body: Vec<Stmt>,
        /// Variables the body defines and later code reads.
        defs: Vec<Var>,
    },
}

impl Stmt {
    /// Variables this statement (re)binds in its scope.
    pub fn defs(&self) -> Vec<Var> {
        match self {
            Stmt::Let { var, .. } | Stmt::Unrolled { var, .. } => vec![var.clone()],
            Stmt::Backup { backup, .. } => vec![backup.clone()],
            Stmt::Invoke { results, .. } => results.clone(),
            Stmt::If { defs, .. } => defs.clone(),
            Stmt::Overwrite { .. } | Stmt::Restore { .. } => Vec::new(),
        }
    }

    /// Variables this statement mutates in place.
    pub fn mutates(&self) -> Vec<Var> {
        match self {
            Stmt::Overwrite { var, .. } | Stmt::Restore { var, .. } => vec![var.clone()],
            Stmt::If { body, .. } => body.iter().flat_map(Stmt::mutates).collect(),
            _ => Vec::new(),
        }
    }

    /// Variables this statement reads from its scope.
    pub fn reads(&self) -> Vec<Var> {
        match self {
            Stmt::Let { call, .. } | Stmt::Unrolled { call, .. } => call.args.clone(),
            Stmt::Backup { of, .. } => vec![of.clone()],
            Stmt::Overwrite { var, .. } => vec![var.clone()],
            Stmt::Restore { var, backup } => vec![var.clone(), backup.clone()],
            Stmt::Invoke { args, .. } => args.clone(),
            Stmt::If { cond, body, .. } => {
                let mut out = vec![cond.lhs.var().clone()];
                let mut defined = BTreeSet::new();
                for s in body {
                    out.extend(s.reads().into_iter().filter(|v| !defined.contains(v)));
                    defined.extend(s.defs());
                }
                out
            }
        }
    }
}

impl Scalar {
    /// The variable the scalar reads.
    pub fn var(&self) -> &Var {
        match self {
            Scalar::Element(v, _)
            | Scalar::Dim(v, _)
            | Scalar::Rank(v)
            | Scalar::Max(v)
            | Scalar::Min(v) => v,
        }
    }
}

/// A variable's type: torch element type and concrete shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarType {
    /// Element type.
    pub scalar: ScalarType,
    /// Concrete dimensions; empty for a 0-d tensor.
    pub shape: Vec<usize>,
}

impl VarType {
    /// Builds a type.
    pub fn new(scalar: ScalarType, shape: Vec<usize>) -> VarType {
        VarType { scalar, shape }
    }

    /// The type of an ONNX-side tensor type, when torch has its element type.
    pub fn of_tensor(ty: &TensorType) -> Option<VarType> {
        Some(VarType::new(
            ScalarType::of_dtype(ty.dtype)?,
            ty.shape.clone(),
        ))
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

impl std::fmt::Display for VarType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{:?}", self.scalar, self.shape)
    }
}

/// A hoisted function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Name.
    pub name: String,
    /// Parameters (captured variables).
    pub params: Vec<Var>,
    /// Body.
    pub body: Vec<Stmt>,
    /// Returned variables, in order.
    pub returns: Vec<Var>,
}

/// A program: parameters (the graph's inputs and weights), a body, outputs, hoisted functions
/// and the type of every variable. `Program::default()` is the empty program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    /// Parameters, in call order.
    pub params: Vec<Var>,
    /// Top-level statements.
    pub body: Vec<Stmt>,
    /// Returned variables.
    pub outputs: Vec<Var>,
    /// Functions, in definition order (callees first).
    pub functions: Vec<Function>,
    /// Type of every variable.
    pub types: BTreeMap<Var, VarType>,
    /// The seed run's value of every original variable on the fixed inputs (the EMI
    /// profile).
    pub profile: BTreeMap<Var, Tensor>,
    /// Counter for fresh names.
    pub fresh: usize,
}

impl Program {
    /// A fresh name with `prefix`.
    pub fn mint(&mut self, prefix: &str) -> Var {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    /// Whether `var` is read by a top-level statement at or after `from`, or is an output.
    pub fn read_from(&self, from: usize, var: &Var) -> bool {
        self.outputs.contains(var) || self.body[from..].iter().any(|s| s.reads().contains(var))
    }
}

/// One program mutation, with positions taken modulo the current statement count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProgramMutation {
    /// Operator resolution of statement `at` along axis `axis`.
    Resolve {
        /// Statement.
        at: u8,
        /// Axis.
        axis: u8,
        /// List comprehension instead of a for-loop.
        comprehension: bool,
    },
    /// Mutate-then-recover the value statement `at` defines.
    Recover {
        /// Statement.
        at: u8,
        /// Picks the fill value.
        value: u8,
    },
    /// Functionalize statements `[at, at+len]`.
    Functionalize {
        /// First statement.
        at: u8,
        /// Extra statements.
        len: u8,
    },
    /// Wrap statements `[at, at+len]` in an EMI true-conditional block.
    Emi {
        /// First statement.
        at: u8,
        /// Extra statements.
        len: u8,
        /// Picks the condition.
        pick: u8,
    },
}

/// Bytes each program mutation reads.
pub const MUTATION_BYTES: usize = 4;
/// Most mutations per plan.
pub const MAX_MUTATIONS: usize = 4;
/// Bytes a [`ProgramPlan`] occupies at the head of an input.
pub const PLAN_BYTES: usize = MUTATION_BYTES * MAX_MUTATIONS;

impl ProgramMutation {
    /// Decodes one chunk; `None` asks for no mutation.
    pub fn decode([kind, a, b, c]: [u8; MUTATION_BYTES]) -> Option<ProgramMutation> {
        Some(match kind % 5 {
            0 => return None,
            1 => ProgramMutation::Resolve {
                at: a,
                axis: b,
                comprehension: c % 2 == 1,
            },
            2 => ProgramMutation::Recover { at: a, value: b },
            3 => ProgramMutation::Functionalize { at: a, len: b },
            _ => ProgramMutation::Emi {
                at: a,
                len: b,
                pick: c,
            },
        })
    }

    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            ProgramMutation::Resolve { .. } => "resolve",
            ProgramMutation::Recover { .. } => "recover",
            ProgramMutation::Functionalize { .. } => "functionalize",
            ProgramMutation::Emi { .. } => "emi",
        }
    }
}

/// A decoded sequence of program mutations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramPlan {
    /// Mutations, in order.
    pub mutations: Vec<ProgramMutation>,
}

impl ProgramPlan {
    /// Decodes the first [`PLAN_BYTES`] of `bytes` (missing bytes read as zero) and returns
    /// the plan with the rest of the input.
    pub fn split(bytes: &[u8]) -> (ProgramPlan, &[u8]) {
        let (head, rest) = crate::gen::padded_head::<PLAN_BYTES>(bytes);
        let mutations = head
            .chunks_exact(MUTATION_BYTES)
            .filter_map(|c| ProgramMutation::decode(c.try_into().expect("exact chunks")))
            .collect();
        (ProgramPlan { mutations }, rest)
    }

    /// The plan with every EMI condition on a shape (a dimension or the rank, picks 1 and 2
    /// of [`emi`]'s five), never on values: for compilers that trace shapes but not data,
    /// as `torch.export` (data-dependent control flow needs `torch.cond` there).
    pub fn shape_conditions_only(mut self) -> ProgramPlan {
        for m in &mut self.mutations {
            if let ProgramMutation::Emi { pick, .. } = m {
                let kind = 1 + (*pick / 5) % 2;
                let moved = u16::from(*pick - *pick % 5) + u16::from(kind);
                *pick = u8::try_from(moved).unwrap_or(u8::MAX - 4);
            }
        }
        self
    }

    /// Applies every mutation in order; returns the names of those that applied.
    pub fn apply(&self, program: &mut Program) -> Vec<String> {
        self.apply_except(program, &BTreeSet::new())
    }

    /// [`apply`](Self::apply) without the mutations at the indexes in `dropped` (a program
    /// reduction's edits).
    pub fn apply_except(&self, program: &mut Program, dropped: &BTreeSet<usize>) -> Vec<String> {
        self.mutations
            .iter()
            .enumerate()
            .filter(|(k, _)| !dropped.contains(k))
            .map(|(_, m)| m)
            .filter(|m| match **m {
                ProgramMutation::Resolve {
                    at,
                    axis,
                    comprehension,
                } => resolve::resolve(program, at, axis, comprehension),
                ProgramMutation::Recover { at, value } => recover::recover(program, at, value),
                ProgramMutation::Functionalize { at, len } => {
                    functionalize::functionalize(program, at, len)
                }
                ProgramMutation::Emi { at, len, pick } => emi::wrap(program, at, len, pick),
            })
            .map(|m| m.name().to_string())
            .collect()
    }
}

/// `[start, end)` of the top-level body for a `(at, len)` pair read from bytes.
pub(crate) fn span(program: &Program, at: u8, len: u8) -> Option<(usize, usize)> {
    let n = program.body.len();
    if n == 0 {
        return None;
    }
    let s = usize::from(at) % n;
    Some((s, s + 1 + usize::from(len) % (n - s).min(4)))
}

/// The variables statements `[s, e)` read from before them, in first-read order, and those
/// they define or mutate that are read after them.
pub(crate) fn interface(program: &Program, s: usize, e: usize) -> (Vec<Var>, Vec<Var>) {
    let mut defined = BTreeSet::new();
    let mut reads: Vec<Var> = Vec::new();
    for stmt in &program.body[s..e] {
        for v in stmt.reads() {
            if !defined.contains(&v) && !reads.contains(&v) {
                reads.push(v);
            }
        }
        defined.extend(stmt.defs());
    }
    let mut live: Vec<Var> = Vec::new();
    for stmt in &program.body[s..e] {
        for v in stmt.defs().into_iter().chain(stmt.mutates()) {
            if !live.contains(&v) && program.read_from(e, &v) {
                live.push(v);
            }
        }
    }
    (reads, live)
}

/// Builders the program modules' tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::Call;

    /// An element-wise call of `template` on `args` whose result owns fresh storage.
    pub fn call(template: &str, args: &[&str]) -> Call {
        Call {
            template: template.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            elementwise: true,
            fresh: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_conditions_only_keeps_every_emi_block_on_a_dimension_or_the_rank() {
        let mutations: Vec<ProgramMutation> = (0..=u8::MAX)
            .map(|pick| ProgramMutation::Emi {
                at: 0,
                len: 0,
                pick,
            })
            .collect();
        let plan = ProgramPlan { mutations }.shape_conditions_only();
        for m in &plan.mutations {
            let ProgramMutation::Emi { pick, .. } = m else {
                panic!("{m:?} is not an EMI block any more")
            };
            assert!(matches!(pick % 5, 1 | 2), "pick {pick}");
        }
    }
}
