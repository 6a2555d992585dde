//! Broadcasting binary ops (arithmetic, comparison, logical, bitwise; `Max`/`Min`/`Sum`/
//! `Mean` take any number of inputs), each declared once, in one row of [`table`]: its ONNX
//! types, whether an integer divisor must be positive, its attributes, its libtorch
//! evaluation on carriers (the reference), whether kernels round like an elementary function,
//! and its torch expression for the program targets. Where such an op's output jumps (near a
//! zero divisor, at equality) is `reference::fragile`'s, as those rules read two inputs.

use super::accumulation::Terms;
use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::numeric;
use super::shape::{broadcast, broadcast_input_ranks};
use super::torch_form::{TorchForm, TorchWriter};
use super::validity::Finite;
use super::{AttrCx, AttrValue, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor, ValueDomain};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use arbitrary::Unstructured;
use std::sync::OnceLock;
use tch::{TchError, Tensor};

/// The dtypes a binary op takes (both inputs share one) and whether it outputs bool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Types {
    /// Numeric in, same type out.
    Numeric,
    /// Floats only.
    Float,
    /// Numeric in, bool out.
    Compare,
    /// Every type in (bool included), bool out.
    Equality,
    /// Bool in, bool out.
    Logical,
    /// Integers in, same type out.
    Bitwise,
    /// Unsigned integers in, same type out.
    Unsigned,
}

/// What an evaluation sees besides the two inputs: their dtypes (carriers may be wider) and
/// the node's attributes.
pub struct EvalArgs<'a> {
    /// The dtype of the first input.
    pub dtype: DType,
    /// The dtype of the second input.
    pub dtype1: DType,
    /// An integer attribute, or the given default.
    pub int: &'a dyn Fn(&str, i64) -> i64,
    /// A string attribute, or the empty string.
    pub string: &'a dyn Fn(&str) -> String,
}

/// The reference evaluation of a row on two (broadcasting) inputs; a variadic row folds it.
pub type Eval = fn(&Tensor, &Tensor, &EvalArgs) -> Result<Tensor, TchError>;

/// How many inputs a row takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly two.
    Two,
    /// One or more, folded left with the evaluation.
    Fold,
    /// One or more, folded, then divided by their number (`Mean`).
    Mean,
}

/// One broadcasting binary op. See the module docs.
#[derive(Clone, Debug)]
pub struct Binary {
    /// The ONNX op type.
    pub name: &'static str,
    /// Its input types.
    pub types: Types,
    /// Input 1 divides: an integer divisor must be positive (generation), a float one
    /// non-zero (the value search, [`OpSpec::finite`]).
    pub divisor: bool,
    /// `Pow`: finite for a positive base and a bounded `y · log(x)`.
    pub power: bool,
    /// How many inputs it folds.
    pub arity: Arity,
    /// The reference evaluation.
    pub eval: Eval,
    /// How its kernels may round (elementary functions: to a few ulp).
    pub rounding: RoundingClass,
    /// The torch expression of the program targets (`{a}`, `{b}`), float32 only.
    pub torch: Option<&'static str>,
    /// The torch expression divides truly: integer operands give a float result.
    pub torch_true_division: bool,
    /// Where the output jumps near its float operands ([`OpSpec::near_jump`]), beyond a
    /// comparison's flip where the operands meet.
    pub jump: Option<Jump>,
    /// Its exact result from its exact inputs, when a signed integer result may overflow:
    /// the overflow is undefined ([`OpSpec::undefined`]).
    pub overflow: Option<fragility::Exact>,
    /// Another undefined case the specification leaves ([`OpSpec::undefined`]).
    pub undefined: Option<fragility::Rule>,
}

/// Whether an output jumps near `x` (margin `mx`) and `y` (margin `my`), as `f64`.
pub type Jump = fn(x: &Tensor, mx: &Tensor, y: &Tensor, my: &Tensor) -> bool;

fn op(name: &'static str, types: Types, eval: Eval) -> Binary {
    Binary {
        name,
        types,
        divisor: false,
        power: false,
        arity: Arity::Two,
        eval,
        rounding: RoundingClass::Correct,
        torch: None,
        torch_true_division: false,
        jump: None,
        overflow: None,
        undefined: None,
    }
}

