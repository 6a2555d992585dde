//! A check of the reference against test data nobody here wrote: the models with expected
//! outputs that the pip `onnx` package ships under `onnx/backend/test/data/{simple,
//! pytorch-operator, pytorch-converted, light}`.
//!
//! Each model's nodes run through [`super::apply_typed`] in graph order. Initializers, graph
//! inputs (from `test_data_set_*/input_*.pb`) and `Constant` nodes are tensors; so are
//! `ConstantOfShape` nodes, which is how the `light` networks store their weights. Nodes
//! written in an older opset's form are first rewritten to the opset-19 form [`super::apply`]
//! implements (attributes that later became inputs, Softmax's 2-D coercion before opset 13,
//! the `broadcast`/`axis` attributes of opset-6 arithmetic). A model is *skipped* when it uses
//! an op type outside [`crate::ops::registry`] or a dtype dlcfuzz does not have; otherwise it
//! *passes* when every output matches with [`super::compare::compare`]'s tolerances (the
//! `light` networks, dozens of convolutions deep, need no looser ones), else it is a
//! *mismatch*.
//!
//! Residual failures: none on onnx 1.23.2 (every checked model passes); models skipped are
//! those with Dropout, LRN, PRelu, ConvTranspose, Shrink, Gradient, sequence or string ops.

use super::{apply_typed, convert, RefError};
use crate::emit::onnx::{dtype_of_code, pb};
use crate::ir::{Buffer, DType, Tensor};
use crate::ops::legacy::LegacyForm;
use crate::ops::{registry, specs_of_op_type, AttrValue, OpType};
use half::f16;
use prost::Message;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The folders of `onnx/backend/test/data` that are checked.
pub const SUITES: [&str; 4] = ["simple", "pytorch-operator", "pytorch-converted", "light"];

/// The verdict on one model.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every output matches.
    Pass,
    /// Some output differs (or the reference failed): the details.
    Mismatch(String),
    /// Not checked: why.
    Skipped(String),
}

/// The verdict on one model, with where it came from.
#[derive(Clone, Debug)]
pub struct ModelReport {
    /// The suite folder (`simple`, `light`, ...).
    pub suite: String,
    /// The model's name.
    pub name: String,
    /// The verdict.
    pub outcome: Outcome,
}

/// Counts over a set of reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Models that passed.
    pub passed: usize,
    /// Models that mismatched.
    pub mismatched: usize,
    /// Models skipped.
    pub skipped: usize,
}

impl Summary {
    /// Models checked (passed or mismatched).
    pub fn checked(&self) -> usize {
        self.passed + self.mismatched
    }

    /// The pass rate over checked models (0 when none was checked).
    pub fn pass_rate(&self) -> f64 {
        if self.checked() == 0 {
            0.0
        } else {
            self.passed as f64 / self.checked() as f64
        }
    }
}

/// Counts the outcomes of `reports`.
pub fn summarize(reports: &[ModelReport]) -> Summary {
    let mut s = Summary::default();
    for r in reports {
        match r.outcome {
            Outcome::Pass => s.passed += 1,
            Outcome::Mismatch(_) => s.mismatched += 1,
            Outcome::Skipped(_) => s.skipped += 1,
        }
    }
    s
}

/// A printable table of `reports` (one line per model) followed by the pass rate.
pub fn table(reports: &[ModelReport]) -> String {
    let mut out = String::new();
    for r in reports {
        let (verdict, detail) = match &r.outcome {
            Outcome::Pass => ("pass", String::new()),
            Outcome::Mismatch(d) => ("MISMATCH", d.clone()),
            Outcome::Skipped(d) => ("skipped", d.clone()),
        };
        let detail: String = detail.chars().take(110).collect();
        out.push_str(&format!(
            "{:<18} {:<52} {:<9} {detail}\n",
            r.suite, r.name, verdict
        ));
    }
    let s = summarize(reports);
    out.push_str(&format!(
        "pass rate {}/{} = {:.1}% ({} skipped)\n",
        s.passed,
        s.checked(),
        100.0 * s.pass_rate(),
        s.skipped
    ));
    out
}

/// Where the pip `onnx` package keeps its backend test data, under [`crate::paths::deps_dir`].
pub fn default_data_dir() -> PathBuf {
    crate::paths::deps_dir().join("onnx/backend/test/data")
}

