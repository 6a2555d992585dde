//! One bug, one entry: after reduction, a finding whose reduced case agrees with an earlier
//! one's merges into that earlier bug folder.
//!
//! The **bug key** of a reduced finding is what a maintainer compares by hand: the kind of
//! failure (the signature's class), the bisected culprit passes, and
//! - for a crash bisected to a specific pass, the reduced op types without element types
//!   (one pass failing on one pattern, whatever its message says of the types); otherwise its
//!   message with level, node names and element-type names abstracted (it names the failing
//!   rewrite and op better than the context the reducer kept, and a container such as
//!   tract's per-op declutter rules names no rewrite); a dead process without a message, its
//!   reduced op types;
//! - for a kernel at fault (`reference-mismatch`), the op it was localized to with the
//!   *class* of its element types (float, integer, bool: one Resize bug on int8 and uint32 is
//!   one bug, a Mod kernel bug on floats and one on integers are two);
//! - for a rewrite at fault (an inconsistency with bisected culprits), the reduced op types
//!   without element types (a rewrite matches on op types) and without the data movement
//!   (Expand, Tile, Slice, …) that only shapes the computing op's inputs, unless nothing else
//!   is left; without culprits, every reduced op with its element-type classes;
//! - for a program target's output of another type than eager's, only that type change
//!   (`F16->F32`): type rules, not the op that made the value, decide it;
//! - and for an inconsistency the mismatch's kind: shape, dtype, values, output count.
//!
//! Merging keeps everything: the member's input is copied into the bug folder
//! (`hits/<member>.bin`, listed in `merged.json` with its signature), and the member folder
//! becomes a stub holding `merged-into`, its `report.json`, `input.bin`, `target.json` and
//! its hit count, which the campaign keeps counting. Reports sum the hits of a bug's stubs.

use super::finding::{Report, INPUT};
use crate::gen::TestCase;
use crate::ir::{DType, NodeKind};
use crate::oracle::FindingKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file naming, in a merged member's stub, the bug folder it joined.
pub const MERGED_INTO: &str = "merged-into";
/// The bug folder's list of merged members.
pub const MERGED_JSON: &str = "merged.json";
/// The bug folder's copies of its members' inputs.
pub const HITS: &str = "hits";

/// A member merged into a bug folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedMember {
    /// Its folder name (now a stub).
    pub folder: String,
    /// Its signature.
    pub signature: String,
}

/// `f32,i64->bool` → `f,i->b`: the element-type classes of a dtype signature.
fn classes(sig: &str) -> String {
    fn class(name: &str) -> &str {
        match DType::from_name(name) {
            Some(d) if d.is_float() => "f",
            Some(d) if d.is_int() => "i",
            Some(_) => "b",
            None => name,
        }
    }
    let side = |s: &str| {
        let mut seen: Vec<&str> = Vec::new();
        for c in s.split(',').filter(|t| !t.is_empty()).map(class) {
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
        seen.join(",")
    };
    match sig.split_once("->") {
        Some((ins, outs)) => format!("{}->{}", side(ins), side(outs)),
        None => side(sig),
    }
}

/// The reduced case's op types with their element-type classes, sorted and deduplicated.
pub fn op_classes(case: &TestCase) -> Vec<String> {
    let ops: BTreeSet<String> = case
        .graph
        .op_nodes()
        .into_iter()
        .filter_map(|n| match &case.graph.node(n).kind {
            NodeKind::Op(op) => Some(format!("{}({})", op.op_type(), classes(&op.sig.key()))),
            _ => None,
        })
        .collect();
    ops.into_iter().collect()
}

/// Whether registry op type `op` only moves or reshapes data, as it declares
/// ([`crate::ops::OpSpec::moves_data`]): in a reduced case it is there to give the op at fault
/// its shapes (a broadcast, a stride), so it does not tell two bugs apart.
fn moves_data(op: &str) -> bool {
    crate::ops::specs_of_op_type(op).any(|(_, s)| s.moves_data())
}

/// `ops` without the data movement, unless nothing else is left.
fn computing(ops: Vec<String>) -> Vec<String> {
    let rest: Vec<String> = ops.iter().filter(|o| !moves_data(o)).cloned().collect();
    if rest.is_empty() {
        ops
    } else {
        rest
    }
}

/// `Mod(i->i)` → `Mod`.
fn untyped(op: &str) -> &str {
    op.split('(').next().unwrap_or(op)
}

/// What kind of disagreement a detail text describes.
fn mismatch_kind(detail: &str) -> &'static str {
    if detail.contains("output count") {
        "count"
    } else if detail.contains("shape [") || detail.contains("shape ") && detail.contains(" vs ") {
        "shape"
    } else if detail.contains("dtype ") {
        "dtype"
    } else {
        "values"
    }
}

