//! EMI true-conditional blocks: a statement range guarded by a condition synthesized from the
//! profile of the seed run, following TorchProbe's grammar (an element, a dimension,
//! `len(shape)`, the max or the min of a variable, compared with >, <, >= or <= to a constant
//! the profiled value satisfies).

use super::{interface, span, Cond, Program, Scalar, Stmt, Var};

/// The variables a condition before top-level statement `s` may read: defined at top level
/// before `s`, profiled, and never overwritten anywhere, including inside hoisted functions
/// (so their value is the profiled one).
fn candidates(program: &Program, s: usize) -> Vec<Var> {
    let overwritten: Vec<Var> = program
        .body
        .iter()
        .chain(program.functions.iter().flat_map(|f| &f.body))
        .flat_map(Stmt::mutates)
        .collect();
    program
        .params
        .iter()
        .cloned()
        .chain(program.body[..s].iter().flat_map(Stmt::defs))
        .filter(|v| program.profile.contains_key(v) && !overwritten.contains(v))
        .collect()
}

/// A condition on `var` picked by `pick` that its profiled value satisfies.
fn synthesize(program: &Program, var: &Var, pick: u8) -> Cond {
    let value = &program.profile[var];
    let ty = &program.types[var];
    let data = value.data.to_f64_vec();
    let op = [">", "<", ">=", "<="][usize::from(pick / 8) % 4];
    // A condition on a NaN or an infinity holds on no value (and TorchScript has no literal
    // for it): the values' conditions need finite values, else the rank decides.
    let finite = !data.is_empty() && data.iter().all(|v| v.is_finite());
    let (lhs, x, integral) = match pick % 5 {
        0 if finite => {
            let flat = usize::from(pick) % data.len();
            let mut pos = Vec::new();
            let mut rest = flat;
            for d in ty.shape.iter().rev() {
                pos.push(rest % d);
                rest /= d;
            }
            pos.reverse();
            (Scalar::Element(var.clone(), pos), data[flat], false)
        }
        1 if ty.rank() > 0 => {
            let k = usize::from(pick) % ty.rank();
            (Scalar::Dim(var.clone(), k), ty.shape[k] as f64, true)
        }
        3 if finite => (
            Scalar::Max(var.clone()),
            data.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            false,
        ),
        4 if finite => (
            Scalar::Min(var.clone()),
            data.iter().copied().fold(f64::INFINITY, f64::min),
            false,
        ),
        _ => (Scalar::Rank(var.clone()), ty.rank() as f64, true),
    };
    // A margin far above float32 rounding of the compared value, so a correct compiler takes
    // the branch whatever its kernels' last bits.
    let margin = if integral { 1.0 } else { 1.0 + x.abs() * 0.25 };
    let rhs = match op {
        ">" => x - margin,
        "<" => x + margin,
        ">=" if integral => x,
        "<=" if integral => x,
        ">=" => x - margin,
        _ => x + margin,
    };
    Cond { lhs, op, rhs }
}

/// Wraps top-level statements `[at, at+len]` in an `if` whose condition holds on the profiled
/// inputs; `false` when no profiled variable is in scope.
pub fn wrap(program: &mut Program, at: u8, len: u8, pick: u8) -> bool {
    let Some((s, e)) = span(program, at, len) else {
        return false;
    };
    let vars = candidates(program, s);
    if vars.is_empty() {
        return false;
    }
    let var = vars[usize::from(pick) % vars.len()].clone();
    let cond = synthesize(program, &var, pick);
    let (_, live) = interface(program, s, e);
    let defined: Vec<Var> = program.body[s..e].iter().flat_map(Stmt::defs).collect();
    let defs = live.into_iter().filter(|v| defined.contains(v)).collect();
    let body: Vec<Stmt> = program.body.drain(s..e).collect();
    program.body.insert(s, Stmt::If { cond, body, defs });
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Buffer, ScalarType, Tensor};
    use crate::mutate::program::VarType;
    use crate::mutate::program::{Call, Function};
    use std::collections::BTreeMap;

    #[test]
    fn a_value_overwritten_inside_a_function_is_no_condition_candidate() {
        let ty = VarType::new(ScalarType::F32, vec![2]);
        let value = Tensor {
            shape: vec![2],
            data: Buffer::F32(vec![1.0, 2.0]),
        };
        let relu = |x: &str| Call {
            template: "torch.relu({0})".into(),
            args: vec![x.into()],
            elementwise: true,
            fresh: true,
        };
        let program = Program {
            params: vec!["x".into()],
            body: vec![
                Stmt::Let {
                    var: "a".into(),
                    call: relu("x"),
                },
                Stmt::Invoke {
                    results: vec!["a".into()],
                    function: "fn1".into(),
                    args: vec!["a".into()],
                },
                Stmt::Let {
                    var: "b".into(),
                    call: relu("a"),
                },
            ],
            outputs: vec!["b".into()],
            functions: vec![Function {
                name: "fn1".into(),
                params: vec!["a".into()],
                body: vec![Stmt::Overwrite {
                    var: "a".into(),
                    value: 0.0,
                }],
                returns: vec!["a".into()],
            }],
            types: ["x", "a", "b"]
                .iter()
                .map(|v| (v.to_string(), ty.clone()))
                .collect(),
            profile: ["x", "a"]
                .iter()
                .map(|v| (v.to_string(), value.clone()))
                .collect::<BTreeMap<_, _>>(),
            fresh: 0,
        };
        assert_eq!(candidates(&program, 2), vec!["x".to_string()]);
    }
}
