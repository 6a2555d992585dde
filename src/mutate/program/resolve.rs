//! Operator resolution: an element-wise statement unrolled along one axis of its result, as a
//! list comprehension or as a for-loop writing into an empty tensor; and the way back from
//! the loop form, which localization uses to tell a compiler's lost writes into a buffer from
//! its other bugs.

use super::{Program, Stmt};

/// Unrolls top-level statement `at` (an element-wise `Let` with a result of rank ≥ 1) along
/// `axis` (modulo its rank); `false` when the statement does not qualify.
pub fn resolve(program: &mut Program, at: u8, axis: u8, comprehension: bool) -> bool {
    if program.body.is_empty() {
        return false;
    }
    let i = usize::from(at) % program.body.len();
    let Stmt::Let { var, call } = &program.body[i] else {
        return false;
    };
    let rank = program.types[var].rank();
    if !call.elementwise || rank == 0 {
        return false;
    }
    program.body[i] = Stmt::Unrolled {
        var: var.clone(),
        call: call.clone(),
        axis: usize::from(axis) % rank,
        comprehension,
    };
    true
}

/// Writes every loop-filled unrolled statement (top level, inside `if` bodies and in
/// functions) as a list comprehension instead: the same values, without writes into a
/// buffer. Returns whether anything changed.
pub fn loops_as_comprehensions(program: &mut Program) -> bool {
    fn rewrite(body: &mut [Stmt]) -> bool {
        let mut changed = false;
        for stmt in body {
            match stmt {
                Stmt::Unrolled { comprehension, .. } if !*comprehension => {
                    *comprehension = true;
                    changed = true;
                }
                Stmt::If { body, .. } => changed |= rewrite(body),
                _ => {}
            }
        }
        changed
    }
    let mut changed = rewrite(&mut program.body);
    for function in &mut program.functions {
        changed |= rewrite(&mut function.body);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::program::{Call, Cond, Function, Scalar};

    fn unrolled(var: &str, comprehension: bool) -> Stmt {
        Stmt::Unrolled {
            var: var.into(),
            call: Call {
                template: "torch.neg({0})".into(),
                args: vec!["x".into()],
                elementwise: true,
                fresh: true,
            },
            axis: 0,
            comprehension,
        }
    }

    #[test]
    fn every_loop_becomes_a_comprehension_wherever_it_stands() {
        let mut program = Program {
            body: vec![
                unrolled("a", false),
                Stmt::If {
                    cond: Cond {
                        lhs: Scalar::Rank("x".into()),
                        op: ">=",
                        rhs: 0.0,
                    },
                    body: vec![unrolled("b", false)],
                    defs: vec!["b".into()],
                },
            ],
            functions: vec![Function {
                name: "fn1".into(),
                params: vec!["x".into()],
                body: vec![unrolled("c", false), unrolled("d", true)],
                returns: vec!["c".into()],
            }],
            ..Program::default()
        };
        assert!(loops_as_comprehensions(&mut program));
        let loops = |body: &[Stmt]| {
            body.iter()
                .filter(|s| {
                    matches!(
                        s,
                        Stmt::Unrolled {
                            comprehension: false,
                            ..
                        }
                    )
                })
                .count()
        };
        assert_eq!(loops(&program.body) + loops(&program.functions[0].body), 0);
        let Stmt::If { body, .. } = &program.body[1] else {
            panic!("the if stays");
        };
        assert_eq!(loops(body), 0);
        assert!(
            !loops_as_comprehensions(&mut program),
            "nothing left to rewrite"
        );
    }
}
