//! Element-wise unary math and activations, each declared once, in one row of [`table`]:
//! its ONNX types and float attributes (the spec the generator uses), its libtorch
//! evaluation (the reference), how its kernels round (precision analysis), where it jumps
//! (outputs within rounding of a jump are never compared), and how the program targets
//! write it as a torch expression. Every other layer reads the row; nothing keeps a second
//! list of these op names.
//!
//! Adding an op is one row; its id in the decoder is derived from its name
//! ([`crate::gen::menu::op_key`]), so it does not move existing seeds.

use super::eval::{Args, RefError};
use super::fragility::{self, NodeValues};
use super::torch_form::{float, TorchForm, TorchWriter};
pub use super::validity::Domain;
use super::validity::{Finite, Growth, Proxy};
use super::{AttrCx, AttrValue, OpSpec, RoundingClass, Sig, SymAttrs, SymTensor};
use crate::ir::DType;
use crate::sym::{Bool, Int};
use std::sync::OnceLock;
use tch::{Kind, TchError, Tensor};

/// Which dtypes a unary op accepts and what it outputs.
#[derive(Clone, Copy, Debug)]
pub enum Types {
    /// Floats in, same type out.
    Float,
    /// Floats and signed integers.
    Signed,
    /// Every numeric type.
    Numeric,
    /// Bool in, bool out.
    Bool,
    /// Every type.
    Any,
    /// Exactly these types, same type out.
    Only(&'static [DType]),
    /// Exactly these types in, bool out.
    OnlyToBool(&'static [DType]),
}

/// A float attribute: its ONNX default, and the range the generator draws it from (`None`:
/// never generated, only read from models that set it).
#[derive(Clone, Copy, Debug)]
pub struct FloatAttr {
    /// The attribute's name.
    pub name: &'static str,
    /// The ONNX default.
    pub default: f32,
    /// The generated range.
    pub range: Option<(f32, f32)>,
}

/// A generated float attribute in `[lo, hi]` with ONNX default `default`.
pub const fn drawn(name: &'static str, default: f32, lo: f32, hi: f32) -> FloatAttr {
    FloatAttr {
        name,
        default,
        range: Some((lo, hi)),
    }
}

/// What an evaluation sees besides the input: the float attributes in declaration order
/// (defaults filled in), the input dtype, and integer attributes by name.
pub struct EvalArgs<'a> {
    /// Float attribute values, in the row's order.
    pub floats: &'a [f64],
    /// The input's dtype (its libtorch carrier may be wider).
    pub dtype: DType,
    /// An integer attribute, or the given default.
    pub int: &'a dyn Fn(&str, i64) -> i64,
}

/// Where a row's output jumps.
#[derive(Clone, Copy, Debug)]
pub enum Jumps {
    /// At these points, a function of its float attribute values (Sign at 0, Shrink at
    /// ±lambd).
    At(fn(&[f64]) -> Vec<f64>),
    /// At every integer plus this offset (Floor and Ceil at 0, Round at 0.5).
    Grid(f64),
}

/// The reference evaluation of a row.
pub type Eval = fn(&Tensor, &EvalArgs) -> Result<Tensor, TchError>;

/// One element-wise unary operator. See the module docs.
#[derive(Clone, Debug)]
pub struct Unary {
    /// The ONNX op type.
    pub name: &'static str,
    /// Its input types.
    pub types: Types,
    /// Its float attributes.
    pub floats: &'static [FloatAttr],
    /// The reference evaluation (libtorch, any float precision).
    pub eval: Eval,
    /// How its kernels may round (elementary functions: to a few ulp).
    pub rounding: RoundingClass,
    /// Where the output jumps, as a function of the float attributes: inputs within rounding
    /// of a jump make the output fragile.
    pub jumps: Option<Jumps>,
    /// The torch expression of the program targets (`{x}` the input, `{name}` a float
    /// attribute), float32 only; `None`: not written as a program. Python spelling; the
    /// TorchScript dialect respells it ([`crate::mutate::program::render::torchscript_spelling`])
    /// and `tests/torchscript.rs` compiles every form that way.
    pub torch: Option<&'static str>,
    /// Where it is defined, when not on all reals.
    pub domain: Option<Domain>,
    /// Which way it overflows, when it grows exponentially.
    pub growth: Option<Growth>,
    /// How a value search steps through its flat parts.
    pub proxy: Option<Proxy>,
    /// It only passes data through ([`OpSpec::moves_data`]).
    pub moves_data: bool,
    /// Its exact result from its exact input, when a signed integer result may overflow
    /// (`Neg` and `Abs` of the minimum): the overflow is undefined ([`OpSpec::undefined`]).
    pub overflow: Option<fragility::Exact>,
    /// Where the specification admits more than one reading ([`OpSpec::ambiguous`]).
    pub ambiguity: Option<fragility::Rule>,
    /// Whether it is finite on its domain's edge, derived once from `eval`
    /// ([`Unary::finite_at`]): [`OpSpec::finite`] is asked for every node of every test's
    /// fragility walk.
    edge_finite: OnceLock<bool>,
}

/// A row with no attributes, jumps or torch form (see the builder methods).
fn op(name: &'static str, types: Types, eval: Eval) -> Unary {
    Unary {
        name,
        types,
        floats: &[],
        eval,
        rounding: RoundingClass::Correct,
        jumps: None,
        torch: None,
        domain: None,
        growth: None,
        proxy: None,
        moves_data: false,
        overflow: None,
        ambiguity: None,
        edge_finite: OnceLock::new(),
    }
}

impl Unary {
    fn floats(self, floats: &'static [FloatAttr]) -> Unary {
        Unary { floats, ..self }
    }

