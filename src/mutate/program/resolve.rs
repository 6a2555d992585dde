//! Operator resolution: an element-wise statement unrolled along one axis of its result.

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
