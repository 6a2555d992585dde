//! Known upstream bugs: the checked-in table `docs/findings/known-upstream.json` (one row
//! per upstream issue: system, URL, state, fixed-in release, the tracker queries behind it,
//! and a matcher on what identifies the bug), and the matching of a finding against it.
//!
//! Every finding is matched when it is reduced and whenever its `report.md` or the campaign
//! report is written, so a maintainer reads **known upstream: URL (state)**, **on file, not
//! reported upstream yet** (our own `docs/findings/` entries) or **new: no match** before
//! filing anything. The table is data, not code: a new known bug is one row.
//! `dlcfuzz known` lists it and, with `--recheck`, re-runs each row's reproducer on the
//! newest release, so a bug fixed upstream is noticed.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The table, compiled in (an OSS-Fuzz binary has no checkout beside it).
const TABLE_JSON: &str = include_str!("../../docs/findings/known-upstream.json");

/// The compiler project an upstream issue belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    /// microsoft/onnxruntime.
    Onnxruntime,
    /// apache/tvm.
    Tvm,
    /// sonos/tract.
    Tract,
    /// pytorch/pytorch.
    Pytorch,
    /// microsoft/onnxscript (the torch ONNX exporter's operator library).
    Onnxscript,
    /// onnx/onnx (the specification and its reference implementation).
    Onnx,
    /// openvinotoolkit/openvino.
    Openvino,
}

/// The state of the upstream issue when the row was last checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Open.
    Open,
    /// Closed without a fix we could find (stale, won't fix).
    Closed,
    /// Fixed upstream (see `fixed_in`).
    Fixed,
    /// Ours, on file in `docs/findings/` with its reproducer, not reported upstream yet:
    /// a campaign that finds it again has found nothing new.
    Unfiled,
}

/// How our finding relates to the upstream issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// The same defect: do not file, add a +1 at most.
    Same,
    /// A new trigger of the reported defect: worth a comment there, not a new issue.
    NewTrigger,
    /// A design decision or documented limitation upstream: not a bug to file.
    Documented,
}

/// What identifies the bug in a finding. Every listed field must match; an empty field
/// matches anything, but a row must name at least one culprit, op or text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// Target-name prefixes the bug shows on (`ort_cpu`, `tract`, `tvm_llvm`, …).
    pub targets: Vec<String>,
    /// The signature's class (its first token: `crash`, `inconsistency`,
    /// `reference-mismatch`, `exporter`, …), when only one class identifies it.
    #[serde(default)]
    pub class: Option<String>,
    /// Bisected culprit passes; any one of them matches.
    #[serde(default)]
    pub culprits: Vec<String>,
    /// Op types that must all occur in the (reduced) test case; an entry `A|B` is met by
    /// either (one defect reached through any of several ops).
    #[serde(default)]
    pub ops: Vec<String>,
    /// Case-insensitive substrings that must all occur in the signature or detail.
    #[serde(default)]
    pub text: Vec<String>,
    /// Case-insensitive substrings of which at least one must occur there.
    #[serde(default)]
    pub any_text: Vec<String>,
}

/// One known upstream bug.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownBug {
    /// A short stable name.
    pub id: String,
    /// The project.
    pub system: System,
    /// The issue (or pull request) URL; none for a finding not reported upstream yet.
    #[serde(default)]
    pub url: Option<String>,
    /// Its state when last checked.
    pub state: State,
    /// The release that fixed it, when fixed.
    #[serde(default)]
    pub fixed_in: Option<String>,
    /// The upstream title.
    pub title: String,
    /// How ours relates to it.
    pub relation: Relation,
    /// Our `docs/findings/` folder holding its standalone `repro.py`, if any.
    #[serde(default)]
    pub finding: Option<String>,
    /// What identifies it.
    #[serde(rename = "match")]
    pub matcher: Matcher,
    /// The tracker searches that found it (and found nothing else).
    pub queries: Vec<String>,
}

/// What a finding shows to the matcher.
#[derive(Clone, Debug, Default)]
pub struct Observed<'a> {
    /// The campaign target's name.
    pub target: &'a str,
    /// The finding's signature.
    pub signature: &'a str,
    /// Its detail text.
    pub detail: &'a str,
    /// Bisected culprit passes.
    pub culprits: &'a [String],
    /// Op types of the (reduced) test case.
    pub ops: Vec<&'a str>,
}

impl Matcher {
    /// Whether the row names anything beyond targets and class (a row that matches every
    /// finding of a target would hide new bugs).
    pub fn is_specific(&self) -> bool {
        !(self.culprits.is_empty()
            && self.ops.is_empty()
            && self.text.is_empty()
            && self.any_text.is_empty())
    }

