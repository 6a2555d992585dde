//! In-process fuzz campaigns (`dlcfuzz fuzz`) and replay of saved inputs.
//!
//! Before each test the input bytes go to `<out>/.inflight`; if the backend kills the process,
//! the next campaign on the same folder files those bytes as a crash finding, so nothing is
//! lost. (Isolating backends in child processes is the job of the campaign runner to come.)

pub mod bisect;
pub mod finding;
pub mod harness;

use crate::oracle::{Skip, Verdict};
use harness::Harness;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Counters of a campaign.
#[derive(Clone, Debug, Default, Serialize)]
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
    #[serde(skip)]
    valid: u64,
    #[serde(skip)]
    unsupported: u64,
    #[serde(skip)]
    non_finite: u64,
    #[serde(skip)]
    nodes: u64,
    /// Count per distinct signature.
    pub signatures: BTreeMap<String, u64>,
    /// Names of the optimizations (ORT graph transformers) that changed some test's model.
    pub transformers_fired: Vec<String>,
    /// For each of those, how many tests it changed.
    pub transformer_tests: BTreeMap<String, u64>,
    /// A few unsupported and invalid messages, for diagnosis.
    pub sample_skips: Vec<String>,
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
        self.transformers_fired = self.transformer_tests.keys().cloned().collect();
    }
}

/// Options of a campaign.
pub struct CampaignOptions<'a> {
    /// Output folder for findings.
    pub out: &'a Path,
    /// Time budget.
    pub time: Duration,
    /// RNG seed for the input bytes.
    pub seed: u64,
    /// Length of each random input.
    pub input_len: usize,
    /// Stop after this many tests (0 = no limit).
    pub max_tests: u64,
}

const INFLIGHT: &str = ".inflight";

/// Files the input left by a process that died mid-test as a crash finding.
fn recover_inflight(out: &Path) -> std::io::Result<()> {
    let inflight = out.join(INFLIGHT);
    if let Ok(bytes) = std::fs::read(&inflight) {
        let id = finding::signature_id(&format!("process-died:{}", bytes.len()));
        let dir = out.join(format!("crash-{id}"));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("input.bin"), &bytes)?;
        std::fs::write(
            dir.join("README"),
            "the process died while testing input.bin; replay it with `dlcfuzz replay`\n",
        )?;
        std::fs::remove_file(&inflight)?;
    }
    Ok(())
}

/// Runs random differential tests until the time budget is spent, writing findings under
/// `opts.out`. `on_test` sees the running stats after each test (for a progress bar).
pub fn fuzz(
    harness: &Harness,
    opts: &CampaignOptions,
    mut on_test: impl FnMut(&Stats),
) -> std::io::Result<Stats> {
    std::fs::create_dir_all(opts.out)?;
    recover_inflight(opts.out)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(opts.seed);
    let mut stats = Stats::default();
    let start = Instant::now();
    let mut bytes = vec![0u8; opts.input_len];
    while start.elapsed() < opts.time && (opts.max_tests == 0 || stats.tests < opts.max_tests) {
        rng.fill(bytes.as_mut_slice());
        std::fs::write(opts.out.join(INFLIGHT), &bytes)?;
        let run = harness.test(&bytes);
        stats.record(
            &run.verdict,
            run.case.graph.op_count(),
            &run.fired,
            harness.backend.levels()[0],
        );
        if let Verdict::Found(f) = &run.verdict {
            finding::write_finding(opts.out, &bytes, &run, f, harness.backend.as_ref())?;
        }
        stats.finish(start.elapsed());
        on_test(&stats);
    }
    let _ = std::fs::remove_file(opts.out.join(INFLIGHT));
    stats.finish(start.elapsed());
    Ok(stats)
}

/// Reads the fuzz input of a finding folder or a raw input file.
pub fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    if path.is_dir() {
        std::fs::read(path.join("input.bin"))
    } else {
        std::fs::read(path)
    }
}