/// A program target's output type against eager's, from its detail (`output 5 is
/// Some(Some(F32)), eager's is Some(Some(F16))` → `F16->F32`): a compiler that gives one
/// output type for another does so by its type rules, whatever op produced the value.
fn dtype_change(detail: &str) -> Option<String> {
    let inner = |s: &str| {
        s.trim()
            .trim_start_matches("Some(")
            .split(')')
            .next()
            .map(str::to_string)
    };
    let (_, rest) = detail.split_once(" is Some(")?;
    let (got, eager) = rest.split_once(", eager's is ")?;
    Some(format!("{}->{}", inner(eager)?, inner(got)?))
}

/// Names of element types in compiler messages (tract's datum types among them): a shape
/// fact `2,3,Bool` says which graph a crash sat in, not which bug it is.
const TYPE_WORDS: &[&str] = &[
    "Bool", "F16", "F32", "F64", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "TDim",
];

/// The longest abstracted message a crash symptom keeps: messages are cut by whoever printed
/// them, at lengths that depend on the names inside, so only a prefix of fixed length after
/// abstraction compares.
const SYMPTOM_CHARS: usize = 150;

/// A crash message with its level, op list, quoted node names, shape facts and element-type
/// names abstracted (`declutter node #N "N_Slice.stride-axis-N" Downsample: Pulling …` names
/// the rewrite and the op it failed on; the node names only say which graph it sat in), cut to
/// [`SYMPTOM_CHARS`]. `message` is the finding's full detail where it has one (a signature
/// is already cut), else its signature.
fn crash_symptom(message: &str) -> String {
    let key = crate::reduce::reduction_key(message);
    let mut parts: Vec<&str> = key.splitn(3, ':').collect();
    if parts.len() == 3 && parts[0] == "crash" {
        parts.remove(1);
    }
    let joined = parts.join(":");
    let first_line = joined.lines().next().unwrap_or("");
    let unquoted: String = first_line
        .split('"')
        .enumerate()
        .map(|(i, piece)| if i % 2 == 1 { "Q" } else { piece })
        .collect();
    // The patch dump after a failed substitution and the length of a shape (`N,N,N`) vary
    // with the graph, not with the bug.
    let unquoted = unquoted.split(" ModelPatch").next().unwrap_or("");
    let mut out = crate::oracle::normalize_text(unquoted);
    for word in TYPE_WORDS {
        out = out.replace(&format!(",{word}"), ",N");
    }
    while out.contains("N,N") {
        out = out.replace("N,N", "N");
    }
    for d in DType::ALL {
        for name in [d.numpy_name(), d.name()] {
            out = out.replace(&format!("({name})"), "(T)");
            out = out.replace(&format!("'{name}'"), "'T'");
        }
    }
    out.chars().take(SYMPTOM_CHARS).collect()
}

/// The text a crash is known by: its full detail, unless the process died (then the detail
/// is a stderr tail and the signature holds the key line).
fn crash_message(f: &crate::oracle::Finding) -> &str {
    if f.level == "process" || f.detail.is_empty() {
        &f.signature
    } else {
        &f.detail
    }
}

