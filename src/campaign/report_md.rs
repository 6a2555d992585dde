//! `report.md` of one finding folder, in the shape compiler issue trackers ask for (ONNX
//! Runtime's bug template: describe the issue, to reproduce, urgency, environment; TVM's and
//! tract's ask for the same facts): what is wrong, which spec text says what is right, how to
//! reproduce it without dlcfuzz, whether the newest release still has it, and how often and
//! how small the fuzzer saw it.

use super::finding::Report;
use super::finding::{read_reduction, Envelope, ORIGINAL_MODEL};
use std::fmt::Write;
use std::path::Path;

fn file_size(dir: &Path, name: &str) -> Option<u64> {
    std::fs::metadata(dir.join(name)).ok().map(|m| m.len())
}

/// A one-line title for the finding.
fn title(report: &Report) -> String {
    let f = &report.finding;
    let what = report
        .severity
        .map_or_else(|| format!("{:?}", f.kind), |s| s.describe().to_string());
    let culprit = match &report.culprits {
        Some(Ok(c)) if !c.culprits.is_empty() => format!(" in {}", c.culprits.join(" + ")),
        _ => String::new(),
    };
    format!("{}: {what}{culprit} at level `{}`", report.backend, f.level)
}

/// The markdown report of the finding in `dir`.
pub fn markdown(dir: &Path) -> Result<String, String> {
    let report = Report::read(dir)?;
    let envelope = Envelope::read(dir).ok();
    let reduction = read_reduction(dir);
    let f = &report.finding;
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", title(&report));
    let _ = writeln!(md, "## Describe the issue\n");
    // The program targets (torch.compile, the ONNX exporter, TorchScript) leave the
    // program's source (not when the process died); the others an ONNX model.
    let program = envelope.as_ref().map_or_else(
        || dir.join("program.py").exists() || dir.join("program.ts").exists(),
        Envelope::compiles_programs,
    );
    let subject = if program {
        // The rows the (reduced) program still computes, else every row it instantiated.
        let ops = std::fs::read_to_string(dir.join(crate::targets::LIVE_OPS))
            .or_else(|_| std::fs::read_to_string(dir.join("ops.txt")))
            .unwrap_or_default();
        let ops = crate::targets::live_rows(&ops);
        let ops = if ops.is_empty() {
            report.op_types.clone()
        } else {
            ops.join(", ")
        };
        if ops.is_empty() {
            "A PyTorch program that runs in eager".to_string()
        } else {
            format!("A PyTorch program that runs in eager (operators: {ops})")
        }
    } else {
        format!("A valid ONNX model (op types: {})", report.op_types)
    };
    let _ = writeln!(
        md,
        "{subject} {}.",
        match f.kind {
            crate::oracle::FindingKind::Inconsistency => "computes a wrong result",
            crate::oracle::FindingKind::Crash => "fails",
            crate::oracle::FindingKind::Hang => "hangs",
            crate::oracle::FindingKind::OutOfMemory => "exhausts memory",
        }
    );
    let upstream =
        super::finding::upstream_of_folder(dir, &report).unwrap_or(super::known::Upstream::New);
    let _ = writeln!(md, "\n- **Upstream:** {}", upstream.describe());
    if super::finding::no_replay(dir).is_some() {
        let _ = writeln!(
            md,
            "- **Replay:** its input passed when replayed in a fresh worker, also after the inputs its worker ran before it: flaky or dependent on older state, not a bug to file as it stands"
        );
    }
    if let Some(needed) = super::history::needed(dir) {
        let _ = writeln!(
            md,
            "- **Replay:** state-dependent: {}. `dlcfuzz replay` runs them first; graph reduction and bisection, which replay one input, were skipped",
            needed.describe()
        );
    }
    if let Some(severity) = report.severity {
        let _ = writeln!(md, "- **Severity:** {}", severity.describe());
    }
    let _ = writeln!(md, "- **Optimization level:** `{}`", f.level);
    if let Some(blame) = f.blame {
        let _ = writeln!(md, "- **Side at fault:** {blame:?}");
    }
    match &report.culprits {
        Some(Ok(c)) => {
            let _ = writeln!(
                md,
                "- **Culprit (bisected):** {} (lowest level `{}`, {} sessions{})",
                if c.culprits.is_empty() {
                    "no single transformer: disabling none of them removes it".to_string()
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
            let _ = writeln!(md, "- **Culprit:** not bisected ({why})");
        }
        None => {}
    }
    match &report.newest {
        Some(Ok(check)) => {
            let _ = writeln!(
                md,
                "- **Newest release:** {} on {} (`repro.py` re-run without dlcfuzz)",
                if check.live {
                    "still live"
                } else {
                    "does not reproduce"
                },
                check.version
            );
        }
        Some(Err(why)) => {
            let _ = writeln!(md, "- **Newest release:** not re-checked ({why})");
        }
        None => {}
    }
    if let Some(spec) = &report.spec {
        let _ = writeln!(md, "\n### Expected behaviour\n\n{spec}");
    }
    let _ = writeln!(
        md,
        "\n### Actual behaviour\n\n```\n{}\n```",
        f.detail.trim()
    );
    let _ = writeln!(md, "\n## To reproduce\n");
    if dir.join("repro.py").exists() && program {
        let _ = writeln!(
            md,
            "`repro.py` in this folder holds the program with its inputs inline; it needs only \
             the compiler's Python packages (torch; the ONNX exporter's also onnxscript, onnx \
             and onnxruntime), prints their versions, and exits with 1 when the bug shows:\n\n\
             ```\npython3 repro.py\n```\n"
        );
    } else if dir.join("repro.py").exists() {
        let _ = writeln!(
            md,
            "`model.onnx` and `repro.py` in this folder; the script needs only the compiler's \
             Python package and numpy, embeds the inputs and the exact expected outputs, and \
             exits with 1 when the bug shows:\n\n```\npython3 repro.py\n```\n"
        );
    }
    match &reduction {
        Some(r) if program => {
            let _ = writeln!(
                md,
                "The program was reduced from {} to {} statements in {} candidate runs, {:.1} s{}.\n",
                r.original_nodes,
                r.reduced_nodes,
                r.tests,
                r.seconds,
                if r.out_of_budget { ", budget exhausted" } else { "" },
            );
        }
        Some(r) => {
            let _ = writeln!(
                md,
                "The model was reduced from {} to {} operator nodes (ratio {:.2}) in {} \
                 candidate runs, {:.1} s{}; model bytes: {} original, {} minimized.\n",
                r.original_nodes,
                r.reduced_nodes,
                r.ratio(),
                r.tests,
                r.seconds,
                if r.out_of_budget {
                    ", budget exhausted"
                } else {
                    ""
                },
                file_size(dir, ORIGINAL_MODEL).map_or("?".into(), |b| b.to_string()),
                file_size(dir, "model.onnx").map_or("?".into(), |b| b.to_string())
            );
        }
        None if program => {
            let _ = writeln!(
                md,
                "Not reduced yet: `dlcfuzz replay {}` re-runs the saved input.\n",
                dir.display()
            );
        }
        None => {
            let _ = writeln!(
                md,
                "Not reduced: {} operator nodes, {} model bytes.\n",
                report.nodes,
                file_size(dir, "model.onnx").map_or("?".into(), |b| b.to_string())
            );
        }
    }
    if !report.spliced.is_empty() {
        let names: Vec<&str> = report.spliced.iter().map(|s| s.pattern.as_str()).collect();
        let _ = writeln!(md, "Optimizer patterns spliced in: {}.\n", names.join(", "));
    }
    let _ = writeln!(md, "## Urgency\n");
    let members = super::bugs::merged_members(dir);
    let _ = writeln!(
        md,
        "Found by fuzzing; the fuzzer hit this bug in {} test(s), under {} signature(s).\n",
        super::bugs::total_hits(dir),
        1 + members.len()
    );
    for m in &members {
        let _ = writeln!(
            md,
            "- merged: `{}` (input `hits/{}.bin`)",
            m.signature.replace('`', "'"),
            m.folder
        );
    }
    if !members.is_empty() {
        let _ = writeln!(md);
    }
    let _ = writeln!(md, "## Environment\n");
    let _ = writeln!(
        md,
        "- Compiler: {} (released package; Python API; CPU)",
        report.backend
    );
    let _ = writeln!(
        md,
        "- Platform: {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    let _ = writeln!(
        md,
        "- Found by dlcfuzz {} (decoder version {}), reference {}",
        env!("CARGO_PKG_VERSION"),
        envelope
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |e| e.decoder_version.to_string()),
        crate::reference::version()
    );
    let _ = writeln!(md, "- Signature: `{}`", f.signature);
    let _ = writeln!(
        md,
        "\nReplay with dlcfuzz, from the saved fuzz input{}:\n\n```\n{}\n```",
        if reduction.is_some() {
            " (the edits in reduction.json are applied)"
        } else {
            ""
        },
        report.replay
    );
    Ok(md)
}

/// Writes `dir/report.md`.
pub fn write(dir: &Path) -> std::io::Result<()> {
    let md = markdown(dir).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("report.md"), md)
}
