//! Operator specifications, one family per file.
//!
//! A spec states, as in NNSmith: its dtype signatures ([`OpSpec::sigs`]), the input ranks it
//! takes ([`OpSpec::input_ranks`]), how attributes are chosen ([`OpSpec::attrs`]: discrete
//! choices from the bytes, numeric ones as solver variables), its `requires` over symbolic
//! shapes and attributes, its `type_transfer` to output shapes, and `infer_input_types` (the
//! input ranks that produce a wanted output rank, for backward insertion). It also carries
//! what every later stage asks of it: its evaluation on the reference ([`OpSpec::evaluate`],
//! required: a spec without one does not build), its rounding class, where it is finite and
//! how a value search steps through it, its torch form, and its fragility rules (where it
//! jumps, what the specification leaves undefined or open: [`fragility`]). [`eval`] holds what evaluations
//! read ([`eval::Args`]), [`apply`] the one-node entry point; [`carrier`] the dtype ↔ libtorch
//! carrier conversions.

pub mod accumulation;
pub mod apply;
pub mod binary;
pub mod carrier;
pub mod conv;
pub mod eval;
pub mod fragility;
pub mod layout;
pub mod legacy;
pub mod matmul;
pub mod misc;
pub mod norm;
pub mod numeric;
pub mod op_type;
pub mod pattern_roles;
pub mod quant;
pub mod reduce;
pub mod resize;
pub mod retype;
pub mod slicing;
pub mod torch_form;
pub mod unary;
pub mod validity;

pub use op_type::OpType;

pub use crate::ir::attrs::{
    AttrValue, Attrs, ConcreteAttrs, ConstInput, Sig, SpecId, DEFAULT_CLASS,
};
use crate::ir::graph::OpNode;
use crate::ir::DType;
use crate::sym::vars::VarTable;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::ops::RangeInclusive;
use std::sync::OnceLock;

/// Highest tensor rank the generator produces.
pub const MAX_RANK: usize = 4;

/// A symbolic tensor type: dtype plus symbolic dimensions.
#[derive(Clone, Debug)]
pub struct SymTensor {
    /// Element type.
    pub dtype: DType,
    /// Dimensions (constants for existing tensors, variables for new placeholders).
    pub dims: Vec<Int>,
}

impl SymTensor {
    /// The rank.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
}

/// `uniform(t, n)` for each `t` of `types`.
pub fn uniform_sigs(types: &[DType], n: usize) -> Vec<Sig> {
    types.iter().map(|t| Sig::uniform(*t, n)).collect()
}

/// `uniform(t, n)` for each `t` of `types` and each `n` of `arities` (ops with optional
/// trailing data inputs).
pub fn uniform_sigs_with_arities(types: &[DType], arities: &[usize]) -> Vec<Sig> {
    types
        .iter()
        .flat_map(|t| arities.iter().map(move |n| Sig::uniform(*t, *n)))
        .collect()
}

/// Symbolic attributes, as built by [`OpSpec::attrs`].
pub type SymAttrs = Attrs<Int>;