impl Binary {
    fn divisor(self) -> Binary {
        Binary {
            divisor: true,
            ..self
        }
    }

    /// Whether it compares its operands (an order or equality comparison, bool out).
    pub fn compares(&self) -> bool {
        matches!(self.types, Types::Compare | Types::Equality)
    }

    fn power(self) -> Binary {
        Binary {
            power: true,
            ..self
        }
    }

    fn arity(self, arity: Arity) -> Binary {
        Binary { arity, ..self }
    }

    fn elementary(self) -> Binary {
        Binary {
            rounding: RoundingClass::Elementary,
            ..self
        }
    }

    /// A variadic sum: kernels add the terms in an order of their choosing.
    fn accumulating(self) -> Binary {
        Binary {
            rounding: RoundingClass::Accumulating,
            ..self
        }
    }

    fn jumps(self, jump: Jump) -> Binary {
        Binary {
            jump: Some(jump),
            ..self
        }
    }

    fn overflows(self, exact: fragility::Exact) -> Binary {
        Binary {
            overflow: Some(exact),
            ..self
        }
    }

    fn undefined_when(self, rule: fragility::Rule) -> Binary {
        Binary {
            undefined: Some(rule),
            ..self
        }
    }

    fn torch(self, torch: &'static str) -> Binary {
        Binary {
            torch: Some(torch),
            ..self
        }
    }

    /// `torch`, a true division (integers in, float out).
    fn torch_true_division(self, torch: &'static str) -> Binary {
        Binary {
            torch_true_division: true,
            ..self.torch(torch)
        }
    }
}

/// `f` on `x` and `y` in the order-preserving view of `dtype` (the `u64` carrier's sign
/// flipped), where comparisons and `Max`/`Min` must look.
fn in_order(
    x: &Tensor,
    y: &Tensor,
    dtype: DType,
    f: fn(&Tensor, &Tensor) -> Result<Tensor, TchError>,
) -> Result<Tensor, TchError> {
    f(&numeric::ordered(x, dtype)?, &numeric::ordered(y, dtype)?)
}

/// `Pow(x, y)`: the result has `x`'s type. Integer bases are computed in `f64` and truncated,
/// as ONNX Runtime's `std::pow` on doubles does (negative exponents included).
fn pow(x: &Tensor, y: &Tensor, a: &EvalArgs) -> Result<Tensor, TchError> {
    if x.is_floating_point() {
        let y = match y.kind() == x.kind() {
            true => y.shallow_clone(),
            false => numeric::to_double(y, a.dtype1)?.f_to_kind(x.kind())?,
        };
        return x.f_pow(&y);
    }
    let xd = numeric::to_double(x, a.dtype)?;
    let yd = numeric::to_double(y, a.dtype1)?;
    xd.f_pow(&yd)?.f_trunc()?.f_to_kind(tch::Kind::Int64)
}

/// `Mod` with its `fmod` attribute: C's `fmod` or Python's remainder.
fn modulo(x: &Tensor, y: &Tensor, a: &EvalArgs) -> Result<Tensor, TchError> {
    let fmod = (a.int)("fmod", 0) != 0;
    match (x.is_floating_point(), fmod) {
        (true, true) => x.f_fmod_tensor(y),
        (true, false) => x.f_remainder_tensor(y),
        (false, _) => numeric::int_rem(x, y, a.dtype, fmod),
    }
}

/// `BitShift` in its `direction`.
fn bit_shift(x: &Tensor, y: &Tensor, a: &EvalArgs) -> Result<Tensor, TchError> {
    match ((a.string)("direction").as_str(), a.dtype) {
        ("LEFT", _) => x.f_bitwise_left_shift(y),
        ("RIGHT", DType::U64) => numeric::u64_shift_right(x, y),
        ("RIGHT", _) => x.f_bitwise_right_shift(y),
        (d, _) => Err(TchError::Kind(format!("BitShift direction {d:?}"))),
    }
}

