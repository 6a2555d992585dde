//! A crash that needs an earlier input in its process (the `faulty` backend's armed fault:
//! a model with `Acos` arms the process, a later model with `Asin` segfaults it): the death
//! keeps the worker's earlier inputs, `dlcfuzz reduce` finds the one it needs among them,
//! and `dlcfuzz replay` reproduces the crash from the folder's bytes alone.

use dlcfuzz::campaign::executor::{Executor, Outcome, Request};
use dlcfuzz::campaign::finding::{self, DeadTest, Envelope};
use dlcfuzz::campaign::history;
use dlcfuzz::campaign::worker::{Isolated, Isolation};
use dlcfuzz::oracle::Verdict;
use dlcfuzz::targets::TargetConfig;
use rand::{Rng, SeedableRng};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const PROGRAM: &str = env!("CARGO_BIN_EXE_dlcfuzz");
/// The ops that kill the worker on their own (`backend::faulty::Fault::for_op`).
const FAULT_OPS: [&str; 4] = ["Sin", "Cos", "Tan", "Atan"];

fn dlcfuzz() -> Command {
    let mut cmd = Command::new(PROGRAM);
    cmd.env(dlcfuzz::backend::faulty::ALLOW_FAULTS, "1");
    cmd
}

/// `dlcfuzz reduce` on `dir`: whether it succeeded, and its stderr.
fn reduce(dir: &Path) -> (bool, String) {
    let out = dlcfuzz()
        .args(["reduce", "--budget", "120"])
        .arg(dir)
        .output()
        .expect("dlcfuzz reduce runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn worker(config: &TargetConfig, inflight: &Path) -> Isolated {
    let isolation = Isolation {
        timeout: Duration::from_secs(20),
        rss_limit_mb: Isolation::DEFAULT_RSS_MB,
    };
    Isolated::start(Path::new(PROGRAM), config, isolation, inflight).expect("worker starts")
}

fn run(worker: &mut Isolated, bytes: &[u8]) -> Outcome {
    let request = Request {
        bytes: bytes.to_vec(),
        edits: Vec::new(),
        save_to: None,
    };
    worker.execute(&request).expect("the worker answers")
}

/// Inputs that pass alone and were tested at every level: one that arms the process, one
/// that the armed process dies on, and three that touch none of the faulty ops.
struct Cast {
    arming: Vec<u8>,
    trigger: Vec<u8>,
    fillers: Vec<Vec<u8>>,
}

/// The cast, found once: random inputs decoded in process (the `faulty` target decodes as
/// `ort_cpu` does), the chosen ones checked to pass alone in a worker.
fn cast(config: &TargetConfig, inflight: &Path) -> &'static Cast {
    use dlcfuzz::backend::faulty::{ARMED_TRIGGER, ARMING_OP};
    static CAST: std::sync::OnceLock<Cast> = std::sync::OnceLock::new();
    CAST.get_or_init(|| {
        let decoder = dlcfuzz::targets::build(&TargetConfig::new("ort_cpu", config.max_nodes))
            .expect("ort_cpu builds");
        let mut scout = worker(config, inflight);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut arming, mut trigger, mut fillers) = (None, None, Vec::new());
        for _ in 0..20_000 {
            let bytes: Vec<u8> = (0..600).map(|_| rng.random()).collect();
            let Some(case) = decoder.decode(&bytes) else {
                continue;
            };
            let ops = case.op_types();
            let ops: Vec<&str> = ops.split(',').collect();
            let has = |op: &str| ops.contains(&op);
            if FAULT_OPS.iter().any(|op| has(op)) {
                continue;
            }
            let slot = match (has(ARMING_OP), has(ARMED_TRIGGER)) {
                (true, false) if arming.is_none() => &mut arming,
                (false, true) if trigger.is_none() => &mut trigger,
                (false, false) if fillers.len() < 3 => {
                    let outcome = run(&mut scout, &bytes);
                    if outcome.death.is_none() && matches!(outcome.verdict, Verdict::Pass) {
                        fillers.push(bytes);
                    }
                    continue;
                }
                _ => continue,
            };
            let outcome = run(&mut scout, &bytes);
            if outcome.death.is_none() && matches!(outcome.verdict, Verdict::Pass) {
                *slot = Some(bytes);
            }
            if has(ARMING_OP) {
                // The scout is armed now: a fresh one tries the triggers.
                scout = worker(config, inflight);
            }
            if arming.is_some() && trigger.is_some() && fillers.len() == 3 {
                break;
            }
        }
        Cast {
            arming: arming.expect("an arming input"),
            trigger: trigger.expect("a triggering input"),
            fillers,
        }
    })
}

