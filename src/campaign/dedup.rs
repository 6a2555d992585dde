//! Telling distinct bugs apart: normalized signatures for dead processes, and clustering of
//! near-duplicate finding signatures so that each bug is reported once, with its count.
//!
//! Normalization strips what varies between two hits of one bug (addresses, numbers, node
//! and tensor names, directories) and keeps what names the bug (the error text and the
//! source `file:function` when the message has one). Clustering then merges signatures of
//! one kind whose reduction keys are equal, whose culprit passes are equal, or whose
//! normalized tokens overlap almost entirely.

use crate::oracle::{Finding, FindingKind};
use crate::reduce::reduction_key;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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
}

/// `message` with hex addresses, numbers and directories removed: `0x7ffd…` → `ADDR`,
/// tokens holding digits → `N`, `/a/b/file.cc` → `file.cc`.
pub fn normalize(message: &str) -> String {
    let words: Vec<String> = message
        .split_whitespace()
        .map(|w| {
            let w = w.rsplit('/').next().unwrap_or(w);
            if w.starts_with("0x") && w.len() > 2 {
                "ADDR".to_string()
            } else {
                crate::oracle::normalize_message(w)
            }
        })
        .collect();
    let joined = words.join(" ");
    joined.chars().take(200).collect()
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
        return Some(normalize(&format!("AddressSanitizer {kind} in {frame}")));
    }
    if let Some(i) = lines.iter().position(|l| l.contains(" panicked at ")) {
        let place = lines[i].split(" panicked at ").nth(1).unwrap_or("");
        let file = place.split(':').next().unwrap_or("");
        let message = lines.get(i + 1).copied().unwrap_or("");
        return Some(normalize(&format!("panic at {file}: {message}")));
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
        return Some(normalize(&format!("{} {what}", lines[i])));
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
        .map(|l| normalize(l))
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
}

/// A group of findings believed to be one bug.
#[derive(Clone, Debug, Serialize)]
pub struct Cluster {
    /// The signature of its most frequent member.
    pub signature: String,
    /// Kind of every member.
    pub kind: String,
    /// Tests that hit any member.
    pub count: u64,
    /// Member folders, most frequent first.
    pub folders: Vec<String>,
    /// Member signatures.
    pub signatures: Vec<String>,
    /// Culprit passes, when the bisection named them.
    pub culprits: Vec<String>,
}

fn tokens(signature: &str) -> BTreeSet<&str> {
    signature
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '.')
        .filter(|t| !t.is_empty())
        .collect()
}

fn jaccard(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> f64 {
    let inter = a.intersection(b).count() as f64;
    let union = a.union(b).count() as f64;
    if union == 0.0 {
        1.0
    } else {
        inter / union
    }
}

/// Why two members belong to one bug, if they do.
fn same_bug(a: &Member, b: &Member) -> bool {
    if a.finding.kind != b.finding.kind {
        return false;
    }
    if !a.culprits.is_empty() && a.culprits == b.culprits {
        return true;
    }
    let key = |m: &Member| {
        let k = reduction_key(&m.finding.signature);
        // Where the key dropped an op list (inconsistencies, hangs, OOMs, crashes without a
        // message) it is too coarse alone: the reduced op types must agree too.
        if k == m.finding.signature {
            Some(k)
        } else {
            m.reduced_ops.as_ref().map(|ops| format!("{k}:{ops}"))
        }
    };
    if let (Some(ka), Some(kb)) = (key(a), key(b)) {
        if ka == kb {
            return true;
        }
    }
    // Crashes whose normalized messages differ only in a few tokens (one field name, one
    // level) are one bug.
    a.finding.kind == FindingKind::Crash
        && jaccard(
            &tokens(&strip_level(&a.finding.signature)),
            &tokens(&strip_level(&b.finding.signature)),
        ) >= 0.8
}

/// `crash:basic:msg` → `crash:msg`: the level a crash shows at does not tell bugs apart.
fn strip_level(signature: &str) -> String {
    let parts: Vec<&str> = signature.splitn(3, ':').collect();
    match parts.as_slice() {
        [kind, _level, rest] => format!("{kind}:{rest}"),
        _ => signature.to_string(),
    }
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
            ms.sort_by(|a, b| b.count.cmp(&a.count).then(a.folder.cmp(&b.folder)));
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
        }
    }

    #[test]
    fn normalization_strips_addresses_numbers_and_directories() {
        assert_eq!(
            normalize("SEGV at 0x7ffd1234 in /work/ort/core/fuse.cc:83 node n12_Relu"),
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
        let members = vec![
            member(
                "a",
                FindingKind::Crash,
                "crash:basic:Node (N) input 'x' is not a graph input",
                &[],
            ),
            member(
                "b",
                FindingKind::Crash,
                "crash:extended:Node (N) input 'x' is not a graph input",
                &[],
            ),
            member(
                "c",
                FindingKind::Crash,
                "crash:basic:Type mismatch in LayerNormalization",
                &[],
            ),
            member(
                "d",
                FindingKind::Inconsistency,
                "inconsistency:basic:Div,Mul",
                &["DivMulFusion"],
            ),
            member(
                "e",
                FindingKind::Inconsistency,
                "inconsistency:basic:Add,Div,Mul,Relu",
                &["DivMulFusion"],
            ),
            member(
                "f",
                FindingKind::Inconsistency,
                "inconsistency:basic:Clip,Relu",
                &["FuseReluClip"],
            ),
        ];
        let clusters = cluster(&members);
        assert_eq!(clusters.len(), 4, "{clusters:#?}");
        let sizes: Vec<usize> = clusters.iter().map(|c| c.folders.len()).collect();
        assert_eq!(sizes.iter().filter(|s| **s == 2).count(), 2);
    }
}