impl SymAttrs {
    /// Substitutes a solver assignment; `None` if some expression is undefined there.
    pub fn concretize(&self, env: &[i64]) -> Option<ConcreteAttrs> {
        let ints = |v: &[Int]| v.iter().map(|e| e.eval(env)).collect::<Option<Vec<i64>>>();
        let named = self
            .named
            .iter()
            .map(|(n, v)| {
                let v = match v {
                    AttrValue::Int(e) => AttrValue::Int(e.eval(env)?),
                    AttrValue::Ints(es) => AttrValue::Ints(ints(es)?),
                    AttrValue::Float(f) => AttrValue::Float(*f),
                    AttrValue::Str(s) => AttrValue::Str(s.clone()),
                };
                Some((n.clone(), v))
            })
            .collect::<Option<Vec<_>>>()?;
        let consts = self
            .consts
            .iter()
            .map(|c| {
                Some(match c {
                    ConstInput::Ints(es) => ConstInput::Ints(ints(es)?),
                    ConstInput::Floats(f) => ConstInput::Floats(f.clone()),
                    ConstInput::Scalar(d, v) => ConstInput::Scalar(*d, *v),
                    ConstInput::Indices { shape, bound, seed } => ConstInput::Indices {
                        shape: ints(shape)?,
                        bound: bound.eval(env)?,
                        seed: *seed,
                    },
                    ConstInput::Absent => ConstInput::Absent,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Attrs {
            class: self.class.clone(),
            named,
            consts,
        })
    }
}

/// The range of values a fresh placeholder feeding an input must take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDomain {
    /// Any value in the default safe range.
    Any,
    /// Strictly positive values (variances, integer divisors...).
    Positive,
}

/// What [`OpSpec::attrs`] draws from: the bytes of this insertion, its variables, and the
/// chosen signature and class.
pub struct AttrCx<'a, 'b> {
    /// Bytes of this insertion step.
    pub u: &'a mut Unstructured<'b>,
    /// Free variables of this insertion.
    pub vars: &'a mut VarTable,
    /// The chosen dtype signature.
    pub sig: &'a Sig,
    /// The chosen attribute class.
    pub class: &'a str,
    /// Wanted rank of output 0 in backward insertion; `None` in forward insertion.
    pub out_rank: Option<usize>,
}

impl AttrCx<'_, '_> {
    /// A symbolic integer attribute in `[lo, hi]`, hinted from the bytes.
    pub fn var(&mut self, name: &str, lo: i64, hi: i64) -> Int {
        self.vars.fresh(name, lo, hi, self.u)
    }

    /// A discrete choice in `[lo, hi]`, made now from the bytes.
    pub fn pick(&mut self, lo: i64, hi: i64) -> i64 {
        self.u.int_in_range(lo..=hi.max(lo)).unwrap_or(lo)
    }

    /// A coin flip from the bytes.
    pub fn flip(&mut self) -> bool {
        self.u.arbitrary::<bool>().unwrap_or(false)
    }

    /// A float in `[lo, hi]` on a grid of 1/16, from the bytes.
    pub fn float(&mut self, lo: f32, hi: f32) -> f32 {
        let steps = ((hi - lo) * 16.0) as i64;
        lo + self.pick(0, steps) as f32 / 16.0
    }

    /// An axis of a tensor of rank `rank`, from the bytes; negative half of the time when
    /// `allow_negative`.
    pub fn axis(&mut self, rank: usize, allow_negative: bool) -> i64 {
        let a = self.pick(0, rank.max(1) as i64 - 1);
        if allow_negative && self.flip() {
            a - rank as i64
        } else {
            a
        }
    }

    /// A non-empty sorted subset of `0..rank` (empty when `rank == 0`).
    pub fn axes_subset(&mut self, rank: usize) -> Vec<usize> {
        let mask = self.pick(1, (1i64 << rank.max(1)) - 1);
        (0..rank).filter(|i| mask & (1 << i) != 0).collect()
    }

    /// A permutation of `0..n` from the bytes.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut items: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.pick(0, i as i64) as usize;
            items.swap(i, j);
        }
        items
    }

    /// A seed for index tensors and the like.
    pub fn seed(&mut self) -> u64 {
        self.u.arbitrary::<u64>().unwrap_or(0)
    }
}

/// How far an operator's kernels may stray from the exact result by rounding alone, as the
/// precision analysis ([`crate::reference::precision`]) and the fragility walk read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundingClass {
    /// One rounding of the exact result, or none (copies, comparisons, casts, max and min).
    Correct,
    /// An elementary function: kernels are good to a few ulp, not correctly rounded.
    Elementary,
    /// Accumulates many terms in an order (and width) of the kernel's choosing: each term
    /// may carry its own rounding, and an integer accumulation may leave its type's range.
    Accumulating,
    /// An elementary function over an accumulation (softmax, log-sum-exp, the norms).
    ElementaryAccumulating,
}

impl RoundingClass {
    /// Whether kernels are only good to a few ulp.
    pub fn elementary(self) -> bool {
        matches!(
            self,
            RoundingClass::Elementary | RoundingClass::ElementaryAccumulating
        )
    }