    fn elementary(self) -> Unary {
        Unary {
            rounding: RoundingClass::Elementary,
            ..self
        }
    }

    fn jumps(self, at: fn(&[f64]) -> Vec<f64>) -> Unary {
        Unary {
            jumps: Some(Jumps::At(at)),
            ..self
        }
    }

    fn grid(self, offset: f64) -> Unary {
        Unary {
            jumps: Some(Jumps::Grid(offset)),
            ..self
        }
    }

    fn domain(self, domain: Domain) -> Unary {
        Unary {
            domain: Some(domain),
            ..self
        }
    }

    fn torch(self, torch: &'static str) -> Unary {
        Unary {
            torch: Some(torch),
            ..self
        }
    }

    fn moves_data(self) -> Unary {
        Unary {
            moves_data: true,
            ..self
        }
    }

    fn grows(self, growth: Growth) -> Unary {
        Unary {
            growth: Some(growth),
            ..self
        }
    }

    fn overflows(self, exact: fragility::Exact) -> Unary {
        Unary {
            overflow: Some(exact),
            ..self
        }
    }

    fn ambiguous(self, rule: fragility::Rule) -> Unary {
        Unary {
            ambiguity: Some(rule),
            ..self
        }
    }

    fn proxy(self, proxy: Proxy) -> Unary {
        Unary {
            proxy: Some(proxy),
            ..self
        }
    }

    /// Whether its output is finite at `x` (float64, attributes at their defaults).
    fn finite_at(&self, x: f64) -> bool {
        let floats: Vec<f64> = self.floats.iter().map(|a| f64::from(a.default)).collect();
        let args = EvalArgs {
            floats: &floats,
            dtype: DType::F64,
            int: &|_, default| default,
        };
        (self.eval)(&Tensor::from_slice(&[x]), &args)
            .and_then(|y| y.f_isfinite()?.f_all())
            .is_ok_and(|all| all.int64_value(&[]) != 0)
    }

