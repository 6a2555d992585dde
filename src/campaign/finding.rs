//! Finding folders: the fuzz input, the target's artifacts (model, program, a standalone
//! `repro.py`), `report.json` and the hit count. One folder per signature, created atomically by whoever sees it first.

use super::dedup::Death;
use super::known::{Observed, Upstream};
use super::verify::{NewestCheck, Severity};
use crate::backend::bisect::Culprits;
use crate::oracle::{Finding, FindingKind};
use crate::reduce::Reduction;
use crate::targets::{FuzzTarget, TargetConfig, TargetRun};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The machine-readable report of a finding (`report.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The finding.
    pub finding: Finding,
    /// Backend and version.
    pub backend: String,
    /// Op types in the model.
    pub op_types: String,
    /// Number of operator nodes.
    pub nodes: usize,
    /// Size of the fuzz input in bytes.
    pub input_bytes: usize,
    /// How to replay.
    pub replay: String,
    /// Optimizer patterns spliced into the case (OATest), in order.
    #[serde(default)]
    pub spliced: Vec<crate::gen::Spliced>,
    /// The culprit transformers (ONNX Runtime findings against the unoptimized run), or why
    /// the bisection could not say; filled in after reduction.
    #[serde(default)]
    pub culprits: Option<Result<Culprits, String>>,
    /// How bad it is for users.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// The specification text the expected result rests on; filled in after reduction.
    #[serde(default)]
    pub spec: Option<String>,
    /// `repro.py` re-run on the newest release of the compiler (or why it could not run);
    /// filled in after reduction.
    #[serde(default)]
    pub newest: Option<Result<NewestCheck, String>>,
    /// What identifies the bug after reduction ([`super::bugs::key`]); findings of one
    /// campaign with equal keys merge into one bug folder.
    #[serde(default)]
    pub bug_key: Option<String>,
    /// Whether the known-upstream table held it when it was reduced ([`super::known`]);
    /// `report.md` and the campaign report match the folder afresh
    /// ([`upstream_of_folder`]).
    #[serde(default)]
    pub upstream: Option<Upstream>,
}

impl Report {
    /// The report of a new finding folder `dir` for `bytes`, before reduction and checks.
    pub fn new(
        finding: &Finding,
        backend: String,
        op_types: String,
        nodes: usize,
        bytes: &[u8],
        dir: &Path,
    ) -> Report {
        Report {
            finding: finding.clone(),
            backend,
            op_types,
            nodes,
            input_bytes: bytes.len(),
            replay: replay_command(dir),
            spliced: Vec::new(),
            culprits: None,
            severity: Some(Severity::of(finding)),
            spec: None,
            newest: None,
            bug_key: None,
            upstream: None,
        }
    }

    /// Reads `dir/report.json`.
    pub fn read(dir: &Path) -> Result<Report, String> {
        let path = dir.join(REPORT_JSON);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes `dir/report.json`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::write(
            dir.join(REPORT_JSON),
            serde_json::to_vec_pretty(self).expect("serializable"),
        )
    }
}

impl Report {
    /// What this finding, found by `target`, shows the known-upstream matcher.
    pub fn observed<'a>(&'a self, target: &'a str) -> Observed<'a> {
        Observed {
            target,
            signature: &self.finding.signature,
            detail: &self.finding.detail,
            culprits: match &self.culprits {
                Some(Ok(c)) => &c.culprits,
                _ => &[],
            },
            ops: self.op_types.split(',').filter(|o| !o.is_empty()).collect(),
        }
    }

    /// Whether the known-upstream table holds this finding, found by `target`.
    pub fn upstream_for(&self, target: &str) -> Upstream {
        Upstream::of(&self.observed(target))
    }
}

/// The known-upstream verdict for the finding folder `dir` holding `report`, matched afresh
/// (the table may have grown since the finding was reduced) with the target its
/// `target.json` names; the verdict stored at reduction when the folder names none.
pub fn upstream_of_folder(dir: &Path, report: &Report) -> Option<Upstream> {
    match Envelope::read(dir) {
        Ok(e) => Some(with_live_ops(dir, report).upstream_for(&e.target.name)),
        Err(_) => report.upstream.clone(),
    }
}

/// `report`, its op types filled in from the program's live rows ([`crate::targets::LIVE_OPS`])
/// when it names none (a program finding not reduced yet), so the table's op matchers see
/// them.
fn with_live_ops<'a>(dir: &Path, report: &'a Report) -> std::borrow::Cow<'a, Report> {
    if !report.op_types.is_empty() {
        return std::borrow::Cow::Borrowed(report);
    }
    let Ok(live) = std::fs::read_to_string(dir.join(crate::targets::LIVE_OPS)) else {
        return std::borrow::Cow::Borrowed(report);
    };
    let mut filled = report.clone();
    filled.op_types = crate::targets::live_rows(&live).join(",");
    std::borrow::Cow::Owned(filled)
}

/// File names inside a finding folder.
pub const REPORT_JSON: &str = "report.json";
/// The fuzz input.
pub const INPUT: &str = "input.bin";
pub use crate::targets::MODEL;

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
    /// Whether the finding's target compiles PyTorch programs rather than ONNX models
    /// ([`crate::targets::TargetInfo::compiles_programs`]).
    pub fn compiles_programs(&self) -> bool {
        crate::targets::by_name(&self.target.name).is_ok_and(|t| t.compiles_programs())
    }

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

    /// Reads `dir/target.json`; a folder without one is not a finding folder, and the error
    /// says so (a raw input replays with `dlcfuzz replay --target T FILE`).
    pub fn read(dir: &Path) -> Result<Envelope, String> {
        let path = dir.join(TARGET_JSON);
        let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "{} is not a finding folder: it has no {TARGET_JSON} naming the target (every folder a campaign writes has one; a raw input replays with `dlcfuzz replay --target T FILE`)",
                dir.display()
            ),
            _ => format!("{}: {e}", path.display()),
        })?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Reads the saved reduction of a finding folder, if it was reduced.
pub fn read_reduction(dir: &Path) -> Option<Reduction> {
    let bytes = std::fs::read(dir.join(REDUCTION_JSON)).ok()?;
    serde_json::from_slice(&bytes).ok()
}
/// How many tests hit the finding.
pub const COUNT: &str = "count";

/// A short stable hex id for a signature.
pub fn signature_id(signature: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    signature.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// The folder of a finding with `signature` under `out`.
pub fn folder(out: &Path, kind: FindingKind, signature: &str) -> PathBuf {
    let prefix = match kind {
        FindingKind::Crash | FindingKind::Inconsistency => "finding",
        FindingKind::Hang => "hang",
        FindingKind::OutOfMemory => "oom",
    };
    out.join(format!("{prefix}-{}", signature_id(signature)))
}

/// Creates the folder for `finding` under `out` unless it exists: `Some(dir)` when this call
/// created it (the first hit of its signature), `None` when it was there already. Creation
/// is atomic, so concurrent workers never both write one folder.
fn create(out: &Path, finding: &Finding) -> std::io::Result<Option<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let dir = folder(out, finding.kind, &finding.signature);
    match std::fs::create_dir(&dir) {
        Ok(()) => Ok(Some(dir)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(e),
    }
}

fn replay_command(dir: &Path) -> String {
    // The folder's target.json names the target and its configuration.
    format!("dlcfuzz replay {}", dir.display())
}

/// Writes a new finding folder for an oracle finding (the input, the target's artifacts:
/// model, program, `repro.py`; `report.json`) and returns it; `None` when a folder for the
/// signature exists. Reduction, culprit bisection and the newest-release check come later
/// ([`crate::campaign::post`]).
pub fn write_new(
    out: &Path,
    bytes: &[u8],
    run: &TargetRun,
    finding: &Finding,
    target: &dyn FuzzTarget,
) -> std::io::Result<Option<PathBuf>> {
    let Some(dir) = create(out, finding)? else {
        return Ok(None);
    };
    std::fs::write(dir.join(INPUT), bytes)?;
    for (name, contents) in &run.artifacts {
        std::fs::write(dir.join(name), contents)?;
    }
    let spliced = run.case.as_ref().map(|c| c.spliced.clone());
    Report {
        spliced: spliced.unwrap_or_default(),
        ..Report::new(
            finding,
            target.version(),
            run.op_types(),
            run.nodes(),
            bytes,
            &dir,
        )
    }
    .write(&dir)?;
    Ok(Some(dir))
}

/// A test whose process died: how, and what it was running.
pub struct DeadTest<'a> {
    /// How the process died.
    pub death: &'a Death,
    /// The op types of the model it was running.
    pub ops: &'a str,
    /// Its operator nodes.
    pub nodes: usize,
}

/// Writes a new finding folder for a test whose process died (input, the model it was
/// running, the process's stderr, `report.json`); `None` when one exists for the signature.
pub fn write_death(
    out: &Path,
    bytes: &[u8],
    died: &DeadTest,
    finding: &Finding,
    target: &str,
) -> std::io::Result<Option<PathBuf>> {
    let Some(dir) = create(out, finding)? else {
        return Ok(None);
    };
    std::fs::write(dir.join(INPUT), bytes)?;
    if let Some(model) = &died.death.model {
        std::fs::write(dir.join(MODEL), model)?;
    }
    std::fs::write(dir.join("stderr.txt"), &died.death.stderr)?;
    let ops = died.ops.to_string();
    Report::new(finding, target.to_string(), ops, died.nodes, bytes, &dir).write(&dir)?;
    Ok(Some(dir))
}

/// Sets the hit count of the finding in `dir`.
pub fn write_count(dir: &Path, count: u64) -> std::io::Result<()> {
    std::fs::write(dir.join(COUNT), format!("{count}\n"))
}

/// The file that marks a finding whose input did not reproduce it in a fresh worker (the
/// reducer's first replay): it holds why. Such a finding is state-dependent or flaky, not a
/// bug to file as it stands, and reports count it apart from new bugs.
pub const NO_REPLAY: &str = "does-not-replay.txt";

/// Why the finding in `dir` did not replay in a fresh worker, when it did not.
pub fn no_replay(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(NO_REPLAY)).ok()
}

/// The hit count of the finding in `dir` (1 when not recorded).
pub fn read_count(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join(COUNT))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1)
}

/// The folders directly under `dir`, sorted (none when it cannot be read).
pub fn folders_in(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_target_json_is_named_as_no_finding_folder() {
        let dir = tempfile::tempdir().unwrap();
        let error = Envelope::read(dir.path()).unwrap_err();
        assert!(error.contains("is not a finding folder"), "{error}");
        assert!(error.contains("dlcfuzz replay --target"), "{error}");
    }

    /// An unreduced program finding names no op types; its live rows stand in for them, so
    /// a known row matching on an op (`any` on uint8, pytorch/pytorch#198081) matches it.
    #[test]
    fn an_unreduced_program_finding_is_matched_on_its_live_rows() {
        let dir = tempfile::tempdir().unwrap();
        let report: Report = serde_json::from_value(serde_json::json!({
            "finding": {
                "kind": "Inconsistency",
                "level": "compile:inductor",
                "signature": "inconsistency:torch.compile:inductor:static:once:dtype:any",
                "detail": "compile:inductor against eager: output 0 is Some(Some(Bool)), eager's is Some(Some(U8))",
                "blame": null
            },
            "backend": "torch.compile",
            "op_types": "",
            "nodes": 0,
            "input_bytes": 1,
            "replay": "",
            "spliced": [],
            "culprits": null,
            "severity": "SilentWrongResult",
            "spec": null,
            "newest": null,
            "bug_key": null,
            "upstream": null
        }))
        .unwrap();
        let envelope = serde_json::json!({
            "target": { "name": "torch_compile_cpu", "max_nodes": 10, "patterns": null },
            "decoder_version": crate::gen::DECODER_VERSION
        });
        std::fs::write(dir.path().join(TARGET_JSON), envelope.to_string()).unwrap();
        let before = upstream_of_folder(dir.path(), &report).unwrap();
        assert_eq!(before, Upstream::New);
        std::fs::write(
            dir.path().join(crate::targets::LIVE_OPS),
            "Neg\nany\nsilu\n",
        )
        .unwrap();
        let after = upstream_of_folder(dir.path(), &report).unwrap();
        assert_ne!(after, Upstream::New, "{after:?}");
    }
}
