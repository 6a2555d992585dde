//! Running one test request: the [`Executor`] trait, the request and outcome that cross a
//! process boundary, and the in-process executor.

use super::finding;
use crate::oracle::Verdict;
use crate::reduce::Edit;
use crate::targets::FuzzTarget;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One test to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The fuzz input.
    pub bytes: Vec<u8>,
    /// Reduction edits applied to the decoded case (empty when fuzzing).
    pub edits: Vec<Edit>,
    /// Where a finding folder is written when the verdict is a new finding (`None`: nowhere,
    /// as when a reducer tries candidates).
    pub save_to: Option<PathBuf>,
}

impl Request {
    /// A fuzzing request whose new findings go under `findings`.
    pub fn fuzz(bytes: Vec<u8>, findings: &Path) -> Request {
        Request {
            bytes,
            edits: Vec::new(),
            save_to: Some(findings.to_path_buf()),
        }
    }
}

pub use super::dedup::Death;

/// What one test gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The oracle's verdict (for a dead process: a crash, hang or out-of-memory finding).
    pub verdict: Verdict,
    /// Operator nodes in the tested case.
    pub nodes: usize,
    /// Its op types (a program's rows), sorted and distinct, comma-separated.
    pub ops: String,
    /// Optimizations the backend reported as having changed the model.
    pub fired: Vec<String>,
    /// The compiler's own code the test ran, sorted: Python line ids (Python-hosted targets)
    /// and edge ids of instrumented compiler crates ([`crate::sancov`]).
    #[serde(default)]
    pub coverage: Vec<u32>,
    /// The finding folder this test created (its signature was new on disk).
    pub new_finding: Option<PathBuf>,
    /// Set when the process running the test died.
    pub death: Option<Death>,
    /// On a pass, how near the test came to a mismatch ([`crate::oracle::near_miss`]).
    #[serde(default)]
    pub near_miss: Option<crate::oracle::near_miss::NearMiss>,
}

impl Outcome {
    /// The outcome of a test whose process died: a crash, hang or out-of-memory finding
    /// named after the op types of the model it was running, when it left one.
    pub fn of_death(death: Death) -> Outcome {
        let ops = death
            .model
            .as_deref()
            .and_then(crate::emit::read::node_op_types)
            .unwrap_or_default();
        let nodes = ops.len();
        let ops = crate::gen::distinct_ops(ops);
        Outcome {
            verdict: Verdict::Found(super::dedup::death_finding(&death, &ops)),
            nodes,
            ops,
            fired: Vec::new(),
            coverage: Vec::new(),
            new_finding: None,
            death: Some(death),
            near_miss: None,
        }
    }
}

/// Runs test requests somewhere: in this process, or in a child process that may die.
pub trait Executor {
    /// Runs one request; an error means the executor itself broke (a worker that cannot
    /// start), never that the backend failed.
    fn execute(&mut self, request: &Request) -> Result<Outcome, String>;

    /// The backend's unoptimized level name (a finding there means the model did not run).
    fn reference_level(&self) -> &str;

    /// Highest RSS of the process(es) running the tests, in KiB (0: not measured).
    fn peak_rss_kb(&self) -> u64 {
        0
    }

    /// How many times a dead test process was replaced.
    fn restarts(&self) -> u64 {
        0
    }
}

/// Runs `request` on `target` (the model goes to `inflight` first, when given) and writes a
/// finding folder when the verdict is a new finding under `save_to`.
pub fn run_request(target: &dyn FuzzTarget, request: &Request, inflight: Option<&Path>) -> Outcome {
    crate::sancov::reset();
    let mut run = target.run(&request.bytes, &request.edits, inflight);
    let edges = crate::sancov::edges_hit();
    if !edges.is_empty() {
        run.coverage.extend(edges);
        run.coverage.sort_unstable();
        run.coverage.dedup();
    }
    let new_finding = match (&request.save_to, &run.verdict) {
        (Some(out), Verdict::Found(f)) => {
            match finding::write_new(out, &request.bytes, &run, f, target) {
                Ok(created) => created,
                Err(e) => {
                    tracing::error!("cannot write the finding under {}: {e}", out.display());
                    None
                }
            }
        }
        _ => None,
    };
    Outcome {
        nodes: run.nodes(),
        ops: run.ops_tested(),
        fired: run.fired,
        coverage: run.coverage,
        verdict: run.verdict,
        new_finding,
        death: None,
        near_miss: run.near_miss,
    }
}

/// Runs every request in this process: fastest, but a backend that crashes takes the
/// campaign with it (the runner then files the in-flight input when it resumes).
pub struct InProcess {
    /// The target.
    pub target: Box<dyn FuzzTarget>,
}

impl Executor for InProcess {
    fn execute(&mut self, request: &Request) -> Result<Outcome, String> {
        Ok(run_request(self.target.as_ref(), request, None))
    }

    fn reference_level(&self) -> &str {
        self.target.reference_level()
    }

    fn peak_rss_kb(&self) -> u64 {
        own_peak_rss_kb()
    }
}

/// This process's peak resident set, in KiB.
pub fn own_peak_rss_kb() -> u64 {
    // SAFETY: getrusage writes only the struct we pass; all-zero is a valid rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss.max(0) as u64
}
