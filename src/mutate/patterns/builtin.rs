//! The built-in pattern library, written from what ONNX Runtime documents about its graph
//! optimizations, so pattern synthesis works with no data folder.
//!
//! Each pattern names the pass (a rewrite rule or a graph transformer) it targets. Constants
//! that a fusion checks by value (Gelu's `0.5`, `1.0` and `√2`, QuickGelu's `1.702`) carry that
//! value; other constants (weights, BatchNormalization statistics) are initializers with
//! values from the value search.

use crate::ops::OpType;

use super::{
    transformer_for_pass, Granularity, Library, Pattern, PatternNode, Pin, PinValue, Source,
};

/// Builds one pattern's nodes.
#[derive(Default)]
struct Builder {
    nodes: Vec<PatternNode>,
}

impl Builder {
    /// Appends `op` reading `inputs`; returns its first output.
    fn op(&mut self, op: OpType, inputs: &[Source]) -> Source {
        self.op_in(op, None, inputs)
    }

    /// Appends `op` with attribute class `class`.
    fn op_in(&mut self, op: OpType, class: Option<&str>, inputs: &[Source]) -> Source {
        self.nodes.push(PatternNode {
            op: op.into(),
            class: class.map(str::to_string),
            inputs: inputs.to_vec(),
            pins: Vec::new(),
        });
        Source::Node {
            node: self.nodes.len() - 1,
            output: 0,
        }
    }
}

impl Builder {
    /// Pins what the pass matches on to the node added last.
    fn pin(&mut self, pins: &[Pin]) {
        let last = self.nodes.last_mut().expect("pins follow a node");
        last.pins.extend_from_slice(pins);
    }
}

/// `Q → DQ` of the data and a dequantized weight into `op`, its result quantized again:
/// the node group a QDQ selector turns into the quantized `op`.
fn dequantized_weight_op(b: &mut Builder, op: OpType) {
    let q = b.op(OpType::QuantizeLinear, &[x(0)]);
    let d = b.op(OpType::DequantizeLinear, &[q]);
    let wd = b.op(OpType::DequantizeLinear, &[w()]);
    let y = b.op(op, &[d, wd]);
    let q2 = b.op(OpType::QuantizeLinear, &[y]);
    b.op(OpType::DequantizeLinear, &[q2]);
}

/// Data input `slot` has rank `rank`.
fn rank(slot: usize, rank: usize) -> Pin {
    Pin::Rank { slot, rank }
}

/// The last axis, for a constant operand holding axes.
fn last_axis_operand() -> Pin {
    Pin::Const {
        slot: 0,
        value: PinValue::Axes(vec![-1]),
    }
}

/// The named attribute pinned to `value`.
fn attr(name: &str, value: PinValue) -> Pin {
    Pin::Attr {
        name: name.into(),
        value,
    }
}

/// A Q/DQ node's scale and zero point (equal in a pair, as the QDQ transformers require).
fn qdq(scale: f64, zero_point: f64) -> [Pin; 2] {
    [
        Pin::Const {
            slot: 0,
            value: PinValue::Float(scale),
        },
        Pin::Const {
            slot: 1,
            value: PinValue::Float(zero_point),
        },
    ]
}

/// Pattern input `k`.
fn x(k: usize) -> Source {
    Source::Hole(k)
}

/// A constant initializer.
fn w() -> Source {
    Source::Const(None)
}

/// A scalar constant of value `v`.
fn k(v: f64) -> Source {
    Source::Const(Some(v))
}

/// A `Transpose` permutation.
fn perm(p: &[i64]) -> Pin {
    attr("perm", PinValue::Ints(p.to_vec()))
}

/// Q → DQ → Q → DQ, each pair with one scale and zero point (the zero point's value decides
/// the quantized type: 128 is `uint8` only).
fn double_qdq(b: &mut Builder, zero_point: f64) {
    let q = b.op(OpType::QuantizeLinear, &[x(0)]);
    b.pin(&qdq(0.5, zero_point));
    let d = b.op(OpType::DequantizeLinear, &[q]);
    b.pin(&qdq(0.5, zero_point));
    let q2 = b.op(OpType::QuantizeLinear, &[d]);
    b.pin(&qdq(0.25, zero_point));
    b.op(OpType::DequantizeLinear, &[q2]);
    b.pin(&qdq(0.25, zero_point));
}

