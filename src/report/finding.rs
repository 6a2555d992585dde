//! `report.md` of one finding folder: what failed, where, how often, how small it got, and
//! how to replay it with and without dlcfuzz.

use crate::campaign::finding::{read_count, Report};
use crate::campaign::post::{read_reduction, Envelope, ORIGINAL_MODEL};
use std::fmt::Write;
use std::path::Path;

fn file_size(dir: &Path, name: &str) -> Option<u64> {
    std::fs::metadata(dir.join(name)).ok().map(|m| m.len())
}

/// The markdown report of the finding in `dir`.
pub fn markdown(dir: &Path) -> Result<String, String> {
    let report = Report::read(dir)?;
    let envelope = Envelope::read(dir).ok();
    let reduction = read_reduction(dir);
    let f = &report.finding;
    let mut md = String::new();
    let _ = writeln!(md, "# {:?} finding\n", f.kind);
    let _ = writeln!(md, "- **Signature:** `{}`", f.signature);
    let _ = writeln!(md, "- **Kind:** {:?}; level `{}`", f.kind, f.level);
    if let Some(blame) = f.blame {
        let _ = writeln!(md, "- **Blame:** {blame:?}");
    }
    let _ = writeln!(md, "- **Backend:** {}", report.backend);
    let _ = writeln!(
        md,
        "- **dlcfuzz:** {} (decoder version {}); reference {}",
        env!("CARGO_PKG_VERSION"),
        envelope
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |e| e.decoder_version.to_string()),
        crate::reference::version()
    );
    let _ = writeln!(md, "- **Hits:** {}", read_count(dir));
    let _ = writeln!(md, "- **Op types:** {}", report.op_types);
    if !report.spliced.is_empty() {
        let names: Vec<&str> = report.spliced.iter().map(|s| s.pattern.as_str()).collect();
        let _ = writeln!(md, "- **Spliced patterns:** {}", names.join(", "));
    }
    match &report.culprits {
        Some(Ok(c)) => {
            let _ = writeln!(
                md,
                "- **Culprit passes:** {} (lowest level `{}`, {} sessions{})",
                if c.culprits.is_empty() {
                    "none needed".to_string()
                } else {
                    c.culprits.join(", ")
                },
                c.level,
                c.runs,
                c.note
                    .as_deref()
                    .map(|n| format!("; {n}"))
                    .unwrap_or_default()
            );
        }
        Some(Err(why)) => {
            let _ = writeln!(md, "- **Culprit passes:** not found ({why})");
        }
        None => {}
    }
    let _ = writeln!(md, "\n## Size\n");
    match &reduction {
        Some(r) => {
            let _ = writeln!(
                md,
                "Reduced from {} to {} operator nodes (ratio {:.2}) in {} candidate runs, {:.1} s{}.",
                r.original_nodes,
                r.reduced_nodes,
                r.ratio(),
                r.tests,
                r.seconds,
                if r.out_of_budget { ", budget exhausted" } else { "" }
            );
            let _ = writeln!(
                md,
                "Model bytes: {} original, {} minimized.",
                file_size(dir, ORIGINAL_MODEL).map_or("?".into(), |b| b.to_string()),
                file_size(dir, "model.onnx").map_or("?".into(), |b| b.to_string())
            );
        }
        None => {
            let _ = writeln!(
                md,
                "Not reduced: {} operator nodes, {} model bytes.",
                report.nodes,
                file_size(dir, "model.onnx").map_or("?".into(), |b| b.to_string())
            );
        }
    }
    let _ = writeln!(md, "\n## Reproduce\n");
    if dir.join("repro.py").exists() {
        let _ = writeln!(
            md,
            "Without dlcfuzz (needs only the backend's Python package and numpy):\n\n```\npython3 repro.py\n```\n"
        );
    }
    let _ = writeln!(
        md,
        "With dlcfuzz, from the saved fuzz input{}:\n\n```\n{}\n```\n",
        if reduction.is_some() {
            " (the edits in reduction.json are applied)"
        } else {
            ""
        },
        report.replay
    );
    let _ = writeln!(md, "## Detail\n\n```\n{}\n```", f.detail.trim());
    Ok(md)
}

/// Writes `dir/report.md`.
pub fn write(dir: &Path) -> std::io::Result<()> {
    let md = markdown(dir).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("report.md"), md)
}
