//! What makes a finding's report stand on its own: its severity class, the specification
//! text its expected result rests on, and whether it still reproduces on the newest release
//! of the compiler (its `repro.py` re-run there, without dlcfuzz).

use crate::oracle::{Blame, Finding, FindingKind};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// How bad a finding is for a compiler's users, in the terms issue templates ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Severity {
    /// The compiler returns wrong values (or shapes) without an error.
    SilentWrongResult,
    /// The process dies (segfault, abort) on a valid model.
    CrashOnValidModel,
    /// A valid model that runs unoptimized is refused or fails with an error when optimized
    /// (or when rewritten without changing its meaning).
    ValidModelRejected,
    /// An internal assertion instead of a clean error, a hang, or runaway memory.
    Robustness,
}

impl Severity {
    /// The class of `finding`.
    pub fn of(finding: &Finding) -> Severity {
        let unoptimized = matches!(
            finding.level.as_str(),
            "disable" | "typed" | "plain" | "level0"
        );
        match finding.kind {
            FindingKind::Inconsistency => Severity::SilentWrongResult,
            FindingKind::Hang | FindingKind::OutOfMemory => Severity::Robustness,
            FindingKind::Crash if finding.signature.starts_with("assertion:") => {
                Severity::Robustness
            }
            FindingKind::Crash if finding.level == "process" => Severity::CrashOnValidModel,
            FindingKind::Crash if unoptimized => Severity::Robustness,
            FindingKind::Crash => Severity::ValidModelRejected,
        }
    }

    /// A phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Severity::SilentWrongResult => "silent wrong result",
            Severity::CrashOnValidModel => "crash on a valid model",
            Severity::ValidModelRejected => "valid model rejected",
            Severity::Robustness => "robustness",
        }
    }
}

/// The specification basis of a finding's expected result: for a PyTorch program, eager's
/// semantics; the ONNX operator text for a wrong value localized to one op, the general
/// rule for the rest.
pub fn spec_basis(finding: &Finding, program: bool) -> String {
    if program {
        return "The program runs in PyTorch eager, which defines its result: the compiled \
            program must compute it with eager's output element types, its values within \
            the documented tolerance of their type (as torch._dynamo.utils.same judges them, \
            against a float64 run), and must not fail, crash or hang where eager runs."
            .to_string();
    }
    let model_rule = "The model passes onnx.checker.check_model(full_check=True) at opset 19 \
        and the unoptimized run accepts it, so every optimization level must run it and \
        compute the function the ONNX operator specifications define for it.";
    if let Some(op) = localized_op(&finding.signature) {
        let text = operator_text(op).unwrap_or_else(|| "(onnx not importable)".into());
        return format!("ONNX operator {op} (opset 19): {text}");
    }
    match finding.blame {
        Some(Blame::Optimizer | Blame::OptimizerUnconfirmed | Blame::Ambiguous) => format!(
            "{model_rule} Graph optimizations must preserve that function; the unoptimized \
             run computes it within rounding, the optimized one does not."
        ),
        _ => model_rule.to_string(),
    }
}

/// The op of a localized reference mismatch (`reference-mismatch:Op(sig)`).
fn localized_op(signature: &str) -> Option<&str> {
    localized_op_sig(signature).map(|(op, _)| op)
}

/// The op and dtype signature a `reference-mismatch:Op(sig)` finding was localized to.
pub fn localized_op_sig(signature: &str) -> Option<(&str, &str)> {
    let rest = signature.strip_prefix("reference-mismatch:")?;
    let (op, sig) = rest.split_once('(')?;
    let sig = sig.strip_suffix(')')?;
    op.chars()
        .all(|c| c.is_ascii_alphanumeric())
        .then_some((op, sig))
}

/// The first paragraph of the ONNX specification of `op` (opset 19), from the `onnx` package
/// in the project's Python environment.
fn operator_text(op: &str) -> Option<String> {
    let script = "import sys, onnx.defs as d\n\
        doc = d.get_schema(sys.argv[1], 19).doc.strip()\n\
        print(' '.join(doc.split('\\n\\n')[0].split()))";
    let out = crate::paths::python()
        .args(["-c", script, op])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The result of re-running a finding's `repro.py` against the newest release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewestCheck {
    /// The release it ran on.
    pub version: String,
    /// Whether the bug still shows there (the script exited with 1).
    pub live: bool,
    /// The script's last lines.
    pub output: String,
}

