//! tract (`tract-onnx`), in process: the typed model is the reference, the decluttered and the
//! optimized models are compared against it. Being pure Rust, tract is instrumented by
//! cargo fuzz, so its own code steers libFuzzer.
//!
//! tract can panic. By default a run is wrapped in `catch_unwind` and a panic becomes an
//! [`ErrorClass::Internal`] error whose message starts with `panic: `, so an in-process
//! campaign survives and files it as a crash finding. [`Tract::new_propagating_panics`] lets
//! the panic through instead, for fuzz targets, where libFuzzer reports it with its stack.

pub use super::tract_model::LEVELS;
use super::tract_model::{dtype_of, error, execute, parse, static_input, to_tract, typed, Phase};
use super::{panic, Backend, BackendError, ErrorClass, Stage};
use crate::emit::onnx::OnnxModel;
use crate::ir::{Tensor, TensorType};
use tract_onnx::prelude::{InferenceModelExt, IntoRunnable, IntoTValue, TValue, TVec, TypedModel};

/// Most elements a declared model input may have for [`Tract::load_only`] to process it.
pub const LOAD_MAX_ELEMENTS: usize = 4096;

/// The tract-onnx version this backend is built against (tract exposes no version constant;
/// a unit test checks this one against `Cargo.lock`).
pub const TRACT_VERSION: &str = "0.23.9";

/// The tract backend.
pub struct Tract {
    catch_panics: bool,
}

impl Default for Tract {
    fn default() -> Self {
        Self::new()
    }
}

impl Tract {
    /// tract with panics caught and reported as internal errors.
    pub fn new() -> Tract {
        Tract { catch_panics: true }
    }

    /// tract with panics propagating to the caller (for fuzz targets: libFuzzer reports them).
    pub fn new_propagating_panics() -> Tract {
        Tract {
            catch_panics: false,
        }
    }

    /// Runs `f`, turning a panic into an internal error at `stage` unless panics propagate.
    fn guard<T>(
        &self,
        stage: Stage,
        f: impl FnOnce() -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        if !self.catch_panics {
            return f();
        }
        panic::catch(f).unwrap_or_else(|message| {
            Err(BackendError {
                class: ErrorClass::Internal,
                stage,
                message,
            })
        })
    }

    /// The model at `level`, with input facts fixed from `inputs`, and the inputs as tract
    /// values in tract's input order.
    fn compile(
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<(TypedModel, TVec<TValue>), BackendError> {
        let (typed, feeds) = typed(model, inputs)?;
        let transform = error(Phase::Transform);
        let typed = match level {
            0 => typed,
            1 => typed.into_decluttered().map_err(transform)?,
            _ => typed.into_optimized().map_err(transform)?,
        };
        Ok((typed, feeds))
    }

    /// Loads untrusted ONNX bytes, optimizes the model and, when every declared input has a
    /// concrete dtype dlcfuzz knows and a concrete shape, runs it once on ones (zeros would
    /// make integer `Div`/`Mod` panic in tract by design). Models that declare an input of
    /// more than [`LOAD_MAX_ELEMENTS`] elements are skipped (`Ok`) to bound the work.
    pub fn load_only(&self, bytes: &[u8]) -> Result<(), BackendError> {
        self.guard(Stage::Compile, || {
            let m = parse(bytes)?;
            let analysis = error(Phase::Analysis);
            let mut ones: Option<TVec<TValue>> = Some(TVec::new());
            for ix in 0..m.input_outlets().map_err(&analysis)?.len() {
                match static_input(m.input_fact(ix).map_err(&analysis)?) {
                    Some((_, _, n)) if n > LOAD_MAX_ELEMENTS => return Ok(()),
                    Some((dt, shape, _)) => {
                        let t = dtype_of(dt).map(|d| Tensor::full(&TensorType::new(d, shape), 1.0));
                        match (ones.as_mut(), t) {
                            (Some(feeds), Some(t)) => {
                                feeds.push(to_tract(&t).map_err(&analysis)?.into_tvalue())
                            }
                            _ => ones = None,
                        }
                    }
                    None => ones = None,
                }
            }
            let optimized = m.into_optimized().map_err(error(Phase::Transform))?;
            if let Some(feeds) = ones {
                let plan = optimized.into_runnable().map_err(error(Phase::Transform))?;
                plan.run(feeds).map_err(error(Phase::Execute))?;
            }
            Ok(())
        })
    }
}

impl Backend for Tract {
    fn name(&self) -> &'static str {
        "tract"
    }

