//! Views (slicing with steps and negative indices, `narrow`, `select`, `split`, `chunk`,
//! `permute`, `transpose`, `reshape`/`view`, `flatten`, `squeeze`/`unsqueeze`, `expand`),
//! rearrangements (`flip`, `roll`, `tril`/`triu`, `repeat`), joins (`cat`, `stack`),
//! indexing with new index or mask parameters (`gather`, `scatter`, `index_select`,
//! `index_put`, `masked_fill`) and in-place writes through a view.

use super::{axis, broadcast, norm_axis, out_type, template, Builder};
use crate::ir::ScalarType;
use crate::mutate::program::{Var, VarType};
use crate::torch::builder::{shape_literal, Values};
use crate::torch::ops::TorchOp;

fn list(items: &[i64]) -> String {
    let items: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// The length of Python's `range(start, stop, step)` over `n` elements after negative
/// indices wrap and bounds clamp.
fn slice_len(n: i64, start: i64, stop: i64, step: i64) -> i64 {
    let clamp = |i: i64| if i < 0 { (i + n).max(0) } else { i.min(n) };
    let (s, e) = (clamp(start), clamp(stop));
    if e <= s {
        0
    } else {
        (e - s + step - 1) / step
    }
}

/// `x[a:b:c, ...]` over a drawn prefix of the dims.
pub fn slice(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let dims = b.int(1, tx.rank() as i64) as usize;
    let mut shape = tx.shape.clone();
    let mut parts = Vec::new();
    for (k, size) in shape.iter_mut().enumerate().take(dims) {
        let n = *size as i64;
        let start = b.int(-n, n - 1);
        let stop = b.int(-n, n);
        let step = b.int(1, 3);
        let len = slice_len(n, start, stop, step);
        if len == 0 || k > 3 {
            return None;
        }
        *size = len as usize;
        parts.push(format!("{start}:{stop}:{step}"));
    }
    let t = template(row, b, std::slice::from_ref(&x)).replace("{slices}", &parts.join(", "));
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, false)
}

/// One piece along a dim: `narrow`, `select`, `split(...)[k]`, `chunk(...)[k]`.
pub fn piece(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let dim = axis(b, tx.rank());
    let d = norm_axis(dim, tx.rank());
    let n = tx.shape[d] as i64;
    let mut shape = tx.shape.clone();
    let mut t = template(row, b, std::slice::from_ref(&x)).replace("{dim}", &dim.to_string());
    match row.name {
        "narrow" => {
            let start = b.int(-n, n - 1);
            let from = if start < 0 { start + n } else { start };
            let length = b.int(1, n - from);
            shape[d] = length as usize;
            t = t
                .replace("{start}", &start.to_string())
                .replace("{length}", &length.to_string());
        }
        "select" => {
            let index = b.int(-n, n - 1);
            shape.remove(d);
            t = t.replace("{index}", &index.to_string());
        }
        "split" => {
            let length = b.int(1, n);
            let parts = (n + length - 1) / length;
            let part = b.int(0, parts - 1);
            shape[d] = length.min(n - part * length) as usize;
            t = t
                .replace("{length}", &length.to_string())
                .replace("{part}", &part.to_string());
        }
        _ => {
            let chunks = b.int(1, n);
            let size = (n + chunks - 1) / chunks;
            let parts = (n + size - 1) / size;
            let part = b.int(0, parts - 1);
            shape[d] = size.min(n - part * size) as usize;
            t = t
                .replace("{chunks}", &chunks.to_string())
                .replace("{part}", &part.to_string());
        }
    }
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, false)
}

/// `permute`, `transpose` (views), `flip`, `roll`, `tril`/`triu`.
pub fn rearrange(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let min_rank = if matches!(row.name, "tril" | "triu") {
        2
    } else {
        1
    };
    let x = b.pick(row.accept, min_rank..=4)?;
    let tx = b.ty(&x);
    let rank = tx.rank();
    let mut shape = tx.shape.clone();
    let mut t = template(row, b, std::slice::from_ref(&x));
    let view = match row.name {
        "permute" => {
            let mut perm: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                perm.swap(i, b.int(0, i as i64) as usize);
            }
            shape = perm.iter().map(|p| tx.shape[*p]).collect();
            let perm: Vec<i64> = perm.iter().map(|p| *p as i64).collect();
            t = t.replace("{perm}", &list(&perm));
            true
        }
        "transpose" => {
            let (a, c) = (axis(b, rank), axis(b, rank));
            shape.swap(norm_axis(a, rank), norm_axis(c, rank));
            t = t
                .replace("{dim}", &a.to_string())
                .replace("{dim2}", &c.to_string());
            true
        }
        "flip" | "roll" => {
            let count = b.int(1, rank as i64) as usize;
            let mut dims: Vec<i64> = Vec::new();
            for _ in 0..count {
                let a = axis(b, rank);
                if !dims
                    .iter()
                    .any(|d| norm_axis(*d, rank) == norm_axis(a, rank))
                {
                    dims.push(a);
                }
            }
            let shifts: Vec<i64> = dims.iter().map(|_| b.int(-3, 3)).collect();
            t = t
                .replace("{dims}", &list(&dims))
                .replace("{shifts}", &list(&shifts));
            false
        }
        _ => false,
    };
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, !view)
}

