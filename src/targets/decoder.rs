//! `decoder`: the fuzzer under fuzzing. Arbitrary bytes decode into a test case (every
//! (op, signature, class) triple of the registry, [`Menu::everything`], and the graph sizes
//! of the target configuration, as `ort_cpu` has them), which is emitted as ONNX
//! ([`crate::emit::emit`]) and checked in process; no compiler runs. A broken invariant is
//! a finding signed `decoder:<invariant>`:
//! - `decoder:crash:<message>`: decoding or emission panicked (under libFuzzer the panic
//!   propagates and is the report itself);
//! - `decoder:malformed:<rule>[:<op>]`: the model breaks a structural rule
//!   ([`crate::emit::check`]);
//! - `decoder:ill-typed:<op>`: an op node does not carry the types its spec gives on its
//!   inputs ([`crate::ops::retype::check_graph`]);
//! - `decoder:nondeterministic`: decoding the same bytes again emits a different model.

use super::{files_if_found, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun, MODEL};
use crate::emit::check::check_model;
use crate::emit::emit;
use crate::emit::onnx::OnnxModel;
use crate::gen::{Limits, Menu, TestCase, DECODER_VERSION};
use crate::oracle::{normalize_message, Finding, FindingKind, Skip, Verdict};
use crate::reduce::{apply_all, Edit};
use std::path::Path;

/// The level a test is decoded at: a crash there means there was nothing to check.
const DECODE: &str = "decode";

/// The decoder as a target.
pub struct Decoder {
    info: &'static TargetInfo,
    menu: Menu,
    limits: Limits,
    /// Whether panics propagate (libFuzzer) instead of becoming crash findings.
    propagate_panics: bool,
}

/// A decoded and emitted test: the case and its model.
type Emitted = (TestCase, OnnxModel);

/// A finding of `kind` at `level`, signed `decoder:<what>`.
fn found(kind: FindingKind, level: &str, what: &str, detail: String) -> Verdict {
    Verdict::Found(Finding {
        kind,
        level: level.into(),
        signature: format!("decoder:{what}"),
        detail,
        blame: None,
    })
}

/// The op type a [`check_graph`](crate::ops::retype::check_graph) error starts with.
fn op_of(message: &str) -> &str {
    message.split([':', ' ']).next().unwrap_or_default()
}

impl Decoder {
    /// Decodes `bytes` and applies reduction `edits`.
    fn case(&self, bytes: &[u8], edits: &[Edit]) -> Result<TestCase, String> {
        let mut case = TestCase::decode(bytes, &self.menu, &self.limits);
        apply_all(&mut case, edits).map_err(|e| format!("reduction edits: {e}"))?;
        Ok(case)
    }

    /// Decodes, edits and emits `bytes`; `Err` is the verdict when that panics (a crash
    /// finding, unless panics propagate) or the edits do not apply.
    fn emitted(&self, bytes: &[u8], edits: &[Edit]) -> Result<Emitted, Verdict> {
        let run = || {
            self.case(bytes, edits).map(|case| {
                let model = emit(&case);
                (case, model)
            })
        };
        let result = if self.propagate_panics {
            Ok(run())
        } else {
            crate::backend::panic::catch(run)
        };
        match result {
            Ok(Ok(emitted)) => Ok(emitted),
            Ok(Err(edits)) => Err(Verdict::Skipped(Skip::Invalid(edits))),
            Err(panic) => Err(found(
                FindingKind::Crash,
                DECODE,
                &format!("crash:{}", normalize_message(&panic)),
                panic,
            )),
        }
    }

    /// The verdict on the case and model `bytes` with `edits` decoded and emitted to: the
    /// model keeps the structural rules, the graph re-types to itself, and a second decode
    /// emits the same model.
    fn judge(&self, bytes: &[u8], edits: &[Edit], (case, model): &Emitted) -> Verdict {
        if let Err(m) = check_model(&model.bytes) {
            let what = match &m.op {
                Some(op) => format!("malformed:{}:{op}", m.rule),
                None => format!("malformed:{}", m.rule),
            };
            return found(FindingKind::Crash, "emit", &what, m.detail);
        }
        if let Err(e) = crate::ops::retype::check_graph(&case.graph) {
            return found(
                FindingKind::Crash,
                "retype",
                &format!("ill-typed:{}", op_of(&e)),
                e,
            );
        }
        let (again, remodel) = match self.emitted(bytes, edits) {
            Ok(emitted) => emitted,
            Err(verdict) => return verdict,
        };
        if remodel.bytes != model.bytes {
            let detail = format!(
                "first decode: {} ({} model bytes); second: {} ({} model bytes)",
                case.op_sequence().join(","),
                model.bytes.len(),
                again.op_sequence().join(","),
                remodel.bytes.len()
            );
            return found(
                FindingKind::Inconsistency,
                "redecode",
                "nondeterministic",
                detail,
            );
        }
        Verdict::Pass
    }
}

