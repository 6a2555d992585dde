//! Reliability of isolated campaigns against a backend that segfaults, aborts, hangs and
//! allocates without bound (the test-only `faulty` backend): every failure becomes a finding,
//! the campaign keeps going, memory stays bounded, and after `kill -9` a resumed campaign
//! still has every earlier finding, then reduces and reports them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RSS_LIMIT_MB: u64 = 1200;

fn dlcfuzz() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dlcfuzz"));
    cmd.env("DLCFUZZ_ALLOW_FAULTS", "1");
    cmd
}

fn fuzz_args(cmd: &mut Command, out: &Path, time: u64) {
    cmd.args([
        "fuzz",
        "--backend",
        "faulty",
        "--seed",
        "3",
        "--timeout",
        // Generous enough for the allocating fault to reach the RSS limit on a loaded VM
        // (first-touch page faults there run well below memory bandwidth), short enough
        // that the hangs do not eat the campaign's time.
        "5",
    ])
    .args(["--rss-limit-mb", &RSS_LIMIT_MB.to_string()])
    .args(["--time", &time.to_string()])
    .arg("--out")
    .arg(out);
}

/// Finding folders and their saved inputs.
fn findings(out: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(out.join("findings"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let input = std::fs::read(e.path().join("input.bin")).ok()?;
                    Some((e.file_name().to_string_lossy().into_owned(), input))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Fails with the command's stderr unless it exited successfully.
fn succeeded(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn stats(stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    serde_json::from_str(text.lines().last().unwrap_or("{}")).expect("stats JSON on stdout")
}

fn signatures(stats: &serde_json::Value) -> Vec<String> {
    stats["signatures"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Processes whose command line mentions `needle` (workers of a campaign folder).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .map(|c| String::from_utf8_lossy(&c).contains(needle))
                        .unwrap_or(false)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_fault_becomes_a_finding_and_the_campaign_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("campaign");
    let mut cmd = dlcfuzz();
    fuzz_args(&mut cmd, &out, 60);
    let run = cmd
        .args(["--max-tests", "400", "--reduce-budget", "0"])
        .output()
        .expect("dlcfuzz runs");
    succeeded(&run);
    let s = stats(&run.stdout);
    let sigs = signatures(&s);
    for wanted in ["crash:SIGSEGV", "crash:SIGABRT", "hang:", "oom:"] {
        assert!(
            sigs.iter().any(|g| g.starts_with(wanted)),
            "no {wanted} finding among {sigs:?}"
        );
    }
    // It went on past every death: many tests, and clean ones among them.
    assert!(s["tests"].as_u64().unwrap() >= 100, "{s}");
    assert!(s["restarts"].as_u64().unwrap() >= 4, "{s}");
    assert!(s["valid"].as_u64().unwrap() >= 50, "{s}");
    // Memory stayed bounded: the worker was killed near its limit, the campaign stayed small.
    let worker_peak = s["peak_test_rss_mb"].as_f64().unwrap();
    assert!(
        worker_peak > 300.0 && worker_peak < (RSS_LIMIT_MB + 600) as f64,
        "worker peak {worker_peak} MiB"
    );
    assert!(s["peak_campaign_rss_mb"].as_f64().unwrap() < 600.0, "{s}");
    // Every death has its folder, with the model it was running and the process's stderr.
    let found = findings(&out);
    for prefix in ["hang-", "oom-"] {
        let name = found
            .keys()
            .find(|k| k.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} folder"));
        let folder = out.join("findings").join(name);
        assert!(folder.join("model.onnx").is_file());
        assert!(folder.join("target.json").is_file());
    }
    let csv = std::fs::read_to_string(out.join("stats.csv")).expect("stats.csv");
    assert!(csv.starts_with("seconds,tests,"));
    assert!(csv.lines().count() >= 2);
}

#[test]
fn kill_9_then_resume_loses_no_finding_and_reduces_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out: PathBuf = dir.path().join("campaign");
    let mut cmd = dlcfuzz();
    fuzz_args(&mut cmd, &out, 300);
    let mut child = cmd
        .args(["--reduce-budget", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dlcfuzz starts");
    let start = Instant::now();
    while findings(&out).len() < 4 && start.elapsed() < Duration::from_secs(180) {
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let before = findings(&out);
    assert!(
        before.len() >= 4,
        "only {} findings before the kill",
        before.len()
    );
    // The workers die with their campaign.
    let needle = out.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_mentioning(&needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(processes_mentioning(&needle).is_empty(), "orphaned workers");

    // Without --resume the folder is refused.
    let mut again = dlcfuzz();
    fuzz_args(&mut again, &out, 5);
    let refused = again.output().expect("runs");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));

    let mut resume = dlcfuzz();
    fuzz_args(&mut resume, &out, 25);
    let run = resume
        .args(["--resume", "--reduce-budget", "15"])
        .output()
        .expect("dlcfuzz resumes");
    succeeded(&run);
    let after = findings(&out);
    for (name, input) in &before {
        assert_eq!(after.get(name), Some(input), "{name} lost or changed");
    }
    let s = stats(&run.stdout);
    let counted: u64 = s["signatures"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(counted >= before.len() as u64);
    // The resumed run reduced at least one pre-kill finding (they lacked a report.md) and the
    // reduced model still fails the same way when replayed from its bytes.
    let reduced: Vec<&String> = before
        .keys()
        .filter(|n| {
            out.join("findings")
                .join(n)
                .join("reduction.json")
                .is_file()
        })
        .collect();
    assert!(!reduced.is_empty(), "nothing reduced after resume");
    let folder = out.join("findings").join(reduced[0]);
    assert!(folder.join("report.md").is_file());
    // A crash, hang or OOM would take the replaying process down too, so only oracle
    // findings are replayed here: their verdict and reduced model come back from the bytes.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("report.json")).unwrap()).unwrap();
    if report["finding"]["level"] != "process" {
        let replay = dlcfuzz()
            .args(["replay", "--backend", "faulty"])
            .arg(&folder)
            .output()
            .expect("replay runs");
        let v = stats(&replay.stdout);
        assert_eq!(v["model_matches_saved"], true);
        assert_eq!(
            v["verdict"]["Found"]["signature"],
            report["finding"]["signature"]
        );
    }
    // The campaign summary dedups and plots.
    let summary = dlcfuzz()
        .arg("report")
        .arg(&out)
        .output()
        .expect("report runs");
    succeeded(&summary);
    let s = stats(&summary.stdout);
    assert!(
        s["distinct_after_dedup"].as_u64().unwrap() <= s["distinct_signatures"].as_u64().unwrap()
    );
    for png in ["findings.png", "coverage.png", "transformers.png"] {
        let bytes = std::fs::read(out.join(png)).expect("plot written");
        assert_eq!(&bytes[1..4], b"PNG");
    }
}

#[test]
fn reduced_crashes_get_a_bug_key_and_an_upstream_verdict_in_every_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out: PathBuf = dir.path().join("campaign");
    let mut cmd = dlcfuzz();
    fuzz_args(&mut cmd, &out, 150);
    let run = cmd
        .args(["--max-tests", "300", "--reduce-budget", "0"])
        .output()
        .expect("dlcfuzz runs");
    succeeded(&run);
    // The segfault and the abort: process deaths that reduce fast (each candidate that
    // still dies costs a worker restart, not a timeout).
    let crashes: Vec<PathBuf> = findings(&out)
        .keys()
        .map(|name| out.join("findings").join(name))
        .filter(|d| {
            std::fs::read_to_string(d.join("report.json"))
                .is_ok_and(|r| r.contains("crash:SIGSEGV") || r.contains("crash:SIGABRT"))
        })
        .collect();
    assert!(!crashes.is_empty(), "no crash finding in 300 tests");
    for folder in &crashes {
        let reduced = dlcfuzz()
            .arg("reduce")
            .arg(folder)
            .args(["--budget", "20", "--timeout", "5"])
            .args(["--rss-limit-mb", &RSS_LIMIT_MB.to_string()])
            .output()
            .expect("reduce runs");
        succeeded(&reduced);
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(folder.join("report.json")).unwrap()).unwrap();
        assert!(report["bug_key"].is_string(), "{report}");
        // Nobody reported the test backend's injected faults upstream.
        assert_eq!(report["upstream"]["status"], "new", "{report}");
        let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
        assert!(md.contains("**Upstream:** new: no match"), "{md}");
    }
    let summary = dlcfuzz().arg("report").arg(&out).output().expect("report");
    succeeded(&summary);
    let s = stats(&summary.stdout);
    let count = |k: &str| s[k].as_u64().unwrap();
    assert_eq!(
        count("new") + count("known_upstream") + count("on_file"),
        count("distinct_after_dedup")
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| upstream |"), "{md}");
}

/// The shipped binary (its allocator, its run-time loading) runs every in-process compiler:
/// the test binaries link the same library but not the binary's global allocator, so only a
/// campaign of the binary itself shows a process-level fault such as the allocator mix-up
/// that once aborted every `openvino_cpu` test (`free(): invalid pointer` in OpenVINO's
/// hwloc under mimalloc's `override`).
#[test]
fn the_shipped_binary_runs_each_in_process_compiler_without_dying() {
    for target in ["ort_cpu", "openvino_cpu", "tract"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = Command::new(env!("CARGO_BIN_EXE_dlcfuzz"))
            .args([
                "fuzz",
                "--target",
                target,
                "--seed",
                "9",
                "--max-tests",
                "24",
            ])
            .args(["--time", "180", "--reduce-budget", "0", "--out"])
            .arg(dir.path().join("campaign"))
            .output()
            .expect("dlcfuzz runs");
        succeeded(&run);
        let s = stats(&run.stdout);
        let tests = s["tests"].as_u64().unwrap();
        let deaths = signatures(&s)
            .iter()
            .filter(|g| g.starts_with("crash:") || g.starts_with("oom:"))
            .count();
        assert!(tests >= 24, "{target}: {s}");
        assert!(s["valid"].as_u64().unwrap() >= tests / 2, "{target}: {s}");
        assert!(
            deaths <= 1,
            "{target}: the worker died in {deaths} ways: {s}"
        );
    }
}