    /// Whether kernels accumulate many terms.
    pub fn accumulates(self) -> bool {
        matches!(
            self,
            RoundingClass::Accumulating | RoundingClass::ElementaryAccumulating
        )
    }
}

/// An operator specification. See the module docs.
pub trait OpSpec: Send + Sync {
    /// Unique name of the spec (the ONNX op type unless [`OpSpec::op_type`] says otherwise).
    fn name(&self) -> &'static str;

    /// The ONNX op type emitted.
    fn op_type(&self) -> &'static str {
        self.name()
    }

    /// Every dtype signature the ONNX schema allows. Capability probing narrows these per
    /// backend.
    fn sigs(&self) -> Vec<Sig>;

    /// Discrete attribute classes, probed separately (modes and the like).
    fn classes(&self) -> Vec<&'static str> {
        vec![DEFAULT_CLASS]
    }

    /// Accepted rank of each data input.
    fn input_ranks(&self, sig: &Sig) -> Vec<RangeInclusive<usize>> {
        vec![0..=MAX_RANK; sig.inputs.len()]
    }

    /// Input ranks that can produce output 0 of rank `out_rank` (backward insertion); `None`
    /// when no input ranks can. By default (an op that keeps its inputs' rank): `out_rank`
    /// for every input, when [`OpSpec::input_ranks`] allows it.
    fn infer_input_types(
        &self,
        sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        let _ = u;
        let allowed = self.input_ranks(sig);
        allowed
            .iter()
            .all(|r| r.contains(&out_rank))
            .then(|| vec![out_rank; sig.inputs.len()])
    }

    /// Values a fresh placeholder feeding each input must take.
    fn input_domains(&self, sig: &Sig) -> Vec<ValueDomain> {
        vec![ValueDomain::Any; sig.inputs.len()]
    }

    /// Chooses attributes for inputs of the given types.
    fn attrs(&self, cx: &mut AttrCx, inputs: &[SymTensor]) -> SymAttrs {
        let _ = (cx, inputs);
        SymAttrs::default()
    }

    /// Constraints that must hold for the op to be well defined.
    fn requires(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool>;

    /// The output shapes (dtypes come from the signature).
    fn type_transfer(&self, attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>>;

    /// How its kernels may round (no default: every operator states it).
    fn rounding(&self) -> RoundingClass;

    /// Where its outputs are finite, when not for every input: the value search's loss and
    /// its structural repair read it.
    fn finite(&self) -> Option<validity::Finite> {
        None
    }

    /// How a value search steps through its flat parts (none: its derivative is used as is).
    fn proxy(&self) -> Option<validity::Proxy> {
        None
    }

    /// Whether it only moves, selects or reshapes data (no arithmetic): in a reduced
    /// finding such an op is there to give the op at fault its shapes, so dedup does not
    /// tell two bugs apart by it.
    fn moves_data(&self) -> bool {
        false
    }

    /// How the program lowering writes a node of it as one torch call (float32); `None`:
    /// it has no torch form, and the program generator's menu leaves it out.
    fn torch_form(&self) -> Option<torch_form::TorchWriter<'_>> {
        None
    }

    /// How many terms it sums into each output element (an accumulating operator's
    /// rounding grows with them, [`accumulation`]); 1 for one rounding per element.
    fn accumulated_terms(&self, node: &accumulation::Terms) -> f64 {
        let _ = node;
        1.0
    }

    /// The type its kernels may legally work in when the operator text names one coarser
    /// than the declared type (`None`: the declared type).
    fn working_type(&self, attrs: &[(String, AttrValue<i64>)]) -> Option<DType> {
        let _ = attrs;
        None
    }

    /// Its affine form, for a normalization ([`accumulation::Affine`]): `None` for other ops.
    fn affine_form(
        &self,
        node: &accumulation::Terms,
    ) -> Result<Option<accumulation::Affine>, eval::RefError> {
        let _ = node;
        Ok(None)
    }

    /// Whether it interpolates (a linear or cubic `Resize`): its weights' rounding error is
    /// added to its envelope.
    fn interpolates(&self, attrs: &[(String, AttrValue<i64>)]) -> bool {
        let _ = attrs;
        false
    }

    /// Whether its integer result is free within the rounding of an interpolation (a linear
    /// `Resize` of integers, whose rounding the operator text leaves open).
    fn rounds_integers_freely(&self, attrs: &[(String, AttrValue<i64>)], dtype: DType) -> bool {
        let _ = (attrs, dtype);
        false
    }

    /// Whether, for the values computed, an input lies within rounding distance (its
    /// margin) of a jump of the output ([`fragility`]); by default, a float input near the
    /// edge of its declared domain ([`OpSpec::finite`]).
    fn near_jump(&self, node: &fragility::NodeValues) -> Result<bool, eval::RefError> {
        Ok(fragility::near_domain_edge(self.finite(), node).unwrap_or(false))
    }

    /// Why the ONNX specification leaves the node's result undefined for the values computed
    /// ([`fragility`]); by default, an integer accumulation that may leave its type's range.
    fn undefined(&self, node: &fragility::NodeValues) -> fragility::Verdict {
        fragility::accumulation_overflow(self.rounding(), self.op_type(), |m| m, node)
    }

    /// Why the specification admits more than one reading of the node for the values
    /// computed ([`fragility`]): a compiler that follows any of them is right.
    fn ambiguous(&self, node: &fragility::NodeValues) -> fragility::Verdict {
        let _ = node;
        Ok(None)
    }

    /// The roles of its attributes and constant operands for pattern pins
    /// ([`pattern_roles`]); by default none.
    fn pin_roles(&self) -> pattern_roles::PinRoles {
        pattern_roles::PinRoles::default()
    }

    /// What its older opsets wrote differently ([`legacy`]); by default nothing.
    fn legacy_form(&self) -> legacy::LegacyForm {
        legacy::LegacyForm::default()
    }

    /// The attribute class an ONNX node of this op stands for, where its classes mirror
    /// ONNX's (which optional inputs are given, a mode attribute); `None` when they do not.
    fn class_of_node(&self, node: &pattern_roles::NodeView) -> Option<String> {
        let _ = node;
        None
    }

    /// Its evaluation on the reference (libtorch, ONNX semantics): one tensor per output,
    /// each in the carrier of its dtype, float16 computed in float32 (the reference rounds
    /// once per node).
    fn evaluate(&self, args: &eval::Args) -> Result<Vec<tch::Tensor>, eval::RefError>;
}

