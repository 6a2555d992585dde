//! Solving an insertion's constraints: a concrete fast path, then incremental z3 with push/pop.
//!
//! Every free variable (an attribute, or a dimension of a new placeholder) carries a *hint*
//! drawn from the fuzzer bytes through one of k = 6 exponential bins. The hints are tried
//! concretely first; when they violate a `requires`, z3 finds a model of the constraints and
//! then, variable by variable, adds "equal to the hint" or else "inside the hint's bin" only
//! where that stays satisfiable (NNSmith's attribute binning). Small byte changes move hints,
//! not the whole solution, which keeps decoding local.

use crate::sym::vars::VarTable;
use crate::sym::Bool;
use z3::{Params, SatResult, Solver};

/// Passes of concrete repair before z3 is asked.
const REPAIR_PASSES: usize = 3;
/// Most values of one variable concrete repair scans.
const REPAIR_SCAN: i64 = 64;

/// Resource units (z3's deterministic `rlimit`, unlike a wall-clock timeout) one check may
/// spend before it counts as unsatisfiable: the same bytes decode the same way however
/// loaded the machine is.
const CHECK_RLIMIT: u32 = 50_000;

impl VarTable {
    /// Finds values for every variable that satisfy `requires` and the variables' bounds,
    /// staying as close to the hints as the constraints allow. `None` when unsatisfiable (or
    /// when z3 gives up).
    pub fn solve(&self, requires: &[Bool]) -> Option<Vec<i64>> {
        let hints: Vec<i64> = self.vars.iter().map(|v| v.hint).collect();
        if requires.iter().all(|r| r.eval(&hints) == Some(true)) {
            return Some(hints);
        }
        if requires.iter().any(|r| r.as_const() == Some(false)) {
            return None;
        }
        if let Some(repaired) = self.repair_concretely(requires, hints) {
            return Some(repaired);
        }
        let values = self.solve_with_z3(requires)?;
        requires
            .iter()
            .all(|r| r.eval(&values) == Some(true))
            .then_some(values)
    }

    /// Concrete repair before any solver call. First every requirement of the form
    /// `variable == constant` (a backward insertion's output dims, mostly) sets its variable.
    /// Then, for up to [`REPAIR_PASSES`] passes, each variable of a failing requirement is
    /// moved to the value of its domain (at most [`REPAIR_SCAN`] values around the hint) that
    /// satisfies the most requirements mentioning it, ties going to the context-preferred
    /// value, then to the value nearest the hint. Deterministic, cheap next to a solver call, and `None` when it does not reach a
    /// full solution.
    fn repair_concretely(&self, requires: &[Bool], mut values: Vec<i64>) -> Option<Vec<i64>> {
        for (var, value) in requires.iter().filter_map(Bool::as_var_equals_const) {
            let info = &self.vars[var];
            if (info.lo..=info.hi).contains(&value) {
                values[var] = value;
            }
        }
        let deps: Vec<Vec<usize>> = requires.iter().map(Bool::vars).collect();
        let holds = |r: usize, env: &[i64]| requires[r].eval(env) == Some(true);
        for _pass in 0..REPAIR_PASSES {
            let failing: Vec<usize> = (0..requires.len())
                .filter(|r| !holds(*r, &values))
                .collect();
            if failing.is_empty() {
                return Some(values);
            }
            let mut touched: Vec<usize> = failing
                .iter()
                .flat_map(|r| deps[*r].iter().copied())
                .collect();
            touched.sort_unstable();
            touched.dedup();
            for var in touched {
                let info = &self.vars[var];
                let related: Vec<usize> = (0..requires.len())
                    .filter(|r| deps[*r].contains(&var))
                    .collect();
                let lo = info.lo.max(info.hint - REPAIR_SCAN / 2);
                let hi = info.hi.min(lo + REPAIR_SCAN - 1);
                let mut best = (usize::MAX, true, i64::MAX, values[var]);
                for candidate in lo..=hi {
                    values[var] = candidate;
                    let unmet = related.iter().filter(|r| !holds(**r, &values)).count();
                    let key = (
                        unmet,
                        Some(candidate) != info.preferred,
                        (candidate - info.hint).abs(),
                        candidate,
                    );
                    if key < best {
                        best = key;
                    }
                }
                values[var] = best.3;
            }
        }
        requires
            .iter()
            .all(|r| r.eval(&values) == Some(true))
            .then_some(values)
    }

