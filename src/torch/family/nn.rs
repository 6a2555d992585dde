//! Linear algebra, attention, convolution, pooling, resampling, padding and normalization
//! rows. Each reshapes its input to the rank it needs (an adapter statement), adds its weights as new
//! parameters of the input's type, and computes the output shape with torch's formulas.

use super::{template, Builder};
use crate::ir::ScalarType;
use crate::mutate::program::{Var, VarType};
use crate::torch::builder::{ranked_shape, shape_literal, Values};
use crate::torch::ops::{Accept, TorchOp};

/// A value of a type `row` accepts (a float type), reshaped to rank `rank` (picked among
/// ranks `1..=4`).
fn float_of_rank(row: &TorchOp, b: &mut Builder, rank: usize) -> Option<(Var, VarType)> {
    let x = b.pick(row.accept, 1..=4)?;
    let x = b.to_rank(&x, rank)?;
    let ty = b.ty(&x);
    Some((x, ty))
}

/// A weight of `scalar` type and `shape`.
fn weight(b: &mut Builder, scalar: ScalarType, shape: Vec<usize>) -> Var {
    b.weight(VarType::new(scalar, shape), Values::Any)
}

/// `matmul`, `mm`/`addmm`, `bmm`/`baddbmm`, `linear` and `einsum` with a new weight.
pub fn linear_algebra(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    use crate::torch::ops::Family::*;
    let n = b.int(1, 5) as usize;
    let (x, tx) = match row.family {
        Mm => float_of_rank(row, b, 2)?,
        Bmm => float_of_rank(row, b, 3)?,
        Einsum => {
            let rank = b.int(2, 3) as usize;
            float_of_rank(row, b, rank)?
        }
        _ => {
            let x = b.pick(row.accept, 1..=4)?;
            let t = b.ty(&x);
            (x, t)
        }
    };
    let s = tx.scalar;
    let sh = tx.shape.clone();
    let last = *sh.last()?;
    let (w, out, equation) = match row.family {
        Matmul | Mm => {
            let w = weight(b, s, vec![last, n]);
            let mut out = sh[..sh.len() - 1].to_vec();
            out.push(n);
            (w, out, String::new())
        }
        Bmm => {
            let w = weight(b, s, vec![sh[0], last, n]);
            (w, vec![sh[0], sh[1], n], String::new())
        }
        Linear => {
            let w = weight(b, s, vec![n, last]);
            let mut out = sh[..sh.len() - 1].to_vec();
            out.push(n);
            (w, out, String::new())
        }
        _ => {
            let (eq, wshape, out) = match (sh.len(), b.int(0, 2)) {
                (2, 0) => ("ij,jk->ik", vec![sh[1], n], vec![sh[0], n]),
                (2, 1) => ("ij,kj->ik", vec![n, sh[1]], vec![sh[0], n]),
                (2, _) => ("ij,ij->i", sh.clone(), vec![sh[0]]),
                (_, 0) => ("bij,bjk->bik", vec![sh[0], sh[2], n], vec![sh[0], sh[1], n]),
                (_, 1) => ("bij,jk->bik", vec![sh[2], n], vec![sh[0], sh[1], n]),
                _ => ("bij,bkj->bik", vec![sh[0], n, sh[2]], vec![sh[0], sh[1], n]),
            };
            (weight(b, s, wshape), out, eq.to_string())
        }
    };
    let mut args = vec![x, w];
    if row.template.contains("{2}") {
        // The bias of linear (`[n]`), addmm and baddbmm (broadcast to the product).
        args.push(weight(b, s, vec![n]));
    }
    let t = template(row, b, &args).replace("{equation}", &equation);
    b.emit(t, args, VarType::new(s, out), false, true)
}

