//! The torch operator surface: one row per operator (wasm-smith style). A row names the op,
//! its [`Family`] (which decides arity, shape rule and family-specific holes such as `{dim}`),
//! the element types it accepts, the type of its result, an optional domain guard on one
//! argument, and a template (see [`super::template`] for attribute holes).
//!
//! The unary and binary element-wise rows of the ONNX-side declarations
//! ([`crate::ops::unary`], [`crate::ops::binary`]) are not repeated here: [`table`] derives
//! rows from their torch forms and adds the torch-only operators.

use crate::ir::ScalarType;
use std::sync::OnceLock;

/// Element types an operator accepts for its data arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// Floating point only.
    Float,
    /// Floating point and integers (no bool).
    Numeric,
    /// Integers and bool (bitwise ops).
    IntOrBool,
    /// float32 and bfloat16: the types oneDNN prepacks CPU weights for (Inductor's
    /// freezing fusions leave float16 and float64 alone).
    Packable,
    /// Every type.
    Any,
}

impl Accept {
    /// Whether `s` is accepted.
    pub fn allows(self, s: ScalarType) -> bool {
        match self {
            Accept::Float => s.is_float(),
            Accept::Numeric => !s.is_bool(),
            Accept::IntOrBool => !s.is_float(),
            Accept::Packable => matches!(s, ScalarType::F32 | ScalarType::BF16),
            Accept::Any => true,
        }
    }
}

/// The element type of an operator's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// The first argument's type.
    Same,
    /// The first argument's type when floating, else float32.
    Float,
    /// `torch.bool`.
    Bool,
    /// `torch.int64`.
    Long,
    /// `torch.bool`, except that a uint8 argument gives uint8 (`any`, `all`).
    Truth,
    /// The promoted type of the arguments.
    Promote,
    /// The promoted type, then float32 when not floating (true division).
    PromoteFloat,
    /// Integers and bool accumulate in int64 (sum, prod, cumsum).
    Accumulate,
}

/// A guard keeping one argument inside the operator's domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Strictly positive.
    Positive,
    /// In (0, 1).
    Unit,
    /// In (-1, 1).
    Symmetric,
    /// Above 1.
    AboveOne,
    /// Non-zero, keeping integers integral.
    NonZero,
}

impl Guard {
    /// The guarded form of argument hole `hole` of type `s`.
    pub fn wrap(self, hole: &str, s: ScalarType) -> String {
        match self {
            // `% 5` first: `abs() + 1` of a uint8 255 (or an int8 -128) wraps to 0.
            Guard::Positive | Guard::NonZero if !s.is_float() => {
                format!("(torch.remainder({hole}, 5) + 1)")
            }
            Guard::Positive | Guard::NonZero => format!("({hole}.abs() + 0.5)"),
            Guard::Unit => format!("torch.sigmoid({hole})"),
            Guard::Symmetric => format!("(torch.tanh({hole}) * 0.875)"),
            Guard::AboveOne => format!("({hole}.abs() + 1.25)"),
        }
    }
}

/// How an operator's arguments are chosen and its result shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// One argument, same shape.
    Unary,
    /// Two broadcast arguments.
    Binary,
    /// Three broadcast arguments; the first a bool condition when the row accepts `Any`.
    Ternary,
    /// `{0}` cast to a drawn type (`{dtype}`).
    Cast,
    /// An in-place binary update of a fresh copy: `{1}` broadcasts to `{0}`'s shape.
    InPlace,
    /// A reduction over `{dims}` (one axis when `single`) with `{keep}`.
    Reduce {
        /// One axis only.
        single: bool,
    },
    /// A scan or normalization along `{dim}`, same shape.
    Scan,
    /// `matmul` of a rank-1..4 argument with a new weight.
    Matmul,
    /// `mm`/`addmm`: 2-d by a new weight.
    Mm,
    /// `bmm`/`baddbmm`: 3-d by a new weight.
    Bmm,
    /// `linear` with a new weight and bias.
    Linear,
    /// `einsum` over a 2-d or 3-d argument and a new weight.
    Einsum,
    /// Convolution of `dims` spatial dims; transposed when `transposed`.
    Conv {
        /// Spatial dims.
        dims: usize,
        /// `conv_transpose`.
        transposed: bool,
    },
    /// Max or average pooling with kernel, stride, padding, dilation, ceil mode.
    Pool {
        /// Spatial dims.
        dims: usize,
        /// Average (no dilation) instead of max.
        average: bool,
    },
    /// Adaptive pooling to `{size}`.
    AdaptivePool {
        /// Spatial dims.
        dims: usize,
    },
    /// `interpolate` of `dims` spatial dims (`{mode}` in the template picks the mode).
    Interpolate {
        /// Spatial dims.
        dims: usize,
    },
    /// `pad` in a drawn mode.
    Pad,
    /// Batch, instance or group normalization over channel dim 1, or layer norm.
    Norm,
    /// Basic slicing with steps and negative indices.
    Slice,
    /// `narrow`, `select`, `split`, `chunk`: a piece along one dim.
    Piece,
    /// `permute`, `transpose`, `flip`, `roll`, `tril`/`triu`: a rearrangement.
    Rearrange,
    /// `reshape`, `flatten`, `squeeze`, `unsqueeze`, `expand`, `repeat`: a new shape.
    Reshape,
    /// `cat`/`stack` of two or three same-shaped values.
    Join,
    /// `gather`, `scatter`, `index_select`, `index_put`, `masked_fill` with a new index or
    /// mask argument.
    Index,
    /// An in-place update through a view of a fresh copy, returning the copy.
    ViewWrite,
    /// Attention: the queries `{0}` (`[.., S, D]`, rank `rank`) over new keys `{1}`
    /// (`[.., L, D]`), new values `{2}` (`[.., L, E]`) and, when the template reads it, a new
    /// additive mask `{3}` (`[S, L]`); the result is `[.., S, E]`.
    Attention {
        /// The queries' rank (4: batch and heads; 3: `bmm`'s one batch dim).
        rank: usize,
    },
}

