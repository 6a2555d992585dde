//! Reduction of program targets' findings (torch.compile): delta debugging over the
//! program's outputs, mutations and statements, each candidate re-checked by running it.
//! Edits name variables, so they keep their meaning as others are applied:
//! - dropping a TorchProbe mutation of the plan;
//! - dropping an output;
//! - *cutting* a statement: its variable becomes a parameter holding the value eager
//!   computed for it, so what reads it sees the same numbers, and whatever only fed it
//!   goes.

use super::{Edit, Reduction};
use crate::mutate::program::{Program, Stmt, Var};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// One edit of a program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProgramEdit {
    /// The plan's mutation at this index is not applied.
    DropMutation(usize),
    /// This output is no longer returned.
    DropOutput(Var),
    /// This variable's statement goes; the variable becomes a parameter holding its eager
    /// value.
    Cut(Var),
}

/// What a program reduction can edit: the plan's mutations, the outputs, and the
/// statements' variables in program order.
#[derive(Clone, Debug, Default)]
pub struct Outline {
    /// Mutations in the plan.
    pub mutations: usize,
    /// Outputs.
    pub outputs: Vec<Var>,
    /// Variables defined by statements, in order.
    pub statements: Vec<Var>,
}

/// The mutation indexes `edits` drop.
pub fn dropped_mutations(edits: &[Edit]) -> BTreeSet<usize> {
    edits
        .iter()
        .filter_map(|e| match e {
            Edit::Program(ProgramEdit::DropMutation(k)) => Some(*k),
            _ => None,
        })
        .collect()
}

/// Applies the output drops and cuts of `edits` to an unmutated program whose `profile`
/// holds every variable's eager value, then removes what no output needs. Fails when an
/// edit names nothing or no output is left.
pub fn apply(program: &mut Program, edits: &[Edit]) -> Result<(), String> {
    for edit in edits {
        match edit {
            Edit::Program(ProgramEdit::DropOutput(v)) => {
                let before = program.outputs.len();
                program.outputs.retain(|o| o != v);
                if program.outputs.len() == before {
                    return Err(format!("no output {v}"));
                }
            }
            Edit::Program(ProgramEdit::Cut(v)) => {
                let at = program
                    .body
                    .iter()
                    .position(|s| matches!(s, Stmt::Let { var, .. } if var == v))
                    .ok_or_else(|| format!("no statement defines {v}"))?;
                if !program.profile.contains_key(v) {
                    return Err(format!("no eager value of {v}"));
                }
                program.body.remove(at);
                program.params.push(v.clone());
            }
            Edit::Program(ProgramEdit::DropMutation(_)) => {}
            other => return Err(format!("{other:?} is not a program edit")),
        }
    }
    if program.outputs.is_empty() {
        return Err("no output left".into());
    }
    eliminate_dead(program);
    Ok(())
}

/// Removes statements whose variables nothing later reads and no output is, then
/// parameters nothing reads.
pub fn eliminate_dead(program: &mut Program) {
    let mut live: BTreeSet<Var> = program.outputs.iter().cloned().collect();
    let mut kept = Vec::new();
    for stmt in program.body.drain(..).rev() {
        if stmt.defs().iter().any(|d| live.contains(d)) || !stmt.mutates().is_empty() {
            live.extend(stmt.reads());
            kept.push(stmt);
        }
    }
    kept.reverse();
    program.body = kept;
    program.params.retain(|p| live.contains(p));
}