/// The bug key of a finding (see the module text); `reduced` is its reduced test case when
/// the target's input is a graph.
pub fn key(report: &Report, reduced: Option<&TestCase>) -> String {
    let f = &report.finding;
    let class = f.signature.split(':').next().unwrap_or("");
    let mut culprits = match &report.culprits {
        Some(Ok(c)) => c.culprits.clone(),
        _ => Vec::new(),
    };
    culprits.sort();
    let reduced_ops = || match reduced {
        Some(case) => op_classes(case),
        None => report.op_types.split(',').map(str::to_string).collect(),
    };
    let untyped_ops = || -> Vec<String> {
        reduced_ops()
            .iter()
            .map(|o| untyped(o).to_string())
            .collect()
    };
    // A crash message names the failing rewrite better than the context the reducer kept;
    // a dead process with no message names only the op list it was running.
    let silent = f
        .signature
        .rsplit(':')
        .next()
        .is_some_and(|l| l.starts_with("ops="));
    // A bisected pass that is a container of many rewrites (tract's per-op declutter rules,
    // ONNX Runtime's rule-based transformer) does not name the rewrite at fault.
    let specific = culprits
        .iter()
        .any(|c| !c.contains("OpOptim(") && !c.contains("RuleBasedTransformer"));
    let type_change = dtype_change(&f.detail);
    let (ops, symptom) = match f.kind {
        // One pass failing on one op pattern, whatever its message says of the types.
        FindingKind::Crash if specific => (untyped_ops(), "crash".to_string()),
        FindingKind::Crash if !silent => (Vec::new(), crash_symptom(crash_message(f))),
        FindingKind::Inconsistency if type_change.is_some() => (
            Vec::new(),
            format!("dtype:{}", type_change.unwrap_or_default()),
        ),
        FindingKind::Inconsistency => match crate::campaign::verify::localized_op_sig(&f.signature)
        {
            // A kernel at fault: its element types matter.
            Some((op, sig)) => (
                vec![format!("{op}({})", classes(sig))],
                mismatch_kind(&f.detail).to_string(),
            ),
            // A rewrite at fault: it matches on op types, whatever their element types, and
            // on the computing ops, not on the data movement that shaped their inputs.
            None if !culprits.is_empty() => (
                computing(untyped_ops()),
                mismatch_kind(&f.detail).to_string(),
            ),
            None => (reduced_ops(), mismatch_kind(&f.detail).to_string()),
        },
        _ => (reduced_ops(), crash_symptom(crash_message(f))),
    };
    let ops: Vec<String> = ops.into_iter().filter(|o| !o.is_empty()).collect();
    format!(
        "{class}|{}|{}|{symptom}",
        culprits.join("+"),
        crate::gen::distinct_ops(ops)
    )
}

/// The key of a finding not reduced yet: its exact signature, or for a crash its normalized
/// message without level or element-type names. Never equal to a reduced finding's key.
pub fn provisional_key(f: &crate::oracle::Finding) -> String {
    match f.kind {
        FindingKind::Crash => format!("unreduced|{}", crash_symptom(crash_message(f))),
        _ => format!("unreduced|{}", f.signature),
    }
}