    /// [`pin_all`](Self::pin_all) in a fresh scope of this thread's solver, remembered: the
    /// answer depends only on the requirements and on each variable's bounds, hint and bin,
    /// and the same insertion recurs often (a mutated input repeats most of its parent's
    /// steps), so an answer already found is not asked of z3 again.
    fn solve_with_z3(&self, requires: &[Bool]) -> Option<Vec<i64>> {
        let key = Question::of(self, requires);
        if let Some(answer) = ANSWERS.with(|a| a.borrow().get(&key).cloned()) {
            return answer;
        }
        let answer = self.pin_all_in_new_scope(requires);
        ANSWERS.with(|a| {
            let mut answers = a.borrow_mut();
            if answers.len() >= MAX_ANSWERS {
                answers.clear();
            }
            answers.insert(key, answer.clone());
        });
        answer
    }

    /// [`pin_all`](Self::pin_all) inside a new push/pop scope of this thread's solver.
    fn pin_all_in_new_scope(&self, requires: &[Bool]) -> Option<Vec<i64>> {
        SOLVER.with(|solver| {
            solver.push();
            let result = self.pin_all(solver, requires);
            solver.pop(1);
            result
        })
    }

    /// Inside an open scope of `solver`: asserts the constraints, then fixes the variables one
    /// by one, each to its hint if possible, else to the smallest feasible value of its bin,
    /// else to the smallest feasible value of its domain. Every decision rests on sat/unsat
    /// answers only, never on which model z3 happens to return, so the result is the same
    /// whatever the solver's history: decoding stays deterministic across processes. A
    /// question a known solution already answers (a *witness*: z3's last model, or it with
    /// one variable moved where every requirement still evaluates true) is not put to z3.
    fn pin_all(&self, solver: &Solver, requires: &[Bool]) -> Option<Vec<i64>> {
        let consts: Vec<z3::ast::Int> = (0..self.vars.len())
            .map(|i| z3::ast::Int::new_const(format!("v{i}")))
            .collect();
        for (info, c) in self.vars.iter().zip(&consts) {
            solver.assert(c.ge(info.lo));
            solver.assert(c.le(info.hi));
        }
        for r in requires {
            solver.assert(r.to_z3(&consts));
        }
        if solver.check() != SatResult::Sat {
            return None;
        }
        let mut pins = Pins {
            table: self,
            solver,
            consts: &consts,
            requires,
            witness: model_values(solver, &consts),
        };
        let mut values = Vec::with_capacity(self.vars.len());
        for (var, info) in self.vars.iter().enumerate() {
            let value = if pins.feasible(var, info.hint, info.hint) {
                info.hint
            } else {
                let (mut lo, mut hi) = if pins.feasible(var, info.bin.0, info.bin.1) {
                    info.bin
                } else {
                    (info.lo, info.hi)
                };
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if pins.feasible(var, lo, mid) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                lo
            };
            pins.pin(var, value);
            values.push(value);
        }
        (solver.check() == SatResult::Sat).then_some(values)
    }
}

/// The state of [`VarTable::pin_all`]: the solver with every pin so far asserted, and a
/// witness, a full assignment known to satisfy everything asserted.
struct Pins<'a> {
    table: &'a VarTable,
    solver: &'a Solver,
    consts: &'a [z3::ast::Int],
    requires: &'a [Bool],
    witness: Option<Vec<i64>>,
}

impl Pins<'_> {
    /// Whether variable `var` can take a value in `lo..=hi` with everything asserted so far.
    fn feasible(&mut self, var: usize, lo: i64, hi: i64) -> bool {
        if let Some(w) = &self.witness {
            if (lo..=hi).contains(&w[var]) {
                return true;
            }
            if let Some(moved) = self.moved(w, var, lo) {
                self.witness = Some(moved);
                return true;
            }
        }
        let c = &self.consts[var];
        self.solver.push();
        self.solver
            .assert(z3::ast::Bool::and(&[c.ge(lo), c.le(hi)]));
        let sat = self.solver.check() == SatResult::Sat;
        if sat {
            self.witness = model_values(self.solver, self.consts);
        }
        self.solver.pop(1);
        sat
    }

    /// Asserts `var == value`, keeping the witness when it (moved to `value`) still holds.
    fn pin(&mut self, var: usize, value: i64) {
        self.solver.assert(self.consts[var].eq(value));
        self.witness = match self.witness.take() {
            Some(w) if w[var] == value => Some(w),
            Some(w) => self.moved(&w, var, value),
            None => None,
        };
    }

    /// The witness `w` with variable `var` moved to `value`, when that stays in the
    /// variable's domain and every requirement still evaluates true (pinned variables keep
    /// their values: only `var` moves, and it is not pinned yet).
    fn moved(&self, w: &[i64], var: usize, value: i64) -> Option<Vec<i64>> {
        let info = &self.table.vars[var];
        if !(info.lo..=info.hi).contains(&value) {
            return None;
        }
        let mut moved = w.to_vec();
        moved[var] = value;
        self.requires
            .iter()
            .all(|r| r.eval(&moved) == Some(true))
            .then_some(moved)
    }
}