/// `dlcfuzz reference-check`: the table of [`check_all`] over `data` (default:
/// [`default_data_dir`]) and the reference's version, or what is missing.
pub fn check_report(data: Option<PathBuf>) -> Result<String, String> {
    let data = data.unwrap_or_else(default_data_dir);
    if !data.is_dir() {
        return Err(format!(
            "no ONNX backend test data at {} (run scripts/setup.sh)",
            data.display()
        ));
    }
    Ok(format!(
        "{}reference: {}\n",
        table(&check_all(&data)),
        super::version()
    ))
}

/// Checks every model of every suite under `data` (a suite folder that is missing is
/// skipped). Reports come sorted by suite, then name.
pub fn check_all(data: &Path) -> Vec<ModelReport> {
    let mut reports = Vec::new();
    for suite in SUITES {
        let dir = data.join(suite);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let report = if suite == "light" {
                if path.extension().is_none_or(|e| e != "onnx") {
                    continue;
                }
                check_light(suite, &path)
            } else if path.join("model.onnx").exists() {
                check_folder(suite, &path)
            } else {
                continue;
            };
            reports.push(report);
        }
    }
    reports
}

fn report(suite: &str, path: &Path, outcome: Outcome) -> ModelReport {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    ModelReport {
        suite: suite.to_string(),
        name,
        outcome,
    }
}

/// A model folder with `model.onnx` and `test_data_set_*` folders.
fn check_folder(suite: &str, dir: &Path) -> ModelReport {
    let outcome = (|| -> Result<Outcome, String> {
        let model = load_model(&dir.join("model.onnx"))?;
        if let Some(why) = unsupported_reason(&model) {
            return Ok(Outcome::Skipped(why));
        }
        let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
            })
            .collect();
        sets.sort();
        if sets.is_empty() {
            return Ok(Outcome::Skipped("no test data".into()));
        }
        for set in sets {
            let inputs = read_numbered(&set, "input")?;
            let expected = read_numbered(&set, "output")?;
            let (Some(inputs), Some(expected)) = (inputs, expected) else {
                return Ok(Outcome::Skipped("a tensor of a dtype dlcfuzz lacks".into()));
            };
            let outcome = run_and_compare(&model, inputs, &expected);
            if outcome != Outcome::Pass {
                return Ok(outcome);
            }
        }
        Ok(Outcome::Pass)
    })();
    report(suite, dir, outcome.unwrap_or_else(Outcome::Mismatch))
}

/// A `light_*.onnx` network: inputs are `arange(n) / n` in float32 (what the `onnx` test
/// runner feeds them), expected outputs sit beside it in `light_*_output_<i>.pb`.
fn check_light(suite: &str, path: &Path) -> ModelReport {
    let outcome = (|| -> Result<Outcome, String> {
        let model = load_model(path)?;
        if let Some(why) = unsupported_reason(&model) {
            return Ok(Outcome::Skipped(why));
        }
        let graph = model.graph.as_ref().ok_or("no graph")?;
        let stem = path.with_extension("");
        let mut expected = Vec::new();
        for i in 0..graph.output.len() {
            let file = PathBuf::from(format!("{}_output_{i}.pb", stem.display()));
            match read_tensor(&file)? {
                Some(t) => expected.push(t),
                None => {
                    return Ok(Outcome::Skipped(
                        "an output of a dtype dlcfuzz lacks".into(),
                    ))
                }
            }
        }
        let inits: Vec<&str> = graph
            .initializer
            .iter()
            .filter_map(|t| t.name.as_deref())
            .collect();
        let mut inputs = Vec::new();
        for vi in graph.input.iter().filter(|i| !inits.contains(&i.name())) {
            let shape: Vec<usize> = match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
                Some(pb::type_proto::Value::TensorType(t)) => t
                    .shape
                    .iter()
                    .flat_map(|s| &s.dim)
                    .map(|d| match d.value {
                        Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => v as usize,
                        _ => 1,
                    })
                    .collect(),
                _ => return Ok(Outcome::Skipped("a non-tensor input".into())),
            };
            let n: usize = shape.iter().product();
            let data = (0..n).map(|i| (i as f64 / n as f64) as f32).collect();
            inputs.push(Tensor {
                shape,
                data: Buffer::F32(data),
            });
        }
        Ok(run_and_compare(&model, inputs, &expected))
    })();
    report(suite, path, outcome.unwrap_or_else(Outcome::Mismatch))
}