/// The bug folder a stub was merged into, if `dir` is a stub.
pub fn merged_into(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(MERGED_INTO))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The members merged into the bug folder `dir`.
pub fn merged_members(dir: &Path) -> Vec<MergedMember> {
    std::fs::read(dir.join(MERGED_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Files a stub keeps: enough to replay the member and to keep counting its hits.
const STUB_KEEPS: [&str; 6] = [
    INPUT,
    super::finding::REDUCTION_JSON,
    super::finding::REPORT_JSON,
    super::finding::TARGET_JSON,
    super::finding::COUNT,
    MERGED_INTO,
];

/// Merges the reduced finding in `dir` into the first other bug folder beside it whose
/// report carries the same bug key; returns that folder, or `None` when `dir` is a new bug.
pub fn merge(dir: &Path) -> Result<Option<PathBuf>, String> {
    let report = Report::read(dir)?;
    let Some(key) = &report.bug_key else {
        return Ok(None);
    };
    let Some(findings) = dir.parent() else {
        return Ok(None);
    };
    let Some(bug) = super::finding::folders_in(findings).into_iter().find(|p| {
        p != dir
            && merged_into(p).is_none()
            && Report::read(p).is_ok_and(|r| r.bug_key.as_ref() == Some(key))
    }) else {
        return Ok(None);
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let io = |e: std::io::Error| format!("merging {} into {}: {e}", dir.display(), bug.display());
    std::fs::create_dir_all(bug.join(HITS)).map_err(io)?;
    std::fs::copy(dir.join(INPUT), bug.join(HITS).join(format!("{name}.bin"))).map_err(io)?;
    let mut members = merged_members(&bug);
    members.push(MergedMember {
        folder: name,
        signature: report.finding.signature.clone(),
    });
    std::fs::write(
        bug.join(MERGED_JSON),
        serde_json::to_vec_pretty(&members).expect("serializable"),
    )
    .map_err(io)?;
    let bug_name = bug.file_name().unwrap_or_default().to_string_lossy();
    std::fs::write(dir.join(MERGED_INTO), format!("{bug_name}\n")).map_err(io)?;
    for entry in std::fs::read_dir(dir).map_err(io)?.flatten() {
        let keep = STUB_KEEPS
            .iter()
            .any(|k| entry.file_name().to_string_lossy() == *k);
        if !keep {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
    Ok(Some(bug))
}

/// The hits of the bug folder `dir`: its own count plus its merged members'.
pub fn total_hits(dir: &Path) -> u64 {
    let own = super::finding::read_count(dir);
    let findings = dir.parent().unwrap_or(dir);
    own + merged_members(dir)
        .iter()
        .map(|m| super::finding::read_count(&findings.join(&m.folder)))
        .sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{Finding, FindingKind};

    fn report(kind: FindingKind, signature: &str, detail: &str, culprits: &[&str]) -> Report {
        let finding = Finding {
            kind,
            level: "basic".into(),
            signature: signature.into(),
            detail: detail.into(),
            blame: None,
        };
        let mut r = Report::new(&finding, "b".into(), "Add".into(), 1, &[], Path::new("x"));
        r.culprits = (!culprits.is_empty()).then(|| {
            Ok(crate::backend::bisect::Culprits {
                culprits: culprits.iter().map(|c| c.to_string()).collect(),
                ..Default::default()
            })
        });
        r
    }

    #[test]
    fn element_types_are_abstracted_to_classes() {
        assert_eq!(classes("i8,i32->i32"), "i->i");
        assert_eq!(classes("u64->f32"), "i->f");
        assert_eq!(classes("f16,bool->f64"), "f,b->f");
    }

    #[test]
    fn one_localized_op_on_two_integer_types_is_one_bug() {
        let a = report(
            FindingKind::Inconsistency,
            "reference-mismatch:Resize(i32,f32->i32)",
            "output 0: element 1",
            &[],
        );
        let b = report(
            FindingKind::Inconsistency,
            "reference-mismatch:Resize(u8,f32->u8)",
            "output 0: element 3",
            &[],
        );
        let c = report(
            FindingKind::Inconsistency,
            "reference-mismatch:Resize(f32,f32->f32)",
            "output 0: element 3",
            &[],
        );
        assert_eq!(key(&a, None), key(&b, None));
        assert_ne!(key(&a, None), key(&c, None));
    }

    #[test]
    fn crashes_with_one_culprit_merge_and_unbisected_ones_need_one_message() {
        let a = report(
            FindingKind::Crash,
            "crash:basic:Type 'tensor(int8)' of input parameter (x) of operator (LayerNormalization) is invalid",
            "",
            &["LayerNormFusionL1"],
        );
        let b = report(
            FindingKind::Crash,
            "crash:basic:Type parameter (T) bound to different types",
            "",
            &["LayerNormFusionL1"],
        );
        assert_eq!(key(&a, None), key(&b, None));
        let tract = |sig: &str| {
            report(
                FindingKind::Crash,
                sig,
                "",
                &["declutter:OpOptim(declutter)"],
            )
        };
        let tract_a = tract("crash:decluttered:declutter node #N \"N_Slice.stride-axis-N\" Downsample: Pulling over #N \"N_Reshape.N\" Reshape: Invalid");
        let tract_b = tract("crash:decluttered:declutter node #N \"N_Slice\" Downsample: Pulling over #N \"N_Reshape.N\" Reshape: Invalid");
        let tract_c =
            tract("crash:decluttered:declutter node #N \"N_MatMul\" EinSum: Trying to substitute");
        assert_eq!(key(&tract_a, None), key(&tract_b, None));
        assert_ne!(key(&tract_a, None), key(&tract_c, None));
        let c = report(
            FindingKind::Crash,
            "crash:basic:Type 'tensor(int8)' is invalid",
            "",
            &[],
        );
        let d = report(
            FindingKind::Crash,
            "crash:extended:Type 'tensor(uint64)' is invalid",
            "",
            &[],
        );
        let e = report(
            FindingKind::Crash,
            "crash:basic:Gather index out of range",
            "",
            &[],
        );
        assert_eq!(key(&c, None), key(&d, None));
        assert_ne!(key(&c, None), key(&e, None));
    }

    #[test]
    fn a_rewrite_keys_by_its_computing_ops_and_a_crash_by_its_message_shape() {
        assert_eq!(
            computing(vec!["Expand".into(), "Mod".into()]),
            vec!["Mod".to_string()]
        );
        assert_eq!(computing(vec!["Slice".into()]), vec!["Slice".to_string()]);
        // The registry's data movement, as the operators declare it.
        let declared: std::collections::BTreeSet<&str> = crate::ops::registry()
            .iter()
            .filter(|s| s.moves_data())
            .map(|s| s.op_type())
            .collect();
        let want = [
            "Concat",
            "Expand",
            "Flatten",
            "Gather",
            "Identity",
            "Pad",
            "Reshape",
            "Slice",
            "Squeeze",
            "Tile",
            "Transpose",
            "Unsqueeze",
        ];
        assert_eq!(declared, want.into_iter().collect());
        let rank = |r: &str| {
            crash_symptom(&format!(
                "crash:decluttered:MultiBroadcastTo: Trying to substitute a {r} by {r} as output #N ModelPatch {{ x }}"
            ))
        };
        assert_eq!(rank("N,N,N"), rank("N,N,N,N,N"));
    }

    #[test]
    fn a_provisional_crash_key_abstracts_the_level_and_never_equals_a_reduced_key() {
        let at = |level: &str| {
            report(
                FindingKind::Crash,
                &format!("crash:{level}:Node (N) input 'x' is not a graph input"),
                "",
                &[],
            )
        };
        let (basic, extended) = (at("basic"), at("extended"));
        assert_eq!(
            provisional_key(&basic.finding),
            provisional_key(&extended.finding)
        );
        assert_ne!(provisional_key(&basic.finding), key(&basic, None));
    }

    #[test]
    fn a_program_output_type_change_is_one_bug_whatever_op_made_the_value() {
        let detail = |k: usize, got: &str, eager: &str| {
            format!("ONNX Runtime on the exported model against eager: output {k} is Some(Some({got})), eager's is Some(Some({eager}))")
        };
        let sum = report(
            FindingKind::Inconsistency,
            "inconsistency:torch.onnx.export:exporter:dtype:sum_dims",
            &detail(5, "F32", "F16"),
            &[],
        );
        let abs = report(
            FindingKind::Inconsistency,
            "inconsistency:torch.onnx.export:exporter:dtype:Abs",
            &detail(7, "F32", "F16"),
            &[],
        );
        let any = report(
            FindingKind::Inconsistency,
            "inconsistency:torch.compile:inductor:dtype:any",
            &detail(4, "Bool", "U8"),
            &[],
        );
        assert_eq!(
            dtype_change(&sum.finding.detail).as_deref(),
            Some("F16->F32")
        );
        assert_eq!(key(&sum, None), key(&abs, None));
        assert_ne!(key(&sum, None), key(&any, None));
    }

    #[test]
    fn a_shape_mismatch_and_a_value_mismatch_are_two_bugs() {
        let a = report(
            FindingKind::Inconsistency,
            "inconsistency:basic:Mod",
            "output 0: shape [2] vs [3]",
            &[],
        );
        let b = report(
            FindingKind::Inconsistency,
            "inconsistency:basic:Mod",
            "output 0: element 0: 1 vs 2",
            &[],
        );
        assert_ne!(key(&a, None), key(&b, None));
    }

    #[test]
    fn merging_leaves_a_stub_and_carries_the_input_and_hits() {
        let tmp = tempfile::tempdir().unwrap();
        let make = |name: &str, sig: &str, count: u64| {
            let dir = tmp.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let mut r = report(
                FindingKind::Inconsistency,
                sig,
                "output 0: element 0",
                &["P"],
            );
            r.bug_key = Some(key(&r, None));
            r.write(&dir).unwrap();
            std::fs::write(dir.join(INPUT), name.as_bytes()).unwrap();
            std::fs::write(dir.join("model.onnx"), b"m").unwrap();
            super::super::finding::write_count(&dir, count).unwrap();
            dir
        };
        let first = make("finding-a", "inconsistency:basic:Add,Mod", 3);
        let second = make("finding-b", "inconsistency:basic:Mod,Neg", 5);
        // `first` merges into `second`, the only other folder with its key.
        assert_eq!(merge(&first).unwrap(), Some(second.clone()));
        assert_eq!(merged_into(&first).as_deref(), Some("finding-b"));
        assert!(!first.join("model.onnx").exists());
        assert!(first.join(INPUT).exists());
        assert_eq!(
            std::fs::read(second.join(HITS).join("finding-a.bin")).unwrap(),
            b"finding-a"
        );
        assert_eq!(total_hits(&second), 8);
        assert_eq!(
            merge(&second).unwrap(),
            None,
            "a stub is never a merge target"
        );
    }
}