/// The values of `consts` in the solver's model after a satisfiable check.
fn model_values(solver: &Solver, consts: &[z3::ast::Int]) -> Option<Vec<i64>> {
    let model = solver.get_model()?;
    consts
        .iter()
        .map(|c| model.eval(c, true).and_then(|v| v.as_i64()))
        .collect()
}

/// What [`VarTable::pin_all`]'s answer depends on: the requirements, and per variable its
/// bounds, hint and bin.
#[derive(PartialEq, Eq, Hash)]
struct Question {
    requires: Vec<Bool>,
    vars: Vec<(i64, i64, i64, (i64, i64))>,
}

impl Question {
    /// The question `requires` puts to z3 about `table`'s variables.
    fn of(table: &VarTable, requires: &[Bool]) -> Question {
        Question {
            requires: requires.to_vec(),
            vars: table
                .vars
                .iter()
                .map(|v| (v.lo, v.hi, v.hint, v.bin))
                .collect(),
        }
    }
}

/// Most answers [`ANSWERS`] keeps before it starts over (a few MiB).
const MAX_ANSWERS: usize = 20_000;

thread_local! {
    /// The z3 answers found so far on this thread ([`VarTable::solve_with_z3`]).
    static ANSWERS: std::cell::RefCell<std::collections::HashMap<Question, Option<Vec<i64>>>> =
        std::cell::RefCell::default();
    /// One incremental solver per thread: each insertion works inside a push/pop scope.
    static SOLVER: Solver = {
        let solver = Solver::new();
        let mut params = Params::new();
        params.set_u32("rlimit", CHECK_RLIMIT);
        solver.set_params(&params);
        solver
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::vars::bin_range;
    use crate::sym::Int;
    use arbitrary::Unstructured;

    #[test]
    fn bins_cover_the_domain_exponentially() {
        assert_eq!(bin_range(0, 100), (0, 0));
        assert_eq!(bin_range(1, 100), (1, 1));
        assert_eq!(bin_range(3, 100), (4, 7));
        assert_eq!(bin_range(5, 100), (16, 100));
        assert_eq!(bin_range(4, 5), (5, 5));
    }

    /// A table of two variables, `a` in 1..=`hi` and `b` in `b_lo`..=`hi`, hinted by `bytes`.
    fn two_vars(bytes: &[u8], b_lo: i64, hi: i64) -> (VarTable, Int, Int) {
        let mut u = Unstructured::new(bytes);
        let mut t = VarTable::default();
        let a = t.fresh("a", 1, hi, &mut u);
        let b = t.fresh("b", b_lo, hi, &mut u);
        (t, a, b)
    }

    #[test]
    fn hints_are_kept_when_they_satisfy() {
        let (t, a, b) = two_vars(&[2, 0, 3, 1], 1, 64);
        let hints: Vec<i64> = t.vars().iter().map(|v| v.hint).collect();
        assert_eq!(t.solve(&[a.le(b)]), Some(hints));
    }

    #[test]
    fn z3_repairs_violated_hints_and_respects_nonlinear_requires() {
        let (t, a, b) = two_vars(&[0; 8], 1, 16);
        let sol = t
            .solve(&[(&a * &b).eq(12i64), a.gt(b.clone())])
            .expect("satisfiable");
        assert_eq!(sol[0] * sol[1], 12);
        assert!(sol[0] > sol[1]);
        assert!(t.solve(&[a.gt(16i64)]).is_none());
    }

    #[test]
    fn a_question_z3_answered_is_answered_alike_from_memory() {
        let (t, a, b) = two_vars(&[0; 8], 2, 1000);
        // 391 = 23 × 17: beyond concrete repair's scan around the hints, so z3 answers.
        let requires = [(&a * &b).eq(391i64), a.gt(b.clone())];
        let remembered = |t: &VarTable| {
            let key = Question::of(t, &requires);
            ANSWERS.with(|answers| answers.borrow().get(&key).cloned())
        };
        assert_eq!(remembered(&t), None);
        let first = t.solve(&requires);
        assert_eq!(remembered(&t), Some(first.clone()));
        // A fresh solver scope, asked directly, agrees with the remembered answer.
        assert_eq!(t.pin_all_in_new_scope(&requires), first);
        assert_eq!(t.solve(&requires), first);
    }
}
