//! The Python host and the torch.compile / TVM targets' building blocks: outcome
//! classification of planted failures (a Python exception, an unsupported feature, a native
//! crash, a hang), and TorchProbe programs rendered as Python agreeing with the graph
//! reference in eager mode.

use dlcfuzz::backend::python::frame::Frame;
use dlcfuzz::backend::python::{runs, HostConfig, HostFailure, PythonHost, Run};
use dlcfuzz::gen::Limits;
use dlcfuzz::oracle::{FindingKind, Skip, Verdict};
use dlcfuzz::targets::hosted::{call, host_failure, stage_failure};
use dlcfuzz::targets::torch_compile::TorchCompileHarness;
use serde_json::json;
use std::sync::Mutex;
use std::time::Duration;

mod common;

/// A host allowed to plant faults, with `timeout`.
fn faulty_host(timeout: Duration) -> Mutex<PythonHost> {
    let mut config = HostConfig::local(timeout);
    config.env.push(("DLCFUZZ_ALLOW_FAULTS".into(), "1".into()));
    Mutex::new(PythonHost::new(config))
}

fn fault(kind: &str) -> Frame {
    Frame::new(json!({"op": "fault", "kind": kind}))
}

/// The verdict on a planted fault, as the targets judge a compile stage.
fn planted(host: &Mutex<PythonHost>, kind: &str) -> Verdict {
    let response = match call(host, "planted", &fault(kind)) {
        Ok(r) => r,
        Err(verdict) => return verdict,
    };
    let runs = runs(&response).expect("well-formed runs");
    match &runs[0].1 {
        Run::Failed(e) => stage_failure("planted", &runs[0].0, e),
        Run::Outputs(_) => panic!("a planted fault produced outputs"),
    }
}

#[test]
fn planted_failures_are_classified() {
    let host = faulty_host(Duration::from_secs(60));
    match planted(&host, "internal") {
        Verdict::Found(f) => {
            assert_eq!(f.kind, FindingKind::Crash);
            assert!(
                f.signature
                    .starts_with("crash:planted:compile:planted:AssertionError"),
                "{}",
                f.signature
            );
            assert!(f.detail.contains("invariant violated"), "{}", f.detail);
        }
        other => panic!("an internal error must be a finding: {other:?}"),
    }
    match planted(&host, "unsupported") {
        Verdict::Skipped(Skip::Unsupported(m)) => assert!(m.contains("NotImplementedError"), "{m}"),
        other => panic!("an unsupported feature must be skipped: {other:?}"),
    }
    match planted(&host, "segfault") {
        Verdict::Found(f) => {
            assert_eq!(f.kind, FindingKind::Crash);
            assert!(f.signature.contains("signal 11"), "{}", f.signature);
            assert!(f.detail.contains("Segmentation fault"), "{}", f.detail);
        }
        other => panic!("a native crash must be a crash finding: {other:?}"),
    }
    // The host comes back after the crash.
    let versions = host
        .lock()
        .unwrap()
        .versions(&[])
        .expect("a fresh host answers after a crash");
    assert!(versions["python"].as_str().unwrap().starts_with("3."));
}

#[test]
fn a_hung_host_is_killed_and_reported() {
    let host = faulty_host(Duration::from_secs(3));
    let failure = host.lock().unwrap().call(&fault("hang")).unwrap_err();
    assert!(matches!(failure, HostFailure::Hung { .. }), "{failure:?}");
    match host_failure("planted", &failure) {
        Verdict::Found(f) => assert_eq!(f.kind, FindingKind::Hang),
        other => panic!("a hang must be a finding: {other:?}"),
    }
    assert!(host.lock().unwrap().versions(&[]).is_ok());
}

#[test]
fn a_missing_module_names_the_environment() {
    let mut config = HostConfig::local(Duration::from_secs(60));
    config.pythonpath = "/nonexistent".into();
    let error = PythonHost::new(config)
        .versions(&["tvm"])
        .expect_err("tvm cannot import from an empty path");
    assert!(
        error.contains("cannot import tvm") && error.contains("scripts/setup.sh"),
        "{error}"
    );
}

/// Every TorchProbe program rendered as Python (closures, hoisted nested functions, writes
/// through views, loops, comprehensions, data-dependent `if`) computes in eager mode what
/// the graph reference computes.
#[test]
fn python_programs_match_the_graph_reference_in_eager_mode() {
    let harness = TorchCompileHarness::cpu(Limits::default()).expect("torch in the Python host");
    let (mut checked, mut mutated, mut closures, mut views) = (0, 0, 0, 0);
    for bytes in common::random_inputs(5, 400, 1000) {
        let Ok(test) = harness.source.program(&bytes, &[]) else {
            continue;
        };
        let source = dlcfuzz::mutate::program::render::render(
            &test.program,
            dlcfuzz::mutate::program::render::Dialect::Python,
        );
        let eager = harness
            .eager(&source, &test)
            .unwrap_or_else(|e| panic!("eager fails: {e}\n{source}"));
        if let Some(detail) = dlcfuzz::oracle::mismatch(&test.expected, &eager, &test.fragile) {
            panic!("eager differs from the reference: {detail}\n{source}");
        }
        checked += 1;
        mutated += usize::from(!test.applied.is_empty());
        closures += usize::from(source.contains("    def fn"));
        views += usize::from(source.contains("[...] = "));
    }
    eprintln!("{checked} programs; {mutated} mutated, {closures} with nested functions, {views} writing through views");
    assert!(
        checked >= 300,
        "only {checked} of 400 inputs gave a program"
    );
    assert!(mutated * 2 >= checked, "{mutated} of {checked} mutated");
    assert!(
        closures >= 30 && views >= 30,
        "{closures} closures, {views} views"
    );
}

/// The standalone reproducers of the Python-hosted and TorchScript targets run without
/// dlcfuzz in the Python compilers' environment: on seeds that pass, each prints its release
/// and says "not reproduced" (exit 0), so a live finding's exit 1 means the bug.
#[test]
fn reproducers_of_passing_seeds_run_standalone_and_say_not_reproduced() {
    use dlcfuzz::targets::{build, TargetConfig};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["torchscript_cpu", "torch_compile_cpu", "tvm_llvm"] {
        let target = build(&TargetConfig::new(name, 10)).expect("target builds");
        let mut seeds: Vec<_> = std::fs::read_dir(root.join("corpus").join(name))
            .expect("seeds")
            .map(|e| e.expect("entry").path())
            .collect();
        seeds.sort();
        let mut ran = 0;
        for seed in seeds.iter().take(6) {
            let bytes = std::fs::read(seed).expect("seed");
            if target.run(&bytes, &[], None).verdict != Verdict::Pass {
                continue;
            }
            let (_, files) = target.files(&bytes, &[]);
            let dir = tempfile::tempdir().expect("temp dir");
            for (file, contents) in &files {
                std::fs::write(dir.path().join(file), contents).expect("written");
            }
            // Run from elsewhere: the script must find its model beside itself.
            let out = dlcfuzz::paths::python()
                .env("PYTHONPATH", dlcfuzz::paths::python_env())
                .arg(dir.path().join("repro.py"))
                .current_dir(std::env::temp_dir())
                .output()
                .expect("python3 runs");
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {}:\n{text}",
                seed.display()
            );
            assert!(
                text.contains("release: ") && text.contains("not reproduced"),
                "{text}"
            );
            ran += 1;
            if ran == 2 {
                break;
            }
        }
        assert!(ran > 0, "{name}: no passing seed to check");
    }
}
