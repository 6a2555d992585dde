//! A `MatMul` whose weight is an 8-bit integer tensor dequantized by `DequantizeLinear` may
//! legally read its float activations quantized to int8.
//!
//! ONNX Runtime's QDQ optimizer (level `extended`, `DQMatMulToMatMulNBits` in its
//! `QDQSelectorActionTransformer`) turns `DequantizeLinear(8-bit weight) → MatMul` into a
//! `MatMulNBits` node, and the session option `session.qdq_matmulnbits_accuracy_level`
//! (default 4, "int8 compute type", in `onnxruntime_session_options_config_keys.h`) makes
//! that kernel quantize the float input `A` to int8 per block of the reduced axis before an
//! integer dot product: symmetric, `scale = max|a| / 127` over the block, round to nearest.
//! That is the default every user of a quantized model runs, a documented precision trade,
//! so it is one of the precision analysis's legal evaluations (a campaign on seed 4242
//! reported about ten such "bugs", 0.3 % off, all gone with accuracy level 1).
//!
//! The bound: each element of `A` moves by at most half a quantization step,
//! `max|a_block| / 254 ≤ max|a_row| / 254`, so an output element `Σ_k a_ik·w_kj` moves by at
//! most `max_k |a_ik| / 254 · Σ_k |w_kj|`. The other backends may not round so, and lose
//! that much sensitivity on this one pattern: a bug that matters moves a value by far more.

use super::RefError;
use crate::ir::{DType, Graph, NodeKind};
use crate::ops::OpType;
use petgraph::stable_graph::NodeIndex;

/// Half of the int8 quantization step, relative to the largest magnitude of a block:
/// `(max / 127) / 2`.
const HALF_STEP: f64 = 1.0 / 254.0;

/// Whether node `n` of `graph` is a `MatMul` whose right operand is dequantized from an
/// 8-bit integer tensor (what ONNX Runtime may run with int8 activations).
pub fn applies(graph: &Graph, n: NodeIndex) -> bool {
    let is = |node: NodeIndex, op_type: OpType| matches!(&graph.node(node).kind, NodeKind::Op(op) if op_type.is(op.op_type()));
    if !is(n, OpType::MatMul) {
        return false;
    }
    let Some(weight) = graph.inputs_of(n).get(1).copied() else {
        return false;
    };
    is(weight.node, OpType::DequantizeLinear)
        && graph
            .inputs_of(weight.node)
            .first()
            .is_some_and(|q| matches!(graph.ty(*q).dtype, DType::I8 | DType::U8))
}

/// The largest change int8 activations can make to each element of `a · w` (module docs),
/// shaped like the product.
pub fn error(a: &tch::Tensor, w: &tch::Tensor) -> Result<tch::Tensor, RefError> {
    let largest = a.f_abs()?.f_amax([-1i64].as_slice(), true)?;
    let step = largest.f_mul_scalar(HALF_STEP)?.f_expand_as(a)?;
    Ok(step.f_matmul(&w.f_abs()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Kind, Tensor};

    /// `a` quantized to int8 per row (symmetric, round to nearest) and dequantized again.
    fn int8_rows(a: &Tensor) -> Tensor {
        let scale = a.abs().amax([-1i64].as_slice(), true) / 127.0;
        (a / &scale).round() * scale
    }

    #[test]
    fn int8_activations_stay_within_the_bound_and_exact_ones_get_none() {
        let a =
            Tensor::from_slice(&[0.31f64, -2.7, 5.5, 0.013, -9.25, 1.0, 3.3, -0.7]).reshape([2, 4]);
        let w = Tensor::from_slice(&[
            1.5f64, -0.25, 2.0, 0.75, -1.0, 0.5, 3.0, 0.125, -2.5, 1.25, -0.5, 4.0,
        ])
        .reshape([4, 3]);
        let bound = error(&a, &w).unwrap();
        assert_eq!(bound.size(), [2, 3]);
        let moved = (int8_rows(&a).matmul(&w) - a.matmul(&w)).abs();
        let inside = moved.le_tensor(&bound).all().int64_value(&[]);
        assert_eq!(inside, 1, "moved {moved} beyond {bound}");
        assert!(bound.max().double_value(&[]) > 0.0);
        let integral = Tensor::from_slice(&[127.0f64, -64.0, 1.0, 0.0]).reshape([1, 4]);
        let exact = (int8_rows(&integral).matmul(&w) - integral.matmul(&w)).abs();
        assert_eq!(exact.sum(Kind::Double).double_value(&[]), 0.0);
    }
}