impl FuzzTarget for Decoder {
    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        format!(
            "dlcfuzz {} (decoder version {DECODER_VERSION})",
            env!("CARGO_PKG_VERSION")
        )
    }

    fn reference_level(&self) -> &str {
        DECODE
    }

    fn decode(&self, bytes: &[u8]) -> Option<TestCase> {
        Some(TestCase::decode(bytes, &self.menu, &self.limits))
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], inflight: Option<&Path>) -> TargetRun {
        let emitted = match self.emitted(bytes, edits) {
            Ok(emitted) => emitted,
            Err(verdict) => return TargetRun::bare(verdict),
        };
        if let Some(dir) = inflight {
            let _ = std::fs::write(dir.join(MODEL), &emitted.1.bytes);
        }
        let verdict = self.judge(bytes, edits, &emitted);
        let (case, model) = emitted;
        let artifacts = files_if_found(&verdict, || vec![(MODEL.to_string(), model.bytes.clone())]);
        TargetRun {
            model: Some(model.bytes),
            artifacts,
            ..TargetRun::tested(verdict, case, Vec::new())
        }
    }

    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        // Without panics propagating: the reducer calls this after a crash finding.
        match crate::backend::panic::catch(|| self.case(bytes, edits)) {
            Ok(Ok(case)) => {
                let model = emit(&case).bytes;
                (Some(case), vec![(MODEL.to_string(), model)])
            }
            _ => (None, Vec::new()),
        }
    }

    fn capabilities(&self) -> Option<String> {
        Some(format!(
            "every (op, signature, class) triple of the registry: {} triples of {} ops (no backend filters the menu)",
            self.menu.len(),
            self.menu.entries.len()
        ))
    }
}

impl Decoder {
    /// The decoder with the graph sizes of `config`.
    pub fn new(config: &TargetConfig) -> Result<Decoder, String> {
        Ok(Decoder {
            info: super::by_name("decoder")?,
            menu: Menu::everything(),
            limits: config.limits(),
            propagate_panics: config.propagate_panics,
        })
    }
}

/// `decoder`: the generator's decoder and the ONNX emitter, checked in process.
pub fn build(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(Decoder::new(config)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::pb;
    use prost::Message;

    fn decoder() -> Decoder {
        Decoder::new(&TargetConfig::new("decoder", 6)).expect("no compiler to miss")
    }

    /// The signature of a finding verdict.
    fn signature(verdict: Verdict) -> String {
        match verdict {
            Verdict::Found(f) => f.signature,
            other => panic!("not a finding: {other:?}"),
        }
    }

    #[test]
    fn decoded_models_pass_every_invariant() {
        let target = decoder();
        for seed in 0..12u8 {
            let bytes: Vec<u8> = (0..600u32)
                .map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed))
                .collect();
            let run = target.run(&bytes, &[], None);
            assert!(matches!(run.verdict, Verdict::Pass), "seed {seed}");
            assert!(run.nodes() >= 1 && run.model.is_some() && run.artifacts.is_empty());
        }
        for bytes in [&b""[..], b"\xff", b"not a recipe at all"] {
            assert!(matches!(
                target.run(bytes, &[], None).verdict,
                Verdict::Pass
            ));
        }
    }

    #[test]
    fn edits_that_do_not_apply_are_invalid_tests() {
        let edits = [Edit::Bypass {
            node: 10_000,
            input: 0,
        }];
        let verdict = decoder().run(&[3u8; 400], &edits, None).verdict;
        assert!(
            matches!(verdict, Verdict::Skipped(Skip::Invalid(_))),
            "{verdict:?}"
        );
    }

    #[test]
    fn each_broken_invariant_is_a_finding_signed_by_it() {
        let target = decoder();
        let bytes = [5u8; 500];
        let emitted = target.emitted(&bytes, &[]).expect("decodes");
        assert!(matches!(target.judge(&bytes, &[], &emitted), Verdict::Pass));

        let proto = pb::ModelProto::decode(emitted.1.bytes.as_slice()).expect("model");
        let first_op = proto.graph.expect("graph").node[0].op_type().to_string();
        let rewritten = |edit: fn(&mut pb::ModelProto)| {
            let (case, mut model) = emitted.clone();
            let mut proto = pb::ModelProto::decode(model.bytes.as_slice()).expect("model");
            edit(&mut proto);
            model.bytes = proto.encode_to_vec();
            target.judge(&bytes, &[], &(case, model))
        };
        assert_eq!(
            signature(rewritten(|m| m.opset_import.clear())),
            "decoder:malformed:no-opset"
        );
        assert_eq!(
            signature(rewritten(|m| {
                let node = m.graph.as_mut().expect("graph").node[0].clone();
                m.graph.as_mut().expect("graph").node.push(node);
            })),
            format!("decoder:malformed:redefined-value:{first_op}")
        );
        // A valid model, but not the one the bytes decode to.
        assert_eq!(
            signature(rewritten(|m| m.producer_version = Some("other".into()))),
            "decoder:nondeterministic"
        );

        let (mut case, model) = emitted.clone();
        let n = case.graph.op_nodes()[0];
        case.graph.node_mut(n).outputs[0].shape.push(9);
        let op = case.op_sequence()[0];
        assert_eq!(
            signature(target.judge(&bytes, &[], &(case, model))),
            format!("decoder:ill-typed:{op}")
        );
    }

    #[test]
    fn ill_typed_errors_are_signed_by_their_op() {
        assert_eq!(op_of("Add (node 3): spec gives [..]"), "Add");
        assert_eq!(op_of("Conv: input 0 has rank 2"), "Conv");
    }
}