/// Attention of a float value reshaped to rank `rank` (the queries `[.., S, D]`) over new
/// keys `[.., L, D]`, new values `[.., L, E]` and, when the template reads `{3}`, a new
/// additive mask `[S, L]`: the result is `[.., S, E]`.
pub fn attention(row: &TorchOp, b: &mut Builder, rank: usize) -> Option<Var> {
    let picked = b.pick(row.accept, 1..=4)?;
    let picked_shape = b.ty(&picked).shape;
    let shape = queries_shape(&picked_shape, rank);
    let queries = if shape == picked_shape {
        picked
    } else {
        b.reshape(&picked, shape.clone())?
    };
    let s = b.ty(&queries).scalar;
    let (batch, tail) = shape.split_at(rank - 2);
    let (rows, depth) = (tail[0], tail[1]);
    // Keys of length 1 make the attention matmul a broadcast product, which no attention
    // pattern matches.
    let length = b.int(2, 5) as usize;
    let width = b.int(1, 5) as usize;
    let shape = |last: [usize; 2]| batch.iter().copied().chain(last).collect::<Vec<_>>();
    // Keys, values and mask are data, not trained state.
    let mut data = |shape| b.param(VarType::new(s, shape), Values::Any);
    let mut args = vec![
        queries,
        data(shape([length, depth])),
        data(shape([length, width])),
    ];
    if row.template.contains("{3}") {
        args.push(data(vec![rows, length]));
    }
    let t = template(row, b, &args);
    b.emit(t, args, VarType::new(s, shape([rows, width])), false, true)
}

/// The queries' shape at rank `rank` for a value of `shape`: its leading dims merged or 1s
/// added, and, when that leaves a query count or depth of 1 but the element count factors,
/// `[1, .., S, D]` with `S` the largest factor up to its square root. Inductor matches its
/// attention patterns only when both are at least 2 (probed on torch 2.15.0: a dim of 1 turns
/// the matmuls into broadcast products or views first).
fn queries_shape(shape: &[usize], rank: usize) -> Vec<usize> {
    let ranked = ranked_shape(shape, rank);
    if ranked[rank - 2..].iter().all(|&d| d >= 2) {
        return ranked;
    }
    let n: usize = shape.iter().product();
    match (2..)
        .take_while(|s| s * s <= n)
        .filter(|s| n.is_multiple_of(*s))
        .last()
    {
        Some(rows) => std::iter::repeat_n(1, rank - 2)
            .chain([rows, n / rows])
            .collect(),
        None => ranked,
    }
}

/// Output size of a window of `k` (dilated by `d`) sliding by `s` over `size` padded by `p`
/// on both sides; `ceil` as in pooling's `ceil_mode` (the last window must start inside the
/// input or its left padding).
fn windows(size: usize, k: usize, s: usize, p: usize, d: usize, ceil: bool) -> Option<usize> {
    let span = (size + 2 * p).checked_sub(d * (k - 1) + 1)?;
    let mut out = if ceil { span.div_ceil(s) } else { span / s } + 1;
    if ceil && (out - 1) * s >= size + p {
        out -= 1;
    }
    Some(out)
}

/// `conv{1,2,3}d` and `conv_transpose{1,2}d` with new weight and bias.
pub fn conv(row: &TorchOp, b: &mut Builder, dims: usize, transposed: bool) -> Option<Var> {
    let (x, tx) = float_of_rank(row, b, dims + 2)?;
    let c = tx.shape[1];
    let groups = if c > 1 && b.flip() {
        if c % 2 == 0 && b.flip() {
            2
        } else {
            c
        }
    } else {
        1
    };
    let per_group = b.int(1, 3) as usize;
    let cout = groups * per_group;
    let k = b.int(1, 3) as usize;
    let s = b.int(1, 2) as usize;
    let p = b.int(0, (k / 2) as i64) as usize;
    let d = b.int(1, 2) as usize;
    let spatial = &tx.shape[2..];
    let (wshape, out_spatial, extra) = if transposed {
        let op = b.int(0, s.max(d) as i64 - 1) as usize;
        let out: Option<Vec<usize>> = spatial
            .iter()
            .map(|i| ((i - 1) * s + d * (k - 1) + op + 1).checked_sub(2 * p))
            .collect();
        let w: Vec<usize> = [c, per_group]
            .into_iter()
            .chain(std::iter::repeat_n(k, dims))
            .collect();
        (w, out?, format!(", output_padding={op}"))
    } else {
        let out: Option<Vec<usize>> = spatial
            .iter()
            .map(|i| windows(*i, k, s, p, d, false))
            .collect();
        let w: Vec<usize> = [cout, c / groups]
            .into_iter()
            .chain(std::iter::repeat_n(k, dims))
            .collect();
        (w, out?, String::new())
    };
    if out_spatial.contains(&0) {
        return None;
    }
    let w = weight(b, tx.scalar, wshape);
    let bias = weight(b, tx.scalar, vec![cout]);
    let hole = format!("stride={s}, padding={p}{extra}, groups={groups}, dilation={d}");
    let args = vec![x, w, bias];
    let t = template(row, b, &args).replace("{conv}", &hole);
    let out: Vec<usize> = [tx.shape[0], cout].into_iter().chain(out_spatial).collect();
    b.emit(t, args, VarType::new(tx.scalar, out), false, true)
}

