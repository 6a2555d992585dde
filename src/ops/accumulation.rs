//! What the precision analysis (`reference::precision`) asks an operator about how it may
//! round: how many terms it sums per output element ([`super::OpSpec::accumulated_terms`]),
//! the type its kernels may legally work in when the operator text names a coarser one than
//! the declared type ([`super::OpSpec::working_type`]), and a normalization's affine form
//! ([`super::OpSpec::affine_form`]), whose error a relative perturbation cannot show.

use super::eval::int_attr;
use super::AttrValue;
use tch::Tensor;

/// One node's attributes and inputs (data inputs, then constant operands) as the precision
/// analysis holds them.
pub struct Terms<'a> {
    /// Its named attributes.
    pub attrs: &'a [(String, AttrValue<i64>)],
    /// Its inputs, `None` for an omitted optional one.
    pub inputs: &'a [Option<Tensor>],
    /// How many of them are data inputs (the rest are constant operands).
    pub data: usize,
}

impl Terms<'_> {
    /// The shape of input `i` (empty when absent).
    pub fn size(&self, i: usize) -> Vec<i64> {
        self.inputs
            .get(i)
            .and_then(Option::as_ref)
            .map(Tensor::size)
            .unwrap_or_default()
    }

    /// The `int` attribute `name`, or `default`.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        int_attr(self.attrs, name, default)
    }

    /// Axis `a` of input 0, normalized and clamped into its rank.
    pub fn axis(&self, a: i64) -> usize {
        let rank = self.size(0).len() as i64;
        (if a < 0 { a + rank } else { a }).clamp(0, rank.max(1) - 1) as usize
    }

    /// Input 0's length along axis `a` (1 for a scalar).
    pub fn along(&self, a: i64) -> f64 {
        let x = self.size(0);
        x.get(self.axis(a)).copied().unwrap_or(1) as f64
    }

    /// The first constant operand read as integers (axes), if present.
    pub fn constant_ints(&self) -> Option<Vec<i64>> {
        self.inputs
            .get(self.data)
            .and_then(Option::as_ref)
            .and_then(|t| super::eval::int_values(t).ok())
    }
}

/// The number of elements of `dims` (at least 1).
pub fn product(dims: &[i64]) -> f64 {
    dims.iter().product::<i64>().max(1) as f64
}

/// A normalization's affine form `x·a + (b − mean·a)`, `a = scale / sqrt(var + ε)`, over
/// input 0, shaped to broadcast against it.
pub struct Affine {
    /// The mean it subtracts.
    pub mean: Tensor,
    /// The variance it divides by.
    pub var: Tensor,
    /// Its scale.
    pub scale: Tensor,
    /// Its bias, if any.
    pub bias: Option<Tensor>,
    /// The dims over which the kernel computes the moments itself (`None`: they are given,
    /// as BatchNormalization's in inference mode).
    pub dims: Option<Vec<i64>>,
}
