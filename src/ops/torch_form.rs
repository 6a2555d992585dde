//! How an operator node is written as one torch call by the program lowering
//! ([`crate::mutate::program::lower`], float32 graphs → straight-line TorchScript programs).
//! Each operator that has such a form declares it ([`super::OpSpec::torch_form`]); the
//! lowering and the program generator's menu ask the declaration, so no list of op names
//! decides what reaches the program targets.

use super::{AttrValue, ConcreteAttrs, ConstInput};

/// What the lowering knows of one node.
pub struct TorchCx<'a> {
    /// The node's attributes and constant operands.
    pub attrs: &'a ConcreteAttrs,
    /// The rank of each data input (one per argument).
    pub input_ranks: &'a [usize],
    /// Output 0's shape.
    pub out_shape: &'a [usize],
}

impl TorchCx<'_> {
    /// The named attribute `name`.
    pub fn named(&self, name: &str) -> Option<&AttrValue<i64>> {
        self.attrs
            .named
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The `int` attribute `name`, or `default`.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        match self.named(name) {
            Some(AttrValue::Int(v)) => *v,
            _ => default,
        }
    }

    /// Constant operand `k` when it is a list of integers (axes).
    pub fn ints(&self, k: usize) -> Option<&[i64]> {
        match self.attrs.consts.get(k) {
            Some(ConstInput::Ints(v)) => Some(v),
            _ => None,
        }
    }

    /// Constant operand `k` when it is a scalar, as a float literal.
    pub fn scalar(&self, k: usize) -> Option<String> {
        match self.attrs.consts.get(k) {
            Some(ConstInput::Scalar(_, v)) => Some(float(*v)),
            _ => None,
        }
    }
}

/// One node written as a torch call.
#[derive(Clone, Debug, PartialEq)]
pub struct TorchForm {
    /// The call, `{k}` standing for argument `k`, e.g. `torch.add({0}, {1})`.
    pub template: String,
    /// Element-wise (with broadcasting): the program mutations may unroll it along an axis.
    pub elementwise: bool,
    /// The result owns fresh storage (no view or alias of an argument): the program
    /// mutations may overwrite it in place.
    pub fresh: bool,
}

impl TorchForm {
    /// An element-wise call with a fresh result.
    pub fn elementwise(template: String) -> TorchForm {
        TorchForm {
            template,
            elementwise: true,
            fresh: true,
        }
    }

    /// A call that is not element-wise; `fresh` when its result owns its storage.
    pub fn whole(template: String, fresh: bool) -> TorchForm {
        TorchForm {
            template,
            elementwise: false,
            fresh,
        }
    }
}

/// The function behind a [`TorchWriter`].
type Write<'a> = Box<dyn Fn(&TorchCx) -> Result<TorchForm, String> + 'a>;

/// Writes one node of an operator as a torch call, or says why it cannot.
pub struct TorchWriter<'a>(Write<'a>);

impl<'a> TorchWriter<'a> {
    /// A writer from `write`.
    pub fn new(write: impl Fn(&TorchCx) -> Result<TorchForm, String> + 'a) -> TorchWriter<'a> {
        TorchWriter(Box::new(write))
    }

    /// The call of the node `cx` describes.
    pub fn write(&self, cx: &TorchCx) -> Result<TorchForm, String> {
        (self.0)(cx)
    }
}

/// A float literal as the lowering writes it (float32's value, Python's spelling).
pub fn float(v: f64) -> String {
    format!("{:?}", v as f32 as f64)
}

/// A Python list of integers.
pub fn list(v: impl IntoIterator<Item = i64>) -> String {
    let items: Vec<String> = v.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", items.join(", "))
}
