//! Campaign plumbing with a scripted backend: oracle classification, finding folders,
//! replay from saved bytes, and recovery of an input left by a process that died.

use dlcfuzz::backend::{Backend, BackendError, ErrorClass, Stage};
use dlcfuzz::campaign::harness::Harness;
use dlcfuzz::campaign::{self, CampaignOptions};
use dlcfuzz::emit::onnx::OnnxModel;
use dlcfuzz::gen::{Limits, Menu};
use dlcfuzz::ir::{Buffer, Tensor};
use dlcfuzz::oracle::{FindingKind, Skip, Verdict};
use std::time::Duration;

/// What the scripted backend does at its optimized levels.
#[derive(Clone, Copy)]
enum Script {
    /// Every level returns zeros: a pass.
    Agree,
    /// Level 1 fails with an internal error: a crash finding.
    OptimizerFails,
    /// Level 2 returns ones instead of zeros: an inconsistency.
    WrongValues,
    /// Level 0 reports an unimplemented op: a skip, never a finding.
    Unsupported,
}

struct Scripted(Script);

fn filled(model: &OnnxModel, value: f64) -> Vec<Tensor> {
    model
        .output_types
        .iter()
        .map(|t| Tensor {
            shape: t.shape.clone(),
            data: Buffer::from_f64(t.dtype, &vec![value; t.numel()]),
        })
        .collect()
}

impl Backend for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn version(&self) -> String {
        "scripted 1".into()
    }
    fn levels(&self) -> &'static [&'static str] {
        &["disable", "basic", "extended", "all"]
    }
    fn run(
        &self,
        model: &OnnxModel,
        _inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        let error = |class, message: &str| {
            Err(BackendError {
                class,
                stage: Stage::Compile,
                message: message.into(),
            })
        };
        match (self.0, level) {
            (Script::OptimizerFails, 1) => error(
                ErrorClass::Internal,
                "fusion.cc:83 unexpected type in node n12",
            ),
            (Script::Unsupported, _) => error(
                ErrorClass::Unsupported,
                "NOT_IMPLEMENTED: Could not find an implementation",
            ),
            (Script::WrongValues, 2) => Ok(filled(model, 1.0)),
            _ => Ok(filled(model, 0.0)),
        }
    }
}

fn harness(script: Script) -> Harness {
    Harness {
        backend: Box::new(Scripted(script)),
        menu: Menu::everything(),
        limits: Limits::default(),
        values: None,
        reference: false,
        patterns: None,
    }
}

#[test]
fn the_oracle_classifies_each_outcome() {
    let bytes = [3u8; 400];
    assert_eq!(harness(Script::Agree).test(&bytes).verdict, Verdict::Pass);
    match harness(Script::OptimizerFails).test(&bytes).verdict {
        Verdict::Found(f) => {
            assert_eq!(f.kind, FindingKind::Crash);
            assert_eq!(f.level, "basic");
            assert!(
                f.signature.contains("node N"),
                "numbers are normalized away: {}",
                f.signature
            );
        }
        other => panic!("expected a crash, got {other:?}"),
    }
    match harness(Script::WrongValues).test(&bytes).verdict {
        Verdict::Found(f) => assert_eq!(
            (f.kind, f.level.as_str()),
            (FindingKind::Inconsistency, "extended")
        ),
        other => panic!("expected an inconsistency, got {other:?}"),
    }
    assert!(matches!(
        harness(Script::Unsupported).test(&bytes).verdict,
        Verdict::Skipped(Skip::Unsupported(_))
    ));
}

#[test]
fn a_campaign_writes_one_replayable_folder_per_signature() {
    let out = tempfile::tempdir().expect("temp dir");
    let h = harness(Script::OptimizerFails);
    let opts = CampaignOptions {
        out: out.path(),
        time: Duration::from_secs(60),
        seed: 1,
        input_len: 600,
        max_tests: 5,
    };
    let stats = campaign::fuzz(&h, &opts, |_| {}).expect("campaign runs");
    assert_eq!(stats.tests, 5);
    assert_eq!(stats.findings, 1);
    let folders: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(folders.len(), 1);
    let dir = &folders[0];
    for file in ["input.bin", "model.onnx", "repro.py", "report.json"] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("count")).unwrap().trim(),
        "5"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["finding"]["kind"], "Crash");
    let repro = std::fs::read_to_string(dir.join("repro.py")).unwrap();
    assert!(repro.contains("ORT_ENABLE_BASIC") && repro.contains("import onnxruntime"));
    // Replaying the saved bytes regenerates the saved model and the same verdict.
    let bytes = campaign::read_input(dir).unwrap();
    let replay = h.test(&bytes);
    assert_eq!(
        replay.model.bytes,
        std::fs::read(dir.join("model.onnx")).unwrap()
    );
    match replay.verdict {
        Verdict::Found(f) => assert_eq!(serde_json::to_value(&f).unwrap(), report["finding"]),
        other => panic!("replay lost the finding: {other:?}"),
    }
    assert!(!out.path().join(".inflight").exists());
}

#[test]
fn an_input_left_by_a_dead_process_becomes_a_crash_finding() {
    let out = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        out.path().join(".inflight"),
        b"bytes that killed the backend",
    )
    .unwrap();
    let opts = CampaignOptions {
        out: out.path(),
        time: Duration::from_secs(60),
        seed: 2,
        input_len: 100,
        max_tests: 1,
    };
    campaign::fuzz(&harness(Script::Agree), &opts, |_| {}).expect("campaign runs");
    let crash = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("crash-")
        })
        .expect("a crash folder");
    assert_eq!(
        std::fs::read(crash.join("input.bin")).unwrap(),
        b"bytes that killed the backend"
    );
}