/// One built-in pattern: its name, the pass it targets, and how to build it.
type Entry = (&'static str, &'static str, fn(&mut Builder));

const ENTRIES: &[Entry] = &[
    ("conv_bn", "ConvBNFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w(), w()]);
        b.op(OpType::BatchNormalization, &[c, w(), w(), w(), w()]);
    }),
    ("conv_add_const", "ConvAddFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w()]);
        b.pin(&[rank(0, 4)]);
        b.op(OpType::Add, &[c, w()]);
        b.pin(&[rank(1, 3), Pin::PerChannel { slot: 1 }]);
    }),
    ("conv_mul_const", "ConvMulFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w()]);
        b.pin(&[rank(0, 4)]);
        b.op(OpType::Mul, &[c, w()]);
        b.pin(&[rank(1, 3), Pin::PerChannel { slot: 1 }]);
    }),
    ("conv_relu", "ConvActivationFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w(), w()]);
        b.op(OpType::Relu, &[c]);
    }),
    ("conv_sigmoid", "ConvActivationFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w()]);
        b.op(OpType::Sigmoid, &[c]);
    }),
    ("conv_leaky_relu", "ConvActivationFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w(), w()]);
        b.op(OpType::LeakyRelu, &[c]);
    }),
    ("conv_clip", "ConvActivationFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w()]);
        b.op_in(OpType::Clip, Some("min_max"), &[c]);
    }),
    ("conv_hard_sigmoid", "ConvActivationFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w()]);
        b.op(OpType::HardSigmoid, &[c]);
    }),
    ("conv_add_relu", "ConvAddActivationFusion", |b| {
        let c = b.op(OpType::Conv, &[x(0), w(), w()]);
        b.pin(&[rank(0, 4)]);
        let a = b.op(OpType::Add, &[c, x(1)]);
        b.pin(&[Pin::SameShape { a: 0, b: 1 }]);
        b.op(OpType::Relu, &[a]);
    }),
    ("matmul_add", "MatMulAddFusion", |b| {
        let m = b.op(OpType::MatMul, &[x(0), w()]);
        b.pin(&[rank(0, 2), rank(1, 2)]);
        b.op(OpType::Add, &[m, w()]);
        b.pin(&[rank(1, 1)]);
    }),
    ("matmul_scale_after", "MatMulScaleFusion", |b| {
        let m = b.op(OpType::MatMul, &[x(0), x(1)]);
        b.op(OpType::Mul, &[m, k(0.125)]);
    }),
    ("matmul_scale_before", "MatMulScaleFusion", |b| {
        let s = b.op(OpType::Div, &[x(0), k(4.0)]);
        b.op(OpType::MatMul, &[s, x(1)]);
    }),
    ("gemm_relu", "GemmActivationFusion", |b| {
        let g = b.op(OpType::Gemm, &[x(0), w(), w()]);
        b.op(OpType::Relu, &[g]);
    }),
    ("gemm_sigmoid", "GemmActivationFusion", |b| {
        let g = b.op(OpType::Gemm, &[x(0), x(1)]);
        b.op(OpType::Sigmoid, &[g]);
    }),
    ("gelu_erf", "GeluFusionL2", |b| {
        let d = b.op(OpType::Div, &[x(0), k(std::f64::consts::SQRT_2)]);
        let e = b.op(OpType::Erf, &[d]);
        let a = b.op(OpType::Add, &[e, k(1.0)]);
        let m = b.op(OpType::Mul, &[x(0), a]);
        b.op(OpType::Mul, &[m, k(0.5)]);
    }),
    ("gelu_erf_half_first", "GeluFusionL2", |b| {
        let d = b.op(OpType::Div, &[x(0), k(std::f64::consts::SQRT_2)]);
        let e = b.op(OpType::Erf, &[d]);
        let a = b.op(OpType::Add, &[e, k(1.0)]);
        let h = b.op(OpType::Mul, &[x(0), k(0.5)]);
        b.op(OpType::Mul, &[h, a]);
    }),
    ("gelu_tanh", "FastGeluFusion", |b| {
        let cube = b.op(OpType::Pow, &[x(0), k(3.0)]);
        let scaled = b.op(OpType::Mul, &[cube, k(0.044715)]);
        let inner = b.op(OpType::Add, &[x(0), scaled]);
        let arg = b.op(OpType::Mul, &[inner, k(0.797_884_560_802_865_4)]);
        let t = b.op(OpType::Tanh, &[arg]);
        let one = b.op(OpType::Add, &[t, k(1.0)]);
        let half = b.op(OpType::Mul, &[x(0), k(0.5)]);
        b.op(OpType::Mul, &[half, one]);
    }),
    ("quick_gelu", "QuickGeluFusion", |b| {
        let s = b.op(OpType::Mul, &[x(0), k(1.702)]);
        let g = b.op(OpType::Sigmoid, &[s]);
        b.op(OpType::Mul, &[x(0), g]);
    }),
    ("layer_norm", "LayerNormFusionL1", |b| {
        let keep = attr("keepdims", PinValue::Int(1));
        let mean = b.op(OpType::ReduceMean, &[x(0)]);
        b.pin(&[last_axis_operand(), keep.clone()]);
        let centered = b.op(OpType::Sub, &[x(0), mean]);
        let square = b.op(OpType::Pow, &[centered.clone(), k(2.0)]);
        let var = b.op(OpType::ReduceMean, &[square]);
        b.pin(&[last_axis_operand(), keep]);
        let eps = b.op(OpType::Add, &[var, k(1e-5)]);
        let std = b.op(OpType::Sqrt, &[eps]);
        let normed = b.op(OpType::Div, &[centered, std]);
        let scaled = b.op(OpType::Mul, &[normed, w()]);
        b.pin(&[rank(1, 1)]);
        b.op(OpType::Add, &[scaled, w()]);
        b.pin(&[rank(1, 1)]);
    }),
    ("skip_layer_norm", "SkipLayerNormFusion", |b| {
        let s = b.op(OpType::Add, &[x(0), x(1)]);
        b.pin(&[rank(0, 3), Pin::SameShape { a: 0, b: 1 }]);
        b.op(OpType::LayerNormalization, &[s, w(), w()]);
        b.pin(&[
            attr("axis", PinValue::Axes(vec![-1])),
            rank(1, 1),
            rank(2, 1),
        ]);
    }),
    ("relu_clip", "FuseReluClip", |b| {
        let r = b.op(OpType::Relu, &[x(0)]);
        b.op_in(OpType::Clip, Some("min_max"), &[r]);
    }),
    ("transpose_transpose", "TransposeOptimizer", |b| {
        let t = b.op(OpType::Transpose, &[x(0)]);
        b.pin(&[rank(0, 3), perm(&[1, 2, 0])]);
        b.op(OpType::Transpose, &[t]);
        b.pin(&[perm(&[2, 0, 1])]);
    }),
    ("transpose_unary_transpose", "TransposeOptimizer", |b| {
        let t = b.op(OpType::Transpose, &[x(0)]);
        b.pin(&[rank(0, 3), perm(&[0, 2, 1])]);
        let r = b.op(OpType::Relu, &[t]);
        b.op(OpType::Transpose, &[r]);
        b.pin(&[perm(&[0, 2, 1])]);
    }),
    ("transpose_matmul", "MatmulTransposeFusion", |b| {
        let t = b.op(OpType::Transpose, &[x(0)]);
        b.pin(&[rank(0, 3), perm(&[0, 2, 1])]);
        b.op(OpType::MatMul, &[t, x(1)]);
        b.pin(&[rank(1, 3)]);
    }),
    ("transpose_gemm", "GemmTransposeFusion", |b| {
        let t = b.op(OpType::Transpose, &[x(0)]);
        b.pin(&[rank(0, 2), perm(&[1, 0])]);
        b.op(OpType::Gemm, &[t, x(1)]);
    }),
    ("reshape_reshape", "ReshapeFusion", |b| {
        let r = b.op(OpType::Reshape, &[x(0)]);
        b.op(OpType::Reshape, &[r]);
    }),
    ("reshape_squeeze", "ReshapeFusion", |b| {
        let r = b.op(OpType::Reshape, &[x(0)]);
        b.op(OpType::Squeeze, &[r]);
    }),
    ("cast_same_type", "CastElimination", |b| {
        let c = b.op(OpType::Cast, &[x(0)]);
        b.pin(&[Pin::KeepsDtype]);
        b.op(OpType::Relu, &[c]);
    }),
    ("cast_chain", "RemoveDuplicateCastTransformer", |b| {
        let c = b.op(OpType::Cast, &[x(0)]);
        let d = b.op(OpType::Cast, &[c]);
        b.op(OpType::Cast, &[d]);
    }),
    ("dropout", "EliminateDropout", |b| {
        let d = b.op(OpType::Dropout, &[x(0)]);
        b.op(OpType::Relu, &[d]);
    }),
    ("identity_chain", "EliminateIdentity", |b| {
        let i = b.op(OpType::Identity, &[x(0)]);
        let j = b.op(OpType::Identity, &[i]);
        b.op(OpType::Add, &[j, x(1)]);
    }),
    ("expand_noop", "ExpandElimination", |b| {
        let e = b.op(OpType::Expand, &[x(0)]);
        b.pin(&[Pin::Const {
            slot: 0,
            value: PinValue::Ones,
        }]);
        b.op(OpType::Relu, &[e]);
    }),
    ("div_mul", "DivMulFusion", |b| {
        let d = b.op(OpType::Div, &[k(1.0), x(0)]);
        b.op(OpType::Mul, &[x(1), d]);
    }),
    ("not_where", "NotWhereFusion", |b| {
        let n = b.op(OpType::Not, &[x(0)]);
        b.op(OpType::Where, &[n, x(1), x(2)]);
    }),
    ("constant_island", "ConstantFolding", |b| {
        let c = b.op(OpType::Add, &[w(), w()]);
        let d = b.op(OpType::Mul, &[c, w()]);
        b.op(OpType::Add, &[x(0), d]);
    }),
    ("constant_unary_island", "ConstantFolding", |b| {
        let c = b.op(OpType::Exp, &[w()]);
        b.op(OpType::Mul, &[x(0), c]);
    }),
    (
        "common_subexpression",
        "CommonSubexpressionElimination",
        |b| {
            let a = b.op(OpType::Relu, &[x(0)]);
            let c = b.op(OpType::Relu, &[x(0)]);
            b.op(OpType::Add, &[a, c]);
        },
    ),
    ("qdq_pair_uint8", "DoubleQDQPairsRemover", |b| {
        double_qdq(b, 128.0)
    }),
    ("qdq_pair_int8", "DoubleQDQPairsRemover", |b| {
        double_qdq(b, -3.0)
    }),
    ("qdq_relu", "QDQSelectorActionTransformer", |b| {
        let q = b.op(OpType::QuantizeLinear, &[x(0)]);
        let d = b.op(OpType::DequantizeLinear, &[q]);
        let r = b.op(OpType::Relu, &[d]);
        let q2 = b.op(OpType::QuantizeLinear, &[r]);
        b.op(OpType::DequantizeLinear, &[q2]);
    }),
    ("qdq_conv", "QDQSelectorActionTransformer", |b| {
        dequantized_weight_op(b, OpType::Conv)
    }),
    ("qdq_matmul", "QDQSelectorActionTransformer", |b| {
        dequantized_weight_op(b, OpType::MatMul)
    }),
    ("qdq_add", "QDQSelectorActionTransformer", |b| {
        let q = b.op(OpType::QuantizeLinear, &[x(0)]);
        let d = b.op(OpType::DequantizeLinear, &[q]);
        let q1 = b.op(OpType::QuantizeLinear, &[x(1)]);
        let d1 = b.op(OpType::DequantizeLinear, &[q1]);
        let a = b.op(OpType::Add, &[d, d1]);
        let q2 = b.op(OpType::QuantizeLinear, &[a]);
        b.op(OpType::DequantizeLinear, &[q2]);
    }),
    (
        "qdq_transpose_propagation",
        "QDQPropagationTransformer",
        |b| {
            let q = b.op(OpType::QuantizeLinear, &[x(0)]);
            let d = b.op(OpType::DequantizeLinear, &[q]);
            let t = b.op(OpType::Transpose, &[d]);
            b.op(OpType::Reshape, &[t]);
        },
    ),
    ("relu_quantize", "ReluQuantFusion", |b| {
        let r = b.op(OpType::Relu, &[x(0)]);
        // A zero point at the bottom of the range makes the Relu redundant.
        let q = b.op(OpType::QuantizeLinear, &[r]);
        b.pin(&qdq(0.5, 0.0));
        b.op(OpType::DequantizeLinear, &[q]);
        b.pin(&qdq(0.5, 0.0));
    }),
    ("bias_gelu", "BiasGeluFusion", |b| {
        let s = b.op(OpType::Add, &[x(0), w()]);
        b.pin(&[rank(1, 1)]);
        let d = b.op(OpType::Div, &[s.clone(), k(std::f64::consts::SQRT_2)]);
        let e = b.op(OpType::Erf, &[d]);
        let a = b.op(OpType::Add, &[e, k(1.0)]);
        let m = b.op(OpType::Mul, &[s, a]);
        b.op(OpType::Mul, &[m, k(0.5)]);
    }),
    ("where_dummy_dq", "WhereDummyDq", |b| {
        let q = b.op(OpType::QuantizeLinear, &[x(0)]);
        b.pin(&qdq(0.5, 128.0));
        let d = b.op(OpType::DequantizeLinear, &[q]);
        b.pin(&qdq(0.5, 128.0));
        let w = b.op(OpType::Where, &[x(1), d, k(0.0)]);
        let q2 = b.op(OpType::QuantizeLinear, &[w]);
        b.pin(&qdq(0.5, 128.0));
        b.op(OpType::DequantizeLinear, &[q2]);
        b.pin(&qdq(0.5, 128.0));
    }),
    ("qdq_conv_float_bias", "WeightBiasQuantization", |b| {
        let q = b.op(OpType::QuantizeLinear, &[x(0)]);
        let d = b.op(OpType::DequantizeLinear, &[q]);
        let wd = b.op(OpType::DequantizeLinear, &[w()]);
        let c = b.op(OpType::Conv, &[d, wd, w()]);
        b.pin(&[rank(0, 4)]);
        let q2 = b.op(OpType::QuantizeLinear, &[c]);
        b.op(OpType::DequantizeLinear, &[q2]);
    }),
    ("qdq_maxpool", "QDQSelectorActionTransformer", |b| {
        let q = b.op(OpType::QuantizeLinear, &[x(0)]);
        let d = b.op(OpType::DequantizeLinear, &[q]);
        let p = b.op(OpType::MaxPool, &[d]);
        let q2 = b.op(OpType::QuantizeLinear, &[p]);
        b.op(OpType::DequantizeLinear, &[q2]);
    }),
];

/// The built-in library.
pub fn library() -> Library {
    let patterns = ENTRIES
        .iter()
        .map(|(name, pass, build)| {
            let mut b = Builder::default();
            build(&mut b);
            Pattern {
                name: (*name).into(),
                pass: (*pass).into(),
                transformer: transformer_for_pass(pass),
                granularity: Granularity::Builtin,
                nodes: b.nodes,
            }
        })
        .collect();
    Library {
        version: super::LIBRARY_VERSION,
        patterns,
        ..Library::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_pattern_is_well_formed() {
        let library = library();
        assert!(library.patterns.len() >= 30);
        for p in &library.patterns {
            p.validate().unwrap();
        }
    }
}
