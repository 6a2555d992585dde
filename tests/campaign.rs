//! Campaign plumbing with a scripted backend: oracle classification, finding folders,
//! replay from saved bytes, and recovery of an input left by a process that died.

use dlcfuzz::backend::{Backend, BackendError, ErrorClass, Stage};
use dlcfuzz::campaign::executor::{Executor, InProcess};
use dlcfuzz::campaign::runner::{self, CampaignConfig};
use dlcfuzz::campaign::{self, Stats};
use dlcfuzz::emit::onnx::OnnxModel;
use dlcfuzz::gen::{Limits, Menu};
use dlcfuzz::ir::{Buffer, Tensor};
use dlcfuzz::oracle::{FindingKind, Skip, Verdict};
use dlcfuzz::pipeline::Pipeline;
use dlcfuzz::targets::differential::Differential;
use dlcfuzz::targets::TargetConfig;
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
    fn python_runner(&self) -> Option<&'static dlcfuzz::backend::PythonRunner> {
        Some(&dlcfuzz::backend::ort::PYTHON)
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

fn harness(script: Script) -> Pipeline {
    Pipeline {
        backend: Box::new(Scripted(script)),
        menu: Menu::everything(),
        limits: Limits::default(),
        values: None,
        reference: false,
        patterns: None,
        mutations: false,
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

fn config(out: &std::path::Path, seed: u64, input_len: usize, max_tests: u64) -> CampaignConfig {
    CampaignConfig {
        out: out.to_path_buf(),
        target: TargetConfig::new("scripted", 10),
        time: Duration::from_secs(60),
        max_tests,
        seed,
        input_len,
        resume: false,
        reduce: None,
        pool: None,
        guided: true,
    }
}

fn run_in_process(config: &CampaignConfig, script: Script) -> Stats {
    let executors: Vec<Box<dyn Executor + Send>> = vec![Box::new(InProcess {
        target: Box::new(Differential::new("ort_cpu", harness(script)).expect("a registry row")),
    })];
    runner::run(config, executors, false, &|_| {}).expect("campaign runs")
}

#[test]
fn a_campaign_writes_one_replayable_folder_per_signature() {
    let out = tempfile::tempdir().expect("temp dir");
    let stats = run_in_process(&config(out.path(), 1, 600, 5), Script::OptimizerFails);
    assert_eq!(stats.tests, 5);
    assert_eq!(stats.findings, 1);
    let folders = runner::finding_dirs(out.path());
    assert_eq!(folders.len(), 1);
    let dir = &folders[0];
    for file in [
        "input.bin",
        "model.onnx",
        "repro.py",
        "report.json",
        "target.json",
    ] {
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
    let replay = harness(Script::OptimizerFails).test(&bytes);
    assert_eq!(
        replay.model.bytes,
        std::fs::read(dir.join("model.onnx")).unwrap()
    );
    match replay.verdict {
        Verdict::Found(f) => assert_eq!(serde_json::to_value(&f).unwrap(), report["finding"]),
        other => panic!("replay lost the finding: {other:?}"),
    }
    // The state and the time series are on disk; nothing is left in flight.
    let csv = std::fs::read_to_string(out.path().join("stats.csv")).unwrap();
    assert!(
        csv.lines().nth(1).is_some_and(|l| l.contains(",5,")),
        "{csv}"
    );
    assert!(!out.path().join("inflight/job-0/input.bin").exists());
}

#[test]
fn a_resumed_campaign_continues_the_input_stream_and_keeps_counts() {
    let out = tempfile::tempdir().expect("temp dir");
    let first = run_in_process(&config(out.path(), 4, 600, 3), Script::OptimizerFails);
    assert_eq!(first.tests, 3);
    let mut again = config(out.path(), 4, 600, 7);
    assert!(
        runner::run(&again, vec![], false, &|_| {}).is_err(),
        "needs --resume"
    );
    again.resume = true;
    let second = run_in_process(&again, Script::OptimizerFails);
    assert_eq!(second.tests, 7, "the total goes on from the saved state");
    assert_eq!(second.signatures.values().sum::<u64>(), 7);
    let mut other = again.clone();
    other.seed = 5;
    assert!(
        runner::run(&other, vec![], false, &|_| {}).is_err(),
        "settings must match"
    );
}

#[test]
fn an_input_left_by_a_dead_in_process_run_becomes_a_crash_finding() {
    let out = tempfile::tempdir().expect("temp dir");
    let mut cfg = config(out.path(), 2, 100, 1);
    run_in_process(&cfg, Script::Agree);
    let job = out.path().join("inflight/job-0");
    std::fs::write(job.join("input.bin"), b"bytes that killed the backend").unwrap();
    cfg.resume = true;
    cfg.max_tests = 2;
    run_in_process(&cfg, Script::Agree);
    let crash = runner::finding_dirs(out.path())
        .into_iter()
        .next()
        .expect("a crash folder");
    assert_eq!(
        std::fs::read(crash.join("input.bin")).unwrap(),
        b"bytes that killed the backend"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(crash.join("report.json")).unwrap()).unwrap();
    assert!(report["finding"]["signature"]
        .as_str()
        .unwrap()
        .starts_with("crash:process-died"));
}