/// One operator.
#[derive(Clone, Debug)]
pub struct TorchOp {
    /// Stable name (decoder identity, signatures, capability tables).
    pub name: &'static str,
    /// Shape family.
    pub family: Family,
    /// Accepted element types of the data arguments.
    pub accept: Accept,
    /// Result type.
    pub out: Out,
    /// A guard on one argument.
    pub guard: Option<(usize, Guard)>,
    /// Template with `{k}` argument holes, attribute holes and family holes.
    pub template: &'static str,
    /// Whether the result jumps (rounding, comparison, index): used by capability tables.
    pub jumps: bool,
    /// The optimization the row is shaped to trigger: the start of the name the compiler
    /// reports it under when it fires (`pattern:NAME` for an Inductor pattern-matcher
    /// rewrite; `pattern:_sfdp_pattern_1_` covers its float32 `_inference` and its
    /// reduced-precision `_half_inference` forms; `|` separates alternatives, for a rewrite
    /// whose reduced-precision form is another pattern). Rows written after the compilers' own
    /// pattern functions; `dlcfuzz bench patterns --target torch_compile_cpu` measures how
    /// often each fires.
    pub aims: Option<&'static str>,
    /// Whether the aim fires only under freezing (`torch._inductor.config.freezing` with the
    /// rows' weights held as module parameters, which Inductor then folds as constants):
    /// the CPU's oneDNN weight prepacking and fusions, and binary folding.
    pub frozen: bool,
}

const fn row(
    name: &'static str,
    family: Family,
    accept: Accept,
    out: Out,
    template: &'static str,
) -> TorchOp {
    TorchOp {
        name,
        family,
        accept,
        out,
        guard: None,
        template,
        jumps: false,
        aims: None,
        frozen: false,
    }
}

impl TorchOp {
    const fn guard(mut self, arg: usize, guard: Guard) -> TorchOp {
        self.guard = Some((arg, guard));
        self
    }

    const fn jumps(mut self) -> TorchOp {
        self.jumps = true;
        self
    }

    const fn aims(mut self, fired: &'static str) -> TorchOp {
        self.aims = Some(fired);
        self
    }

    /// [`aims`](Self::aims) at an optimization that fires only under freezing.
    const fn aims_frozen(mut self, fired: &'static str) -> TorchOp {
        self.aims = Some(fired);
        self.frozen = true;
        self
    }

    /// Whether the fired optimization `fired` is the one the row aims at (the aim may name
    /// several starts, `|`-separated: a pattern and its reduced-precision form).
    pub fn hits(&self, fired: &str) -> bool {
        self.aims
            .is_some_and(|aim| aim.split('|').any(|start| fired.starts_with(start)))
    }
}

use Accept::{Any, Float, IntOrBool, Numeric, Packable};
use Family::*;

