//! The built-in pattern library, written from what ONNX Runtime documents about its graph
//! optimizations, so pattern synthesis works with no data folder.
//!
//! Each pattern names the pass (a rewrite rule or a graph transformer) it targets. Constants
//! that a fusion checks by value (Gelu's `0.5`, `1.0` and `√2`, QuickGelu's `1.702`) carry that
//! value; other constants (weights, BatchNormalization statistics) are initializers with
//! values from the value search.

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
    fn op(&mut self, op: &str, inputs: &[Source]) -> Source {
        self.op_in(op, None, inputs)
    }

    /// Appends `op` with attribute class `class`.
    fn op_in(&mut self, op: &str, class: Option<&str>, inputs: &[Source]) -> Source {
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
    let q = b.op("QuantizeLinear", &[x(0)]);
    b.pin(&qdq(0.5, zero_point));
    let d = b.op("DequantizeLinear", &[q]);
    b.pin(&qdq(0.5, zero_point));
    let q2 = b.op("QuantizeLinear", &[d]);
    b.pin(&qdq(0.25, zero_point));
    b.op("DequantizeLinear", &[q2]);
    b.pin(&qdq(0.25, zero_point));
}

/// One built-in pattern: its name, the pass it targets, and how to build it.
type Entry = (&'static str, &'static str, fn(&mut Builder));

