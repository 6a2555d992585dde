//! `docs/ARCHITECTURE.md` stays whole: every module under `src/` is named there (a file
//! `dir/x.rs` as `` `dir/x.rs` ``, a module folder `dir/mod.rs` as `` `dir/` ``).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<String>, root: &Path) {
    for entry in std::fs::read_dir(dir).expect("readable src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out, root);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under src");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn every_src_module_is_in_the_architecture_document() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("the document");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files, &root.join("src"));
    assert!(files.len() > 50, "{files:?}");
    let missing: Vec<&String> = files
        .iter()
        .filter(|f| {
            let name = match f.strip_suffix("mod.rs") {
                Some(dir) if !dir.is_empty() => dir.to_string(),
                _ => f.to_string(),
            };
            !doc.contains(&format!("`{name}`")) && !doc.contains(&format!("`{name}` ("))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/ARCHITECTURE.md: {missing:?}"
    );
}

/// The number in the document's row for `module` that precedes `words` (the first such).
fn stated(doc: &str, module: &str, words: &str) -> usize {
    let row = doc
        .lines()
        .find(|l| l.starts_with(&format!("| `{module}` |")))
        .unwrap_or_else(|| panic!("no row for {module}"));
    let at = row
        .find(words)
        .unwrap_or_else(|| panic!("{module}: no {words:?} in its row"));
    let digits: String = row[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .chars()
        .rev()
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("{module}: no number before {words:?}"))
}

/// The counts `docs/ARCHITECTURE.md` states are the code's: the built-in ORT patterns, the
/// torch rows (all of them and the torch-only ones, the rows aimed at Inductor rewrites),
/// and the CLI stays a thin layer of at most 450 lines.
#[test]
fn the_counts_the_architecture_document_states_are_true() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("the document");
    let builtin = dlcfuzz::mutate::patterns::builtin::library().patterns.len();
    assert_eq!(
        stated(&doc, "mutate/patterns/builtin.rs", "patterns from"),
        builtin
    );
    let rows = dlcfuzz::torch::ops::table();
    assert_eq!(stated(&doc, "torch/ops.rs", "in all)"), rows.len());
    let derived = dlcfuzz::ops::unary::table()
        .iter()
        .filter(|u| u.torch.is_some())
        .count()
        + dlcfuzz::ops::binary::table()
            .iter()
            .filter(|b| b.torch.is_some())
            .count();
    assert_eq!(
        stated(&doc, "torch/ops.rs", "more are torch-only"),
        rows.len() - derived
    );
    let aimed = rows.iter().filter(|r| r.aims.is_some()).count();
    assert_eq!(stated(&doc, "torch/ops.rs", "rows: five attention"), aimed);
    let cli = std::fs::read_to_string(root.join("src/bin/dlcfuzz.rs")).expect("the CLI");
    assert!(
        cli.lines().count() <= 450,
        "the CLI has {} lines",
        cli.lines().count()
    );
}

/// Code outside the operator declarations names an op as [`dlcfuzz::ops::OpType`], never as
/// a string (issue 31; `scripts/op-name-literals.py` gives the per-file count of a revision):
/// no op type of the registry appears as a string literal in `src/` outside `src/ops/` and
/// test modules.
#[test]
fn no_op_name_literal_outside_the_declarations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let quoted: std::collections::BTreeSet<String> = dlcfuzz::ops::registry()
        .iter()
        .map(|spec| format!("\"{}\"", spec.op_type()))
        .collect();
    let mut found = Vec::new();
    let mut pending = vec![root.join("src")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                if path != root.join("src/ops") {
                    pending.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
            for (i, line) in code.lines().enumerate() {
                let line = line.split("//").next().unwrap_or_default();
                for q in quoted.iter().filter(|q| line.contains(q.as_str())) {
                    found.push(format!("{}:{}: {q}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "op names spelled as strings:\n{}",
        found.join("\n")
    );
}