/// `max_pool`/`avg_pool` with kernel, stride, padding, dilation (max only) and ceil mode.
pub fn pool(row: &TorchOp, b: &mut Builder, dims: usize, average: bool) -> Option<Var> {
    let (x, tx) = float_of_rank(row, b, dims + 2)?;
    let k = b.int(1, 3) as usize;
    let s = b.int(1, 2) as usize;
    let p = b.int(0, (k / 2) as i64) as usize;
    let d = if average { 1 } else { b.int(1, 2) as usize };
    let ceil = b.flip();
    let out: Option<Vec<usize>> = tx.shape[2..]
        .iter()
        .map(|i| windows(*i, k, s, p, d, ceil))
        .collect();
    let out = out?;
    if out.contains(&0) {
        return None;
    }
    let ceil_literal = if ceil { "True" } else { "False" };
    let dilation = if average {
        String::new()
    } else {
        format!(", dilation={d}")
    };
    let hole =
        format!("kernel_size={k}, stride={s}, padding={p}{dilation}, ceil_mode={ceil_literal}");
    let t = template(row, b, std::slice::from_ref(&x)).replace("{pool}", &hole);
    let shape: Vec<usize> = tx.shape[..2].iter().copied().chain(out).collect();
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, true)
}

/// Adaptive pooling to a drawn size (up to two more than the input's).
pub fn adaptive_pool(row: &TorchOp, b: &mut Builder, dims: usize) -> Option<Var> {
    let (x, tx) = float_of_rank(row, b, dims + 2)?;
    let size: Vec<usize> = tx.shape[2..]
        .iter()
        .map(|i| b.int(1, *i as i64 + 2) as usize)
        .collect();
    let t = template(row, b, std::slice::from_ref(&x)).replace("{size}", &shape_literal(&size));
    let shape: Vec<usize> = tx.shape[..2].iter().copied().chain(size).collect();
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, true)
}

/// `interpolate` by size or by a (possibly non-integer) scale factor, in a drawn mode.
pub fn interpolate(row: &TorchOp, b: &mut Builder, dims: usize) -> Option<Var> {
    let (x, tx) = float_of_rank(row, b, dims + 2)?;
    let modes: &[&str] = if dims == 1 {
        &["nearest", "nearest-exact", "linear"]
    } else {
        &["nearest", "nearest-exact", "bilinear", "bicubic"]
    };
    let mode = modes[b.int(0, modes.len() as i64 - 1) as usize];
    let corners = match mode {
        "linear" | "bilinear" | "bicubic" if b.flip() => ", align_corners=True",
        "linear" | "bilinear" | "bicubic" => ", align_corners=False",
        _ => "",
    };
    let spatial = &tx.shape[2..];
    let (how, out) = if b.flip() {
        let size: Vec<usize> = spatial
            .iter()
            .map(|i| b.int(1, 2 * *i as i64 + 1) as usize)
            .collect();
        (format!("size={}", shape_literal(&size)), size)
    } else {
        let scale = [0.5, 0.75, 1.5, 1.7, 2.0, 2.5][b.int(0, 5) as usize];
        let size: Vec<usize> = spatial
            .iter()
            .map(|i| (*i as f64 * scale).floor() as usize)
            .collect();
        (format!("scale_factor={scale:?}"), size)
    };
    if out.contains(&0) {
        return None;
    }
    let hole = format!("{how}, mode='{mode}'{corners}");
    let t = template(row, b, std::slice::from_ref(&x)).replace("{resize}", &hole);
    let shape: Vec<usize> = tx.shape[..2].iter().copied().chain(out).collect();
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, true)
}