const ENTRIES: &[Entry] = &[
    ("conv_bn", "ConvBNFusion", |b| {
        let c = b.op("Conv", &[x(0), w(), w()]);
        b.op("BatchNormalization", &[c, w(), w(), w(), w()]);
    }),
    ("conv_add_const", "ConvAddFusion", |b| {
        let c = b.op("Conv", &[x(0), w()]);
        b.pin(&[rank(0, 4)]);
        b.op("Add", &[c, w()]);
        b.pin(&[rank(1, 3), Pin::PerChannel { slot: 1 }]);
    }),
    ("conv_mul_const", "ConvMulFusion", |b| {
        let c = b.op("Conv", &[x(0), w()]);
        b.pin(&[rank(0, 4)]);
        b.op("Mul", &[c, w()]);
        b.pin(&[rank(1, 3), Pin::PerChannel { slot: 1 }]);
    }),
    ("conv_relu", "ConvActivationFusion", |b| {
        let c = b.op("Conv", &[x(0), w(), w()]);
        b.op("Relu", &[c]);
    }),
    ("conv_sigmoid", "ConvActivationFusion", |b| {
        let c = b.op("Conv", &[x(0), w()]);
        b.op("Sigmoid", &[c]);
    }),
    ("conv_leaky_relu", "ConvActivationFusion", |b| {
        let c = b.op("Conv", &[x(0), w(), w()]);
        b.op("LeakyRelu", &[c]);
    }),
    ("conv_clip", "ConvActivationFusion", |b| {
        let c = b.op("Conv", &[x(0), w()]);
        b.op_in("Clip", Some("min_max"), &[c]);
    }),
    ("conv_hard_sigmoid", "ConvActivationFusion", |b| {
        let c = b.op("Conv", &[x(0), w()]);
        b.op("HardSigmoid", &[c]);
    }),
    ("conv_add_relu", "ConvAddActivationFusion", |b| {
        let c = b.op("Conv", &[x(0), w(), w()]);
        b.pin(&[rank(0, 4)]);
        let a = b.op("Add", &[c, x(1)]);
        b.pin(&[Pin::SameShape { a: 0, b: 1 }]);
        b.op("Relu", &[a]);
    }),
    ("matmul_add", "MatMulAddFusion", |b| {
        let m = b.op("MatMul", &[x(0), w()]);
        b.pin(&[rank(0, 2), rank(1, 2)]);
        b.op("Add", &[m, w()]);
        b.pin(&[rank(1, 1)]);
    }),
    ("matmul_scale_after", "MatMulScaleFusion", |b| {
        let m = b.op("MatMul", &[x(0), x(1)]);
        b.op("Mul", &[m, k(0.125)]);
    }),
    ("matmul_scale_before", "MatMulScaleFusion", |b| {
        let s = b.op("Div", &[x(0), k(4.0)]);
        b.op("MatMul", &[s, x(1)]);
    }),
    ("gemm_relu", "GemmActivationFusion", |b| {
        let g = b.op("Gemm", &[x(0), w(), w()]);
        b.op("Relu", &[g]);
    }),
    ("gemm_sigmoid", "GemmActivationFusion", |b| {
        let g = b.op("Gemm", &[x(0), x(1)]);
        b.op("Sigmoid", &[g]);
    }),
    ("gelu_erf", "GeluFusionL2", |b| {
        let d = b.op("Div", &[x(0), k(std::f64::consts::SQRT_2)]);
        let e = b.op("Erf", &[d]);
        let a = b.op("Add", &[e, k(1.0)]);
        let m = b.op("Mul", &[x(0), a]);
        b.op("Mul", &[m, k(0.5)]);
    }),
    ("gelu_erf_half_first", "GeluFusionL2", |b| {
        let d = b.op("Div", &[x(0), k(std::f64::consts::SQRT_2)]);
        let e = b.op("Erf", &[d]);
        let a = b.op("Add", &[e, k(1.0)]);
        let h = b.op("Mul", &[x(0), k(0.5)]);
        b.op("Mul", &[h, a]);
    }),
    ("gelu_tanh", "FastGeluFusion", |b| {
        let cube = b.op("Pow", &[x(0), k(3.0)]);
        let scaled = b.op("Mul", &[cube, k(0.044715)]);
        let inner = b.op("Add", &[x(0), scaled]);
        let arg = b.op("Mul", &[inner, k(0.797_884_560_802_865_4)]);
        let t = b.op("Tanh", &[arg]);
        let one = b.op("Add", &[t, k(1.0)]);
        let half = b.op("Mul", &[x(0), k(0.5)]);
        b.op("Mul", &[half, one]);
    }),
    ("quick_gelu", "QuickGeluFusion", |b| {
        let s = b.op("Mul", &[x(0), k(1.702)]);
        let g = b.op("Sigmoid", &[s]);
        b.op("Mul", &[x(0), g]);
    }),
    ("layer_norm", "LayerNormFusionL1", |b| {
        let keep = attr("keepdims", PinValue::Int(1));
        let mean = b.op("ReduceMean", &[x(0)]);
        b.pin(&[last_axis_operand(), keep.clone()]);
        let centered = b.op("Sub", &[x(0), mean]);
        let square = b.op("Pow", &[centered.clone(), k(2.0)]);
        let var = b.op("ReduceMean", &[square]);
        b.pin(&[last_axis_operand(), keep]);
        let eps = b.op("Add", &[var, k(1e-5)]);
        let std = b.op("Sqrt", &[eps]);
        let normed = b.op("Div", &[centered, std]);
        let scaled = b.op("Mul", &[normed, w()]);
        b.pin(&[rank(1, 1)]);
        b.op("Add", &[scaled, w()]);
        b.pin(&[rank(1, 1)]);
    }),
    ("skip_layer_norm", "SkipLayerNormFusion", |b| {
        let s = b.op("Add", &[x(0), x(1)]);
        b.pin(&[rank(0, 3), Pin::SameShape { a: 0, b: 1 }]);
        b.op("LayerNormalization", &[s, w(), w()]);
        b.pin(&[
            attr("axis", PinValue::Axes(vec![-1])),
            rank(1, 1),
            rank(2, 1),
        ]);
    }),
    ("relu_clip", "FuseReluClip", |b| {
        let r = b.op("Relu", &[x(0)]);
        b.op_in("Clip", Some("min_max"), &[r]);
    }),
    ("transpose_transpose", "TransposeOptimizer", |b| {
        let t = b.op("Transpose", &[x(0)]);
        b.pin(&[rank(0, 3), perm(&[1, 2, 0])]);
        b.op("Transpose", &[t]);
        b.pin(&[perm(&[2, 0, 1])]);
    }),
    ("transpose_unary_transpose", "TransposeOptimizer", |b| {
        let t = b.op("Transpose", &[x(0)]);
        b.pin(&[rank(0, 3), perm(&[0, 2, 1])]);
        let r = b.op("Relu", &[t]);
        b.op("Transpose", &[r]);
        b.pin(&[perm(&[0, 2, 1])]);
    }),
    ("transpose_matmul", "MatmulTransposeFusion", |b| {
        let t = b.op("Transpose", &[x(0)]);
        b.pin(&[rank(0, 3), perm(&[0, 2, 1])]);
        b.op("MatMul", &[t, x(1)]);
        b.pin(&[rank(1, 3)]);
    }),
    ("transpose_gemm", "GemmTransposeFusion", |b| {
        let t = b.op("Transpose", &[x(0)]);
        b.pin(&[rank(0, 2), perm(&[1, 0])]);
        b.op("Gemm", &[t, x(1)]);
    }),
    ("reshape_reshape", "ReshapeFusion", |b| {
        let r = b.op("Reshape", &[x(0)]);
        b.op("Reshape", &[r]);
    }),
    ("reshape_squeeze", "ReshapeFusion", |b| {
        let r = b.op("Reshape", &[x(0)]);
        b.op("Squeeze", &[r]);
    }),
    ("cast_same_type", "CastElimination", |b| {
        let c = b.op("Cast", &[x(0)]);
        b.pin(&[Pin::KeepsDtype]);
        b.op("Relu", &[c]);
    }),
    ("cast_chain", "RemoveDuplicateCastTransformer", |b| {
        let c = b.op("Cast", &[x(0)]);
        let d = b.op("Cast", &[c]);
        b.op("Cast", &[d]);
    }),
    ("dropout", "EliminateDropout", |b| {
        let d = b.op("Dropout", &[x(0)]);
        b.op("Relu", &[d]);
    }),
    ("identity_chain", "EliminateIdentity", |b| {
        let i = b.op("Identity", &[x(0)]);
        let j = b.op("Identity", &[i]);
        b.op("Add", &[j, x(1)]);
    }),
    ("expand_noop", "ExpandElimination", |b| {
        let e = b.op("Expand", &[x(0)]);
        b.pin(&[Pin::Const {
            slot: 0,
            value: PinValue::Ones,
        }]);
        b.op("Relu", &[e]);
    }),
    ("div_mul", "DivMulFusion", |b| {
        let d = b.op("Div", &[k(1.0), x(0)]);
        b.op("Mul", &[x(1), d]);
    }),
    ("not_where", "NotWhereFusion", |b| {
        let n = b.op("Not", &[x(0)]);
        b.op("Where", &[n, x(1), x(2)]);
    }),
    ("constant_island", "ConstantFolding", |b| {
        let c = b.op("Add", &[w(), w()]);
        let d = b.op("Mul", &[c, w()]);
        b.op("Add", &[x(0), d]);
    }),
    ("constant_unary_island", "ConstantFolding", |b| {
        let c = b.op("Exp", &[w()]);
        b.op("Mul", &[x(0), c]);
    }),
    (
        "common_subexpression",
        "CommonSubexpressionElimination",
        |b| {
            let a = b.op("Relu", &[x(0)]);
            let c = b.op("Relu", &[x(0)]);
            b.op("Add", &[a, c]);
        },
    ),
    ("qdq_pair_uint8", "DoubleQDQPairsRemover", |b| {
        double_qdq(b, 128.0)
    }),
    ("qdq_pair_int8", "DoubleQDQPairsRemover", |b| {
        double_qdq(b, -3.0)
    }),
    ("qdq_relu", "QDQSelectorActionTransformer", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        let d = b.op("DequantizeLinear", &[q]);
        let r = b.op("Relu", &[d]);
        let q2 = b.op("QuantizeLinear", &[r]);
        b.op("DequantizeLinear", &[q2]);
    }),
    ("qdq_conv", "QDQSelectorActionTransformer", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        let d = b.op("DequantizeLinear", &[q]);
        let wd = b.op("DequantizeLinear", &[w()]);
        let c = b.op("Conv", &[d, wd]);
        let q2 = b.op("QuantizeLinear", &[c]);
        b.op("DequantizeLinear", &[q2]);
    }),
    ("qdq_matmul", "QDQSelectorActionTransformer", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        let d = b.op("DequantizeLinear", &[q]);
        let wd = b.op("DequantizeLinear", &[w()]);
        let m = b.op("MatMul", &[d, wd]);
        let q2 = b.op("QuantizeLinear", &[m]);
        b.op("DequantizeLinear", &[q2]);
    }),
    ("qdq_add", "QDQSelectorActionTransformer", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        let d = b.op("DequantizeLinear", &[q]);
        let q1 = b.op("QuantizeLinear", &[x(1)]);
        let d1 = b.op("DequantizeLinear", &[q1]);
        let a = b.op("Add", &[d, d1]);
        let q2 = b.op("QuantizeLinear", &[a]);
        b.op("DequantizeLinear", &[q2]);
    }),
    (
        "qdq_transpose_propagation",
        "QDQPropagationTransformer",
        |b| {
            let q = b.op("QuantizeLinear", &[x(0)]);
            let d = b.op("DequantizeLinear", &[q]);
            let t = b.op("Transpose", &[d]);
            b.op("Reshape", &[t]);
        },
    ),
    ("relu_quantize", "ReluQuantFusion", |b| {
        let r = b.op("Relu", &[x(0)]);
        // A zero point at the bottom of the range makes the Relu redundant.
        let q = b.op("QuantizeLinear", &[r]);
        b.pin(&qdq(0.5, 0.0));
        b.op("DequantizeLinear", &[q]);
        b.pin(&qdq(0.5, 0.0));
    }),
    ("bias_gelu", "BiasGeluFusion", |b| {
        let s = b.op("Add", &[x(0), w()]);
        b.pin(&[rank(1, 1)]);
        let d = b.op("Div", &[s.clone(), k(std::f64::consts::SQRT_2)]);
        let e = b.op("Erf", &[d]);
        let a = b.op("Add", &[e, k(1.0)]);
        let m = b.op("Mul", &[s, a]);
        b.op("Mul", &[m, k(0.5)]);
    }),
    ("where_dummy_dq", "WhereDummyDq", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        b.pin(&qdq(0.5, 128.0));
        let d = b.op("DequantizeLinear", &[q]);
        b.pin(&qdq(0.5, 128.0));
        let w = b.op("Where", &[x(1), d, k(0.0)]);
        let q2 = b.op("QuantizeLinear", &[w]);
        b.pin(&qdq(0.5, 128.0));
        b.op("DequantizeLinear", &[q2]);
        b.pin(&qdq(0.5, 128.0));
    }),
    ("qdq_conv_float_bias", "WeightBiasQuantization", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        let d = b.op("DequantizeLinear", &[q]);
        let wd = b.op("DequantizeLinear", &[w()]);
        let c = b.op("Conv", &[d, wd, w()]);
        b.pin(&[rank(0, 4)]);
        let q2 = b.op("QuantizeLinear", &[c]);
        b.op("DequantizeLinear", &[q2]);
    }),
    ("qdq_maxpool", "QDQSelectorActionTransformer", |b| {
        let q = b.op("QuantizeLinear", &[x(0)]);
        let d = b.op("DequantizeLinear", &[q]);
        let p = b.op("MaxPool", &[d]);
        let q2 = b.op("QuantizeLinear", &[p]);
        b.op("DequantizeLinear", &[q2]);
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