/// Every op spec, in a fixed order (the order is part of the decoder: append, never reorder).
pub fn registry() -> &'static [Box<dyn OpSpec>] {
    static REGISTRY: OnceLock<Vec<Box<dyn OpSpec>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut all: Vec<Box<dyn OpSpec>> = Vec::new();
        all.extend(unary::specs());
        all.extend(binary::specs());
        all.extend(misc::specs());
        all.extend(reduce::specs());
        all.extend(matmul::specs());
        all.extend(conv::specs());
        all.extend(norm::specs());
        all.extend(layout::specs());
        all.extend(slicing::specs());
        all.extend(quant::specs());
        all.extend(misc::late_specs());
        all
    })
}

impl OpNode {
    /// The ONNX op type.
    pub fn op_type(&self) -> &'static str {
        registry()[self.spec].op_type()
    }

    /// How its kernels may round.
    pub fn rounding(&self) -> RoundingClass {
        registry()[self.spec].rounding()
    }

    /// Where its outputs are finite ([`OpSpec::finite`]).
    pub fn finite(&self) -> Option<validity::Finite> {
        registry()[self.spec].finite()
    }

    /// How a value search steps through its flat parts ([`OpSpec::proxy`]).
    pub fn proxy(&self) -> Option<validity::Proxy> {
        registry()[self.spec].proxy()
    }
}

/// The first spec (in registry order) that emits `op_type`: every spec of one op type
/// evaluates it alike.
pub fn spec_of_op_type(op_type: &str) -> Option<&'static dyn OpSpec> {
    static BY_OP_TYPE: OnceLock<std::collections::HashMap<&'static str, usize>> = OnceLock::new();
    let index = BY_OP_TYPE.get_or_init(|| {
        let mut index = std::collections::HashMap::new();
        for (i, spec) in registry().iter().enumerate() {
            index.entry(spec.op_type()).or_insert(i);
        }
        index
    });
    index.get(op_type).map(|&i| registry()[i].as_ref())
}

