//! Fuzz campaigns (`dlcfuzz fuzz`) over any [`crate::targets`] target: executors that run one
//! test in process or in an isolated worker, the crash-safe runner with its on-disk state, finding
//! folders, dedup, and the post-processing of new findings (reduce, bisect, check on the newest release, report).

pub mod bugs;
pub mod dedup;
pub mod executor;
pub mod finding;
pub mod history;
pub mod known;
pub mod launch;
pub mod pool;
pub mod post;
pub mod replay;
pub mod report_md;
pub mod runner;
pub mod verify;
pub mod worker;

use crate::oracle::{Skip, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Counters of a campaign.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Tests run.
    pub tests: u64,
    /// Tests per second.
    pub tests_per_s: f64,
    /// Fraction of tests whose unoptimized run compiled and ran.
    pub valid_fraction: f64,
    /// Fraction of tests skipped because the backend does not implement something.
    pub unsupported_fraction: f64,
    /// Fraction of tests skipped for NaN/Inf in the reference.
    pub non_finite_fraction: f64,
    /// Reference mismatches explained away after localization (a documented kernel
    /// deviation, or rounding amplified by an ill-conditioned op), by reason.
    pub explained: BTreeMap<String, u64>,
    /// Distinct findings (by signature).
    pub findings: usize,
    /// Tests that produced a finding (with repeats).
    pub finding_tests: u64,
    /// Mean operator nodes per test.
    pub mean_nodes: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Tests whose unoptimized run compiled and ran.
    pub valid: u64,
    /// Tests skipped as unsupported.
    pub unsupported: u64,
    /// Tests skipped for NaN/Inf.
    pub non_finite: u64,
    /// Operator nodes over all tests.
    pub nodes: u64,
    /// Count per distinct signature.
    pub signatures: BTreeMap<String, u64>,
    /// Names of the optimizations (ORT graph transformers) that changed some test's model.
    pub transformers_fired: Vec<String>,
    /// For each of those, how many tests it changed.
    pub transformer_tests: BTreeMap<String, u64>,
    /// A few unsupported and invalid messages, for diagnosis.
    pub sample_skips: Vec<String>,
    /// Distinct coverage features seen: transformers fired and op types tested.
    #[serde(default)]
    pub features: usize,
    /// Distinct units of the compiler's own code covered: Python lines (Python-hosted
    /// targets) and edges of instrumented compiler crates ([`crate::sancov`]).
    #[serde(default)]
    pub py_lines: usize,
    /// The compiler's own work the campaign observed: distinct (optimization fired, op type
    /// of the test) pairs plus the units of code in [`Stats::py_lines`]. What `dlcfuzz bench
    /// feedback` compares.
    #[serde(default)]
    pub compiler_coverage: usize,
    /// Distinct near-miss features seen ([`crate::oracle::near_miss`]): (output site, power
    /// of two of how near a passing test came to a mismatch) pairs.
    #[serde(default)]
    pub near_misses: usize,
    /// Highest resident set of a process running tests (the worker, or this process when
    /// tests run in process), in MiB.
    #[serde(default)]
    pub peak_test_rss_mb: f64,
    /// Highest resident set of the campaign process itself, in MiB.
    #[serde(default)]
    pub peak_campaign_rss_mb: f64,
    /// Test processes replaced after a death.
    #[serde(default)]
    pub restarts: u64,
    /// Constraint-level-0 tests (deliberately invalid models).
    #[serde(default)]
    pub level0_tests: u64,
    /// Level-0 models rejected with a clean error.
    #[serde(default)]
    pub rejected_level0: u64,
    /// The probability of constraint level 0 at the end (HirFuzz's p; 0 when the target
    /// has no levels).
    #[serde(default)]
    pub level0_p: f64,
}

impl Stats {
    /// Records one test: its verdict, op-node count and fired optimizations;
    /// `reference_level` names the backend's unoptimized level (a finding there means the
    /// model did not run validly).
    pub fn record(
        &mut self,
        verdict: &Verdict,
        nodes: usize,
        fired: &[String],
        reference_level: &str,
    ) {
        self.tests += 1;
        for name in fired {
            *self.transformer_tests.entry(name.clone()).or_insert(0) += 1;
        }
        self.nodes += nodes as u64;
        match verdict {
            Verdict::Pass => self.valid += 1,
            Verdict::Skipped(Skip::NonFinite) => {
                self.valid += 1;
                self.non_finite += 1;
            }
            Verdict::Skipped(Skip::Rejected(_)) => self.rejected_level0 += 1,
            Verdict::Skipped(Skip::Explained(why)) => {
                self.valid += 1;
                *self.explained.entry(why.clone()).or_insert(0) += 1;
            }
            Verdict::Skipped(Skip::Unsupported(m)) | Verdict::Skipped(Skip::Invalid(m)) => {
                if matches!(verdict, Verdict::Skipped(Skip::Unsupported(_))) {
                    self.unsupported += 1;
                }
                if self.sample_skips.len() < 8 {
                    self.sample_skips.push(m.chars().take(300).collect());
                }
            }
            Verdict::Found(f) => {
                if f.level != reference_level {
                    self.valid += 1;
                }
                self.finding_tests += 1;
                *self.signatures.entry(f.signature.clone()).or_insert(0) += 1;
            }
        }
    }

    /// One progress line: tests, rate, validity, findings and coverage so far.
    pub fn progress_line(&self) -> String {
        format!(
            "{} tests, {:.1}/s, valid {:.3}, unsupported {:.3}, findings {}, transformers {}, features {}, py lines {}, coverage {}, restarts {}",
            self.tests,
            self.tests_per_s,
            self.valid_fraction,
            self.unsupported_fraction,
            self.findings,
            self.transformer_tests.len(),
            self.features,
            self.py_lines,
            self.compiler_coverage,
            self.restarts
        )
    }

    /// Fills the derived figures.
    pub fn finish(&mut self, elapsed: Duration) {
        let n = self.tests.max(1) as f64;
        self.seconds = elapsed.as_secs_f64();
        self.tests_per_s = self.tests as f64 / self.seconds.max(1e-9);
        self.valid_fraction = self.valid as f64 / n;
        self.unsupported_fraction = self.unsupported as f64 / n;
        self.non_finite_fraction = self.non_finite as f64 / n;
        self.mean_nodes = self.nodes as f64 / n;
        self.findings = self.signatures.len();
        // Names are only ever added: the list is rebuilt when one was (not after every test).
        if self.transformers_fired.len() != self.transformer_tests.len() {
            self.transformers_fired = self.transformer_tests.keys().cloned().collect();
        }
    }
}

/// Reads the fuzz input of a finding folder or a raw input file.
pub fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    if path.is_dir() {
        std::fs::read(path.join("input.bin"))
    } else {
        std::fs::read(path)
    }
}