/// A random factorization of `n` into `rank` dims.
fn factorization(b: &mut Builder, n: usize, rank: usize) -> Vec<usize> {
    let mut dims = vec![1; rank.max(1)];
    let mut rest = n;
    let mut p = 2;
    while rest > 1 {
        while rest.is_multiple_of(p) {
            let k = b.int(0, dims.len() as i64 - 1) as usize;
            dims[k] *= p;
            rest /= p;
        }
        p += 1;
    }
    dims
}

/// `reshape`, `view`, `flatten`, `squeeze`, `unsqueeze`, `expand`, `repeat`.
pub fn reshape(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 0..=4)?;
    let tx = b.ty(&x);
    let rank = tx.rank();
    let mut t = template(row, b, std::slice::from_ref(&x));
    let (shape, fresh) = match row.name {
        "reshape" | "view" => {
            let r = b.int(1, 4) as usize;
            let mut dims = factorization(b, tx.numel(), r);
            let literal = if b.flip() {
                // One dim inferred.
                let k = b.int(0, r as i64 - 1) as usize;
                let mut shown: Vec<i64> = dims.iter().map(|d| *d as i64).collect();
                shown[k] = -1;
                list(&shown)
            } else {
                shape_literal(&dims)
            };
            t = t.replace("{shape}", &literal);
            dims.truncate(r);
            (dims, false)
        }
        "flatten" => {
            if rank == 0 {
                return None;
            }
            let (a, c) = (
                b.int(0, rank as i64 - 1) as usize,
                b.int(0, rank as i64 - 1) as usize,
            );
            let (s, e) = (a.min(c), a.max(c));
            let merged: usize = tx.shape[s..=e].iter().product();
            let shape: Vec<usize> = tx.shape[..s]
                .iter()
                .copied()
                .chain([merged])
                .chain(tx.shape[e + 1..].iter().copied())
                .collect();
            t = t
                .replace("{start}", &s.to_string())
                .replace("{end}", &(e as i64 - rank as i64).to_string());
            (shape, false)
        }
        "squeeze" => {
            if rank == 0 {
                return None;
            }
            let dim = axis(b, rank);
            let mut shape = tx.shape.clone();
            if shape[norm_axis(dim, rank)] == 1 {
                shape.remove(norm_axis(dim, rank));
            }
            t = t.replace("{dim}", &dim.to_string());
            (shape, false)
        }
        "unsqueeze" => {
            let dim = b.int(-(rank as i64) - 1, rank as i64);
            let mut shape = tx.shape.clone();
            shape.insert(norm_axis(dim, rank + 1), 1);
            t = t.replace("{dim}", &dim.to_string());
            (shape, false)
        }
        "expand" => {
            let lead = b.int(0, 1) as usize;
            let mut shape: Vec<usize> = (0..lead).map(|_| b.int(1, 3) as usize).collect();
            for d in &tx.shape {
                shape.push(if *d == 1 { b.int(1, 4) as usize } else { *d });
            }
            t = t.replace("{shape}", &shape_literal(&shape));
            (shape, false)
        }
        _ => {
            let lead = b.int(0, 1) as usize;
            let reps: Vec<usize> = (0..rank + lead).map(|_| b.int(1, 3) as usize).collect();
            let padded: Vec<usize> = std::iter::repeat_n(1, lead)
                .chain(tx.shape.iter().copied())
                .collect();
            let shape: Vec<usize> = padded.iter().zip(&reps).map(|(d, r)| d * r).collect();
            if reps.is_empty() {
                return None;
            }
            t = t.replace("{reps}", &shape_literal(&reps));
            (shape, true)
        }
    };
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, fresh)
}