    /// The float attribute values of a node with `named` attributes, in the row's order,
    /// defaults filled in (an `int` attribute reads as its value, as the reference reads one).
    pub fn float_values(&self, named: &[(String, AttrValue<i64>)]) -> Vec<f64> {
        let value = |name: &str| match named.iter().find(|(n, _)| n == name) {
            Some((_, AttrValue::Float(v))) => Some(f64::from(*v)),
            Some((_, AttrValue::Int(v))) => Some(*v as f64),
            _ => None,
        };
        self.floats
            .iter()
            .map(|a| value(a.name).unwrap_or(f64::from(a.default)))
            .collect()
    }
}

/// `alpha * (exp(min(x, 0) / scale) - 1)` for `x <= 0`, else `x`: the ELU family without
/// overflowing `exp` on the branch `where` discards (which would poison gradients).
fn elu(x: &Tensor, alpha: f64, input_scale: f64) -> Result<Tensor, TchError> {
    let negative = x
        .f_clamp_max(0.0)?
        .f_mul_scalar(input_scale)?
        .f_expm1()?
        .f_mul_scalar(alpha)?;
    x.f_where_self(&x.f_gt(0.0)?, &negative)
}

/// `log(1 + exp(x))` to full precision, as `max(x, 0) + log1p(exp(-|x|))`. libtorch's
/// `softplus` returns `x` itself above a threshold of 20, which is off by `log1p(exp(-x))`
/// (2e-12 at 27): invisible in float32, a wrong float64 result.
fn softplus(x: &Tensor) -> Result<Tensor, TchError> {
    x.f_clamp_min(0.0)?
        .f_add(&x.f_abs()?.f_neg()?.f_exp()?.f_log1p()?)
}

/// `x <= 0` to `0`, else `x` on integers (where `relu` is not defined).
fn relu(x: &Tensor) -> Result<Tensor, TchError> {
    if x.is_floating_point() {
        x.f_relu()
    } else {
        x.f_clamp_min(0)
    }
}

/// `IsInf` with its `detect_positive` / `detect_negative` switches.
fn is_inf(x: &Tensor, a: &EvalArgs) -> Result<Tensor, TchError> {
    let inf = x.f_isinf()?;
    match (
        (a.int)("detect_positive", 1) != 0,
        (a.int)("detect_negative", 1) != 0,
    ) {
        (true, true) => Ok(inf),
        (true, false) => inf.f_logical_and(&x.f_gt(0.0)?),
        (false, true) => inf.f_logical_and(&x.f_lt(0.0)?),
        (false, false) => inf.f_zeros_like(),
    }
}

const LEAKY_ALPHA: &[FloatAttr] = &[drawn("alpha", 0.01, 0.0625, 2.0)];
const ALPHA_ONE: &[FloatAttr] = &[drawn("alpha", 1.0, 0.0625, 2.0)];
const SELU: &[FloatAttr] = &[
    FloatAttr {
        name: "alpha",
        default: 1.673_263_2,
        range: None,
    },
    FloatAttr {
        name: "gamma",
        default: 1.050_701,
        range: None,
    },
];

/// Every element-wise unary op, in the registry's order.
pub fn table() -> &'static [Unary] {
    static TABLE: OnceLock<Vec<Unary>> = OnceLock::new();
    TABLE.get_or_init(|| {
        use Types::*;
        vec![
            op("Abs", Numeric, |x, a| match a.dtype.is_unsigned() {
                true => Ok(x.shallow_clone()),
                false => x.f_abs(),
            })
            .overflows(|x| x[0].abs())
            .torch("torch.abs({x})"),
            op("Neg", Signed, |x, _| x.f_neg())
                .overflows(|x| -&x[0])
                .torch("torch.neg({x})"),
            op("Sign", Numeric, |x, a| match a.dtype.is_unsigned() {
                true => x.f_ne(0)?.f_to_kind(x.kind()),
                false => x.f_sign(),
            })
            .jumps(|_| vec![0.0])
            .proxy(Proxy::Leaky)
            .torch("torch.sign({x})"),
            op("Identity", Any, |x, _| Ok(x.shallow_clone())).moves_data(),
            op("Not", Bool, |x, _| x.f_logical_not()),
            op("Exp", Float, |x, _| x.f_exp()).elementary().grows(Growth::Up).torch("torch.exp({x})"),
            op("Log", Float, |x, _| x.f_log()).elementary().torch("torch.log({x})").domain(Domain::Positive),
            op("Sqrt", Float, |x, _| x.f_sqrt()).torch("torch.sqrt({x})").domain(Domain::Positive),
            op("Reciprocal", Float, |x, _| x.f_reciprocal())
                .torch("torch.reciprocal({x})")
                .domain(Domain::NonZero),
            op("Sin", Float, |x, _| x.f_sin()).elementary().torch("torch.sin({x})"),
            op("Cos", Float, |x, _| x.f_cos()).elementary().torch("torch.cos({x})"),
            op("Tan", Float, |x, _| x.f_tan()).elementary().torch("torch.tan({x})"),
            op("Atan", Float, |x, _| x.f_atan()).elementary().torch("torch.atan({x})"),
            op("Sinh", Float, |x, _| x.f_sinh()).elementary().grows(Growth::Both).torch("torch.sinh({x})"),
            op("Cosh", Float, |x, _| x.f_cosh()).elementary().grows(Growth::Both).torch("torch.cosh({x})"),
            op("Asinh", Float, |x, _| x.f_asinh()).elementary().torch("torch.asinh({x})"),
            op("Tanh", Float, |x, _| x.f_tanh()).elementary().torch("torch.tanh({x})"),
            op("Erf", Float, |x, _| x.f_erf()).elementary().torch("torch.erf({x})"),
            op("Floor", Float, |x, _| x.f_floor()).grid(0.0).proxy(Proxy::Identity).torch("torch.floor({x})"),
            op("Ceil", Float, |x, _| x.f_ceil()).grid(0.0).proxy(Proxy::Identity).torch("torch.ceil({x})"),
            // libtorch rounds half to even, as ONNX does.
            op("Round", Float, |x, _| x.f_round()).grid(0.5).proxy(Proxy::Identity).torch("torch.round({x})"),
            op("Sigmoid", Float, |x, _| x.f_sigmoid()).elementary().torch("torch.sigmoid({x})"),
            op("Relu", Signed, |x, _| relu(x)).proxy(Proxy::Leaky).torch("torch.relu({x})"),
            op("LeakyRelu", Float, |x, a| x.f_where_self(&x.f_ge(0.0)?, &x.f_mul_scalar(a.floats[0])?))
                .floats(LEAKY_ALPHA)
                .torch("torch.where({x} >= 0.0, {x}, {x} * {alpha})"),
            op("Elu", Float, |x, a| elu(x, a.floats[0], 1.0))
                .floats(ALPHA_ONE)
                .elementary()
                .torch("torch.nn.functional.elu({x}, {alpha})"),
            op("Celu", Only(&[DType::F32]), |x, a| elu(x, a.floats[0], 1.0 / a.floats[0]))
                .floats(const { &[drawn("alpha", 1.0, 0.25, 2.0)] })
                .elementary()
                .torch("torch.nn.functional.celu({x}, {alpha})"),
            op("Selu", Float, |x, a| elu(x, a.floats[0], 1.0)?.f_mul_scalar(a.floats[1]))
                .floats(SELU)
                .elementary()
                .torch("torch.nn.functional.elu({x}, {alpha}) * {gamma}"),
            op("ThresholdedRelu", Float, |x, a| x.f_where_scalarother(&x.f_gt(a.floats[0])?, 0.0))
                .floats(ALPHA_ONE)
                .jumps(|a| vec![a[0]])
                .proxy(Proxy::Leaky)
                .torch("torch.where({x} > {alpha}, {x}, torch.zeros_like({x}))"),
            op("HardSigmoid", Float, |x, a| {
                x.f_mul_scalar(a.floats[0])?.f_add_scalar(a.floats[1])?.f_clamp(0.0, 1.0)
            })
            .floats(const { &[drawn("alpha", 0.2, 0.0625, 1.0), drawn("beta", 0.5, 0.0, 1.0)] })
            .elementary()
            .proxy(Proxy::Leaky)
            .torch("torch.clamp({x} * {alpha} + {beta}, 0.0, 1.0)"),
            op("HardSwish", Float, |x, _| {
                x.f_mul(&x.f_mul_scalar(1.0 / 6.0)?.f_add_scalar(0.5)?.f_clamp(0.0, 1.0)?)
            })
            .elementary()
            .proxy(Proxy::Leaky)
            .torch("torch.nn.functional.hardswish({x})"),
            op("Softplus", Float, |x, _| softplus(x))
                .elementary()
                .grows(Growth::Up)
                .ambiguous(fragility::exp_leaves_normal_range)
                .torch("torch.nn.functional.softplus({x})"),
            op("Softsign", Float, |x, _| x.f_div(&x.f_abs()?.f_add_scalar(1.0)?))
                .elementary()
                .torch("{x} / (1.0 + torch.abs({x}))"),
            op("Mish", Float, |x, _| x.f_mul(&softplus(x)?.f_tanh()?))
                .elementary()
                .torch("torch.nn.functional.mish({x})"),
            op("IsNaN", OnlyToBool(&DType::FLOATS), |x, _| x.f_isnan()),
            op("IsInf", OnlyToBool(&[DType::F32, DType::F64]), is_inf),
            // Defined only on part of the reals (NaN outside): NNSmith's value search exists
            // for these.
            op("Asin", Float, |x, _| x.f_asin()).elementary().torch("torch.asin({x})").domain(Domain::Symmetric),
            op("Acos", Float, |x, _| x.f_acos()).elementary().torch("torch.acos({x})").domain(Domain::Symmetric),
            op("Acosh", Float, |x, _| x.f_acosh()).elementary().torch("torch.acosh({x})").domain(Domain::AboveOne),
            op("Atanh", Float, |x, _| x.f_atanh()).elementary().torch("torch.atanh({x})").domain(Domain::Symmetric),
            op("Shrink", Float, |x, a| {
                let (bias, lambd, zero) = (a.floats[0], a.floats[1], x.f_zeros_like()?);
                let high = x.f_sub_scalar(bias)?.f_where_self(&x.f_gt(lambd)?, &zero)?;
                x.f_add_scalar(bias)?.f_where_self(&x.f_lt(-lambd)?, &high)
            })
            .floats(const { &[drawn("bias", 0.0, 0.0, 2.0), drawn("lambd", 0.5, 0.0, 2.0)] })
            .jumps(|a| vec![-a[1], a[1]])
            .torch("torch.where({x} < -{lambd}, {x} + {bias}, torch.where({x} > {lambd}, {x} - {bias}, torch.zeros_like({x})))"),
        ]
    })
}

