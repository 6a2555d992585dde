//! The working precision of a program's outputs: the loosest float type that any value on
//! the way to an output is computed in. A float32 output whose value passed through a
//! float16 cast carries float16 rounding, and a float64 output of a statement that computes
//! a stage in float32 (`.float()` in its text) carries float32 rounding: the oracle judges
//! such an output with the tolerance of that type, not with its own.
//!
//! Derived from the program alone: the declared type of every variable on the path, the
//! float types a call's text names (the `DT_*` globals, `torch.float16`, `.half()` …), and
//! the data flow through functions, conditional blocks, backups and in-place restores.

use super::{Program, Stmt, Var};
use crate::ir::ScalarType;
use std::collections::BTreeMap;

/// Method spellings of a cast to a float type.
const CAST_METHODS: [(&str, ScalarType); 4] = [
    (".half()", ScalarType::F16),
    (".bfloat16()", ScalarType::BF16),
    (".float()", ScalarType::F32),
    (".double()", ScalarType::F64),
];

/// The looser of two optional float types (the larger relative tolerance); `None` is no
/// float at all.
fn looser(a: Option<ScalarType>, b: Option<ScalarType>) -> Option<ScalarType> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.tolerance().0 > x.tolerance().0 {
            y
        } else {
            x
        }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The loosest float type a call's text names, if any.
fn named_in(text: &str) -> Option<ScalarType> {
    let named = ScalarType::FLOATS.into_iter().filter(|s| {
        text.contains(&s.global()) || text.contains(&format!("torch.{}", s.torch_name()))
    });
    let methods = CAST_METHODS
        .into_iter()
        .filter(|(spelling, _)| text.contains(spelling))
        .map(|(_, s)| s);
    named.chain(methods).map(Some).fold(None, looser)
}

/// The data flow of one scope: each variable's loosest float type on its path.
struct Flow<'p> {
    program: &'p Program,
    loosest: BTreeMap<Var, Option<ScalarType>>,
}

impl Flow<'_> {
    fn of(&self, var: &Var) -> Option<ScalarType> {
        let declared = self
            .program
            .types
            .get(var)
            .map(|t| t.scalar)
            .filter(|s| s.is_float());
        looser(self.loosest.get(var).copied().flatten(), declared)
    }

    fn of_all<'v>(&self, vars: impl IntoIterator<Item = &'v Var>) -> Option<ScalarType> {
        vars.into_iter().map(|v| self.of(v)).fold(None, looser)
    }

    /// `var` (re)bound to a value computed through `through` (its declared type adds to it).
    fn bind(&mut self, var: &Var, through: Option<ScalarType>) {
        self.loosest.insert(var.clone(), through);
    }

    fn walk(&mut self, body: &[Stmt]) {
        for stmt in body {
            match stmt {
                Stmt::Let { var, call } | Stmt::Unrolled { var, call, .. } => {
                    let through = looser(self.of_all(&call.args), named_in(&call.template));
                    self.bind(var, through);
                }
                Stmt::Backup { backup, of } => {
                    let through = self.of(of);
                    self.bind(backup, through);
                }
                Stmt::Restore { var, backup } => {
                    let through = looser(self.of(var), self.of(backup));
                    self.bind(var, through);
                }
                Stmt::Overwrite { .. } => {}
                Stmt::Invoke {
                    results,
                    function,
                    args,
                } => self.invoke(results, function, args),
                Stmt::If { body, .. } => self.walk(body),
            }
        }
    }

    /// A call of a hoisted function: its parameters carry the arguments' paths, its results
    /// the paths of what it returns.
    fn invoke(&mut self, results: &[Var], function: &str, args: &[Var]) {
        let Some(f) = self.program.functions.iter().find(|f| f.name == function) else {
            let through = self.of_all(args);
            results.iter().for_each(|r| self.bind(r, through));
            return;
        };
        let mut inner = Flow {
            program: self.program,
            loosest: f
                .params
                .iter()
                .zip(args)
                .map(|(p, a)| (p.clone(), self.of(a)))
                .collect(),
        };
        inner.walk(&f.body);
        for (result, returned) in results.iter().zip(&f.returns) {
            let through = inner.of(returned);
            self.bind(result, through);
        }
    }
}