    /// Whether the tail of the row's own reproducer's `output` shows the message this row
    /// names: one of its `text` or `any_text` needles (the tail holds the exception line, not
    /// the pass that raised it); `false` for a row that names no message.
    pub fn shows_in(&self, output: &str) -> bool {
        let output = output.to_ascii_lowercase();
        self.text
            .iter()
            .chain(&self.any_text)
            .any(|needle| output.contains(&needle.to_ascii_lowercase()))
    }

    /// Whether `seen` shows this bug.
    pub fn matches(&self, seen: &Observed) -> bool {
        let text = format!("{}\n{}", seen.signature, seen.detail).to_ascii_lowercase();
        let has = |needle: &String| text.contains(&needle.to_ascii_lowercase());
        self.is_specific()
            && (self.targets.is_empty() || self.targets.iter().any(|t| seen.target.starts_with(t)))
            && self
                .class
                .as_ref()
                .is_none_or(|c| seen.signature.split(':').next() == Some(c.as_str()))
            && (self.culprits.is_empty() || self.culprits.iter().any(|c| seen.culprits.contains(c)))
            && self
                .ops
                .iter()
                .all(|op| op.split('|').any(|alt| seen.ops.contains(&alt)))
            && self.text.iter().all(has)
            && (self.any_text.is_empty() || self.any_text.iter().any(has))
    }
}

/// The parsed table.
pub fn table() -> &'static [KnownBug] {
    static TABLE: OnceLock<Vec<KnownBug>> = OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(TABLE_JSON)
            .unwrap_or_else(|e| panic!("docs/findings/known-upstream.json is malformed: {e}"))
    })
}

/// The known upstream bug `seen` shows, if any (the first matching row).
pub fn lookup(seen: &Observed) -> Option<&'static KnownBug> {
    table().iter().find(|row| row.matcher.matches(seen))
}

/// The verdict stored in `report.json`: a known upstream bug, or new.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Upstream {
    /// Matches a row of the table.
    Known {
        /// The row's id.
        id: String,
        /// The upstream issue (none when only on file here).
        url: Option<String>,
        /// Our `docs/findings/` folder, if any.
        finding: Option<String>,
        /// Its state.
        state: State,
        /// How ours relates to it.
        relation: Relation,
    },
    /// No row matches: file it, after the tracker search `report.md` suggests.
    New,
}

impl Upstream {
    /// The verdict for `seen`.
    pub fn of(seen: &Observed) -> Upstream {
        match lookup(seen) {
            Some(row) => Upstream::Known {
                id: row.id.clone(),
                url: row.url.clone(),
                finding: row.finding.clone(),
                state: row.state,
                relation: row.relation,
            },
            None => Upstream::New,
        }
    }

    /// The root cause a matched row names: our finding folder, else its upstream issue,
    /// else the row itself (two rows may share one cause, e.g. two triggers of one rewrite).
    /// `None` when nothing matched.
    pub fn root_cause(&self) -> Option<&str> {
        match self {
            Upstream::Known {
                id, url, finding, ..
            } => Some(finding.as_deref().or(url.as_deref()).unwrap_or(id)),
            Upstream::New => None,
        }
    }

    /// Whether a row matched (reported upstream, or on file here): nothing new.
    pub fn is_known(&self) -> bool {
        matches!(self, Upstream::Known { .. })
    }

    /// Whether a row with an upstream issue matched.
    pub fn is_upstream(&self) -> bool {
        matches!(self, Upstream::Known { url: Some(_), .. })
    }

    /// One line for reports: `known upstream: URL (open)` or `new: no match`.
    pub fn describe(&self) -> String {
        match self {
            Upstream::Known {
                url: None, finding, ..
            } => format!(
                "on file, not reported upstream yet: docs/findings/{} (file it there)",
                finding.as_deref().unwrap_or("?")
            ),
            Upstream::Known {
                url: Some(url),
                state,
                relation,
                ..
            } => {
                let state = match state {
                    State::Open => "open",
                    State::Closed => "closed, not fixed",
                    State::Fixed => "fixed upstream",
                    State::Unfiled => "not filed",
                };
                let relation = match relation {
                    Relation::Same => "",
                    Relation::NewTrigger => "; a new trigger: comment there",
                    Relation::Documented => "; documented upstream, not a bug to file",
                };
                format!("known upstream: {url} ({state}{relation})")
            }
            Upstream::New => {
                "new: no match in the known-upstream table (docs/findings/known-upstream.json)"
                    .to_string()
            }
        }
    }
}