/// The row of op type `name`, if it is an element-wise unary op.
pub fn declared(name: &str) -> Option<&'static Unary> {
    table().iter().find(|u| u.name == name)
}

/// Runs the row's evaluation on `x`, keeping an integer input's carrier kind for integer
/// results (Abs, Neg, Sign, Relu).
pub fn evaluate(row: &Unary, x: &Tensor, args: &EvalArgs) -> Result<Tensor, TchError> {
    let y = (row.eval)(x, args)?;
    if args.dtype.is_int() && y.kind() != x.kind() && y.kind() != Kind::Bool {
        y.f_to_kind(x.kind())
    } else {
        Ok(y)
    }
}

impl OpSpec for Unary {
    fn evaluate(&self, a: &Args) -> Result<Vec<Tensor>, RefError> {
        let floats = self.float_values(a.attrs());
        let int = |name: &str, default: i64| a.int(name, default);
        let args = EvalArgs {
            floats: &floats,
            dtype: a.dtype(0),
            int: &int,
        };
        Ok(vec![evaluate(self, a.x(0)?, &args)?])
    }

    fn rounding(&self) -> RoundingClass {
        self.rounding
    }

    fn finite(&self) -> Option<Finite> {
        let domain = self.domain.map(|domain| Finite::Domain {
            domain,
            edge_finite: *self
                .edge_finite
                .get_or_init(|| self.finite_at(domain.edge())),
        });
        domain.or(self.growth.map(Finite::Growth))
    }

