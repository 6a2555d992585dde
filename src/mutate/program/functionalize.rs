//! Functionalization: a statement range becomes a hoisted function that takes what the range
//! reads and returns what it defines or mutates and later code reads.

use super::{interface, span, Function, Program, Stmt};

/// Moves top-level statements `[at, at+len]` into a new function and calls it; `false` when
/// the range leaves nothing for later code.
pub fn functionalize(program: &mut Program, at: u8, len: u8) -> bool {
    let Some((s, e)) = span(program, at, len) else {
        return false;
    };
    let (params, returns) = interface(program, s, e);
    if returns.is_empty() {
        return false;
    }
    let name = program.mint("fn");
    let body: Vec<Stmt> = program.body.drain(s..e).collect();
    program.functions.push(Function {
        name: name.clone(),
        params: params.clone(),
        body,
        returns: returns.clone(),
    });
    program.body.insert(
        s,
        Stmt::Invoke {
            results: returns,
            function: name,
            args: params,
        },
    );
    true
}
