//! How each [`Family`] of rows instantiates: which earlier values it reads, which new
//! parameters (weights, indices, masks) it adds, the family holes of its template and the
//! type of its result. Element-wise, casting, in-place and reduction families live here;
//! [`nn`] has linear algebra, convolution, pooling, resampling, padding and normalization;
//! [`view`] has views, layout, joins and indexing.

pub mod nn;
pub mod view;

use super::builder::Builder;
use super::ops::{Accept, Family, Out, TorchOp};
use super::promote::{floating, result_type};
use super::template::expand;
use crate::ir::ScalarType;
use crate::mutate::program::{Var, VarType};

/// Instantiates `row`, appending its statements; `None` (the caller rolls back) when no
/// value fits or the drawn attributes give an empty or oversized result.
pub fn build(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    match row.family {
        Family::Unary => unary(row, b),
        Family::Binary => binary(row, b),
        Family::Ternary => ternary(row, b),
        Family::Cast => cast(b),
        Family::InPlace => in_place(row, b),
        Family::Reduce { single } => reduce(row, b, single),
        Family::Scan => scan(row, b),
        Family::Matmul | Family::Mm | Family::Bmm | Family::Linear | Family::Einsum => {
            nn::linear_algebra(row, b)
        }
        Family::Conv { dims, transposed } => nn::conv(row, b, dims, transposed),
        Family::Pool { dims, average } => nn::pool(row, b, dims, average),
        Family::AdaptivePool { dims } => nn::adaptive_pool(row, b, dims),
        Family::Interpolate { dims } => nn::interpolate(row, b, dims),
        Family::Pad => nn::pad(row, b),
        Family::Norm => nn::norm(row, b),
        Family::Slice => view::slice(row, b),
        Family::Piece => view::piece(row, b),
        Family::Rearrange => view::rearrange(row, b),
        Family::Reshape => view::reshape(row, b),
        Family::Join => view::join(row, b),
        Family::Index => view::index(row, b),
        Family::ViewWrite => view::view_write(row, b),
        Family::Attention { rank } => nn::attention(row, b, rank),
    }
}

/// The result type of `out` over arguments of types `args`.
pub fn out_type(out: Out, args: &[&VarType]) -> ScalarType {
    let first = args[0].scalar;
    match out {
        Out::Same => first,
        Out::Float => floating(first),
        Out::Bool => ScalarType::Bool,
        Out::Truth if first == ScalarType::U8 => first,
        Out::Truth => ScalarType::Bool,
        Out::Long => ScalarType::I64,
        Out::Promote => result_type(args),
        Out::PromoteFloat => floating(result_type(args)),
        Out::Accumulate if first.is_float() => first,
        Out::Accumulate => ScalarType::I64,
    }
}

/// The row's template with its argument guard applied (the guarded argument's type given)
/// and its attribute holes filled.
pub fn template(row: &TorchOp, b: &mut Builder, args: &[Var]) -> String {
    let mut t = row.template.to_string();
    if let Some((k, guard)) = row.guard {
        if let Some(arg) = args.get(k) {
            let hole = format!("{{{k}}}");
            t = t.replace(&hole, &guard.wrap(&hole, b.ty(arg).scalar));
        }
    }
    expand(&t, b.u)
}

/// The shape `a` and `b` broadcast to, if they do.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], k: usize| (k + s.len()).checked_sub(rank).map_or(1, |i| s[i]);
    (0..rank)
        .map(|k| match (dim(a, k), dim(b, k)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// A value broadcasting with `with` that `accept` allows; `with` itself when none does.
fn partner(b: &mut Builder, accept: Accept, with: &Var, into: bool) -> Var {
    let shape = b.ty(with).shape;
    let handles = b.handles();
    b.pick_where(|t| {
        accept.allows(t.scalar)
            && handles(t.scalar)
            && match broadcast(&shape, &t.shape) {
                Some(s) => !into || s == shape,
                None => false,
            }
    })
    .unwrap_or_else(|| with.clone())
}

/// An axis of rank `rank`, negative half of the time.
pub fn axis(b: &mut Builder, rank: usize) -> i64 {
    let a = b.int(0, rank as i64 - 1);
    if b.flip() {
        a - rank as i64
    } else {
        a
    }
}

/// An axis of `shape` drawn as [`axis`] draws one, moved on to the next axis of extent at
/// least 2 when it falls on a 1 and `shape` has one: along a dim of 1 a scan is the
/// identity, a softmax all ones and a split leaves an empty piece that Inductor's split
/// rewrites skip.
pub fn long_axis(b: &mut Builder, shape: &[usize]) -> i64 {
    let rank = shape.len();
    let drawn = axis(b, rank);
    let start = norm_axis(drawn, rank);
    let Some(moved) = (0..rank)
        .map(|k| (start + k) % rank)
        .find(|&i| shape[i] >= 2)
    else {
        return drawn;
    };
    if drawn < 0 {
        moved as i64 - rank as i64
    } else {
        moved as i64
    }
}

/// `axis` as an index in `0..rank`.
pub fn norm_axis(axis: i64, rank: usize) -> usize {
    axis.rem_euclid(rank as i64) as usize
}

fn elementwise(row: &TorchOp, b: &mut Builder, args: Vec<Var>) -> Option<Var> {
    let types: Vec<VarType> = args.iter().map(|a| b.ty(a)).collect();
    let refs: Vec<&VarType> = types.iter().collect();
    let shape = types
        .iter()
        .try_fold(Vec::new(), |s, t| broadcast(&s, &t.shape))?;
    let out = VarType::new(out_type(row.out, &refs), shape);
    let t = template(row, b, &args);
    b.emit(t, args, out, true, true)
}

fn unary(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 0..=4)?;
    elementwise(row, b, vec![x])
}

fn binary(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 0..=4)?;
    let y = partner(b, row.accept, &x, false);
    elementwise(row, b, vec![x, y])
}