/// Every spec that emits `op_type`, with its id, in registry order (one op type may have
/// several specs: what one asks of an op type is what its specs say together).
pub fn specs_of_op_type(
    op_type: &str,
) -> impl Iterator<Item = (SpecId, &'static dyn OpSpec)> + use<'_> {
    registry()
        .iter()
        .enumerate()
        .filter(move |(_, spec)| spec.op_type() == op_type)
        .map(|(i, spec)| (i, spec.as_ref()))
}

/// Looks a spec up by name.
pub fn spec_id(name: &str) -> Option<SpecId> {
    registry().iter().position(|s| s.name() == name)
}

/// Shared shape helpers for specs.
pub mod shape {
    use super::*;

    /// Numpy-style broadcasting of several shapes: returns (requires, output dims).
    pub fn broadcast(shapes: &[&[Int]]) -> (Vec<Bool>, Vec<Int>) {
        let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut reqs = Vec::new();
        let mut out = Vec::with_capacity(rank);
        for i in 0..rank {
            let dims: Vec<Int> = shapes
                .iter()
                .filter(|s| s.len() + i >= rank)
                .map(|s| s[s.len() + i - rank].clone())
                .collect();
            let mut acc = dims[0].clone();
            for d in &dims[1..] {
                reqs.push(Bool::or([acc.eq(d), acc.eq(1i64), d.eq(1i64)]));
                acc = acc.max(d);
            }
            out.push(acc);
        }
        (reqs, out)
    }

    /// Normalizes a possibly negative axis against `rank`.
    pub fn norm_axis(axis: i64, rank: usize) -> usize {
        if axis < 0 {
            (axis + rank as i64) as usize
        } else {
            axis as usize
        }
    }

    /// Ranks for broadcasting inputs in backward insertion: each input gets `out_rank` or,
    /// sometimes, fewer leading dims.
    pub fn broadcast_input_ranks(n: usize, out_rank: usize, u: &mut Unstructured) -> Vec<usize> {
        let lower = (0..n)
            .map(|_| u.ratio(1u8, 4u8).unwrap_or(false))
            .collect::<Vec<_>>();
        (0..n)
            .map(|i| {
                if i > 0 && lower[i] {
                    out_rank.saturating_sub(1)
                } else {
                    out_rank
                }
            })
            .collect()
    }
}

/// Helpers shared by the op-family unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::apply::apply;
    use super::eval::float_values;
    use super::{AttrValue, SymTensor};
    use crate::ir::DType;
    use crate::sym::{Bool, Int};
    use tch::Tensor;

    /// A float32 tensor of `shape` from `values`.
    pub fn f32s(values: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(values).reshape(shape)
    }

    /// An int64 tensor of `shape` from `values`.
    pub fn i64s(values: &[i64], shape: &[i64]) -> Tensor {
        Tensor::from_slice(values).reshape(shape)
    }

    /// Runs `op` with one output of `dtype` and returns it.
    pub fn run1(
        op: &str,
        attrs: &[(&str, AttrValue<i64>)],
        inputs: Vec<Option<Tensor>>,
        dtype: DType,
    ) -> Tensor {
        let attrs: Vec<(String, AttrValue<i64>)> = attrs
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        let mut outs = apply(op, &attrs, &inputs, &[dtype]).unwrap_or_else(|e| panic!("{op}: {e}"));
        outs.remove(0)
    }

    /// Shallow copies of `inputs` (tensors are not `Clone`).
    pub fn dup(inputs: &[Option<Tensor>]) -> Vec<Option<Tensor>> {
        inputs
            .iter()
            .map(|t| t.as_ref().map(Tensor::shallow_clone))
            .collect()
    }

    /// The elements of `t` as `f64`, flattened.
    pub fn values(t: &Tensor) -> Vec<f64> {
        float_values(t).expect("readable")
    }

    /// An f32 tensor with constant dims.
    pub fn tensor(dims: &[i64]) -> SymTensor {
        SymTensor {
            dtype: DType::F32,
            dims: dims.iter().map(|d| Int::from(*d)).collect(),
        }
    }

    /// The values of dims that must be constant.
    pub fn consts(dims: &[Int]) -> Vec<i64> {
        dims.iter()
            .map(|d| d.as_const().expect("constant"))
            .collect()
    }

    /// True when every requirement folded to `true`.
    pub fn all_true(reqs: &[Bool]) -> bool {
        reqs.iter().all(|r| r.as_const() == Some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rounding classes the operators declare are the ones the precision analysis kept
    /// as name lists before (so its decisions did not move when the lists went): the
    /// elementary functions and the accumulating kernels, by op type. Operators added since
    /// declare their own class; the old lists only bound the ones they named.
    #[test]
    fn declared_rounding_classes_are_the_precision_analysis_lists() {
        let with = |f: fn(RoundingClass) -> bool| -> std::collections::BTreeSet<&str> {
            registry()
                .iter()
                .filter(|s| f(s.rounding()))
                .map(|s| s.op_type())
                .collect()
        };
        let accumulating = [
            "ReduceSum",
            "ReduceMean",
            "ReduceProd",
            "ReduceSumSquare",
            "ReduceL1",
            "ReduceL2",
            "ReduceLogSumExp",
            "MatMul",
            "Gemm",
            "Conv",
            "ConvTranspose",
            "AveragePool",
            "GlobalAveragePool",
            "Softmax",
            "LogSoftmax",
            "LayerNormalization",
            "InstanceNormalization",
            "BatchNormalization",
            "Sum",
            "Mean",
            "Resize",
        ];
        let registered: std::collections::BTreeSet<&str> =
            registry().iter().map(|s| s.op_type()).collect();
        let declared = with(RoundingClass::accumulates);
        for op in accumulating
            .into_iter()
            .filter(|op| registered.contains(op))
        {
            assert!(declared.contains(op), "{op} no longer accumulates");
        }
        // An operator declared since may accumulate too, unless it is element-wise (one
        // rounding per element).
        let elementwise: std::collections::BTreeSet<&str> = unary::specs()
            .iter()
            .chain(binary::specs().iter())
            .map(|s| s.op_type())
            .collect();
        for op in declared.iter().filter(|op| !accumulating.contains(op)) {
            assert!(!elementwise.contains(op), "element-wise {op} accumulates");
        }
        let elementary = with(RoundingClass::elementary);
        for op in [
            "Softmax",
            "LogSoftmax",
            "ReduceLogSumExp",
            "ReduceL2",
            "LayerNormalization",
            "InstanceNormalization",
            "BatchNormalization",
            "Exp",
            "Log",
            "Tanh",
            "Pow",
        ] {
            assert_eq!(elementary.contains(op), registered.contains(op), "{op}");
        }
        for op in [
            "Add",
            "Relu",
            "Max",
            "Sum",
            "MatMul",
            "Cast",
            "Transpose",
            "ReduceMax",
        ] {
            assert!(!elementary.contains(op), "{op}");
        }
    }

    #[test]
    fn spec_names_are_unique_and_there_are_at_least_sixty() {
        let names: Vec<&str> = registry().iter().map(|s| s.name()).collect();
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len());
        assert!(names.len() >= 60, "{} specs", names.len());
    }

    #[test]
    fn every_spec_has_signatures_with_matching_rank_lists() {
        for s in registry() {
            let sigs = s.sigs();
            assert!(!sigs.is_empty(), "{}", s.name());
            for sig in &sigs {
                assert_eq!(s.input_ranks(sig).len(), sig.inputs.len(), "{}", s.name());
            }
        }
    }

    #[test]
    fn broadcast_of_constants_folds() {
        let a: Vec<Int> = vec![Int::from(3usize), Int::from(1usize)];
        let b: Vec<Int> = vec![Int::from(4usize)];
        let (reqs, out) = shape::broadcast(&[&a, &b]);
        assert!(reqs.iter().all(|r| r.as_const() == Some(true)));
        assert_eq!(
            out.iter()
                .map(|d| d.as_const().unwrap())
                .collect::<Vec<_>>(),
            vec![3, 4]
        );
    }
}
