//! Replaying a finding folder or a raw input (`dlcfuzz replay`): the folder's `target.json`
//! names its target (a raw input, such as a libFuzzer artifact, names one on the command
//! line), its `reduction.json` the edits; the verdict is recomputed in this process, decoding
//! drift is reported, and a still-failing raw input can become a full finding folder. A
//! state-dependent crash's earlier inputs (`history-needed.json`) run first.

use super::finding;
use super::finding::Envelope;
use crate::oracle::Verdict;
use crate::targets::TargetConfig;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to replay and how.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The target of a raw input (a finding folder's `target.json` takes precedence).
    pub target: TargetConfig,
    /// Replay the input as found, ignoring the folder's reduction.
    pub unreduced: bool,
    /// When the input still finds a bug, write a finding folder (artifacts, report) here.
    pub save: Option<PathBuf>,
}

/// What a replay gave.
#[derive(Clone, Debug, Serialize)]
pub struct Replayed {
    /// The target that ran.
    pub target: String,
    /// Earlier inputs run first in this process (a state-dependent crash's
    /// `history-needed.json`).
    pub earlier_inputs: usize,
    /// The verdict.
    pub verdict: Verdict,
    /// Operator nodes and op types of the tested graph.
    pub nodes: usize,
    /// Its op types.
    pub ops: String,
    /// Whether the bytes still decode to the model saved in the folder (`None`: nothing to
    /// compare).
    pub model_matches_saved: Option<bool>,
    /// Warnings (an older decoder version, decoding drift).
    pub warnings: Vec<String>,
    /// The finding folder written under `save`, if one was.
    pub saved_to: Option<PathBuf>,
}

/// Replays `path` (a finding folder or an input file).
pub fn replay(path: &Path, options: &ReplayOptions) -> Result<Replayed, String> {
    let bytes = super::read_input(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut warnings = Vec::new();
    let envelope = path.is_dir().then(|| Envelope::read(path).ok()).flatten();
    if let Some(e) = &envelope {
        if e.decoder_version != crate::gen::DECODER_VERSION {
            warnings.push(format!(
                "saved by decoder version {}, this build decodes version {}",
                e.decoder_version,
                crate::gen::DECODER_VERSION
            ));
        }
    }
    let config = envelope.map_or_else(|| options.target.clone(), |e| e.target);
    let target = crate::targets::build(&config)?;
    let edits = match finding::read_reduction(path) {
        Some(r) if !options.unreduced => r.edits,
        _ => Vec::new(),
    };
    // A state-dependent crash: the earlier inputs it needs run first, in this process.
    let earlier = if path.is_dir() {
        super::history::needed_inputs(path)?
    } else {
        Vec::new()
    };
    for input in &earlier {
        let _ = target.run(input, &[], None);
    }
    let run = target.run(&bytes, &edits, None);
    // A finding folder also holds the model it produced: decoding drift (a changed decoder
    // or capability table) shows up here instead of as a silent non-repro.
    let saved = path
        .is_dir()
        .then(|| {
            let name = if options.unreduced && path.join(finding::ORIGINAL_MODEL).exists() {
                finding::ORIGINAL_MODEL
            } else {
                finding::MODEL
            };
            std::fs::read(path.join(name)).ok()
        })
        .flatten();
    let model_matches_saved = match (&saved, &run.model) {
        (Some(saved), Some(model)) => Some(saved == model),
        _ => None,
    };
    if model_matches_saved == Some(false) {
        warnings.push("the bytes now decode to a different model than the saved one".into());
    }
    let mut saved_to = None;
    if let (Some(out), Verdict::Found(f)) = (&options.save, &run.verdict) {
        let created = finding::write_new(out, &bytes, &run, f, target.as_ref())
            .map_err(|e| format!("writing under {}: {e}", out.display()))?;
        match created {
            Some(dir) => {
                Envelope::write(&dir, &config).map_err(|e| e.to_string())?;
                finding::write_count(&dir, 1).map_err(|e| e.to_string())?;
                saved_to = Some(dir);
            }
            None => warnings.push(format!(
                "a folder for this signature exists under {}",
                out.display()
            )),
        }
    }
    Ok(Replayed {
        target: config.name,
        earlier_inputs: earlier.len(),
        nodes: run.nodes(),
        ops: run.ops_tested(),
        verdict: run.verdict,
        model_matches_saved,
        warnings,
        saved_to,
    })
}