#[test]
fn a_crash_that_needs_an_earlier_input_replays_after_it_from_the_folder() {
    std::env::set_var(dlcfuzz::backend::faulty::ALLOW_FAULTS, "1");
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = TargetConfig::new("faulty", 10);
    let cast = cast(&config, &tmp.path().join("scout"));

    // In one fresh worker: two fillers, the arming input, a filler, then the trigger.
    let mut armed = worker(&config, &tmp.path().join("armed"));
    let before = [
        &cast.fillers[0],
        &cast.fillers[1],
        &cast.arming,
        &cast.fillers[2],
    ];
    for bytes in before {
        assert!(run(&mut armed, bytes).death.is_none());
    }
    let outcome = run(&mut armed, &cast.trigger);
    let death = outcome.death.as_ref().expect("the armed worker dies");
    assert_eq!(death.cause, "SIGSEGV");
    let recorded: Vec<&Vec<u8>> = death.history.iter().collect();
    assert_eq!(
        recorded, before,
        "the death keeps the earlier inputs in order"
    );
    let Verdict::Found(f) = &outcome.verdict else {
        panic!("a death is a finding: {:?}", outcome.verdict)
    };

    // The campaign's own way of filing it (`campaign::runner`'s `record`).
    let findings = tmp.path().join("findings");
    let died = DeadTest {
        death,
        ops: &outcome.ops,
        nodes: outcome.nodes,
    };
    let dir = finding::write_death(&findings, &cast.trigger, &died, f, "faulty")
        .expect("writes")
        .expect("a new folder");
    history::write(&dir, &death.history).expect("history/");
    Envelope::write(&dir, &config).expect("target.json");
    assert_eq!(history::read(&dir).len(), 4);

    let (ok, stderr) = reduce(&dir);
    assert!(ok, "{stderr}");
    let needed = history::needed(&dir).expect("history-needed.json");
    assert_eq!(needed.recorded, 4);
    assert!(!needed.out_of_budget);
    assert_eq!(
        history::needed_inputs(&dir).unwrap(),
        vec![cast.arming.clone()],
        "ddmin keeps exactly the arming input"
    );
    assert!(!dir.join(finding::NO_REPLAY).exists());
    // A second search starts from the first one's answer: one replay confirms it.
    let (ok, stderr) = reduce(&dir);
    assert!(ok, "{stderr}");
    let second = history::needed(&dir).expect("history-needed.json");
    assert_eq!((second.inputs, second.replays), (needed.inputs, 1));
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(md.contains("state-dependent"), "{md}");

    // `dlcfuzz replay` runs the arming input first, so the folder's bytes crash again; the
    // trigger alone, as a raw input, passes.
    let replay = dlcfuzz()
        .args(["replay"])
        .arg(&dir)
        .output()
        .expect("replay runs");
    assert_eq!(replay.status.signal(), Some(libc::SIGSEGV));
    let alone = tmp.path().join("trigger.bin");
    std::fs::write(&alone, &cast.trigger).unwrap();
    let replay = dlcfuzz()
        .args(["replay", "--target", "faulty"])
        .arg(&alone)
        .output()
        .expect("replay runs");
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

#[test]
fn a_crash_its_history_does_not_bring_back_is_marked_as_not_replaying() {
    std::env::set_var(dlcfuzz::backend::faulty::ALLOW_FAULTS, "1");
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = TargetConfig::new("faulty", 10);
    let cast = cast(&config, &tmp.path().join("scout"));
    // A planted death: the trigger's signature, with a history that never arms.
    let death = dlcfuzz::campaign::dedup::Death {
        cause: "SIGSEGV".into(),
        stderr: String::new(),
        model: None,
        history: cast.fillers.clone(),
    };
    let outcome = Outcome::of_death(death.clone());
    let Verdict::Found(f) = &outcome.verdict else {
        panic!("a death is a finding")
    };
    let died = DeadTest {
        death: &death,
        ops: "Asin",
        nodes: 1,
    };
    let dir = finding::write_death(
        &tmp.path().join("findings"),
        &cast.trigger,
        &died,
        f,
        "faulty",
    )
    .expect("writes")
    .expect("a new folder");
    history::write(&dir, &death.history).expect("history/");
    Envelope::write(&dir, &config).expect("target.json");
    assert!(!reduce(&dir).0, "the crash does not come back");
    let why = finding::no_replay(&dir).expect("does-not-replay.txt");
    assert!(why.contains("nor after the 3 inputs"), "{why}");
    assert!(history::needed(&dir).is_none());
}
