//! Verdicts from the Python host's responses, shared by the torch.compile and TVM targets: a
//! response's named runs (outputs or a failed stage), a failed stage classified
//! ([`PyOutcome`]), and a dead or hung host as a crash or hang finding; a test's run with the
//! Python lines its requests covered and the optimizations they fired ([`covered`]).

use crate::backend::python::classify::{PyError, PyOutcome};
use crate::backend::python::frame::Frame;
pub use crate::backend::python::{runs, Run};
use crate::backend::python::{HostFailure, PythonHost};
use crate::oracle::{normalize_message, Finding, FindingKind, Skip, Verdict};
use crate::targets::TargetRun;
use std::sync::Mutex;

/// The ids of the Python lines `host`'s responses covered, and the optimizations they said
/// fired, since the last take.
fn take_observed(host: &Mutex<PythonHost>) -> (Vec<u32>, Vec<String>) {
    let mut host = host.lock().unwrap_or_else(|p| p.into_inner());
    (host.take_coverage(), host.take_fired())
}

/// `test()`'s run, with the Python lines the requests it sent to `host` covered and the
/// optimizations they fired (those of earlier requests, such as start-up and capability
/// probes, are not its own).
pub fn covered(host: &Mutex<PythonHost>, test: impl FnOnce() -> TargetRun) -> TargetRun {
    take_observed(host);
    let run = test();
    let (coverage, fired) = take_observed(host);
    TargetRun {
        coverage,
        fired,
        ..run
    }
}

/// Sends `request` to the host. A dead or hung host is a finding of `backend`; a request
/// the host itself could not serve is our fault, not the compiler's (an invalid test).
pub fn call(host: &Mutex<PythonHost>, backend: &str, request: &Frame) -> Result<Frame, Verdict> {
    let mut host = host.lock().unwrap_or_else(|p| p.into_inner());
    let response = host
        .call(request)
        .map_err(|failure| host_failure(backend, &failure))?;
    if response.header["ok"].as_bool() != Some(true) {
        let error: Option<PyError> = serde_json::from_value(response.header["error"].clone()).ok();
        let message = error.map_or("malformed response".into(), |e| e.detail());
        return Err(Verdict::Skipped(Skip::Invalid(format!("host: {message}"))));
    }
    Ok(response)
}

/// The verdict on a failed stage of `backend` at `level`: unsupported features are skipped,
/// internal errors are crash findings signed by component and message. A broken environment
/// stops the run.
pub fn stage_failure(backend: &str, level: &str, error: &PyError) -> Verdict {
    match error.outcome() {
        PyOutcome::Unsupported => Verdict::Skipped(Skip::Unsupported(format!(
            "{backend} {}: {}",
            error.stage,
            error.headline()
        ))),
        PyOutcome::Environment => panic!(
            "the Python host's environment is broken ({}): run `scripts/setup.sh --python-compilers`\n{}",
            error.headline(),
            error.detail()
        ),
        PyOutcome::Internal { component } => Verdict::Found(Finding {
            kind: FindingKind::Crash,
            level: level.into(),
            signature: format!(
                "crash:{backend}:{}:{}",
                // TVM's components already name it (`tvm:pass:FuseTIR`).
                component
                    .strip_prefix(&format!("{backend}:"))
                    .unwrap_or(&component),
                normalize_message(&error.key())
            ),
            detail: error.detail(),
            blame: None,
        }),
    }
}

/// A dead or hung host as a finding of `backend`.
pub fn host_failure(backend: &str, failure: &HostFailure) -> Verdict {
    let (kind, what, stderr) = match failure {
        HostFailure::Died {
            signal: Some(s),
            stderr,
            ..
        } => (FindingKind::Crash, format!("signal {s}"), stderr),
        HostFailure::Died { code, stderr, .. } => {
            (FindingKind::Crash, format!("exit {code:?}"), stderr)
        }
        HostFailure::Hung { stderr, .. } => (FindingKind::Hang, "hang".to_string(), stderr),
        HostFailure::Spawn(e) => panic!("{backend}: cannot start the Python host: {e}"),
    };
    let site = failure.site();
    Verdict::Found(Finding {
        kind,
        level: "host".into(),
        signature: format!("crash:{backend}:{what}:{}", normalize_message(&site)),
        detail: format!("{failure}\nstderr tail:\n{stderr}"),
        blame: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::python::classify::PyException;

    #[test]
    fn internal_errors_are_signed_by_backend_and_component_once() {
        let error = PyError {
            stage: "pass:FuseTIR".into(),
            chain: vec![PyException {
                kind: "tvm.error.InternalError".into(),
                message: "Check failed: 3 == 4".into(),
            }],
            frames: Vec::new(),
        };
        let Verdict::Found(f) = stage_failure("tvm", "passes", &error) else {
            panic!("an internal error is a finding");
        };
        assert_eq!(
            f.signature,
            "crash:tvm:pass:FuseTIR:tvm.error.InternalError: Check failed: N == N"
        );
        assert_eq!(f.level, "passes");
    }
}