/// `cat` along a dim of values that agree elsewhere, `stack` of same-shaped values (the
/// first value repeated when no other fits).
pub fn join(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let rank = tx.rank();
    let stack = row.name == "stack";
    let dim = if stack {
        b.int(-(rank as i64) - 1, rank as i64)
    } else {
        axis(b, rank)
    };
    let d = norm_axis(dim, if stack { rank + 1 } else { rank });
    let count = b.int(1, 2) as usize;
    let mut args = vec![x.clone()];
    for _ in 0..count {
        let shape = tx.shape.clone();
        let handles = b.handles();
        let other = b
            .pick_where(|t| {
                handles(t.scalar)
                    && t.rank() == rank
                    && (0..rank).all(|k| t.shape[k] == shape[k] || (!stack && k == d))
            })
            .unwrap_or_else(|| x.clone());
        args.push(other);
    }
    let types: Vec<VarType> = args.iter().map(|a| b.ty(a)).collect();
    let mut shape = tx.shape.clone();
    if stack {
        shape.insert(d, args.len());
    } else {
        shape[d] = types.iter().map(|t| t.shape[d]).sum();
    }
    let holes: Vec<String> = (0..args.len()).map(|k| format!("{{{k}}}")).collect();
    let refs: Vec<&VarType> = types.iter().collect();
    let scalar = out_type(row.out, &refs);
    let t = template(row, b, &args)
        .replace("{args}", &holes.join(", "))
        .replace("{dim}", &dim.to_string());
    b.emit(t, args, VarType::new(scalar, shape), false, true)
}

/// `gather`, `scatter`, `scatter_add`, `index_select`, `index_put`, `masked_fill`.
pub fn index(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let rank = tx.rank();
    let dim = axis(b, rank);
    let d = norm_axis(dim, rank);
    let n = tx.shape[d];
    let long = |shape: Vec<usize>| VarType::new(ScalarType::I64, shape);
    let (args, shape) = match row.name {
        "gather" => {
            let shape: Vec<usize> = (0..rank)
                .map(|k| {
                    if k == d {
                        b.int(1, 4) as usize
                    } else {
                        b.int(1, tx.shape[k] as i64) as usize
                    }
                })
                .collect();
            let idx = b.param(long(shape.clone()), Values::Below(n));
            (vec![x, idx], shape)
        }
        "scatter" | "scatter_add" => {
            let shape: Vec<usize> = (0..rank)
                .map(|k| b.int(1, tx.shape[k] as i64) as usize)
                .collect();
            let values = if row.name == "scatter" {
                Values::DistinctBelow { dim: d, bound: n }
            } else {
                Values::Below(n)
            };
            let idx = b.param(long(shape.clone()), values);
            let src = b.param(VarType::new(tx.scalar, shape), Values::Any);
            (vec![x, idx, src], tx.shape.clone())
        }
        "index_select" => {
            let m = b.int(1, 5) as usize;
            let idx = b.param(long(vec![m]), Values::Below(n));
            let mut shape = tx.shape.clone();
            shape[d] = m;
            (vec![x, idx], shape)
        }
        "index_put" => {
            let n0 = tx.shape[0];
            let m = b.int(1, n0 as i64) as usize;
            let idx = b.param(long(vec![m]), Values::DistinctBelow { dim: 0, bound: n0 });
            let values: Vec<usize> = [m]
                .into_iter()
                .chain(tx.shape[1..].iter().copied())
                .collect();
            let src = b.param(VarType::new(tx.scalar, values), Values::Any);
            (vec![x, idx, src], tx.shape.clone())
        }
        _ => {
            let keep = b.int(0, rank as i64) as usize;
            let mask_shape = tx.shape[keep..].to_vec();
            broadcast(&tx.shape, &mask_shape)?;
            let mask = b.param(VarType::new(ScalarType::Bool, mask_shape), Values::Any);
            (vec![x, mask], tx.shape.clone())
        }
    };
    let t = template(row, b, &args).replace("{dim}", &dim.to_string());
    b.emit(t, args, VarType::new(tx.scalar, shape), false, true)
}

/// An in-place multiply through a view of a fresh copy (a slice of the first dim, a select
/// of the last, or a transpose), returning the copy: the write must reach the base.
pub fn view_write(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let n = tx.shape[0] as i64;
    let view = match b.int(0, 2) {
        0 => format!("[{}:{}]", b.int(0, n - 1), n),
        1 => format!("[..., {}]", b.int(-1, 0)),
        _ => ".transpose(0, -1)".into(),
    };
    let t = template(row, b, std::slice::from_ref(&x)).replace("{view}", &view);
    b.emit(t, vec![x], tx, false, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_lengths_follow_python() {
        assert_eq!(slice_len(5, 0, 5, 2), 3);
        assert_eq!(slice_len(5, -2, 5, 1), 2);
        assert_eq!(slice_len(5, 3, 1, 1), 0);
        assert_eq!(slice_len(5, -7, -1, 3), 2);
    }
}
