//! After a new finding: reduce it, bisect its culprit passes, write its `report.md`
//! (`dlcfuzz reduce FINDING`; the campaign runs it in a child process for each new folder).
//!
//! Every candidate runs in an isolated worker, so a reduction survives candidates that
//! crash or hang. The folder keeps the original model as `original.onnx`; `model.onnx`,
//! `repro.py` and `report.json` then describe the reduced case, and `reduction.json` holds
//! the edits, so `dlcfuzz replay` rebuilds the reduced model from `input.bin`. A crash whose
//! input passes alone is replayed after its worker's earlier inputs
//! ([`super::history`]); one that comes back that way is reported unreduced, with the
//! earlier inputs it needs. Progress goes to stderr: a line every [`PROGRESS_EVERY`] while
//! candidates run, and one as each later stage starts.

use super::executor::{Executor, Request};
use super::finding::{Envelope, Report, INPUT, MODEL, NO_REPLAY, ORIGINAL_MODEL, REDUCTION_JSON};
use super::history::{HistoryAnswer, HistoryReplay};
use super::verify::{recheck_on_newest, spec_basis, Severity};
use super::worker::{Isolated, Isolation};
use crate::oracle::Verdict;
use crate::reduce::{reduce, reduction_key, Reduction};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a reduction reports its progress on stderr.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(15);

/// Counts a reduction's candidates and says how far it is, at most once per
/// [`PROGRESS_EVERY`].
struct Progress {
    started: Instant,
    said: Instant,
    budget: Duration,
    tried: u64,
    failing: u64,
}

impl Progress {
    fn new(budget: Duration) -> Progress {
        let now = Instant::now();
        Progress {
            started: now,
            said: now,
            budget,
            tried: 0,
            failing: 0,
        }
    }

    /// Records one candidate's answer and reports when a report is due.
    fn candidate(&mut self, dir: &Path, still_fails: bool) {
        self.tried += 1;
        self.failing += u64::from(still_fails);
        if self.said.elapsed() >= PROGRESS_EVERY {
            self.said = Instant::now();
            eprintln!("{}", self.line(dir));
        }
    }

    fn line(&self, dir: &Path) -> String {
        format!(
            "reducing {}: {} candidates tried, {} still fail; {} s of {} s",
            dir.display(),
            self.tried,
            self.failing,
            self.started.elapsed().as_secs(),
            self.budget.as_secs()
        )
    }
}

/// How to reduce.
pub struct PostOptions {
    /// The `dlcfuzz` executable the workers run.
    pub program: PathBuf,
    /// Time budget of the reduction.
    pub budget: Duration,
    /// Limits on each candidate.
    pub isolation: Isolation,
}

