//! Telling distinct bugs apart: normalized signatures for dead processes, and clustering of
//! near-duplicate finding signatures so that each bug is reported once, with its count.
//!
//! Normalization strips what varies between two hits of one bug (addresses, numbers, node
//! and tensor names, directories) and keeps what names the bug (the error text and the
//! source `file:function` when the message has one). Clustering then groups the findings of
//! one bug: members merged into one bug folder after reduction, members whose bug keys
//! agree ([`crate::campaign::bugs`]), and reduced members the known-upstream table traces to
//! one root cause ([`crate::campaign::known::Upstream::root_cause`]).

use crate::oracle::{normalize_text, Finding, FindingKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the process running a test died (isolated execution only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Death {
    /// Signal name or exit status, or `timeout` / `rss-limit` when the campaign killed it.
    pub cause: String,
    /// The last part of the process's stderr during the test.
    pub stderr: String,
    /// The model under test when it died, if the process got as far as emitting it.
    #[serde(skip)]
    pub model: Option<Vec<u8>>,
    /// The fuzz inputs the same process ran before this one, oldest first (a bounded tail,
    /// see [`crate::campaign::worker::History`]): what a state-dependent crash needs replayed.
    #[serde(skip)]
    pub history: Vec<Vec<u8>>,
}

/// The line of a dead process's stderr that names its failure, normalized: a sanitizer
/// report with its first frame, a Rust panic with its message, an uncaught C++ exception,
/// or the last line that mentions an error.
pub fn key_line(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    if let Some(i) = lines
        .iter()
        .position(|l| l.contains("ERROR: AddressSanitizer:"))
    {
        let kind = lines[i]
            .split("AddressSanitizer:")
            .nth(1)
            .and_then(|s| s.split(" on ").next())
            .unwrap_or("")
            .trim();
        let frame = lines[i..]
            .iter()
            .find(|l| l.starts_with("#0 "))
            .and_then(|l| l.split(" in ").nth(1))
            .unwrap_or("");
        return Some(normalize_text(&format!(
            "AddressSanitizer {kind} in {frame}"
        )));
    }
    if let Some(i) = lines.iter().position(|l| l.contains(" panicked at ")) {
        let place = lines[i].split(" panicked at ").nth(1).unwrap_or("");
        let file = place.split(':').next().unwrap_or("");
        let message = lines.get(i + 1).copied().unwrap_or("");
        return Some(normalize_text(&format!("panic at {file}: {message}")));
    }
    if let Some(i) = lines
        .iter()
        .position(|l| l.starts_with("terminate called after throwing"))
    {
        let what = lines
            .get(i + 1)
            .and_then(|l| l.strip_prefix("what():"))
            .unwrap_or("")
            .trim();
        return Some(normalize_text(&format!("{} {what}", lines[i])));
    }
    lines
        .iter()
        .rev()
        .find(|l| {
            let low = l.to_ascii_lowercase();
            ["error", "fault", "abort", "assert", "fatal"]
                .iter()
                .any(|w| low.contains(w))
        })
        .map(|l| normalize_text(l))
}

/// The finding for a process that died running a test of the op types `ops`.
pub fn death_finding(death: &Death, ops: &str) -> Finding {
    let (kind, signature) = match death.cause.as_str() {
        "timeout" => (FindingKind::Hang, format!("hang:{ops}")),
        "rss-limit" => (FindingKind::OutOfMemory, format!("oom:{ops}")),
        cause => {
            let key = key_line(&death.stderr).unwrap_or_else(|| format!("ops={ops}"));
            (FindingKind::Crash, format!("crash:{cause}:{key}"))
        }
    };
    let tail: String = {
        let chars: Vec<char> = death.stderr.chars().collect();
        chars[chars.len().saturating_sub(2000)..].iter().collect()
    };
    Finding {
        kind,
        level: "process".into(),
        signature,
        detail: format!("the process died ({}); stderr tail:\n{tail}", death.cause),
        blame: None,
    }
}

/// One finding as the clustering sees it.
#[derive(Clone, Debug)]
pub struct Member {
    /// Its folder name.
    pub folder: String,
    /// Its finding.
    pub finding: Finding,
    /// How many tests hit it.
    pub count: u64,
    /// Culprit passes from the bisection, when known.
    pub culprits: Vec<String>,
    /// The op types of its reduced model, when it was reduced.
    pub reduced_ops: Option<String>,
    /// Its bug key: the reduced case's ([`crate::campaign::bugs::key`]), or before reduction
    /// a provisional one ([`crate::campaign::bugs::provisional_key`]) that never equals a
    /// reduced key, so an unreduced member never joins a reduced bug by guess.
    pub key: String,
    /// Whether it was reduced.
    pub reduced: bool,
    /// The bug folder it was merged into, when it is a stub.
    pub merged_into: Option<String>,
    /// Whether its input reproduced it in a fresh worker (false only when a replay failed:
    /// [`crate::campaign::finding::NO_REPLAY`]).
    pub replays: bool,
    /// Whether the known-upstream table holds it.
    pub upstream: Option<crate::campaign::known::Upstream>,
}

/// A group of findings believed to be one bug.
#[derive(Clone, Debug, Serialize)]
pub struct Cluster {
    /// The signature of its bug folder (the member others merged into, else the most hit).
    pub signature: String,
    /// Kind of every member.
    pub kind: String,
    /// Tests that hit any member.
    pub count: u64,
    /// Member folders, the bug folder first.
    pub folders: Vec<String>,
    /// Member signatures.
    pub signatures: Vec<String>,
    /// Culprit passes, when the bisection named them.
    pub culprits: Vec<String>,
    /// Whether every member was reduced (its key is then the reduced case's).
    pub reduced: bool,
    /// Known upstream, or new.
    pub upstream: Option<crate::campaign::known::Upstream>,
    /// Whether some member replays (none may be a flaky crash).
    pub replays: bool,
}

/// Whether two members are one bug: one was merged into the other (or both into a third),
/// or their bug keys agree.
fn same_bug(a: &Member, b: &Member) -> bool {
    let joined = |x: &Member, y: &Member| x.merged_into.as_deref() == Some(y.folder.as_str());
    if joined(a, b) || joined(b, a) || (a.merged_into.is_some() && a.merged_into == b.merged_into) {
        return true;
    }
    // Two reduced findings the known table traces to one root cause are one bug, whatever
    // their kinds (one rewrite may crash one graph and miscompute another).
    if root_cause(a).is_some() && root_cause(a) == root_cause(b) {
        return true;
    }
    if a.finding.kind != b.finding.kind {
        return false;
    }
    a.key == b.key
}

/// The root cause the known-upstream table traces a reduced member to.
fn root_cause(m: &Member) -> Option<&str> {
    m.reduced
        .then(|| m.upstream.as_ref().and_then(|u| u.root_cause()))
        .flatten()
}

/// Groups `members` into clusters (union-find over [`same_bug`]), most hit first.
pub fn cluster(members: &[Member]) -> Vec<Cluster> {
    let mut sets = petgraph::unionfind::UnionFind::<usize>::new(members.len());
    for i in 0..members.len() {
        for j in i + 1..members.len() {
            if same_bug(&members[i], &members[j]) {
                sets.union(i, j);
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<&Member>> = BTreeMap::new();
    for (i, m) in members.iter().enumerate() {
        groups.entry(sets.find(i)).or_default().push(m);
    }
    let mut clusters: Vec<Cluster> = groups
        .into_values()
        .map(|mut ms| {
            ms.sort_by(|a, b| {
                (
                    a.merged_into.is_some(),
                    std::cmp::Reverse(a.count),
                    &a.folder,
                )
                    .cmp(&(
                        b.merged_into.is_some(),
                        std::cmp::Reverse(b.count),
                        &b.folder,
                    ))
            });
            Cluster {
                signature: ms[0].finding.signature.clone(),
                kind: format!("{:?}", ms[0].finding.kind),
                count: ms.iter().map(|m| m.count).sum(),
                folders: ms.iter().map(|m| m.folder.clone()).collect(),
                signatures: ms.iter().map(|m| m.finding.signature.clone()).collect(),
                culprits: ms
                    .iter()
                    .find(|m| !m.culprits.is_empty())
                    .map(|m| m.culprits.clone())
                    .unwrap_or_default(),
                reduced: ms.iter().all(|m| m.reduced),
                upstream: ms.iter().find_map(|m| m.upstream.clone()),
                replays: ms.iter().any(|m| m.replays),
            }
        })
        .collect();
    clusters.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
    clusters
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(folder: &str, kind: FindingKind, signature: &str, culprits: &[&str]) -> Member {
        Member {
            folder: folder.into(),
            finding: Finding {
                kind,
                level: "basic".into(),
                signature: signature.into(),
                detail: String::new(),
                blame: None,
            },
            count: 1,
            culprits: culprits.iter().map(|c| c.to_string()).collect(),
            reduced_ops: None,
            key: format!("unreduced|{signature}"),
            reduced: false,
            merged_into: None,
            upstream: None,
            replays: true,
        }
    }

    #[test]
    fn normalization_strips_addresses_numbers_and_directories() {
        assert_eq!(
            normalize_text("SEGV at 0x7ffd1234 in /work/ort/core/fuse.cc:83 node n12_Relu"),
            "SEGV at ADDR in fuse.cc:N node N_Relu"
        );
    }

    #[test]
    fn key_lines_name_the_failure() {
        let asan = "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020 at pc\n    #0 0x55 in tract_core::ops::Foo::eval /src/ops/foo.rs:10:5\n";
        assert_eq!(
            key_line(asan).unwrap(),
            "AddressSanitizer heap-buffer-overflow in tract_core::ops::Foo::eval foo.rs:N:N"
        );
        let panic = "thread 'main' panicked at /x/tract/core/src/model.rs:44:9:\nindex out of bounds: the len is 3 but the index is 7\n";
        assert_eq!(
            key_line(panic).unwrap(),
            "panic at model.rs: index out of bounds: the len is N but the index is N"
        );
        let cpp = "terminate called after throwing an instance of 'c10::Error'\n  what():  bad shape [2, 3]\n";
        assert!(key_line(cpp).unwrap().contains("::Error' bad shape"));
        assert_eq!(key_line("all good\n"), None);
    }

    #[test]
    fn deaths_become_findings_of_their_kind() {
        let death = |cause: &str, stderr: &str| Death {
            cause: cause.into(),
            stderr: stderr.into(),
            model: None,
            history: Vec::new(),
        };
        let f = death_finding(&death("timeout", ""), "Add,Tan");
        assert_eq!(
            (f.kind, f.signature.as_str()),
            (FindingKind::Hang, "hang:Add,Tan")
        );
        let f = death_finding(&death("rss-limit", ""), "Atan");
        assert_eq!(f.kind, FindingKind::OutOfMemory);
        let f = death_finding(&death("SIGSEGV", ""), "Sin");
        assert_eq!(f.signature, "crash:SIGSEGV:ops=Sin");
        let f = death_finding(&death("SIGABRT", "fatal error in fuse.cc:12\n"), "Cos");
        assert_eq!(f.signature, "crash:SIGABRT:fatal error in fuse.cc:N");
    }

    #[test]
    fn near_duplicates_cluster_and_distinct_bugs_do_not() {
        let provisional = |mut m: Member, key: &str| {
            m.key = key.into();
            m
        };
        let reduced = |mut m: Member, key: &str| {
            m.key = key.into();
            m.reduced = true;
            m
        };
        let members = vec![
            // Not reduced yet: the caller's provisional key, which abstracts the level.
            provisional(
                member(
                    "a",
                    FindingKind::Crash,
                    "crash:basic:Node (N) input 'x' is not a graph input",
                    &[],
                ),
                "unreduced|crash:Node (N) input 'x' is not a graph input",
            ),
            provisional(
                member(
                    "b",
                    FindingKind::Crash,
                    "crash:extended:Node (N) input 'x' is not a graph input",
                    &[],
                ),
                "unreduced|crash:Node (N) input 'x' is not a graph input",
            ),
            member(
                "c",
                FindingKind::Crash,
                "crash:basic:Type mismatch in LayerNormalization",
                &[],
            ),
            reduced(
                member(
                    "d",
                    FindingKind::Inconsistency,
                    "inconsistency:basic:Div,Mul",
                    &[],
                ),
                "inconsistency|DivMulFusion|Div(i->i),Mul(i->i)|values",
            ),
            reduced(
                member(
                    "e",
                    FindingKind::Inconsistency,
                    "inconsistency:basic:Add,Div,Mul,Relu",
                    &[],
                ),
                "inconsistency|DivMulFusion|Div(i->i),Mul(i->i)|values",
            ),
            reduced(
                member(
                    "f",
                    FindingKind::Inconsistency,
                    "inconsistency:basic:Clip,Relu",
                    &[],
                ),
                "inconsistency|DivMulFusion|Clip(f->f),Relu(f->f)|values",
            ),
            // Not reduced: never joins a reduced bug by guess.
            member(
                "g",
                FindingKind::Inconsistency,
                "inconsistency:basic:Div,Mul",
                &[],
            ),
        ];
        let clusters = cluster(&members);
        assert_eq!(clusters.len(), 5, "{clusters:#?}");
        let sizes: Vec<usize> = clusters.iter().map(|c| c.folders.len()).collect();
        assert_eq!(sizes.iter().filter(|s| **s == 2).count(), 2);
    }

    #[test]
    fn reduced_findings_of_one_known_root_cause_are_one_bug_whatever_their_kinds() {
        use crate::campaign::known::{Relation, State, Upstream};
        let on_file = |finding: &str| {
            Some(Upstream::Known {
                id: format!("row-{finding}"),
                url: None,
                finding: Some(finding.into()),
                state: State::Unfiled,
                relation: Relation::Same,
            })
        };
        let mut crash = member("c", FindingKind::Crash, "crash:declutter:x", &[]);
        let mut wrong = member("w", FindingKind::Inconsistency, "inconsistency:y", &[]);
        let mut other = member("o", FindingKind::Crash, "crash:declutter:z", &[]);
        for (m, f) in [
            (&mut crash, "mod-swap"),
            (&mut wrong, "mod-swap"),
            (&mut other, "tile"),
        ] {
            m.reduced = true;
            m.upstream = on_file(f);
        }
        assert_eq!(cluster(&[crash.clone(), wrong.clone(), other]).len(), 2);
        // Unreduced, the match is on the whole graph: no grouping by it.
        wrong.reduced = false;
        assert_eq!(cluster(&[crash, wrong]).len(), 2);
    }

    #[test]
    fn merged_stubs_join_their_bug_folder_which_comes_first() {
        let mut stub = member("s", FindingKind::Crash, "crash:basic:one", &[]);
        stub.merged_into = Some("p".into());
        stub.count = 9;
        let primary = member("p", FindingKind::Crash, "crash:basic:two", &[]);
        let clusters = cluster(&[stub, primary]);
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].folders, ["p", "s"]);
        assert_eq!(clusters[0].count, 10);
    }
}