/// The tolerance type of each output of a run of `program` whose outputs have the torch
/// types `types` (the program's outputs first, then the gradients of its parameters): for a
/// float output, the loosest float type on its path (for a gradient, anywhere in the
/// program: the backward pass runs through every statement); otherwise its own type
/// (`F32` when unknown).
pub fn tolerance_types(program: &Program, types: &[Option<ScalarType>]) -> Vec<ScalarType> {
    let mut flow = Flow {
        program,
        loosest: BTreeMap::new(),
    };
    flow.walk(&program.body);
    let anywhere = program.types.keys().map(|v| flow.of(v)).fold(None, looser);
    types
        .iter()
        .enumerate()
        .map(|(k, ty)| {
            let own = ty.unwrap_or(ScalarType::F32);
            if !own.is_float() {
                return own;
            }
            let path = match program.outputs.get(k) {
                Some(output) => flow.of(output),
                None => anywhere,
            };
            looser(Some(own), path).unwrap_or(own)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::program::testing::call;
    use crate::mutate::program::{Function, VarType};

    fn assign(var: &str, template: &str, args: &[&str]) -> Stmt {
        Stmt::Let {
            var: var.into(),
            call: call(template, args),
        }
    }

    /// Parameters `p` (float32) and `q` (float64); `types` gives the rest.
    fn program(body: Vec<Stmt>, outputs: &[&str], types: &[(&str, ScalarType)]) -> Program {
        let mut program = Program {
            params: vec!["p".into(), "q".into()],
            body,
            outputs: outputs.iter().map(|v| v.to_string()).collect(),
            ..Program::default()
        };
        let declared = [("p", ScalarType::F32), ("q", ScalarType::F64)];
        for (var, scalar) in declared.iter().chain(types) {
            program
                .types
                .insert(var.to_string(), VarType::new(*scalar, vec![2]));
        }
        program
    }

    #[test]
    fn a_float16_stage_loosens_only_the_outputs_behind_it() {
        let body = vec![
            assign("h", "{0}.to(DT_F16)", &["p"]),
            assign("a", "{0}.to(DT_F32)", &["h"]),
            assign("b", "torch.exp({0})", &["p"]),
            assign("c", "torch.exp({0})", &["q"]),
        ];
        let types = [
            ("h", ScalarType::F16),
            ("a", ScalarType::F32),
            ("b", ScalarType::F32),
            ("c", ScalarType::F64),
        ];
        let program = program(body, &["a", "b", "c"], &types);
        let outputs = [
            Some(ScalarType::F32),
            Some(ScalarType::F32),
            Some(ScalarType::F64),
        ];
        assert_eq!(
            tolerance_types(&program, &outputs),
            [ScalarType::F16, ScalarType::F32, ScalarType::F64]
        );
        // Gradients (past the outputs) run backward through every statement.
        let with_gradients = [Some(ScalarType::F32), None, None, Some(ScalarType::F64)];
        assert_eq!(
            tolerance_types(&program, &with_gradients)[3],
            ScalarType::F16
        );
    }

    #[test]
    fn a_stage_the_call_text_names_counts_and_integers_keep_their_type() {
        let body = vec![
            assign(
                "s",
                "torch.softmax({0}.float(), dim=-1).to({0}.dtype)",
                &["q"],
            ),
            assign("i", "torch.argmax({0}.half())", &["q"]),
        ];
        let types = [("s", ScalarType::F64), ("i", ScalarType::I64)];
        let program = program(body, &["s", "i"], &types);
        let outputs = [Some(ScalarType::F64), Some(ScalarType::I64)];
        assert_eq!(
            tolerance_types(&program, &outputs),
            [ScalarType::F32, ScalarType::I64]
        );
    }

    #[test]
    fn paths_run_through_functions_conditionals_and_restores() {
        let f = Function {
            name: "fn1".into(),
            params: vec!["p".into()],
            body: vec![assign("r", "{0}.to(DT_BF16).to(DT_F32)", &["p"])],
            returns: vec!["r".into()],
        };
        let body = vec![
            Stmt::Invoke {
                results: vec!["a".into()],
                function: "fn1".into(),
                args: vec!["p".into()],
            },
            Stmt::Backup {
                backup: "k".into(),
                of: "a".into(),
            },
            Stmt::If {
                cond: crate::mutate::program::Cond {
                    lhs: crate::mutate::program::Scalar::Rank("p".into()),
                    op: ">",
                    rhs: 0.0,
                },
                body: vec![Stmt::Restore {
                    var: "b".into(),
                    backup: "k".into(),
                }],
                defs: Vec::new(),
            },
        ];
        let types = [
            ("r", ScalarType::F32),
            ("a", ScalarType::F32),
            ("k", ScalarType::F32),
            ("b", ScalarType::F32),
        ];
        let mut program = program(body, &["a", "b"], &types);
        program.functions.push(f);
        let outputs = [Some(ScalarType::F32), Some(ScalarType::F32)];
        assert_eq!(
            tolerance_types(&program, &outputs),
            [ScalarType::BF16, ScalarType::BF16]
        );
    }
}
