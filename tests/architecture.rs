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