/// The torch-only rows.
fn torch_only() -> Vec<TorchOp> {
    let pool = |dims, average| Pool { dims, average };
    let conv = |dims, transposed| Conv { dims, transposed };
    let attention = |rank| Attention { rank };
    vec![
        // Element-wise unary.
        row("exp2", Unary, Numeric, Out::Float, "torch.exp2({0})"),
        row("expm1", Unary, Numeric, Out::Float, "torch.expm1({0})"),
        row("log2", Unary, Numeric, Out::Float, "torch.log2({0})").guard(0, Guard::Positive),
        row("log10", Unary, Numeric, Out::Float, "torch.log10({0})").guard(0, Guard::Positive),
        row("log1p", Unary, Numeric, Out::Float, "torch.log1p({0})").guard(0, Guard::Positive),
        row("rsqrt", Unary, Numeric, Out::Float, "torch.rsqrt({0})").guard(0, Guard::Positive),
        row("lgamma", Unary, Numeric, Out::Float, "torch.lgamma({0})").guard(0, Guard::Positive),
        row("digamma", Unary, Numeric, Out::Float, "torch.digamma({0})").guard(0, Guard::Positive),
        row("erfc", Unary, Numeric, Out::Float, "torch.erfc({0})"),
        row("erfinv", Unary, Numeric, Out::Float, "torch.erfinv({0})").guard(0, Guard::Symmetric),
        row("logit", Unary, Numeric, Out::Float, "torch.logit({0})").guard(0, Guard::Unit),
        row("sinc", Unary, Numeric, Out::Float, "torch.sinc({0})"),
        row("deg2rad", Unary, Numeric, Out::Float, "torch.deg2rad({0})"),
        row("gelu", Unary, Float, Out::Same, "torch.nn.functional.gelu({0}, approximate='{c:none|tanh}')"),
        row("silu", Unary, Float, Out::Same, "torch.nn.functional.silu({0})"),
        row("mish", Unary, Float, Out::Same, "torch.nn.functional.mish({0})"),
        row("hardswish", Unary, Float, Out::Same, "torch.nn.functional.hardswish({0})"),
        row("hardsigmoid", Unary, Float, Out::Same, "torch.nn.functional.hardsigmoid({0})"),
        row("hardtanh", Unary, Float, Out::Same, "torch.nn.functional.hardtanh({0}, {f:-2:-0.5}, {f:0.5:2})"),
        row("relu6", Unary, Float, Out::Same, "torch.nn.functional.relu6({0})"),
        row("elu", Unary, Float, Out::Same, "torch.nn.functional.elu({0}, alpha={f:0.25:2})"),
        row("celu", Unary, Float, Out::Same, "torch.nn.functional.celu({0}, alpha={f:0.25:2})"),
        row("softplus_beta", Unary, Float, Out::Same, "torch.nn.functional.softplus({0}, beta={f:0.5:3}, threshold={f:1:20})"),
        row("logsigmoid", Unary, Float, Out::Same, "torch.nn.functional.logsigmoid({0})"),
        row("tanhshrink", Unary, Float, Out::Same, "torch.nn.functional.tanhshrink({0})"),
        row("hardshrink", Unary, Float, Out::Same, "torch.nn.functional.hardshrink({0}, {f:0.125:1})").jumps(),
        row("softshrink", Unary, Float, Out::Same, "torch.nn.functional.softshrink({0}, {f:0.125:1})"),
        row("leaky_relu", Unary, Float, Out::Same, "torch.nn.functional.leaky_relu({0}, {f:0:0.5})"),
        row("frac", Unary, Float, Out::Same, "torch.frac({0})").jumps(),
        row("nan_to_num", Unary, Float, Out::Same, "torch.nan_to_num({0}, nan={f:-1:1})"),
        row("round_decimals", Unary, Float, Out::Same, "torch.round({0}, decimals={i:1:2})").jumps(),
        row("square", Unary, Numeric, Out::Same, "torch.square({0})"),
        row("signbit", Unary, Numeric, Out::Bool, "torch.signbit({0})").jumps(),
        row("logical_not", Unary, Any, Out::Bool, "torch.logical_not({0})").jumps(),
        row("bitwise_not", Unary, IntOrBool, Out::Same, "torch.bitwise_not({0})"),
        row("clamp_min", Unary, Numeric, Out::Same, "torch.clamp_min({0}, {i:0:1})"),
        row("relu_int", Unary, Numeric, Out::Same, "torch.relu({0})"),
        row("abs_int", Unary, Numeric, Out::Same, "torch.abs({0})"),
        row("neg_int", Unary, Numeric, Out::Same, "torch.neg({0})"),
        row("sign_int", Unary, Numeric, Out::Same, "torch.sign({0})").jumps(),
        // Element-wise binary and ternary.
        row("div_floor", Binary, Numeric, Out::Promote, "torch.div({0}, {1}, rounding_mode='floor')").guard(1, Guard::NonZero).jumps(),
        row("div_trunc", Binary, Numeric, Out::Promote, "torch.div({0}, {1}, rounding_mode='trunc')").guard(1, Guard::NonZero).jumps(),
        row("floor_divide", Binary, Numeric, Out::Promote, "torch.floor_divide({0}, {1})").guard(1, Guard::NonZero).jumps(),
        row("remainder", Binary, Numeric, Out::Promote, "torch.remainder({0}, {1})").guard(1, Guard::NonZero).jumps(),
        row("fmod", Binary, Numeric, Out::Promote, "torch.fmod({0}, {1})").guard(1, Guard::NonZero).jumps(),
        row("true_divide", Binary, Numeric, Out::PromoteFloat, "torch.true_divide({0}, {1})").guard(1, Guard::NonZero),
        row("fmax", Binary, Float, Out::Promote, "torch.fmax({0}, {1})"),
        row("fmin", Binary, Float, Out::Promote, "torch.fmin({0}, {1})"),
        row("atan2", Binary, Float, Out::Promote, "torch.atan2({0}, {1})").jumps(),
        row("hypot", Binary, Float, Out::Promote, "torch.hypot({0}, {1})"),
        row("copysign", Binary, Float, Out::Promote, "torch.copysign({0}, {1})").jumps(),
        row("xlogy", Binary, Float, Out::Promote, "torch.xlogy({0}, {1})").guard(1, Guard::Positive),
        row("mul_bool", Binary, Any, Out::Promote, "torch.mul({0}, {1})"),
        row("add_alpha", Binary, Numeric, Out::Promote, "torch.add({0}, {1}, alpha={i:2:3})"),
        row("pow_scalar", Unary, Float, Out::Same, "torch.pow({0}, {f:-2:3})").guard(0, Guard::Positive),
        row("ne", Binary, Any, Out::Bool, "torch.ne({0}, {1})").jumps(),
        row("lerp", Binary, Float, Out::Same, "torch.lerp({0}, {1}.to({0}.dtype), {f:0:1})"),
        row("where", Ternary, Any, Out::Promote, "torch.where({0}, {1}, {2})"),
        row("addcmul", Ternary, Float, Out::Promote, "torch.addcmul({0}, {1}, {2}, value={f:-1:1})"),
        row("addcdiv", Ternary, Float, Out::Promote, "torch.addcdiv({0}, {1}, {2}, value={f:-1:1})").guard(2, Guard::NonZero),
        row("clamp_tensor", Ternary, Float, Out::Promote, "torch.clamp({0}, {1}, {2})"),
        // Casts and in-place updates.
        row("to", Cast, Any, Out::Same, "{0}.to({dtype})").jumps(),
        row("add_", InPlace, Numeric, Out::Same, "{0}.clone().add_({1})"),
        row("mul_", InPlace, Numeric, Out::Same, "{0}.clone().mul_({1})"),
        row("clamp_", Unary, Float, Out::Same, "{0}.clone().clamp_({f:-2:0}, {f:0.5:2})"),
        row("relu_", Unary, Numeric, Out::Same, "{0}.clone().relu_()"),
        row("sigmoid_", Unary, Float, Out::Same, "{0}.clone().sigmoid_()"),
        row("view_write", ViewWrite, Numeric, Out::Same, "(lambda t: (t{view}.mul_({i:2:3}), t)[1])({0}.clone())"),
        // Reductions and scans.
        row("sum_dims", Reduce { single: false }, Any, Out::Accumulate, "torch.sum({0}, {dims}, keepdim={keep})"),
        row("mean_dims", Reduce { single: false }, Float, Out::Same, "torch.mean({0}, {dims}, keepdim={keep})"),
        row("prod", Reduce { single: true }, Numeric, Out::Accumulate, "torch.prod({0}, {dims}, keepdim={keep})"),
        row("amax", Reduce { single: false }, Numeric, Out::Same, "torch.amax({0}, {dims}, keepdim={keep})"),
        row("amin", Reduce { single: false }, Numeric, Out::Same, "torch.amin({0}, {dims}, keepdim={keep})"),
        row("max_values", Reduce { single: true }, Numeric, Out::Same, "torch.max({0}, {dims}, keepdim={keep}).values"),
        row("max_indices", Reduce { single: true }, Numeric, Out::Long, "torch.max({0}, {dims}, keepdim={keep}).indices").jumps(),
        row("min_values", Reduce { single: true }, Numeric, Out::Same, "torch.min({0}, {dims}, keepdim={keep}).values"),
        row("min_indices", Reduce { single: true }, Numeric, Out::Long, "torch.min({0}, {dims}, keepdim={keep}).indices").jumps(),
        row("argmax", Reduce { single: true }, Numeric, Out::Long, "torch.argmax({0}, {dims}, keepdim={keep})").jumps(),
        row("argmin", Reduce { single: true }, Numeric, Out::Long, "torch.argmin({0}, {dims}, keepdim={keep})").jumps(),
        row("logsumexp", Reduce { single: false }, Float, Out::Same, "torch.logsumexp({0}, {dims}, keepdim={keep})"),
        row("var", Reduce { single: false }, Float, Out::Same, "torch.var({0}, {dims}, correction={i:0:1}, keepdim={keep})"),
        row("std", Reduce { single: false }, Float, Out::Same, "torch.std({0}, {dims}, correction=0, keepdim={keep})"),
        row("any", Reduce { single: true }, Any, Out::Truth, "torch.any({0}, {dims}, keepdim={keep})").jumps(),
        row("all", Reduce { single: true }, Any, Out::Truth, "torch.all({0}, {dims}, keepdim={keep})").jumps(),
        row("vector_norm", Reduce { single: false }, Float, Out::Same, "torch.linalg.vector_norm({0}, {c:1|2|3}, {dims}, keepdim={keep})"),
        row("count_nonzero", Reduce { single: false }, Any, Out::Long, "torch.count_nonzero({0}, {dims})").jumps(),
        row("cumsum", Scan, Any, Out::Accumulate, "torch.cumsum({0}, {dim})"),
        row("cumprod", Scan, Numeric, Out::Accumulate, "torch.cumprod({0}, {dim})"),
        row("cummax", Scan, Numeric, Out::Same, "torch.cummax({0}, {dim}).values"),
        row("logcumsumexp", Scan, Float, Out::Same, "torch.logcumsumexp({0}, {dim})"),
        row("softmax_dim", Scan, Float, Out::Same, "torch.softmax({0}, {dim})"),
        row("log_softmax", Scan, Float, Out::Same, "torch.log_softmax({0}, {dim})"),
        row("normalize", Scan, Float, Out::Same, "torch.nn.functional.normalize({0}, p={c:1.0|2.0}, dim={dim})"),
        // Linear algebra.
        row("matmul_w", Matmul, Float, Out::Same, "torch.matmul({0}, {1})"),
        row("mm", Mm, Float, Out::Same, "torch.mm({0}, {1})"),
        row("addmm", Mm, Float, Out::Same, "torch.addmm({2}, {0}, {1}, beta={f:0:1}, alpha={f:0.5:1.5})"),
        row("bmm", Bmm, Float, Out::Same, "torch.bmm({0}, {1})"),
        row("baddbmm", Bmm, Float, Out::Same, "torch.baddbmm({2}, {0}, {1}, beta={f:0:1}, alpha={f:0.5:1.5})"),
        row("linear", Linear, Float, Out::Same, "torch.nn.functional.linear({0}, {1}, {2})"),
        row("einsum", Einsum, Float, Out::Same, "torch.einsum('{equation}', {0}, {1})"),
        // Convolution, pooling, resampling, padding, normalization.
        row("conv1d", conv(1, false), Float, Out::Same, "torch.nn.functional.conv1d({0}, {1}, {2}, {conv})"),
        row("conv2d", conv(2, false), Float, Out::Same, "torch.nn.functional.conv2d({0}, {1}, {2}, {conv})"),
        row("conv3d", conv(3, false), Float, Out::Same, "torch.nn.functional.conv3d({0}, {1}, {2}, {conv})"),
        row("conv_transpose1d", conv(1, true), Float, Out::Same, "torch.nn.functional.conv_transpose1d({0}, {1}, {2}, {conv})"),
        row("conv_transpose2d", conv(2, true), Float, Out::Same, "torch.nn.functional.conv_transpose2d({0}, {1}, {2}, {conv})"),
        row("max_pool1d", pool(1, false), Float, Out::Same, "torch.nn.functional.max_pool1d({0}, {pool})"),
        row("max_pool2d", pool(2, false), Float, Out::Same, "torch.nn.functional.max_pool2d({0}, {pool})"),
        row("avg_pool1d", pool(1, true), Float, Out::Same, "torch.nn.functional.avg_pool1d({0}, {pool}, count_include_pad={c:True|False})"),
        row("avg_pool2d", pool(2, true), Float, Out::Same, "torch.nn.functional.avg_pool2d({0}, {pool}, count_include_pad={c:True|False})"),
        row("adaptive_avg_pool1d", AdaptivePool { dims: 1 }, Float, Out::Same, "torch.nn.functional.adaptive_avg_pool1d({0}, {size})"),
        row("adaptive_avg_pool2d", AdaptivePool { dims: 2 }, Float, Out::Same, "torch.nn.functional.adaptive_avg_pool2d({0}, {size})"),
        row("adaptive_max_pool2d", AdaptivePool { dims: 2 }, Float, Out::Same, "torch.nn.functional.adaptive_max_pool2d({0}, {size})"),
        row("interpolate1d", Interpolate { dims: 1 }, Float, Out::Same, "torch.nn.functional.interpolate({0}, {resize})"),
        row("interpolate2d", Interpolate { dims: 2 }, Float, Out::Same, "torch.nn.functional.interpolate({0}, {resize})"),
        row("pad", Pad, Numeric, Out::Same, "torch.nn.functional.pad({0}, {pad})"),
        row("batch_norm", Norm, Float, Out::Same, "torch.nn.functional.batch_norm({0}, {3}.detach(), {4}.detach(), {1}, {2}, False, 0.1, {f:0.001:0.5})"),
        row("instance_norm", Norm, Float, Out::Same, "torch.nn.functional.instance_norm({0}, weight={1}, bias={2}, eps={f:0.001:0.5})"),
        row("group_norm", Norm, Float, Out::Same, "torch.nn.functional.group_norm({0}, {groups}, {1}, {2}, eps={f:0.001:0.5})"),
        row("layer_norm", Norm, Float, Out::Same, "torch.nn.functional.layer_norm({0}, {normalized}, {1}, {2}, eps={f:0.001:0.5})"),
        // Views, layout and indexing.
        row("slice", Slice, Any, Out::Same, "{0}[{slices}]"),
        row("narrow", Piece, Any, Out::Same, "torch.narrow({0}, {dim}, {start}, {length})"),
        row("select", Piece, Any, Out::Same, "torch.select({0}, {dim}, {index})"),
        row("split", Piece, Any, Out::Same, "torch.split({0}, {length}, {dim})[{part}]"),
        row("chunk", Piece, Any, Out::Same, "torch.chunk({0}, {chunks}, {dim})[{part}]"),
        row("permute", Rearrange, Any, Out::Same, "torch.permute({0}, {perm})"),
        row("transpose", Rearrange, Any, Out::Same, "torch.transpose({0}, {dim}, {dim2})"),
        row("flip", Rearrange, Any, Out::Same, "torch.flip({0}, {dims})"),
        row("roll", Rearrange, Any, Out::Same, "torch.roll({0}, {shifts}, {dims})"),
        row("tril", Rearrange, Any, Out::Same, "torch.tril({0}, {i:-1:1})"),
        row("triu", Rearrange, Any, Out::Same, "torch.triu({0}, {i:-1:1})"),
        row("reshape", Reshape, Any, Out::Same, "torch.reshape({0}, {shape})"),
        row("view", Reshape, Any, Out::Same, "{0}.contiguous().view({shape})"),
        row("flatten", Reshape, Any, Out::Same, "torch.flatten({0}, {start}, {end})"),
        row("squeeze", Reshape, Any, Out::Same, "torch.squeeze({0}, {dim})"),
        row("unsqueeze", Reshape, Any, Out::Same, "torch.unsqueeze({0}, {dim})"),
        row("expand", Reshape, Any, Out::Same, "{0}.expand({shape})"),
        row("repeat", Reshape, Any, Out::Same, "{0}.repeat({reps})"),
        row("cat", Join, Any, Out::Promote, "torch.cat([{args}], {dim})"),
        row("stack", Join, Any, Out::Promote, "torch.stack([{args}], {dim})"),
        row("gather", Index, Any, Out::Same, "torch.gather({0}, {dim}, {1})"),
        row("scatter", Index, Any, Out::Same, "torch.scatter({0}, {dim}, {1}, {2})"),
        row("scatter_add", Index, Numeric, Out::Same, "torch.scatter_add({0}, {dim}, {1}, {2})"),
        row("index_select", Index, Any, Out::Same, "torch.index_select({0}, {dim}, {1})"),
        row("index_put", Index, Any, Out::Same, "{0}.index_put(({1},), {2})"),
        row("masked_fill", Index, Numeric, Out::Same, "{0}.masked_fill({1}, {i:0:2})"),
        // Attention.
        row("scaled_dot_product_attention", attention(4), Float, Out::Same, "torch.nn.functional.scaled_dot_product_attention({0}, {1}, {2}, is_causal={c:False|True})"),
        // Shaped like what Inductor's pattern matcher rewrites (torch/_inductor/fx_passes:
        // fuse_attention's `_sfdp_pattern_N`, the joint-graph and post-grad rewrites), each
        // aiming at the rewrite a hand probe on torch 2.15 fired (docs/inductor-patterns.md).
        row("sdpa_divided", attention(4), Float, Out::Same, "torch.matmul(torch.softmax(torch.matmul({0}, {1}.transpose(-2, -1)) / {f:0.5:4}, dim=-1), {2})").aims("pattern:_sfdp_pattern_1_"),
        row("sdpa_scaled", attention(4), Float, Out::Same, "torch.matmul({0}, {1}.transpose(-2, -1)).mul({f:0.125:1}).softmax(dim=-1).matmul({2})").aims("pattern:_sfdp_pattern_2_"),
        row("sdpa_masked", attention(4), Float, Out::Same, "torch.softmax(torch.matmul({0}, {1}.transpose(-2, -1)) / {f:0.5:4} + {3}, dim=-1) @ {2}").aims("pattern:_sfdp_pattern_5_"),
        row("sdpa_bmm", attention(3), Float, Out::Same, "torch.bmm(torch.bmm({0}, {1}.transpose(1, 2)).softmax(dim=-1), {2})").aims("pattern:_sfdp_pattern_13_"),
        row("sdpa_upcast", attention(4), Float, Out::Same, "torch.matmul(torch.softmax(torch.matmul({0}, {1}.transpose(-2, -1)).div({f:0.5:4}).float(), dim=-1).to({0}.dtype), {2})").aims("pattern:_sfdp_pattern_1_"),
        // Queries, keys and values laid out `[B, S, H, D]` and permuted to heads first
        // (patterns 11 and 14; bfloat16 and float16 programs fire 12's `_half` form): where the
        // permutes move only size-1 dims Inductor makes them views, and patterns 1 and 5 fuse
        // the same attention instead.
        row("sdpa_permuted", attention(4), Float, Out::Same, "torch.matmul({0}.transpose(1, 2).contiguous().permute(0, 2, 1, 3), {1}.transpose(1, 2).contiguous().permute(0, 2, 1, 3).transpose(-2, -1)).div({f:0.5:4}).softmax(dim=-1).matmul({2}.transpose(1, 2).contiguous().permute(0, 2, 1, 3))").aims("pattern:_sfdp_pattern_11_|pattern:_sfdp_pattern_12_half|pattern:_sfdp_pattern_1_"),
        row("sdpa_permuted_masked", attention(4), Float, Out::Same, "(torch.matmul({0}.transpose(1, 2).contiguous().permute(0, 2, 1, 3), {1}.transpose(1, 2).contiguous().permute(0, 2, 1, 3).transpose(-2, -1)).div({f:0.5:4}) + {3}).softmax(dim=-1).matmul({2}.transpose(1, 2).contiguous().permute(0, 2, 1, 3))").aims("pattern:_sfdp_pattern_14_|pattern:_sfdp_pattern_5_"),
        row("softmax_scaled", Scan, Float, Out::Same, "torch.softmax({0} * {f:0.25:4}, {dim})").aims("pattern:CallFunction_aten.sub.Tensor"),
        row("softmax_divided", Scan, Float, Out::Same, "torch.softmax({0} / {f:0.25:4}, {dim})").aims("pattern:CallFunction_aten.sub.Tensor"),
        row("cumsum_of_full", Scan, Float, Out::Same, "(torch.full({0}.shape, {f:-2:2}, dtype={0}.dtype).cumsum({dim}) + {0})").aims("pattern:CallFunction_aten.cumsum.default"),
        row("convert_round_trip", Unary, Float, Out::Same, "{0}.to(torch.float64).to({0}.dtype)").aims("pattern:CallFunction_prims.convert_element_type.default"),
        row("split_cat", Scan, Any, Out::Same, "torch.cat(torch.split({0}, [{0}.shape[{dim}] // 2, {0}.shape[{dim}] - {0}.shape[{dim}] // 2], {dim}), {dim})").aims("pattern:CallFunction_aten.cat.default"),
        row("view_round_trip", Unary, Any, Out::Same, "{0}.contiguous().view(-1).view({0}.shape)").aims("inductor:removed_pointless_view_pair"),
        row("mm_plus_mm", Mm, Float, Out::Same, "(torch.mm({0}, {1}) + torch.mm({0}.flip(1), {1}))").aims("pattern:CallFunction_aten.add.Tensor"),
        row("mm_bias", Mm, Float, Out::Same, "(torch.mm({0}, {1}) + {2})").aims("pattern:CallFunction_aten.add.Tensor"),
        row("mm_int8_weight", Mm, Float, Out::Same, "(torch.mm({0}, ({1} * 8).clamp(-127, 127).to(torch.int8).to({0}.dtype)) * {2})").aims("pattern:CallFunction_prims.convert_element_type.default"),
        row("mm_uint8_weight", Mm, Float, Out::Same, "torch.mm({0}, ({1}.abs() * 8).clamp(max=255).to(torch.uint8).to({0}.dtype))").aims("pattern:CallFunction_prims.convert_element_type.default"),
        row("bmm_transposed", Bmm, Float, Out::Same, "torch.bmm({1}.transpose(1, 2), {0}.transpose(1, 2)).transpose(1, 2)").aims("pattern:CallFunction_aten.bmm.default"),
        // Shaped like the freezing passes' patterns (fx_passes/mkldnn_fusion.py's unary and
        // binary fusions, binary_folding.py), written after test_mkldnn_pattern_matcher.py's
        // modules: they fire only on frozen weights.
        row("conv2d_pointwise", conv(2, false), Packable, Out::Same, "{c:torch.relu|torch.sigmoid|torch.tanh|torch.nn.functional.silu|torch.nn.functional.hardswish|torch.nn.functional.gelu|torch.nn.functional.relu6|torch.nn.functional.leaky_relu}(torch.nn.functional.conv2d({0}, {1}, {2}, {conv}))").aims_frozen("inductor:mkldnn_unary_fusion"),
        row("conv3d_pointwise", conv(3, false), Packable, Out::Same, "{c:torch.relu|torch.sigmoid|torch.nn.functional.hardswish|torch.nn.functional.gelu}(torch.nn.functional.conv3d({0}, {1}, {2}, {conv}))").aims_frozen("inductor:mkldnn_unary_fusion"),
        row("conv_transpose2d_pointwise", conv(2, true), Packable, Out::Same, "{c:torch.relu|torch.sigmoid|torch.tanh|torch.nn.functional.hardswish}(torch.nn.functional.conv_transpose2d({0}, {1}, {2}, {conv}))").aims_frozen("inductor:mkldnn_unary_fusion"),
        row("conv2d_sum", conv(2, false), Packable, Out::Same, "{c:torch.relu|torch.nn.functional.silu|torch.clone}(torch.nn.functional.conv2d({0}, {1}, {2}, {conv}) + torch.nn.functional.conv2d({0}, {1}.flip(0), None, {conv}))").aims_frozen("inductor:mkldnn_conv_binary_unary_fusion"),
        row("linear_pointwise", Linear, Packable, Out::Same, "{c:torch.relu|torch.sigmoid|torch.tanh|torch.nn.functional.gelu|torch.nn.functional.silu}(torch.nn.functional.linear({0}, {1}, {2}))").aims_frozen("inductor:mkldnn_linear_weight_pack"),
        row("conv2d_affine", conv(2, false), Packable, Out::Same, "(torch.nn.functional.conv2d({0}, {1}, {2}, {conv}) {c:*|/} {f:0.25:2} {c:+|-} {f:-1:1})").aims_frozen("inductor:binary_folding_conv"),
        row("conv2d_batch_norm", conv(2, false), Packable, Out::Same, "torch.nn.functional.batch_norm(torch.nn.functional.conv2d({0}, {1}, {2}, {conv}), {2}.flip(0).detach(), ({2}.abs() + {f:0.5:2}).detach(), {2}.cos(), {2}.sin(), False, 0.1, {f:0.001:0.5})").aims_frozen("inductor:binary_folding_conv"),
        row("conv2d_channel_affine", conv(2, false), Packable, Out::Same, "(torch.nn.functional.conv2d({0}, {1}, {2}, {conv}) {c:*|+|-} {2}.view(1, -1, 1, 1).sigmoid())").aims_frozen("inductor:binary_folding_conv"),
    ]
}