/// Reduces, bisects and reports the finding in `dir`.
pub fn process(dir: &Path, opts: &PostOptions) -> Result<Reduction, String> {
    let envelope = Envelope::read(dir)?;
    if envelope.decoder_version != crate::gen::DECODER_VERSION {
        return Err(format!(
            "{} was saved by decoder version {}, this build decodes version {}: rebuild the dlcfuzz that found it",
            dir.display(),
            envelope.decoder_version,
            crate::gen::DECODER_VERSION
        ));
    }
    let mut report = Report::read(dir)?;
    let bytes = std::fs::read(dir.join(INPUT)).map_err(|e| format!("{}: {e}", dir.display()))?;
    let target = crate::targets::build(&envelope.target)?;
    let inflight = dir.join(".reduce-inflight");
    let mut executor = Isolated::start(&opts.program, &envelope.target, opts.isolation, &inflight)?;
    let key = reduction_key(&report.finding.signature);
    let mut progress = Progress::new(opts.budget);
    let mut still_fails = |edits: &[crate::reduce::Edit]| {
        let request = Request {
            bytes: bytes.clone(),
            edits: edits.to_vec(),
            save_to: None,
        };
        let fails = matches!(
            executor.execute(&request),
            Ok(outcome) if matches!(&outcome.verdict, Verdict::Found(f) if reduction_key(&f.signature) == key)
        );
        progress.candidate(dir, fails);
        fails
    };
    if !still_fails(&[]) {
        drop(executor);
        let replay = HistoryReplay {
            program: &opts.program,
            target: &envelope.target,
            isolation: opts.isolation,
            inflight,
            budget: opts.budget,
        };
        let recorded = match replay.search(dir, &bytes, &key)? {
            HistoryAnswer::Needs(needed) => {
                // State-dependent: the input needs earlier ones in its process, which graph
                // reduction and bisection (one input each) cannot give it; the report says so.
                finish(dir, &mut report, &envelope, None)?;
                tracing::info!("{}: {}", dir.display(), needed.describe());
                return Ok(Reduction::default());
            }
            HistoryAnswer::NotBack { recorded } => recorded,
        };
        let why = format!(
            "{} does not reproduce in a fresh worker{} (its signature is {})",
            dir.display(),
            if recorded > 0 {
                format!(", nor after the {recorded} inputs its worker ran before it")
            } else {
                String::new()
            },
            report.finding.signature
        );
        std::fs::write(dir.join(NO_REPLAY), &why).map_err(|e| e.to_string())?;
        super::report_md::write(dir).map_err(|e| e.to_string())?;
        return Err(why);
    }
    // Graphs and programs are reduced; untrusted ONNX files are kept as found.
    let reduction = match (target.decode(&bytes), target.outline(&bytes)) {
        (Some(case), _) => reduce(&case, opts.budget, &mut still_fails),
        (None, Some(outline)) => {
            crate::reduce::program::reduce(&outline, opts.budget, &mut still_fails)
        }
        (None, None) => Reduction::default(),
    };
    drop(executor);
    let _ = std::fs::remove_dir_all(&inflight);
    // The reduced case's files, computed without running the compiler (the finding may be
    // one that kills whoever runs it).
    let (case, files) = target.artifacts(&bytes, &reduction.edits, &report.finding, None);
    let original = dir.join(ORIGINAL_MODEL);
    if !original.exists() && dir.join(MODEL).exists() && !reduction.edits.is_empty() {
        std::fs::rename(dir.join(MODEL), &original).map_err(|e| e.to_string())?;
    }
    for (name, contents) in &files {
        std::fs::write(dir.join(name), contents).map_err(|e| e.to_string())?;
    }
    std::fs::write(
        dir.join(REDUCTION_JSON),
        serde_json::to_vec_pretty(&reduction).expect("serializable"),
    )
    .map_err(|e| e.to_string())?;
    eprintln!(
        "reduced {} with {} edits; bisecting its culprits where the target can",
        dir.display(),
        reduction.edits.len()
    );
    if let Some(culprits) = target.bisect(dir, case.as_ref(), &report.finding) {
        if let Ok(c) = &culprits {
            let (_, files) = target.artifacts(&bytes, &reduction.edits, &report.finding, Some(c));
            for (name, contents) in &files {
                std::fs::write(dir.join(name), contents).map_err(|e| e.to_string())?;
            }
        }
        report.culprits = Some(culprits);
    }
    if dir.join("repro.py").exists() {
        eprintln!(
            "re-running {}'s repro.py on the newest release",
            dir.display()
        );
        report.newest = Some(recheck_on_newest(dir, &target.newest_env()));
    }
    if let Some(case) = &case {
        report.op_types = case.op_types();
        report.nodes = case.graph.op_count();
    } else if let Some((_, ops)) = files
        .iter()
        .find(|(name, _)| name == crate::targets::LIVE_OPS)
    {
        // A program: the operator rows the reduced program still computes.
        report.op_types =
            crate::targets::live_rows(std::str::from_utf8(ops).unwrap_or("")).join(",");
    }
    finish(dir, &mut report, &envelope, case.as_ref())?;
    // One bug, one entry: a finding whose reduced case agrees with an earlier bug's joins it.
    if let Some(bug) = super::bugs::merge(dir)? {
        super::report_md::write(&bug).map_err(|e| e.to_string())?;
    }
    Ok(reduction)
}

/// One line for the user on what [`process`] did to the finding in `dir`.
pub fn summary(dir: &Path, reduction: &Reduction) -> String {
    match super::history::needed(dir) {
        Some(needed) => format!(
            "{}; report in {}",
            needed.describe(),
            dir.join("report.md").display()
        ),
        None => reduction.summary(dir),
    }
}

/// The verdicts every reproduced finding's report gets (severity, spec basis, bug key,
/// known-upstream match), then `report.json` and `report.md`.
fn finish(
    dir: &Path,
    report: &mut Report,
    envelope: &Envelope,
    case: Option<&crate::gen::TestCase>,
) -> Result<(), String> {
    report.severity = Some(Severity::of(&report.finding));
    report.spec = Some(spec_basis(&report.finding, envelope.compiles_programs()));
    report.bug_key = Some(super::bugs::key(report, case));
    report.upstream = Some(report.upstream_for(&envelope.target.name));
    report.write(dir).map_err(|e| e.to_string())?;
    super::report_md::write(dir).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_candidates_and_names_the_budget() {
        let mut progress = Progress::new(Duration::from_secs(300));
        for fails in [true, false, true] {
            progress.candidate(Path::new("f"), fails);
        }
        assert_eq!((progress.tried, progress.failing), (3, 2));
        let line = progress.line(Path::new("findings/f1"));
        assert!(line.starts_with("reducing findings/f1: 3 candidates tried, 2 still fail; "));
        assert!(line.ends_with(" s of 300 s"), "{line}");
    }
}