/// Where the checked-in findings live (their `repro.py` files), in this checkout.
fn findings_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/findings")
}

/// The environment holding the newest release of `row`'s system, when its reproducers check
/// themselves (tract's print the reference and name a `dlcfuzz run-model` command).
fn newest_env(row: &KnownBug) -> Option<crate::targets::NewestEnv> {
    // A bug of OpenVINO's torch.compile backend needs torch beside openvino: the Python
    // compilers' environment has both.
    let torch_surface = row.matcher.targets.iter().any(|t| t.starts_with("torch_"));
    match row.system {
        System::Onnxruntime => Some(crate::targets::NewestEnv::onnx_runtime()),
        System::Tract => None,
        System::Openvino if !torch_surface => Some(crate::targets::NewestEnv::of(
            &crate::backend::openvino::PYTHON,
        )),
        System::Openvino | System::Tvm | System::Pytorch | System::Onnxscript | System::Onnx => {
            Some(crate::targets::NewestEnv::python_compilers(
                "the newest in .deps/python",
            ))
        }
    }
}

/// `dlcfuzz known`: one line per row; with `recheck`, each row's `repro.py` re-run on the
/// newest release, and a warning where the result contradicts the row's state.
pub fn listing(recheck: bool) -> String {
    let mut out = String::new();
    for row in table() {
        let state = match row.state {
            State::Fixed => format!("fixed in {}", row.fixed_in.as_deref().unwrap_or("?")),
            State::Open => "open".into(),
            State::Closed => "closed".into(),
            State::Unfiled => "on file here".into(),
        };
        let place = match (&row.url, &row.finding) {
            (Some(url), _) => url.clone(),
            (None, Some(folder)) => format!("docs/findings/{folder}"),
            (None, None) => String::new(),
        };
        out += &format!(
            "{:<48} {:<11} {:<16} {place}\n",
            row.id,
            format!("{:?}", row.system),
            state
        );
        if !recheck {
            continue;
        }
        let check = match (&row.finding, newest_env(row)) {
            (None, _) => "  recheck: no reproducer of ours".to_string(),
            (Some(_), None) => "  recheck: its repro.py does not check itself (run-model)".into(),
            (Some(folder), Some(env)) => {
                match super::verify::recheck_on_newest(&findings_dir().join(folder), &env) {
                    Ok(c) if c.live && row.state == State::Fixed => {
                        format!(
                            "  recheck: STILL LIVE on {} although the row says fixed",
                            c.version
                        )
                    }
                    Ok(c) if !c.live && row.state != State::Fixed => format!(
                        "  recheck: NO LONGER REPRODUCES on {}: fixed upstream? update the row",
                        c.version
                    ),
                    Ok(c) => format!(
                        "  recheck: live={} on {}, as the row says",
                        c.live, c.version
                    ),
                    // A crash reproducer may let the compiler's exception end it: the
                    // traceback showing the row's own message is the bug, live.
                    Err(e) if row.matcher.shows_in(&e) => {
                        "  recheck: live on the newest release (its traceback shows the row's message), as the row says".to_string()
                    }
                    Err(e) => format!(
                        "  recheck: could not run ({})",
                        e.lines().next().unwrap_or("")
                    ),
                }
            }
        };
        out += &check;
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_filled_buffer_clause_of_the_localization_is_known() {
        let clause = crate::targets::torch_compile::LOOP_FILLED_BUFFER_BLAME;
        let detail = format!("compile:openvino against eager: 0.5 off; {clause}");
        let seen = Observed {
            target: "torch_compile_openvino",
            signature: "inconsistency:torch.compile:openvino:static:fwd:once:value:Sin",
            detail: &detail,
            culprits: &[],
            ops: vec!["Sin"],
        };
        let row = lookup(&seen).expect("a known row");
        assert_eq!(row.id, "openvino-torch-compile-loop-filled-buffer-lost");
    }

    #[test]
    fn the_table_parses_and_every_row_is_specific_and_searched() {
        let rows = table();
        assert!(rows.len() >= 10, "{} rows", rows.len());
        let mut ids = std::collections::BTreeSet::new();
        for row in rows {
            assert!(ids.insert(&row.id), "duplicate id {}", row.id);
            assert!(row.matcher.is_specific(), "{} matches everything", row.id);
            assert!(
                !row.matcher.targets.is_empty(),
                "{} names no target",
                row.id
            );
            match &row.url {
                Some(url) => assert!(url.starts_with("https://github.com/"), "{}", row.id),
                None => assert!(
                    row.state == State::Unfiled && row.finding.is_some(),
                    "{}: no URL, so it must be ours on file",
                    row.id
                ),
            }
            assert!(!row.queries.is_empty(), "{} names no query", row.id);
            assert_eq!(
                row.state == State::Fixed,
                row.fixed_in.is_some(),
                "{}",
                row.id
            );
        }
    }

    #[test]
    fn every_listed_finding_folder_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/findings");
        for row in table() {
            if let Some(folder) = &row.finding {
                assert!(root.join(folder).is_dir(), "{}: no {folder}", row.id);
            }
        }
    }

    #[test]
    fn matching_needs_every_field() {
        let m = Matcher {
            targets: vec!["ort_cpu".into()],
            culprits: vec!["FuseReluClip".into()],
            ops: vec!["Clip".into()],
            text: vec!["unexpected data type".into()],
            ..Matcher::default()
        };
        let culprits = vec!["FuseReluClip".to_string()];
        let seen = Observed {
            target: "ort_cpu_patterns",
            signature: "crash:basic:Unexpected data type for Clip 'min' input of N",
            detail: "",
            culprits: &culprits,
            ops: vec!["Clip", "Relu"],
        };
        assert!(m.matches(&seen));
        assert!(!m.matches(&Observed {
            target: "tract",
            ..seen.clone()
        }));
        assert!(!m.matches(&Observed {
            ops: vec!["Relu"],
            ..seen.clone()
        }));
        assert!(!m.matches(&Observed {
            culprits: &[],
            ..seen.clone()
        }));
        assert!(
            !Matcher::default().matches(&seen),
            "an empty matcher is too broad"
        );
        let either = Matcher {
            ops: vec!["Clip".into(), "Relu|Sigmoid".into()],
            ..m.clone()
        };
        assert!(either.matches(&seen));
        assert!(!either.matches(&Observed {
            ops: vec!["Clip", "Tanh"],
            ..seen.clone()
        }));
    }

    #[test]
    fn a_traceback_shows_a_row_when_it_holds_the_rows_message() {
        let m = Matcher {
            targets: vec!["tvm".into()],
            text: vec!["ToMixedPrecision".into(), "Expected TensorType".into()],
            ..Matcher::default()
        };
        assert!(m.shows_in("relax.transform.ToMixedPrecision: Check failed: Expected TensorType"));
        assert!(!m.shows_in("ModuleNotFoundError: No module named 'tvm'"));
        let by_ops = Matcher {
            targets: vec!["tract".into()],
            ops: vec!["Mod".into()],
            ..Matcher::default()
        };
        assert!(
            !by_ops.shows_in("anything"),
            "a row without a message shows nowhere"
        );
    }

    #[test]
    fn a_vectorized_int8_argmin_is_known_and_a_float_one_is_not() {
        let detail = |types: &str| {
            format!(
                "compile:inductor against eager: output 13: 7.688e3× the f32 tolerance; gone with \
                 Inductor's vectorization switched ({{\"cpp.simdlen\": 1}}); the first wrong \
                 value on its path: `v52` (argmin of {types})"
            )
        };
        let seen = |detail: &str| {
            Upstream::of(&Observed {
                target: "torch_compile_cpu",
                signature: "inconsistency:torch.compile:inductor:static:fwd:once:value:argmin",
                detail,
                ..Observed::default()
            })
        };
        let known = seen(&detail("u8"));
        assert!(
            known.describe().contains("pytorch/pytorch/issues/191499"),
            "{known:?}"
        );
        assert_eq!(
            seen(&detail("f32")),
            Upstream::New,
            "float lanes are not zero-filled"
        );
    }

    #[test]
    fn the_relu_clip_fusion_finding_is_known() {
        let culprits = vec!["FuseReluClip".to_string()];
        let seen = Observed {
            target: "ort_cpu",
            signature: "crash:basic:[ONNXRuntimeError] : N : FAIL : relu_clip_fusion.cc:N Unexpected data type for Clip 'min' input of N",
            detail: "",
            culprits: &culprits,
            ops: vec!["Clip", "Relu"],
        };
        let verdict = Upstream::of(&seen);
        assert!(verdict.is_known(), "{verdict:?}");
        assert!(verdict.is_upstream());
        assert!(verdict.describe().contains("microsoft/onnxruntime/issues/"));
        let fresh = Observed {
            target: "ort_cpu",
            signature: "crash:basic:something nobody reported",
            ops: vec!["Sin"],
            ..Observed::default()
        };
        assert_eq!(Upstream::of(&fresh), Upstream::New);
    }
}