/// Whether a reproducer that exited (`success`: with 0) printing `text` broke rather than
/// judged. Python exits with 1 on an uncaught exception too: a traceback means the script
/// broke, unless the script asserts its bug (`assert not wrong, …`: an AssertionError) or
/// printed its own verdict line (`reproduced` / `not reproduced`, as dlcfuzz's Python-hosted
/// reproducers do): the compilers log tracebacks of the errors they then raise (AOT
/// Autograd's compile failure warning), which the script catches and judges.
fn script_broke(success: bool, text: &str) -> bool {
    let judged = text
        .lines()
        .any(|l| matches!(l.trim(), "reproduced" | "not reproduced"));
    !success
        && !judged
        && text.contains("Traceback (most recent call last)")
        && !text.contains("AssertionError")
}

/// Runs `dir/repro.py` in `env` (the newest release, whatever release the campaign tested)
/// and says whether the bug is still live there. `Err` when the script cannot run at all.
pub fn recheck_on_newest(
    dir: &Path,
    env: &crate::targets::NewestEnv,
) -> Result<NewestCheck, String> {
    let script = dir.join("repro.py");
    if !script.exists() {
        return Err("no repro.py".into());
    }
    let mut child = crate::paths::python()
        .env("PYTHONPATH", &env.python_path)
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3: {e}"))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("repro.py did not finish within 120 s".into());
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = text.lines().rev().take(6).collect();
    let output = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    let version = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("onnxruntime ")
                .or_else(|| l.strip_prefix("release: "))
        })
        .unwrap_or(&env.release)
        .trim()
        .to_string();
    if script_broke(status.success(), &text) {
        return Err(format!("repro.py failed:\n{output}"));
    }
    // 0: not reproduced; 1: the bug shows; a signal or another status: the process itself
    // died, which the reproducer of a crash finding shows by dying.
    Ok(NewestCheck {
        version,
        live: status.code() != Some(0),
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: FindingKind, level: &str, signature: &str) -> Finding {
        Finding {
            kind,
            level: level.into(),
            signature: signature.into(),
            detail: String::new(),
            blame: None,
        }
    }

    #[test]
    fn a_traceback_the_compiler_logged_before_the_scripts_verdict_is_not_a_broken_script() {
        let logged = "W1128 graph_compile.py:2484] Traceback (most recent call last):\n\
                      W1128 KeyError: 'buf2'\n\
                      torch._inductor.exc.InductorError: KeyError: 'buf2'\nreproduced\n";
        assert!(!script_broke(false, logged));
        let broken = "Traceback (most recent call last):\nNameError: name 'false' is not defined\n";
        assert!(script_broke(false, broken));
        assert!(!script_broke(
            false,
            "Traceback (most recent call last):\nAssertionError: wrong\n"
        ));
        assert!(!script_broke(true, broken));
    }

    #[test]
    fn severity_follows_kind_and_level() {
        use FindingKind::*;
        let cases = [
            (Inconsistency, "all", "x", Severity::SilentWrongResult),
            (
                Crash,
                "basic",
                "crash:basic:x",
                Severity::ValidModelRejected,
            ),
            (Crash, "disable", "crash:disable:x", Severity::Robustness),
            (
                Crash,
                "process",
                "crash:process:x",
                Severity::CrashOnValidModel,
            ),
            (Hang, "process", "h", Severity::Robustness),
        ];
        for (kind, level, signature, want) in cases {
            assert_eq!(
                Severity::of(&finding(kind, level, signature)),
                want,
                "{signature}"
            );
        }
    }

    #[test]
    fn localized_mismatches_name_their_op() {
        assert_eq!(
            localized_op("reference-mismatch:Mod(i32,i32->i32)"),
            Some("Mod")
        );
        assert_eq!(localized_op("reference-mismatch:all:Add,Mul"), None);
        assert_eq!(localized_op("crash:basic:x"), None);
    }

    #[test]
    fn a_program_finding_rests_on_eager_not_on_the_onnx_rules() {
        let hang = finding(FindingKind::Hang, "process", "hang:");
        let program = spec_basis(&hang, true);
        assert!(
            program.contains("eager") && !program.contains("ONNX"),
            "{program}"
        );
        assert!(spec_basis(&hang, false).contains("onnx.checker"));
    }
}