fn load_model(path: &Path) -> Result<pb::ModelProto, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    pb::ModelProto::decode(bytes.as_slice()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Op types a model may use besides the registry's: graph plumbing folded into constants.
const CONSTANT_OPS: [&str; 2] = ["Constant", "ConstantOfShape"];

/// Why a model cannot be checked, if it cannot.
fn unsupported_reason(model: &pb::ModelProto) -> Option<String> {
    let graph = model.graph.as_ref()?;
    let ours: Vec<&str> = registry().iter().map(|s| s.op_type()).collect();
    let mut outside: Vec<&str> = graph
        .node
        .iter()
        .map(|n| n.op_type())
        .filter(|op| !ours.contains(op) && !CONSTANT_OPS.contains(op))
        .collect();
    outside.sort_unstable();
    outside.dedup();
    if let Some(n) = graph
        .node
        .iter()
        .find(|n| !n.domain().is_empty() && n.domain() != "ai.onnx")
    {
        return Some(format!("domain {}", n.domain()));
    }
    (!outside.is_empty()).then(|| format!("outside the registry: {}", outside.join(", ")))
}

/// `<prefix>_<i>.pb` files of a data set, in order; `None` when one has a dtype we lack.
fn read_numbered(dir: &Path, prefix: &str) -> Result<Option<Vec<Tensor>>, String> {
    let mut out = Vec::new();
    for i in 0.. {
        let file = dir.join(format!("{prefix}_{i}.pb"));
        if !file.exists() {
            break;
        }
        match read_tensor(&file)? {
            Some(t) => out.push(t),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

fn read_tensor(path: &Path) -> Result<Option<Tensor>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let proto = pb::TensorProto::decode(bytes.as_slice())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    tensor_from_proto(&proto)
}

/// A `TensorProto` as a tensor; `None` for a dtype dlcfuzz does not have.
pub fn tensor_from_proto(p: &pb::TensorProto) -> Result<Option<Tensor>, String> {
    let Some(dtype) = dtype_of_code(p.data_type()) else {
        return Ok(None);
    };
    let shape: Vec<usize> = p.dims.iter().map(|d| *d as usize).collect();
    let n: usize = shape.iter().product();
    let data = match p.raw_data.as_deref() {
        Some(raw) => {
            if raw.len() != n * dtype.width() {
                return Err(format!("raw data of {} bytes for {n} elements", raw.len()));
            }
            Buffer::from_le_bytes(dtype, raw).expect("length checked above")
        }
        None => {
            let i32s = &p.int32_data;
            match dtype {
                DType::F32 => Buffer::F32(p.float_data.clone()),
                DType::F64 => Buffer::F64(p.double_data.clone()),
                DType::I64 => Buffer::I64(p.int64_data.clone()),
                DType::U32 => Buffer::U32(p.uint64_data.iter().map(|v| *v as u32).collect()),
                DType::U64 => Buffer::U64(p.uint64_data.clone()),
                DType::F16 => Buffer::F16(i32s.iter().map(|v| f16::from_bits(*v as u16)).collect()),
                DType::I8 => Buffer::I8(i32s.iter().map(|v| *v as i8).collect()),
                DType::I16 => Buffer::I16(i32s.iter().map(|v| *v as i16).collect()),
                DType::I32 => Buffer::I32(i32s.clone()),
                DType::U8 => Buffer::U8(i32s.iter().map(|v| *v as u8).collect()),
                DType::U16 => Buffer::U16(i32s.iter().map(|v| *v as u16).collect()),
                DType::Bool => Buffer::Bool(i32s.iter().map(|v| *v != 0).collect()),
            }
        }
    };
    if data.len() != n {
        return Err(format!("{} elements for shape {shape:?}", data.len()));
    }
    Ok(Some(Tensor { shape, data }))
}

/// The opset of the default domain.
fn opset(model: &pb::ModelProto) -> i64 {
    model
        .opset_import
        .iter()
        .find(|o| o.domain().is_empty() || o.domain() == "ai.onnx")
        .map_or(1, |o| o.version())
}

/// A value during interpretation: the tensor in its carrier, and its dtype.
type Value = (tch::Tensor, DType);

/// The attributes of a node that [`super::apply`] reads (the others are dropped).
fn attributes(node: &pb::NodeProto) -> Vec<(String, AttrValue<i64>)> {
    use pb::attribute_proto::AttributeType as T;
    node.attribute
        .iter()
        .filter_map(|a| {
            let v = match a.r#type() {
                T::Int => AttrValue::Int(a.i()),
                T::Ints => AttrValue::Ints(a.ints.clone()),
                T::Float => AttrValue::Float(a.f()),
                T::String => AttrValue::Str(String::from_utf8_lossy(a.s()).into_owned()),
                _ => return None,
            };
            Some((a.name().to_string(), v))
        })
        .collect()
}

/// The value of a `Constant` node.
fn constant(node: &pb::NodeProto) -> Result<Tensor, String> {
    let a = node.attribute.first().ok_or("a Constant without a value")?;
    let (shape, data) = match a.name() {
        "value" => {
            return tensor_from_proto(a.t.as_ref().ok_or("no tensor")?)?
                .ok_or_else(|| "a constant of a dtype dlcfuzz lacks".to_string())
        }
        "value_float" => (vec![], Buffer::F32(vec![a.f()])),
        "value_floats" => (vec![a.floats.len()], Buffer::F32(a.floats.clone())),
        "value_int" => (vec![], Buffer::I64(vec![a.i()])),
        "value_ints" => (vec![a.ints.len()], Buffer::I64(a.ints.clone())),
        other => return Err(format!("Constant {other}")),
    };
    Ok(Tensor { shape, data })
}

/// The value of a `ConstantOfShape` node with shape `shape`.
fn constant_of_shape(node: &pb::NodeProto, shape: &[i64]) -> Result<Tensor, String> {
    let shape: Vec<usize> = shape.iter().map(|d| *d as usize).collect();
    let n: usize = shape.iter().product();
    let fill = match node.attribute.iter().find(|a| a.name() == "value") {
        Some(a) => tensor_from_proto(a.t.as_ref().ok_or("no tensor")?)?
            .ok_or("a fill value of a dtype dlcfuzz lacks")?,
        None => Tensor {
            shape: vec![1],
            data: Buffer::F32(vec![0.0]),
        },
    };
    let v = fill.data.to_f64_vec().first().copied().unwrap_or(0.0);
    Ok(Tensor {
        shape,
        data: Buffer::from_f64(fill.data.dtype(), &vec![v; n]),
    })
}

/// The dtype of each output of a node whose inputs have `inputs` dtypes: `Cast`'s `to`, or
/// the output of the first signature the op's declarations give for exactly its inputs' types
/// (comparisons give booleans, `ArgMax` int64, `Where` its branches' type); the first input's
/// type when none matches (an op with constant operands, whose signatures list only its data
/// inputs).
fn output_dtypes(
    op: &str,
    attrs: &[(String, AttrValue<i64>)],
    inputs: &[Option<DType>],
    n: usize,
) -> Vec<DType> {
    let first = inputs
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or(DType::F32);
    let cast_to = || {
        attrs
            .iter()
            .find(|(k, _)| k == "to")
            .and_then(|(_, v)| match v {
                AttrValue::Int(c) => dtype_of_code(*c as i32),
                _ => None,
            })
    };
    let signed = || {
        specs_of_op_type(op)
            .flat_map(|(_, spec)| spec.sigs())
            .find(|sig| {
                sig.inputs
                    .iter()
                    .copied()
                    .map(Some)
                    .eq(inputs.iter().copied())
            })
            .and_then(|sig| sig.outputs.first().copied())
    };
    let d = if OpType::Cast.is(op) {
        cast_to()
    } else {
        signed()
    };
    vec![d.unwrap_or(first); n]
}

/// A node in the opset-19 form [`super::apply`] takes: op type, attributes, inputs.
struct Upgraded {
    op: String,
    attrs: Vec<(String, AttrValue<i64>)>,
    inputs: Vec<Option<Value>>,
}

fn ints_value(v: &[i64]) -> Value {
    (tch::Tensor::from_slice(v), DType::I64)
}

/// A scalar of `dtype` holding `v`.
fn scalar_value(v: f64, dtype: DType) -> Value {
    let t = Tensor {
        shape: vec![],
        data: Buffer::from_f64(dtype, &[v]),
    };
    (convert::to_tch(&t), dtype)
}

/// Rewrites a node written for an older opset into the opset-19 form, as the op's declaration
/// states its older forms ([`LegacyForm`]): attributes that became operands move to the
/// inputs, and opset 6's axis broadcasting aligns operand B.
fn upgrade(
    opset: i64,
    op: &str,
    mut attrs: Vec<(String, AttrValue<i64>)>,
    mut inputs: Vec<Option<Value>>,
) -> Upgraded {
    let form = LegacyForm::of(op);
    let mut take = |name: &str| -> Option<AttrValue<i64>> {
        let i = attrs.iter().position(|(k, _)| k == name)?;
        Some(attrs.remove(i).1)
    };
    let x_dtype = inputs
        .first()
        .and_then(|v| v.as_ref())
        .map_or(DType::F32, |v| v.1);
    let operands: Vec<Option<AttrValue<i64>>> = form
        .operands_from_attributes
        .iter()
        .map(|name| take(name))
        .collect();
    if operands.iter().any(Option::is_some) {
        inputs.resize_with(1, || None);
        inputs.extend(operands.into_iter().map(|v| match v {
            Some(AttrValue::Ints(v)) => Some(ints_value(&v)),
            Some(AttrValue::Float(f)) => Some(scalar_value(f64::from(f), x_dtype)),
            _ => None,
        }));
    }
    if form.axis_broadcast {
        let broadcast = take("broadcast");
        let axis = take("axis");
        if let (true, Some(AttrValue::Int(1)), Some(AttrValue::Int(axis))) =
            (opset < 7, broadcast, axis)
        {
            align_at_axis(&mut inputs, axis);
        }
    }
    Upgraded {
        op: op.to_string(),
        attrs,
        inputs,
    }
}

/// Reshapes operand B so that its dims line up with operand A's from `axis` on (opset 6's
/// `broadcast` with an `axis`).
fn align_at_axis(inputs: &mut [Option<Value>], axis: i64) {
    let (Some(Some(a)), Some(Some(b))) = (inputs.first(), inputs.get(1)) else {
        return;
    };
    let (ra, mut shape) = (a.0.dim() as i64, b.0.size());
    let axis = if axis < 0 { axis + ra } else { axis };
    while (shape.len() as i64) < ra - axis {
        shape.push(1);
    }
    if let Ok(t) = b.0.f_reshape(shape.as_slice()) {
        inputs[1] = Some((t, b.1));
    }
}

/// Runs `Softmax`/`LogSoftmax` of opsets before 13: the input is coerced to 2-D at `axis`
/// (default 1) and normalized over the whole trailing block.
fn coerced_softmax(
    op: &str,
    attrs: &[(String, AttrValue<i64>)],
    x: &Value,
) -> Result<Vec<Value>, RefError> {
    let axis = super::int_attr(attrs, "axis", 1);
    let size = x.0.size();
    let axis = if axis < 0 {
        axis + size.len() as i64
    } else {
        axis
    } as usize;
    let outer: i64 = size[..axis].iter().product();
    let flat = x.0.f_reshape([outer, -1])?;
    let one = [("axis".to_string(), AttrValue::Int(1))];
    let y = apply_typed(op, &one, &[Some(flat)], &[Some(x.1)], &[x.1])?.remove(0);
    Ok(vec![(y.f_reshape(size.as_slice())?, x.1)])
}

/// Interprets `model` on `inputs` (graph inputs that are not initializers, in order) and
/// compares its outputs with `expected`.
fn run_and_compare(model: &pb::ModelProto, inputs: Vec<Tensor>, expected: &[Tensor]) -> Outcome {
    match interpret(model, inputs) {
        Err(e) => Outcome::Mismatch(e),
        Ok(outs) => {
            if outs.len() != expected.len() {
                return Outcome::Mismatch(format!(
                    "{} outputs, {} expected",
                    outs.len(),
                    expected.len()
                ));
            }
            for (i, (got, want)) in outs.iter().zip(expected).enumerate() {
                if let Some(d) = super::compare::compare(want, got) {
                    return Outcome::Mismatch(format!("output {i}: {d}"));
                }
            }
            Outcome::Pass
        }
    }
}

/// The outputs of `model` on `inputs`.
fn interpret(model: &pb::ModelProto, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
    let graph = model.graph.as_ref().ok_or("no graph")?;
    let opset = opset(model);
    let mut env: HashMap<String, Value> = HashMap::new();
    for init in &graph.initializer {
        let t = tensor_from_proto(init)?.ok_or("an initializer of a dtype dlcfuzz lacks")?;
        env.insert(
            init.name().to_string(),
            (convert::to_tch(&t), t.data.dtype()),
        );
    }
    let feeds: Vec<String> = graph
        .input
        .iter()
        .map(|i| i.name().to_string())
        .filter(|name| !env.contains_key(name))
        .collect();
    for (name, t) in feeds.into_iter().zip(inputs) {
        env.insert(name, (convert::to_tch(&t), t.data.dtype()));
    }
    for node in &graph.node {
        let fetch = |name: &String| -> Result<Option<Value>, String> {
            if name.is_empty() {
                return Ok(None);
            }
            let (t, d) = env
                .get(name)
                .ok_or_else(|| format!("value {name} is undefined"))?;
            Ok(Some((t.shallow_clone(), *d)))
        };
        let inputs: Vec<Option<Value>> = node.input.iter().map(fetch).collect::<Result<_, _>>()?;
        let op = node.op_type();
        let outs: Vec<Value> = match op {
            "Constant" => {
                let t = constant(node)?;
                vec![(convert::to_tch(&t), t.data.dtype())]
            }
            "ConstantOfShape" => {
                let shape = inputs
                    .first()
                    .and_then(Option::as_ref)
                    .ok_or("ConstantOfShape without a shape")?;
                let shape = crate::ops::eval::int_values(&shape.0).map_err(|e| e.to_string())?;
                let t = constant_of_shape(node, &shape)?;
                vec![(convert::to_tch(&t), t.data.dtype())]
            }
            _ if LegacyForm::of(op)
                .coerced_to_2d_before
                .is_some_and(|before| opset < before) =>
            {
                let x = inputs.first().and_then(Option::as_ref).ok_or("no input")?;
                coerced_softmax(op, &attributes(node), x).map_err(|e| format!("{op}: {e}"))?
            }
            _ => {
                let u = upgrade(opset, op, attributes(node), inputs);
                let dtypes: Vec<Option<DType>> =
                    u.inputs.iter().map(|v| v.as_ref().map(|v| v.1)).collect();
                let tensors: Vec<Option<tch::Tensor>> =
                    u.inputs.into_iter().map(|v| v.map(|v| v.0)).collect();
                let out_dtypes = output_dtypes(&u.op, &u.attrs, &dtypes, node.output.len());
                let outs = apply_typed(&u.op, &u.attrs, &tensors, &dtypes, &out_dtypes)
                    .map_err(|e| format!("{} ({}): {e}", node.name(), u.op))?;
                outs.into_iter().zip(out_dtypes).collect()
            }
        };
        for (name, v) in node.output.iter().zip(outs) {
            if !name.is_empty() {
                env.insert(name.clone(), v);
            }
        }
    }
    graph
        .output
        .iter()
        .map(|o| {
            let (t, d) = env
                .get(o.name())
                .ok_or_else(|| format!("output {} is undefined", o.name()))?;
            convert::from_tch(t, *d).map_err(|e| e.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_data_folder_is_named() {
        let missing = PathBuf::from("/nonexistent/onnx-data");
        let error = check_report(Some(missing)).unwrap_err();
        assert!(error.contains("/nonexistent/onnx-data") && error.contains("scripts/setup.sh"));
    }

    #[test]
    fn typed_and_raw_tensor_protos_decode_alike() {
        let raw = crate::emit::onnx::tensor_proto(
            "x",
            &Tensor {
                shape: vec![2],
                data: Buffer::I32(vec![-3, 7]),
            },
        );
        let typed = pb::TensorProto {
            dims: vec![2],
            data_type: Some(DType::I32.onnx_code()),
            int32_data: vec![-3, 7],
            ..Default::default()
        };
        assert_eq!(
            tensor_from_proto(&raw).unwrap(),
            tensor_from_proto(&typed).unwrap()
        );
        let strings = pb::TensorProto {
            data_type: Some(8),
            ..Default::default()
        };
        assert_eq!(tensor_from_proto(&strings).unwrap(), None);
    }

    #[test]
    fn legacy_attributes_become_inputs() {
        let attrs = vec![
            ("axes".to_string(), AttrValue::Ints(vec![1])),
            ("keepdims".to_string(), AttrValue::Int(0)),
        ];
        let x = Some(ints_value(&[1, 2]));
        let u = upgrade(6, "ReduceSum", attrs, vec![x]);
        assert_eq!(u.inputs.len(), 2);
        assert_eq!(u.attrs.len(), 1);
        let pad = upgrade(
            2,
            "Pad",
            vec![("pads".to_string(), AttrValue::Ints(vec![1, 1]))],
            vec![Some(ints_value(&[5]))],
        );
        assert_eq!(pad.inputs.len(), 3);
    }
}
