//! What an op node carries: its dtype signature and its attributes and constant operands,
//! generic over the integer representation (symbolic while a spec is solved, `i64` once
//! concrete). The specs that produce them are [`crate::ops`].

use super::DType;
use serde::{Deserialize, Serialize};

/// Name of the single attribute class of ops that have no discrete variants.
pub const DEFAULT_CLASS: &str = "default";

/// Index of a spec in [`crate::ops::registry`].
pub type SpecId = usize;

/// One dtype signature: the dtypes of the data inputs and of the outputs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Sig {
    /// Data input dtypes, in input order.
    pub inputs: Vec<DType>,
    /// Output dtypes.
    pub outputs: Vec<DType>,
}

impl Sig {
    /// A signature.
    pub fn new(inputs: Vec<DType>, outputs: Vec<DType>) -> Self {
        Self { inputs, outputs }
    }

    /// `n` inputs and one output, all of dtype `t`.
    pub fn uniform(t: DType, n: usize) -> Self {
        Self::new(vec![t; n], vec![t])
    }

    /// Compact text form, e.g. `f32,f32->bool`.
    pub fn key(&self) -> String {
        let join = |v: &[DType]| v.iter().map(|d| d.name()).collect::<Vec<_>>().join(",");
        format!("{}->{}", join(&self.inputs), join(&self.outputs))
    }
}

/// An attribute value, generic over the integer representation (symbolic while solving,
/// `i64` once concrete).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AttrValue<I> {
    /// `int` attribute.
    Int(I),
    /// `ints` attribute.
    Ints(Vec<I>),
    /// `float` attribute.
    Float(f32),
    /// `string` attribute.
    Str(String),
}

/// A constant operand emitted as an initializer after the data inputs (ONNX takes shapes,
/// axes, pads and the like as inputs since opset 13).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ConstInput<I> {
    /// A 1-D `int64` tensor.
    Ints(Vec<I>),
    /// A 1-D `float32` tensor.
    Floats(Vec<f32>),
    /// A scalar of the given dtype (e.g. Clip bounds, Pad value).
    Scalar(DType, f64),
    /// An `int64` index tensor of the given shape with values in `[-bound, bound)`, drawn from
    /// `seed`.
    Indices {
        /// Shape of the index tensor.
        shape: Vec<I>,
        /// Size of the indexed axis.
        bound: I,
        /// Seed for the index values.
        seed: u64,
    },
    /// An omitted optional input (empty name).
    Absent,
}

/// Attributes of one op instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attrs<I> {
    /// Attribute class (e.g. a Pad mode); probed separately by capability probing.
    pub class: String,
    /// Named ONNX attributes, in emission order.
    pub named: Vec<(String, AttrValue<I>)>,
    /// Constant operands appended after the data inputs.
    pub consts: Vec<ConstInput<I>>,
}

impl<I> Default for Attrs<I> {
    fn default() -> Self {
        Attrs {
            class: DEFAULT_CLASS.into(),
            named: Vec::new(),
            consts: Vec::new(),
        }
    }
}

/// Concrete attributes of a node in a generated graph.
pub type ConcreteAttrs = Attrs<i64>;

impl<I: Clone + std::fmt::Debug> Attrs<I> {
    /// Adds a named attribute.
    pub fn set(&mut self, name: &str, value: AttrValue<I>) -> &mut Self {
        self.named.push((name.to_string(), value));
        self
    }

    /// Looks up a named attribute.
    pub fn get(&self, name: &str) -> Option<&AttrValue<I>> {
        self.named.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The `int` attribute `name`. Panics if absent: specs read only what they set.
    pub fn int(&self, name: &str) -> I {
        match self.get(name) {
            Some(AttrValue::Int(v)) => v.clone(),
            other => panic!("attribute {name} is not an int: {other:?}"),
        }
    }

    /// The `ints` attribute `name`. Panics if absent: specs read only what they set.
    pub fn ints(&self, name: &str) -> Vec<I> {
        match self.get(name) {
            Some(AttrValue::Ints(v)) => v.clone(),
            other => panic!("attribute {name} is not ints: {other:?}"),
        }
    }

    /// The `ints` of constant operand `index`. Panics if it is not `Ints`.
    pub fn const_ints(&self, index: usize) -> Vec<I> {
        match self.consts.get(index) {
            Some(ConstInput::Ints(v)) => v.clone(),
            other => panic!("const input {index} is not ints: {other:?}"),
        }
    }
}