    fn proxy(&self) -> Option<Proxy> {
        self.proxy
    }

    fn near_jump(&self, node: &NodeValues) -> Result<bool, RefError> {
        if !node.float_input() {
            return Ok(false);
        }
        let x = node.double(0);
        let mx = node.margin_of(0, &x);
        Ok(match self.jumps {
            // A declared jump (Sign at 0, ThresholdedRelu at alpha, Shrink at ±lambd).
            Some(Jumps::At(at)) => at(&self.float_values(&node.attrs.named))
                .into_iter()
                .any(|j| fragility::any(&(&x - j).abs().le_tensor(&mx))),
            Some(Jumps::Grid(offset)) => fragility::near_grid(&x, &mx, offset),
            None => fragility::near_domain_edge(self.finite(), node).unwrap_or(false),
        })
    }

    fn undefined(&self, node: &NodeValues) -> fragility::Verdict {
        match self.overflow {
            Some(exact) => fragility::signed_overflow(node, exact),
            None => Ok(None),
        }
    }

    fn ambiguous(&self, node: &NodeValues) -> fragility::Verdict {
        self.ambiguity.map_or(Ok(None), |rule| rule(node))
    }

    fn moves_data(&self) -> bool {
        self.moves_data
    }

    fn torch_form(&self) -> Option<TorchWriter<'_>> {
        let torch = self.torch?;
        Some(TorchWriter::new(move |cx| {
            let values = self.float_values(&cx.attrs.named);
            let template = self
                .floats
                .iter()
                .zip(values)
                .fold(torch.replace("{x}", "{0}"), |t, (a, v)| {
                    t.replace(&format!("{{{}}}", a.name), &float(v))
                });
            Ok(TorchForm::elementwise(template))
        }))
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sigs(&self) -> Vec<Sig> {
        let same = |types: Vec<DType>| types.into_iter().map(|t| Sig::uniform(t, 1)).collect();
        match self.types {
            Types::Float => same(DType::FLOATS.to_vec()),
            Types::Signed => same(DType::signed_numeric()),
            Types::Numeric => same(DType::numeric()),
            Types::Bool => same(vec![DType::Bool]),
            Types::Any => same(DType::ALL.to_vec()),
            Types::Only(types) => same(types.to_vec()),
            Types::OnlyToBool(types) => types
                .iter()
                .map(|t| Sig::new(vec![*t], vec![DType::Bool]))
                .collect(),
        }
    }