    fn version(&self) -> String {
        format!("tract-onnx {TRACT_VERSION}")
    }

    fn levels(&self) -> &'static [&'static str] {
        &LEVELS
    }

    fn bisect(
        &self,
        _dir: &std::path::Path,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: &str,
    ) -> Option<Result<super::bisect::Culprits, String>> {
        let level = LEVELS.iter().position(|l| *l == level).filter(|l| *l > 0)?;
        Some(super::tract_bisect::culprits(model, inputs, level))
    }

    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        self.run_observed(model, inputs, level, &mut Vec::new())
    }

    /// tract logs no rewrites, but what a level compiled the model to shows them: every
    /// distinct op of the decluttered or optimized model is reported as
    /// `<level>:<op name>` (`optimized:OptMatMulPack`, `decluttered:EinSum`), the
    /// operators tract's passes chose for this model.
    fn run_observed(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
        fired: &mut Vec<String>,
    ) -> Result<Vec<Tensor>, BackendError> {
        let (typed, feeds) = self.guard(Stage::Compile, || Self::compile(model, inputs, level))?;
        if level > 0 {
            let ops: std::collections::BTreeSet<String> = typed
                .nodes()
                .iter()
                .map(|n| n.op.name().to_string())
                .collect();
            fired.extend(ops.into_iter().map(|op| format!("{}:{op}", LEVELS[level])));
        }
        self.guard(Stage::Run, || execute(model, typed, feeds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::tract_model::{datum_type, from_tract, is_unsupported};
    use crate::emit::onnx::{pb, tensor_proto, value_info, IR_VERSION, OPSET};
    use crate::ir::ValueRef;
    use crate::ir::{Buffer, DType};
    use petgraph::stable_graph::NodeIndex;
    use prost::Message;

    fn f32s(shape: Vec<usize>, v: Vec<f32>) -> Tensor {
        Tensor {
            shape,
            data: Buffer::F32(v),
        }
    }

    /// A model `y = nodes(x, w)` with input `x`, initializers `w`, and output `y` of type `out`;
    /// each node is (op type, inputs, output).
    fn model(
        x: &TensorType,
        initializers: &[(&str, &Tensor)],
        nodes: &[(&str, &[&str], &str)],
        out: &TensorType,
    ) -> OnnxModel {
        let graph = pb::GraphProto {
            name: Some("unit".into()),
            input: vec![value_info("x", x)],
            output: vec![value_info("y", out)],
            initializer: initializers
                .iter()
                .map(|(n, t)| tensor_proto(n, t))
                .collect(),
            node: nodes
                .iter()
                .map(|(op, inputs, output)| pb::NodeProto {
                    op_type: Some(op.to_string()),
                    input: inputs.iter().map(|s| s.to_string()).collect(),
                    output: vec![output.to_string()],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let proto = pb::ModelProto {
            ir_version: Some(IR_VERSION),
            opset_import: vec![pb::OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(OPSET),
            }],
            graph: Some(graph),
            ..Default::default()
        };
        OnnxModel {
            bytes: proto.encode_to_vec(),
            inputs: vec![(NodeIndex::new(0), "x".into())],
            outputs: vec![(
                ValueRef {
                    node: NodeIndex::new(1),
                    output: 0,
                },
                "y".into(),
            )],
            output_types: vec![out.clone()],
        }
    }

    #[test]
    fn the_version_constant_is_the_locked_tract_onnx() {
        let lock = include_str!("../../Cargo.lock");
        let entry = format!("name = \"tract-onnx\"\nversion = \"{TRACT_VERSION}\"");
        assert!(
            lock.contains(&entry),
            "Cargo.lock resolves another tract-onnx than {TRACT_VERSION}: update TRACT_VERSION"
        );
    }

    #[test]
    fn every_dtype_round_trips_through_tract_tensors() {
        for dtype in DType::ALL {
            let t = Tensor {
                shape: vec![2, 2],
                data: Buffer::from_f64(dtype, &[0.0, 1.0, 2.0, 3.0]),
            };
            let tt = to_tract(&t).unwrap();
            assert_eq!(tt.datum_type(), datum_type(dtype), "{dtype}");
            assert_eq!(tt.shape(), &[2, 2]);
            assert_eq!(dtype_of(tt.datum_type()), Some(dtype));
            assert_eq!(from_tract(&tt, dtype).unwrap(), t, "{dtype}");
        }
        let f = to_tract(&f32s(vec![1], vec![1.0])).unwrap();
        assert!(
            from_tract(&f, DType::F64).is_err(),
            "a dtype mismatch is an error"
        );
    }

    #[test]
    fn add_then_relu_runs_at_every_level() {
        let ty = TensorType::new(DType::F32, vec![2, 3]);
        let w = f32s(vec![3], vec![1.0, -1.0, 0.5]);
        let m = model(
            &ty,
            &[("w", &w)],
            &[("Add", &["x", "w"], "s"), ("Relu", &["s"], "y")],
            &ty,
        );
        let x = f32s(vec![2, 3], vec![-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]);
        let expected = f32s(vec![2, 3], vec![0.0, 0.0, 0.0, 1.0, 0.0, 2.5]);
        let tract = Tract::new();
        assert_eq!(tract.levels().len(), 3);
        for (level, name) in LEVELS.iter().enumerate() {
            let out = tract.run(&m, &[&x], level).unwrap();
            assert_eq!(out, vec![expected.clone()], "level {name}");
        }
    }

    #[test]
    fn an_unknown_op_is_unsupported() {
        let ty = TensorType::new(DType::F32, vec![4]);
        let m = model(&ty, &[], &[("DlcfuzzNoSuchOp", &["x"], "y")], &ty);
        let x = f32s(vec![4], vec![0.0; 4]);
        let e = Tract::new().run(&m, &[&x], 0).unwrap_err();
        assert_eq!(e.class, ErrorClass::Unsupported, "{e}");
        assert_eq!(e.stage, Stage::Compile);
    }

    /// tract 0.23 reaches `unimplemented!` for a string initializer stored as raw bytes.
    fn panicking_model() -> Vec<u8> {
        let ty = TensorType::new(DType::F32, vec![1]);
        let mut m = model(&ty, &[], &[("Identity", &["x"], "y")], &ty);
        let mut proto = pb::ModelProto::decode(m.bytes.as_slice()).unwrap();
        let graph = proto.graph.as_mut().unwrap();
        graph.initializer.push(pb::TensorProto {
            name: Some("s".into()),
            dims: vec![1],
            data_type: Some(8),
            raw_data: Some(b"abcd".to_vec()),
            ..Default::default()
        });
        m.bytes = proto.encode_to_vec();
        m.bytes
    }

    #[test]
    fn panics_are_caught_or_propagated_as_asked() {
        let bytes = panicking_model();
        let e = Tract::new().load_only(&bytes).unwrap_err();
        assert_eq!(e.class, ErrorClass::Internal);
        assert!(e.message.starts_with("panic: "), "{}", e.message);
        let propagated = std::panic::catch_unwind(|| {
            let _ = Tract::new_propagating_panics().load_only(&bytes);
        });
        assert!(propagated.is_err(), "the panic reaches the caller");
    }

    #[test]
    fn load_only_accepts_valid_models_and_rejects_garbage() {
        let ty = TensorType::new(DType::F32, vec![2, 3]);
        let m = model(&ty, &[], &[("Relu", &["x"], "y")], &ty);
        assert_eq!(Tract::new().load_only(&m.bytes), Ok(()));
        let e = Tract::new().load_only(b"\xff\xff not a model").unwrap_err();
        assert_eq!(e.class, ErrorClass::Rejected, "{e}");
        assert!(is_unsupported("Failed analyse: Add does not support Bool"));
        assert!(!is_unsupported("Impossible to unify Int32 with Float32"));
    }
}