/// The derived element-wise rows: every ONNX-side unary and binary declaration with a torch
/// form, as a float op (its ONNX types are float here).
fn derived() -> Vec<TorchOp> {
    use crate::ops::unary::Domain;
    let unary = crate::ops::unary::table().iter().filter_map(|u| {
        let torch = u.torch?;
        // A drawn float attribute becomes an attribute hole over its range; the others keep
        // their ONNX defaults.
        let template = u.floats.iter().fold(torch.replace("{x}", "{0}"), |t, a| {
            let value = match a.range {
                Some((lo, hi)) => format!("{{f:{lo}:{hi}}}"),
                None => format!("{:?}", a.default),
            };
            t.replace(&format!("{{{}}}", a.name), &value)
        });
        let guard = u.domain.map(|d| match d {
            Domain::Positive => Guard::Positive,
            Domain::NonZero => Guard::NonZero,
            Domain::Symmetric => Guard::Symmetric,
            Domain::AboveOne => Guard::AboveOne,
        });
        Some(TorchOp {
            name: u.name,
            family: Unary,
            accept: Float,
            out: Out::Same,
            guard: guard.map(|g| (0, g)),
            template: Box::leak(template.into_boxed_str()),
            jumps: u.jumps.is_some(),
            aims: None,
            frozen: false,
        })
    });
    let binary = crate::ops::binary::table().iter().filter_map(|b| {
        let torch = b.torch?;
        let template = torch.replace("{a}", "{0}").replace("{b}", "{1}");
        use crate::ops::binary::Types;
        let (accept, out) = match b.types {
            Types::Compare => (Numeric, Out::Bool),
            Types::Equality | Types::Logical => (Any, Out::Bool),
            Types::Bitwise | Types::Unsigned => (IntOrBool, Out::Promote),
            Types::Numeric if b.torch_true_division => (Numeric, Out::PromoteFloat),
            Types::Numeric => (Numeric, Out::Promote),
            Types::Float => (Float, Out::Promote),
        };
        Some(TorchOp {
            name: b.name,
            family: Binary,
            accept,
            out,
            guard: b.divisor.then_some((1, Guard::NonZero)),
            template: Box::leak(template.into_boxed_str()),
            jumps: out == Out::Bool,
            aims: None,
            frozen: false,
        })
    });
    unary.chain(binary).collect()
}

/// Every row: derived element-wise rows, then torch-only rows.
pub fn table() -> &'static [TorchOp] {
    static TABLE: OnceLock<Vec<TorchOp>> = OnceLock::new();
    TABLE.get_or_init(|| derived().into_iter().chain(torch_only()).collect())
}

/// The row called `name`.
pub fn by_name(name: &str) -> Option<&'static TorchOp> {
    table().iter().find(|o| o.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_are_unique_and_the_surface_has_over_a_hundred_ops() {
        let names: BTreeSet<&str> = table().iter().map(|o| o.name).collect();
        assert_eq!(names.len(), table().len(), "duplicate row names");
        assert!(table().len() >= 100, "{} rows", table().len());
    }

    #[test]
    fn templates_name_only_their_arguments() {
        for op in table() {
            assert!(
                op.template.contains("{0}") || op.template.contains("{args}"),
                "{}",
                op.name
            );
        }
    }
}