/// `x mod y` jumps by `|y|` where `x / y` crosses an integer; near there either side is a
/// correct rounding of the exact value (and near a zero divisor).
fn mod_jumps(x: &Tensor, mx: &Tensor, y: &Tensor, my: &Tensor) -> bool {
    let q = (x / y).round();
    let distance = (x - &q * y).abs();
    let slack = mx + q.abs() * my;
    fragility::any(&y.abs().le_tensor(my)) || fragility::any(&distance.le_tensor(&slack))
}

/// BitShift: the operator text is silent on shift amounts of the bit width or more (or
/// negative), which the C++ every kernel is written in leaves undefined.
fn shift_past_width(node: &NodeValues) -> fragility::Verdict {
    let width = (node.in_dtype().width() * 8) as f64;
    let amount = node.exact(1)?;
    Ok(
        (fragility::any(&amount.ge(width)) || fragility::any(&amount.lt(0.0)))
            .then_some("BitShift: shift amount of the bit width or more"),
    )
}

/// Every broadcasting binary op, in the registry's order.
pub fn table() -> &'static [Binary] {
    static TABLE: OnceLock<Vec<Binary>> = OnceLock::new();
    TABLE.get_or_init(|| {
        use Types::*;
        vec![
            op("Add", Numeric, |x, y, _| x.f_add(y))
                .overflows(|x| &x[0] + &x[1])
                .torch("torch.add({a}, {b})"),
            op("Sub", Numeric, |x, y, _| x.f_sub(y))
                .overflows(|x| &x[0] - &x[1])
                .torch("torch.sub({a}, {b})"),
            op("Mul", Numeric, |x, y, _| x.f_mul(y))
                .overflows(|x| &x[0] * &x[1])
                .torch("torch.mul({a}, {b})"),
            op("Div", Numeric, |x, y, a| match x.is_floating_point() {
                true => x.f_div(y),
                false => numeric::int_div(x, y, a.dtype),
            })
            .divisor()
            // MIN / -1 is the only overflowing quotient.
            .overflows(|x| &x[0] / &x[1])
            // Near a zero divisor either side of it is a correct rounding.
            .jumps(|_, _, y, my| fragility::any(&y.abs().le_tensor(my)))
            .torch_true_division("torch.div({a}, {b})"),
            op("Mod", Numeric, modulo)
                .divisor()
                // MIN % -1: its quotient overflows.
                .overflows(|x| &x[0] / &x[1])
                .jumps(mod_jumps),
            op("Pow", Float, pow)
                .elementary()
                .power()
                .torch("torch.pow({a}, {b})"),
            op("Max", Numeric, |x, y, a| {
                numeric::ordered(&in_order(x, y, a.dtype, |x, y| x.f_maximum(y))?, a.dtype)
            })
            .arity(Arity::Fold)
            .torch("torch.maximum({a}, {b})"),
            op("Min", Numeric, |x, y, a| {
                numeric::ordered(&in_order(x, y, a.dtype, |x, y| x.f_minimum(y))?, a.dtype)
            })
            .arity(Arity::Fold)
            .torch("torch.minimum({a}, {b})"),
            op("Mean", Float, |x, y, _| x.f_add(y))
                .arity(Arity::Mean)
                .accumulating(),
            op("Sum", Float, |x, y, _| x.f_add(y))
                .arity(Arity::Fold)
                .accumulating(),
            op("Equal", Equality, |x, y, _| x.f_eq_tensor(y)).torch("torch.eq({a}, {b})"),
            op("Less", Compare, |x, y, a| {
                in_order(x, y, a.dtype, |x, y| x.f_lt_tensor(y))
            })
            .torch("torch.lt({a}, {b})"),
            op("Greater", Compare, |x, y, a| {
                in_order(x, y, a.dtype, |x, y| x.f_gt_tensor(y))
            })
            .torch("torch.gt({a}, {b})"),
            op("LessOrEqual", Compare, |x, y, a| {
                in_order(x, y, a.dtype, |x, y| x.f_le_tensor(y))
            })
            .torch("torch.le({a}, {b})"),
            op("GreaterOrEqual", Compare, |x, y, a| {
                in_order(x, y, a.dtype, |x, y| x.f_ge_tensor(y))
            })
            .torch("torch.ge({a}, {b})"),
            op("And", Logical, |x, y, _| x.f_logical_and(y)).torch("torch.logical_and({a}, {b})"),
            op("Or", Logical, |x, y, _| x.f_logical_or(y)).torch("torch.logical_or({a}, {b})"),
            op("Xor", Logical, |x, y, _| x.f_logical_xor(y)).torch("torch.logical_xor({a}, {b})"),
            op("BitwiseAnd", Bitwise, |x, y, _| x.f_bitwise_and_tensor(y))
                .torch("torch.bitwise_and({a}, {b})"),
            op("BitwiseOr", Bitwise, |x, y, _| x.f_bitwise_or_tensor(y))
                .torch("torch.bitwise_or({a}, {b})"),
            op("BitwiseXor", Bitwise, |x, y, _| x.f_bitwise_xor_tensor(y))
                .torch("torch.bitwise_xor({a}, {b})"),
            op("BitShift", Unsigned, bit_shift).undefined_when(shift_past_width),
        ]
    })
}

