//! Mutate-then-recover: back up a value right after it is defined, overwrite it in place, and
//! restore it right before its next use.

use super::{Program, Stmt};

/// Fill values an overwrite of a float picks from (integers and booleans take 0 or 1, which
/// every type holds).
const FILLS: [f64; 4] = [0.0, 1.0, -3.5, 1e4];

/// Applies mutate-then-recover to the value top-level statement `at` defines, when it is a
/// `Let` with fresh storage (no view or alias, so the overwrite touches nothing else) that
/// later code reads.
pub fn recover(program: &mut Program, at: u8, value: u8) -> bool {
    if program.body.is_empty() {
        return false;
    }
    let i = usize::from(at) % program.body.len();
    let Stmt::Let { var, call } = &program.body[i] else {
        return false;
    };
    let var = var.clone();
    let Some(next) = (i + 1..program.body.len()).find(|k| program.body[*k].reads().contains(&var))
    else {
        return false;
    };
    if !call.fresh {
        return false;
    }
    let backup = program.mint("backup");
    let ty = program.types[&var].clone();
    program.types.insert(backup.clone(), ty.clone());
    program.body.insert(
        next,
        Stmt::Restore {
            var: var.clone(),
            backup: backup.clone(),
        },
    );
    let fill = if ty.scalar.is_float() {
        FILLS[usize::from(value) % FILLS.len()]
    } else {
        f64::from(value % 2)
    };
    program.body.splice(
        i + 1..i + 1,
        [
            Stmt::Backup {
                backup,
                of: var.clone(),
            },
            Stmt::Overwrite { var, value: fill },
        ],
    );
    true
}
