//! After a new finding: reduce it, bisect its culprit passes, write its `report.md`
//! (`dlcfuzz reduce FINDING`; the campaign runs it in a child process for each new folder).
//!
//! Every candidate runs in an isolated worker, so a reduction survives candidates that
//! crash or hang. The folder keeps the original model as `original.onnx`; `model.onnx`,
//! `repro.py` and `report.json` then describe the reduced case, and `reduction.json` holds
//! the edits, so `dlcfuzz replay` rebuilds the reduced model from `input.bin`.

use super::executor::{Executor, Request};
use super::finding::{Report, INPUT, MODEL};
use super::verify::{recheck_on_newest, spec_basis, Severity};
use super::worker::{Isolated, Isolation};
use crate::backend::bisect::bisect;
use crate::oracle::Verdict;
use crate::reduce::{reduce, reduction_key, Reduction};
use crate::targets::TargetConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The campaign target saved in every finding folder.
pub const TARGET_JSON: &str = "target.json";
/// The reduction saved in a finding folder.
pub const REDUCTION_JSON: &str = "reduction.json";
/// The model as first found, before reduction.
pub const ORIGINAL_MODEL: &str = "original.onnx";

/// The target a finding folder was found with, plus the decoder version of its input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The campaign target.
    pub target: TargetConfig,
    /// [`crate::gen::DECODER_VERSION`] when the input was saved.
    pub decoder_version: u32,
}

impl Envelope {
    /// Writes `dir/target.json` for `target` with the current decoder version.
    pub fn write(dir: &Path, target: &TargetConfig) -> std::io::Result<()> {
        let envelope = Envelope {
            target: target.clone(),
            decoder_version: crate::gen::DECODER_VERSION,
        };
        std::fs::write(
            dir.join(TARGET_JSON),
            serde_json::to_vec_pretty(&envelope).expect("serializable"),
        )
    }

    /// Reads `dir/target.json`.
    pub fn read(dir: &Path) -> Result<Envelope, String> {
        let path = dir.join(TARGET_JSON);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
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

/// Reads the saved reduction of a finding folder, if it was reduced.
pub fn read_reduction(dir: &Path) -> Option<Reduction> {
    let bytes = std::fs::read(dir.join(REDUCTION_JSON)).ok()?;
    serde_json::from_slice(&bytes).ok()
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
    let mut still_fails = |edits: &[crate::reduce::Edit]| {
        let request = Request {
            bytes: bytes.clone(),
            edits: edits.to_vec(),
            save_to: None,
        };
        matches!(
            executor.execute(&request),
            Ok(outcome) if matches!(&outcome.verdict, Verdict::Found(f) if reduction_key(&f.signature) == key)
        )
    };
    if !still_fails(&[]) {
        let _ = std::fs::remove_dir_all(&inflight);
        return Err(format!(
            "{} does not reproduce (its signature is {})",
            dir.display(),
            report.finding.signature
        ));
    }
    // Inputs that are not graphs (untrusted ONNX files) are kept as found.
    let reduction = match target.decode(&bytes) {
        Some(case) => reduce(&case, opts.budget, &mut still_fails),
        None => Reduction::default(),
    };
    drop(executor);
    let _ = std::fs::remove_dir_all(&inflight);
    // The reduced case's artifacts, from one more in-process run of the target.
    let run = target.run(&bytes, &reduction.edits, None);
    let original = dir.join(ORIGINAL_MODEL);
    if !original.exists() && dir.join(MODEL).exists() && !reduction.edits.is_empty() {
        std::fs::rename(dir.join(MODEL), &original).map_err(|e| e.to_string())?;
    }
    for (name, contents) in &run.artifacts {
        std::fs::write(dir.join(name), contents).map_err(|e| e.to_string())?;
    }
    std::fs::write(
        dir.join(REDUCTION_JSON),
        serde_json::to_vec_pretty(&reduction).expect("serializable"),
    )
    .map_err(|e| e.to_string())?;
    if target.bisects(&report.finding) {
        let culprits = bisect(dir, &report.finding.level);
        if let Ok(c) = &culprits {
            if let Some(repro) = target.culprit_repro(&bytes, &reduction.edits, &report.finding, c)
            {
                std::fs::write(dir.join("repro.py"), repro).map_err(|e| e.to_string())?;
            }
        }
        report.culprits = Some(culprits);
    }
    if dir.join("repro.py").exists() {
        report.newest = Some(recheck_on_newest(dir, &target.newest_env()));
    }
    report.severity = Some(Severity::of(&report.finding));
    report.spec = Some(spec_basis(&report.finding));
    if run.case.is_some() {
        report.op_types = run.op_types();
        report.nodes = run.nodes();
    }
    report.write(dir).map_err(|e| e.to_string())?;
    super::report_md::write(dir).map_err(|e| e.to_string())?;
    Ok(reduction)
}