/// `pad`: constant (with negative pads cropping) on any rank, or reflect / replicate /
/// circular on the last one or two dims of a float.
pub fn pad(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let x = b.pick(row.accept, 1..=4)?;
    let tx = b.ty(&x);
    let rank = tx.rank();
    let mode = if tx.scalar.is_float() && rank >= 2 {
        ["constant", "reflect", "replicate", "circular"][b.int(0, 3) as usize]
    } else {
        "constant"
    };
    // The other modes pad the last dim of a 2-d or 3-d input, or the last two of a 3-d
    // or 4-d one.
    let padded = match (mode, rank) {
        ("constant", _) => b.int(1, rank.min(3) as i64) as usize,
        (_, 2) => 1,
        (_, 3) if b.flip() => 1,
        _ => 2,
    };
    let mut pads = Vec::new();
    let mut shape = tx.shape.clone();
    for k in 0..padded {
        let dim = rank - 1 - k;
        let n = tx.shape[dim] as i64;
        let (lo, hi) = match mode {
            "constant" => (-(n - 1) / 2, 2),
            "reflect" => (0, n - 1),
            "circular" => (0, n),
            _ => (0, 2),
        };
        let (l, r) = (b.int(lo, hi), b.int(lo, hi));
        let size = n + l + r;
        if size < 1 {
            return None;
        }
        shape[dim] = size as usize;
        pads.extend([l, r]);
    }
    let list: Vec<String> = pads.iter().map(|p| p.to_string()).collect();
    let value = if mode == "constant" {
        format!(", value={}", b.int(0, 2))
    } else {
        String::new()
    };
    let hole = format!("[{}], mode='{mode}'{value}", list.join(", "));
    let t = template(row, b, std::slice::from_ref(&x)).replace("{pad}", &hole);
    b.emit(t, vec![x], VarType::new(tx.scalar, shape), false, true)
}

/// Batch, instance, group and layer normalization with new statistics and affine weights.
pub fn norm(row: &TorchOp, b: &mut Builder) -> Option<Var> {
    let min_rank = if row.name == "instance_norm" { 3 } else { 2 };
    let x = b.pick(Accept::Float, min_rank..=4)?;
    let tx = b.ty(&x);
    // Instance statistics need more than one element per channel.
    if row.name == "instance_norm" && tx.shape[2..].iter().product::<usize>() < 2 {
        return None;
    }
    let s = tx.scalar;
    let c = tx.shape[1];
    let mut t = template(row, b, std::slice::from_ref(&x));
    let args = match row.name {
        "batch_norm" => {
            let mean = weight(b, s, vec![c]);
            let var = b.weight(VarType::new(s, vec![c]), Values::Positive);
            let (w, bias) = (weight(b, s, vec![c]), weight(b, s, vec![c]));
            vec![x, w, bias, mean, var]
        }
        "layer_norm" => {
            let k = b.int(1, tx.rank() as i64) as usize;
            let normalized = tx.shape[tx.rank() - k..].to_vec();
            t = t.replace("{normalized}", &shape_literal(&normalized));
            let (w, bias) = (weight(b, s, normalized.clone()), weight(b, s, normalized));
            vec![x, w, bias]
        }
        _ => {
            // Each group needs more than one value.
            let spatial: usize = tx.shape[2..].iter().product();
            let divisors: Vec<usize> = (1..=c)
                .filter(|g| c.is_multiple_of(*g) && c / g * spatial > 1)
                .collect();
            if divisors.is_empty() {
                return None;
            }
            let groups = divisors[b.int(0, divisors.len() as i64 - 1) as usize];
            t = t.replace("{groups}", &groups.to_string());
            let (w, bias) = (weight(b, s, vec![c]), weight(b, s, vec![c]));
            vec![x, w, bias]
        }
    };
    b.emit(t, args, tx, false, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counts_follow_torch() {
        // floor((5 + 2 - 2 - 1) / 2) + 1 = 3
        assert_eq!(windows(5, 2, 2, 1, 1, false), Some(3));
        // ceil mode: ceil(4 / 2) + 1 = 3, the last window starts at 4 < 5 + 1: kept.
        assert_eq!(windows(5, 2, 2, 1, 1, true), Some(3));
        // size 4, k 3, s 2, p 0, ceil: ceil(1/2)+1 = 2, last start 2 < 4: kept.
        assert_eq!(windows(4, 3, 2, 0, 1, true), Some(2));
        assert_eq!(windows(1, 3, 1, 0, 1, false), None);
    }

    #[test]
    fn attention_queries_get_two_rows_and_two_columns_when_the_count_factors() {
        assert_eq!(queries_shape(&[2, 3, 4, 5], 4), vec![2, 3, 4, 5]);
        assert_eq!(queries_shape(&[6], 4), vec![1, 1, 2, 3]);
        assert_eq!(queries_shape(&[3, 1], 3), vec![1, 3, 1]);
        assert_eq!(queries_shape(&[12, 1], 4), vec![1, 1, 3, 4]);
        assert_eq!(queries_shape(&[2, 8], 3), vec![1, 2, 8]);
    }
}