    fn attrs(&self, cx: &mut AttrCx, _inputs: &[SymTensor]) -> SymAttrs {
        let mut attrs = SymAttrs::default();
        for a in self.floats {
            if let Some((lo, hi)) = a.range {
                let v = cx.float(lo, hi);
                attrs.set(a.name, AttrValue::Float(v));
            }
        }
        attrs
    }

    fn requires(&self, _attrs: &SymAttrs, _inputs: &[SymTensor]) -> Vec<Bool> {
        Vec::new()
    }

    fn type_transfer(&self, _attrs: &SymAttrs, inputs: &[SymTensor]) -> Vec<Vec<Int>> {
        vec![inputs[0].dims.clone()]
    }
}

/// The unary family, one spec per row.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    table()
        .iter()
        .map(|u| Box::new(u.clone()) as Box<dyn OpSpec>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_shape_is_input_shape() {
        let x = SymTensor {
            dtype: DType::F32,
            dims: vec![Int::from(2usize), Int::from(3usize)],
        };
        for spec in specs() {
            let out = spec.type_transfer(&SymAttrs::default(), std::slice::from_ref(&x));
            assert_eq!(out[0].len(), 2, "{}", spec.name());
        }
    }

    #[test]
    fn torch_forms_name_only_declared_attributes() {
        for row in table() {
            let Some(torch) = row.torch else { continue };
            let mut rest = torch.replace("{x}", "");
            for a in row.floats {
                rest = rest.replace(&format!("{{{}}}", a.name), "");
            }
            assert!(!rest.contains('{'), "{}: {torch}", row.name);
        }
    }

    #[test]
    fn shrink_follows_its_onnx_formula() {
        let x = Tensor::from_slice(&[-2.0f64, -0.5, 0.0, 0.4, 1.5]);
        let args = EvalArgs {
            floats: &[0.5, 1.0],
            dtype: DType::F64,
            int: &|_, d| d,
        };
        let y = evaluate(declared("Shrink").unwrap(), &x, &args).unwrap();
        let got: Vec<f64> = Vec::try_from(&y).unwrap();
        assert_eq!(got, vec![-1.5, 0.0, 0.0, 0.0, 1.0]);
    }
}

#[cfg(test)]
mod evaluation_tests {
    use crate::ir::DType;
    use crate::ops::testing::*;
    use crate::ops::AttrValue;

    #[test]
    fn round_is_half_to_even() {
        let x = f32s(&[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6], &[8]);
        let y = run1("Round", &[], vec![Some(x)], DType::F32);
        assert_eq!(values(&y), vec![0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -3.0]);
    }

    #[test]
    fn activations_match_their_onnx_formulas() {
        let x = f32s(&[-2.0, 0.0, 1.0], &[3]);
        let leaky = run1(
            "LeakyRelu",
            &[("alpha", AttrValue::Float(0.5))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&leaky), vec![-1.0, 0.0, 1.0]);
        let hs = run1(
            "HardSigmoid",
            &[
                ("alpha", AttrValue::Float(0.25)),
                ("beta", AttrValue::Float(0.5)),
            ],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&hs), vec![0.0, 0.5, 0.75]);
        let thr = run1(
            "ThresholdedRelu",
            &[("alpha", AttrValue::Float(1.0))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        assert_eq!(values(&thr), vec![0.0, 0.0, 0.0]);
        let celu = run1(
            "Celu",
            &[("alpha", AttrValue::Float(2.0))],
            vec![Some(x.shallow_clone())],
            DType::F32,
        );
        let want = 2.0 * ((-1.0f64).exp() - 1.0);
        assert!((values(&celu)[0] - want).abs() < 1e-6);
        let selu = run1("Selu", &[], vec![Some(x.shallow_clone())], DType::F32);
        assert!((values(&selu)[2] - 1.050_701).abs() < 1e-6);
    }

    #[test]
    fn unsigned_abs_and_sign_read_u64_bit_patterns_as_unsigned() {
        let x = i64s(&[-1, 0, 3], &[3]);
        assert_eq!(
            values(&run1("Abs", &[], vec![Some(x.shallow_clone())], DType::U64))[0],
            -1.0
        );
        assert_eq!(
            values(&run1("Sign", &[], vec![Some(x)], DType::U64)),
            vec![1.0, 0.0, 1.0]
        );
    }
}