/// Delta debugging within `budget`, one kind of edit at a time: outputs first (dropping
/// the outputs of the other packed programs removes them whole), then the plan's mutations,
/// then statement cuts (earliest first: a cut makes its producers dead). Within a kind, the
/// candidates are tried in chunks of halving size (all of them, halves, quarters, ... single
/// edits), keeping every chunk after which `still_fails` holds.
pub fn reduce(
    outline: &Outline,
    budget: Duration,
    mut still_fails: impl FnMut(&[Edit]) -> bool,
) -> Reduction {
    let start = Instant::now();
    let deadline = start + budget;
    let kinds: [Vec<ProgramEdit>; 3] = [
        outline
            .outputs
            .iter()
            .cloned()
            .map(ProgramEdit::DropOutput)
            .collect(),
        (0..outline.mutations)
            .map(ProgramEdit::DropMutation)
            .collect(),
        outline
            .statements
            .iter()
            .cloned()
            .map(ProgramEdit::Cut)
            .collect(),
    ];
    let (mut accepted, mut tests, mut out_of_budget) = (Vec::<Edit>::new(), 0, false);
    'kinds: for mut left in kinds {
        let mut size = left.len().div_ceil(2).max(1);
        while !left.is_empty() {
            let mut k = 0;
            while k < left.len() {
                if Instant::now() >= deadline {
                    out_of_budget = true;
                    break 'kinds;
                }
                let chunk: Vec<ProgramEdit> = left[k..(k + size).min(left.len())].to_vec();
                let mut trial = accepted.clone();
                trial.extend(chunk.iter().cloned().map(Edit::Program));
                tests += 1;
                if still_fails(&trial) {
                    accepted = trial;
                    left.drain(k..k + chunk.len());
                } else {
                    k += chunk.len();
                }
            }
            if size == 1 {
                break;
            }
            size = size.div_ceil(2);
        }
    }
    let cuts = accepted
        .iter()
        .filter(|e| matches!(e, Edit::Program(ProgramEdit::Cut(_))))
        .count();
    Reduction {
        edits: accepted,
        original_nodes: outline.statements.len(),
        reduced_nodes: outline.statements.len() - cuts,
        tests,
        out_of_budget,
        seconds: start.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Buffer, ScalarType, Tensor};
    use crate::mutate::program::{Call, VarType};
    use std::collections::BTreeMap;

    fn chain() -> Program {
        let call = |t: &str, a: &str| Call {
            template: t.into(),
            args: vec![a.into()],
            elementwise: true,
            fresh: true,
        };
        let value = Tensor {
            shape: vec![1],
            data: Buffer::F32(vec![1.0]),
        };
        let ty = VarType::new(ScalarType::F32, vec![1]);
        Program {
            params: vec!["x".into()],
            body: vec![
                Stmt::Let {
                    var: "a".into(),
                    call: call("torch.exp({0})", "x"),
                },
                Stmt::Let {
                    var: "b".into(),
                    call: call("torch.sin({0})", "a"),
                },
                Stmt::Let {
                    var: "c".into(),
                    call: call("torch.cos({0})", "x"),
                },
            ],
            outputs: vec!["b".into(), "c".into()],
            functions: Vec::new(),
            types: ["x", "a", "b", "c"]
                .iter()
                .map(|v| (v.to_string(), ty.clone()))
                .collect(),
            profile: ["x", "a", "b", "c"]
                .iter()
                .map(|v| (v.to_string(), value.clone()))
                .collect::<BTreeMap<_, _>>(),
            fresh: 0,
        }
    }

    #[test]
    fn a_cut_turns_a_value_into_a_parameter_and_drops_what_only_fed_it() {
        let mut p = chain();
        apply(
            &mut p,
            &[
                Edit::Program(ProgramEdit::Cut("a".into())),
                Edit::Program(ProgramEdit::DropOutput("c".into())),
            ],
        )
        .unwrap();
        assert_eq!(p.params, vec!["a".to_string()]);
        assert_eq!(p.body.len(), 1);
        assert_eq!(p.outputs, vec!["b".to_string()]);
        assert!(apply(
            &mut chain(),
            &[Edit::Program(ProgramEdit::Cut("zz".into()))]
        )
        .is_err());
    }

    #[test]
    fn the_reducer_keeps_only_edits_that_keep_the_failure() {
        let outline = Outline {
            mutations: 1,
            outputs: vec!["b".into(), "c".into()],
            statements: vec!["a".into(), "b".into(), "c".into()],
        };
        // The "bug" needs statement b.
        let r = reduce(&outline, Duration::from_secs(10), |edits| {
            !edits.contains(&Edit::Program(ProgramEdit::Cut("b".into())))
                && !edits.contains(&Edit::Program(ProgramEdit::DropOutput("b".into())))
        });
        assert!(r
            .edits
            .contains(&Edit::Program(ProgramEdit::Cut("a".into()))));
        assert!(r
            .edits
            .contains(&Edit::Program(ProgramEdit::DropOutput("c".into()))));
        assert!(!r
            .edits
            .contains(&Edit::Program(ProgramEdit::Cut("b".into()))));
        // Outputs one by one (b fails, c kept); the mutation; cuts in halves ({a, b}
        // fails, {c} kept), then one by one (a kept, b fails).
        assert_eq!(r.tests, 7);
    }
}