fn ternary(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 0..=4)?;
    let y = partner(b, row.accept, &x, false);
    let first = if row.accept == Accept::Any {
        // `where`: a bool condition broadcasting with the values.
        let shape = b.ty(&x).shape;
        match b.pick_where(|t| t.scalar.is_bool() && broadcast(&shape, &t.shape).is_some()) {
            Some(c) => c,
            None => {
                let ty = VarType::new(ScalarType::Bool, shape);
                b.emit("({0} > 0)".into(), vec![x.clone()], ty, true, true)?
            }
        }
    } else {
        partner(b, row.accept, &x, false)
    };
    let args = if row.accept == Accept::Any {
        vec![first, x, y]
    } else {
        vec![x, y, first]
    };
    let types: Vec<VarType> = args.iter().map(|a| b.ty(a)).collect();
    let shape = types
        .iter()
        .try_fold(Vec::new(), |s, t| broadcast(&s, &t.shape))?;
    // `where` promotes its two values, not the condition.
    let values: Vec<&VarType> = if row.accept == Accept::Any {
        types[1..].iter().collect()
    } else {
        types.iter().collect()
    };
    let out = VarType::new(out_type(row.out, &values), shape);
    let t = template(row, b, &args);
    b.emit(t, args, out, true, true)
}

fn cast(b: &mut Builder) -> Option<Var> {
    let x = b.pick(Accept::Any, 0..=4)?;
    let from = b.ty(&x).scalar;
    let to = ScalarType::ALL[b.int(0, ScalarType::ALL.len() as i64 - 1) as usize];
    if to == from {
        return None;
    }
    b.cast(&x, to)
}

fn in_place(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 0..=4)?;
    let tx = b.ty(&x);
    let y = partner(b, row.accept, &x, true);
    // The update's type must cast back into the updated tensor's.
    if b.ty(&y).scalar.category() > tx.scalar.category() {
        return None;
    }
    let t = template(row, b, &[x.clone(), y.clone()]);
    b.emit(t, vec![x, y], tx, false, true)
}

fn reduce(row: &TorchOp, b: &mut Builder, single: bool) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let rank = tx.rank();
    let dims: Vec<i64> = if single {
        vec![axis(b, rank)]
    } else {
        let mask = b.int(1, (1 << rank) - 1);
        (0..rank as i64)
            .filter(|k| mask & (1 << k) != 0)
            .map(|k| if b.flip() { k - rank as i64 } else { k })
            .collect()
    };
    let keep = row.template.contains("{keep}") && b.flip();
    let reduced: Vec<usize> = dims.iter().map(|d| norm_axis(*d, rank)).collect();
    let shape: Vec<usize> = (0..rank)
        .filter_map(|k| match reduced.contains(&k) {
            true if keep => Some(1),
            true => None,
            false => Some(tx.shape[k]),
        })
        .collect();
    let list = if single {
        dims[0].to_string()
    } else {
        let items: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
        format!("[{}]", items.join(", "))
    };
    let keep_literal = if keep { "True" } else { "False" };
    let t = template(row, b, std::slice::from_ref(&x))
        .replace("{dims}", &list)
        .replace("{keep}", keep_literal);
    let out = VarType::new(out_type(row.out, &[&tx]), shape);
    b.emit(t, vec![x], out, false, true)
}

fn scan(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let dim = long_axis(b, &tx.shape);
    let t = template(row, b, std::slice::from_ref(&x)).replace("{dim}", &dim.to_string());
    let out = VarType::new(out_type(row.out, &[&tx]), tx.shape.clone());
    b.emit(t, vec![x], out, false, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_aligns_trailing_dims() {
        assert_eq!(broadcast(&[2, 1, 3], &[4, 1]), Some(vec![2, 4, 3]));
        assert_eq!(broadcast(&[], &[5]), Some(vec![5]));
        assert_eq!(broadcast(&[2, 3], &[3, 3]), None);
    }

    #[test]
    fn a_long_axis_avoids_dims_of_one_when_it_can() {
        for first in 0..=255u8 {
            let bytes = [first, first.wrapping_mul(7), 3, 9];
            let mut u = arbitrary::Unstructured::new(&bytes);
            let mut b = Builder::new(&mut u, 0);
            let a = long_axis(&mut b, &[1, 3, 1, 2]);
            assert!(matches!(a, 1 | 3 | -3 | -1), "{a}");
            let mut u = arbitrary::Unstructured::new(&bytes);
            let mut b = Builder::new(&mut u, 0);
            assert!((-3..3).contains(&long_axis(&mut b, &[1, 1, 1])));
        }
    }
}
