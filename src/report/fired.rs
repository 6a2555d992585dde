//! The campaign report's "Optimizations fired" section: which of the compiler's own
//! optimizations the campaign's tests set off and how many tests set off each, by kind
//! (ONNX Runtime's graph transformers; for torch.compile Inductor's pattern matches,
//! lowerings, ATen fallbacks and counters; tract's compiled ops), so that a user sees what
//! the campaign reached and what it rarely did.

use crate::campaign::runner::STATE_JSON;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// How many of the rarest names a kind lists.
const RAREST: usize = 8;

/// The kind of a fired name: the part before its first `:` (`pattern`, `lowering`,
/// `inductor`, `optimized`…), or `transformer` for a plain name (ONNX Runtime's).
fn kind(name: &str) -> &str {
    name.split_once(':').map_or("transformer", |(k, _)| k)
}

/// The tests that fired each optimization, read from the campaign's saved state (empty when
/// there is none).
pub fn tests_by_name(out: &Path) -> BTreeMap<String, u64> {
    let state: Option<serde_json::Value> = std::fs::read(out.join(STATE_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    state
        .and_then(|s| serde_json::from_value(s["stats"]["transformer_tests"].clone()).ok())
        .unwrap_or_default()
}

/// The markdown section: per kind, the names fired, the tests that fired any, and the
/// rarest names with their counts.
pub fn section(tests: &BTreeMap<String, u64>) -> String {
    let mut kinds: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
    for (name, n) in tests {
        kinds.entry(kind(name)).or_default().push((name, *n));
    }
    let mut md = String::from("## Optimizations fired\n\n");
    if kinds.is_empty() {
        md.push_str("The target reported none.\n");
        return md;
    }
    let _ = writeln!(md, "| kind | distinct | rarest (tests that fired it) |");
    let _ = writeln!(md, "|---|---|---|");
    for (kind, mut names) in kinds {
        names.sort_by_key(|(name, n)| (*n, *name));
        let rarest: Vec<String> = names
            .iter()
            .take(RAREST)
            .map(|(name, n)| format!("`{}` ({n})", name.replace('|', "/").replace('`', "'")))
            .collect();
        let _ = writeln!(md, "| {kind} | {} | {} |", names.len(), rarest.join(", "));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_grouped_by_kind_and_the_rarest_listed_first() {
        let tests = BTreeMap::from([
            ("pattern:addmm".to_string(), 2),
            ("pattern:mm_plus_mm".to_string(), 1),
            ("lowering:aten::relu".to_string(), 40),
            ("ConstantFolding".to_string(), 7),
        ]);
        let md = section(&tests);
        assert!(
            md.contains("| pattern | 2 | `pattern:mm_plus_mm` (1), `pattern:addmm` (2) |"),
            "{md}"
        );
        assert!(
            md.contains("| lowering | 1 | `lowering:aten::relu` (40) |"),
            "{md}"
        );
        assert!(
            md.contains("| transformer | 1 | `ConstantFolding` (7) |"),
            "{md}"
        );
        assert!(section(&BTreeMap::new()).contains("reported none"));
    }

    #[test]
    fn the_counts_come_from_the_saved_state() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(tests_by_name(dir.path()).is_empty());
        let state = serde_json::json!({"stats": {"transformer_tests": {"pattern:addmm": 3}}});
        std::fs::write(dir.path().join(STATE_JSON), state.to_string()).expect("written");
        assert_eq!(tests_by_name(dir.path())["pattern:addmm"], 3);
    }
}