/// The row of op type `name`, if it is a broadcasting binary op.
pub fn declared(name: &str) -> Option<&'static Binary> {
    table().iter().find(|b| b.name == name)
}

/// Runs the row on `inputs` (two, or one or more for a folding row).
pub fn evaluate(row: &Binary, inputs: &[&Tensor], args: &EvalArgs) -> Result<Tensor, TchError> {
    let (first, rest) = inputs
        .split_first()
        .ok_or_else(|| TchError::Kind(format!("{}: no inputs", row.name)))?;
    let folded = rest
        .iter()
        .try_fold(first.shallow_clone(), |acc, x| (row.eval)(&acc, x, args))?;
    match row.arity {
        Arity::Mean => folded.f_div_scalar(inputs.len() as f64),
        Arity::Two | Arity::Fold => Ok(folded),
    }
}

impl OpSpec for Binary {
    /// A two-operand row took opset 6's `broadcast` and `axis` attributes.
    fn legacy_form(&self) -> super::legacy::LegacyForm {
        super::legacy::LegacyForm {
            axis_broadcast: matches!(self.arity, Arity::Two),
            ..Default::default()
        }
    }

    fn accumulated_terms(&self, node: &Terms) -> f64 {
        // A variadic row folds all its inputs.
        match self.arity {
            Arity::Two => 1.0,
            Arity::Fold | Arity::Mean => node.data as f64,
        }
    }

    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let inputs = match self.arity {
            Arity::Two => vec![a.x(0)?, a.x(1)?],
            Arity::Fold | Arity::Mean => a.present(),
        };
        let int = |name: &str, default: i64| a.int(name, default);
        let string = |name: &str| a.string(name, "");
        let args = EvalArgs {
            dtype: a.dtype(0),
            dtype1: a.dtype(1),
            int: &int,
            string: &string,
        };
        Ok(vec![evaluate(self, &inputs, &args)?])
    }

    fn rounding(&self) -> RoundingClass {
        self.rounding
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        let template = self.torch?.replace("{a}", "{0}").replace("{b}", "{1}");
        Some(TorchWriter::new(move |_| {
            Ok(TorchForm::elementwise(template.clone()))
        }))
    }

    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        if !node.float_input() {
            return Ok(false);
        }
        let x = node.double(0);
        let mx = node.margin_of(0, &x);
        let second = || {
            let y = node.double(1);
            let my = node.margin_of(1, &y);
            (y, my)
        };
        if self.compares() {
            // A comparison flips where its operands meet.
            let (y, my) = second();
            return Ok(fragility::any(&(&x - &y).abs().le_tensor(&(mx + my))));
        }
        if let Some(near) = fragility::near_domain_edge(self.finite(), node) {
            return Ok(near);
        }
        Ok(self.jump.is_some_and(|jump| {
            let (y, my) = second();
            jump(&x, &mx, &y, &my)
        }))
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        if let Some(rule) = self.undefined {
            return rule(node);
        }
        match self.overflow {
            Some(exact) => fragility::signed_overflow(node, exact),
            None => fragility::accumulation_overflow(self.rounding, self.name, |m| m, node),
        }
    }

    fn finite(&self) -> Option<Finite> {
        match (self.divisor, self.power) {
            (true, _) => Some(Finite::Divisor { slot: 1 }),
            (false, true) => Some(Finite::Power),
            (false, false) => None,
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        let (ins, to_bool) = match self.types {
            Types::Numeric => (DType::numeric(), false),
            Types::Float => (DType::FLOATS.to_vec(), false),
            Types::Compare => (DType::numeric(), true),
            Types::Equality => (DType::ALL.to_vec(), true),
            Types::Logical => (vec![DType::Bool], false),
            Types::Bitwise => (DType::ints(), false),
            Types::Unsigned => (DType::UNSIGNED.to_vec(), false),
        };
        ins.into_iter()
            .map(|t| Sig::new(vec![t, t], vec![if to_bool { DType::Bool } else { t }]))
            .collect()
    }

    fn infer_input_types(
        &self,
        _sig: &Sig,
        out_rank: usize,
        u: &mut Unstructured,
    ) -> Option<Vec<usize>> {
        Some(broadcast_input_ranks(2, out_rank, u))
    }

    fn input_domains(&self, sig: &Sig) -> Vec<ValueDomain> {
        if self.divisor && sig.inputs[1].is_int() {
            vec![ValueDomain::Any, ValueDomain::Positive]
        } else {
            vec![ValueDomain::Any, ValueDomain::Any]
        }
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        match self.name {
            "Mod" => {
                // Mod-13 (the text published with opsets 10 to 13): "If the input type is
                // floating point, then `fmod` attribute must be set to 1", and `fmod = 1`
                // forces C's floating-point `fmod`, whose precision on 64-bit integers the spec
                // does not fix (ONNX Runtime goes through `double`). So floats get `fmod = 1`
                // and integers `fmod = 0`, the only pairings every reading defines. The byte
                // the old choice drew is still drawn, so that existing inputs decode as before.
                let fmod = cx.sig.inputs[0].is_float();
                if !fmod {
                    let _ = cx.flip();
                }
                attrs.set("fmod", AttrValue::Int(Int::from(fmod as i64)));
            }
            "BitShift" => {
                let dir = if cx.flip() { "LEFT" } else { "RIGHT" };
                attrs.set("direction", AttrValue::Str(dir.into()));
            }
            _ => {}
        }
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Bool> {
        broadcast(&[&inputs[0].dims, &inputs[1].dims]).0
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![broadcast(&[&inputs[0].dims, &inputs[1].dims]).1]
    }
}

/// The binary family, one spec per row.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    table()
        .iter()
        .map(|b| Box::new(b.clone()) as Box<dyn OpSpec>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_output_bool_and_broadcast() {
        let less = specs().into_iter().find(|s| s.name() == "Less").unwrap();
        assert!(less.sigs().iter().all(|s| s.outputs == vec![DType::Bool]));
        let a = SymTensor {
            dtype: DType::F32,
            dims: vec![Int::from(2usize), Int::from(1usize)],
        };
        let b = SymTensor {
            dtype: DType::F32,
            dims: vec![Int::from(5usize)],
        };
        let ins = [a, b];
        assert!(less
            .requires(&SymAttrs::default(), &ins)
            .iter()
            .all(|r| r.as_const() == Some(true)));
        let out = less.type_transfer(&SymAttrs::default(), &ins);
        assert_eq!(
            out[0]
                .iter()
                .map(|d| d.as_const().unwrap())
                .collect::<Vec<_>>(),
            vec![2, 5]
        );
    }

    #[test]
    fn integer_division_gets_a_positive_divisor() {
        let div = specs().into_iter().find(|s| s.name() == "Div").unwrap();
        let int_sig = Sig::uniform(DType::I32, 2);
        assert_eq!(div.input_domains(&int_sig)[1], ValueDomain::Positive);
        assert_eq!(
            div.input_domains(&Sig::uniform(DType::F32, 2))[1],
            ValueDomain::Any
        );
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;
    use tch::{Kind, Tensor};

    fn ints(v: &[i64]) -> Tensor {
        i64s(v, &[v.len() as i64])
    }

    #[test]
    fn integer_div_truncates_and_mod_follows_fmod() {
        let a = ints(&[7, -7, 7, -7]);
        let b = ints(&[2, 2, -2, -2]);
        let div = run1(
            "Div",
            &[],
            vec![Some(a.shallow_clone()), Some(b.shallow_clone())],
            DType::I64,
        );
        assert_eq!(values(&div), vec![3.0, -3.0, -3.0, 3.0]);
        let py = run1(
            "Mod",
            &[("fmod", AttrValue::Int(0))],
            vec![Some(a.shallow_clone()), Some(b.shallow_clone())],
            DType::I64,
        );
        assert_eq!(values(&py), vec![1.0, 1.0, -1.0, -1.0]);
        let c = run1(
            "Mod",
            &[("fmod", AttrValue::Int(1))],
            vec![Some(a), Some(b)],
            DType::I64,
        );
        assert_eq!(values(&c), vec![1.0, -1.0, 1.0, -1.0]);
        let fa = f32s(&[5.5, -5.5], &[2]);
        let fb = f32s(&[2.0, 2.0], &[2]);
        let f = run1(
            "Mod",
            &[("fmod", AttrValue::Int(1))],
            vec![Some(fa), Some(fb)],
            DType::F32,
        );
        assert_eq!(values(&f), vec![1.5, -1.5]);
    }

    #[test]
    fn broadcasting_is_multidirectional() {
        let a = f32s(&[1.0, 2.0, 3.0], &[3, 1]);
        let b = f32s(&[10.0, 20.0], &[1, 2]);
        let y = run1("Add", &[], vec![Some(a), Some(b)], DType::F32);
        assert_eq!(y.size(), vec![3, 2]);
        assert_eq!(values(&y), vec![11.0, 21.0, 12.0, 22.0, 13.0, 23.0]);
    }

    #[test]
    fn unsigned_arithmetic_wraps_and_compares_unsigned() {
        // u32 carried in i64: 1 - 2 wraps to 2^32 - 1.
        let d = run1(
            "Sub",
            &[],
            vec![Some(ints(&[1])), Some(ints(&[2]))],
            DType::U32,
        );
        assert_eq!(values(&d), vec![4294967295.0]);
        // u16 carried in i32: 300 * 300 = 90000 wraps to 24464.
        let m = Tensor::from_slice(&[300i32]);
        let p = run1(
            "Mul",
            &[],
            vec![Some(m.shallow_clone()), Some(m)],
            DType::U16,
        );
        assert_eq!(values(&p), vec![24464.0]);
        // u64 bit patterns: 2^64 - 1 > 1.
        let outs = crate::ops::apply::apply_typed(
            "Greater",
            &[],
            &[Some(ints(&[-1])), Some(ints(&[1]))],
            &[Some(DType::U64), Some(DType::U64)],
            &[DType::Bool],
        )
        .unwrap();
        assert_eq!(outs[0].kind(), Kind::Bool);
        assert_eq!(values(&outs[0]), vec![1.0]);
        let u8s = Tensor::from_slice(&[200u8, 3]);
        let shifted = run1(
            "BitShift",
            &[("direction", AttrValue::Str("LEFT".into()))],
            vec![Some(u8s), Some(Tensor::from_slice(&[1u8, 2]))],
            DType::U8,
        );
        assert_eq!(values(&shifted), vec![144.0, 12.0]);
    }

    #[test]
    fn variadic_ops_fold_every_input() {
        let xs: Vec<Option<Tensor>> = [1.0f32, 4.0, 2.5]
            .iter()
            .map(|v| Some(f32s(&[*v], &[1])))
            .collect();
        assert_eq!(values(&run1("Max", &[], dup(&xs), DType::F32)), vec![4.0]);
        assert_eq!(values(&run1("Sum", &[], dup(&xs), DType::F32)), vec![7.5]);
        assert_eq!(values(&run1("Mean", &[], xs, DType::F32)), vec![2.5]);
    }
}
