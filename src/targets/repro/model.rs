//! The reproducer of an ONNX-model finding: a standalone `repro.py` needing only the
//! compiler's Python package (ONNX Runtime's, OpenVINO's: the backend's [`PythonRunner`]) and
//! numpy, with the model beside it as `model.onnx`, the feeds inline, and (with a precision
//! envelope) the exact float64 results and the deviations rounding allows.

use crate::backend::bisect::Culprits;
use crate::backend::PythonRunner;
use crate::emit::onnx::OnnxModel;
use crate::gen::TestCase;
use crate::ir::{Tensor, TensorType};
use crate::oracle::{Finding, FindingKind};
use crate::reference::envelope::Envelope;
use base64::Engine;

/// A standalone reproducer for a backend process that died: each level runs in a child
/// Python process (with a timeout), and the script prints which level died and how.
fn death_repro_py(
    runner: &PythonRunner,
    levels: &[&str],
    finding: &Finding,
    feeds: &str,
    live: &str,
) -> String {
    format!(
        r#"#!/usr/bin/env python3
"""dlcfuzz finding: {signature}
Runs model.onnx at every {import} level, each in its own process, and prints the levels
whose process dies (signal), hangs (timeout) or fails."""
import base64, os, subprocess, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "model.onnx")
FEEDS = {{
{feeds}
}}
# The inputs some output depends on (a compiler may drop the others when it reads the model).
LIVE = {live}

{run}
def main():
    import {import}
    print("release: {import}", {version})
    died = 0
    for level in {levels:?}:
        try:
            p = subprocess.run([sys.executable, __file__, "--child", level], timeout=60, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            print(f"{{level}}: HANG (no result in 60 s)")
            died += 1
            continue
        if p.returncode < 0:
            print(f"{{level}}: DIED with signal {{-p.returncode}}")
            died += 1
        elif p.returncode != 0:
            print(f"{{level}}: FAILED (exit {{p.returncode}}): {{p.stderr.strip().splitlines()[-1:]}}")
            died += 1
        else:
            print(f"{{level}}: ok")
    print("reproduced" if died else "not reproduced")
    return 1 if died else 0

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        run(sys.argv[2])
    else:
        sys.exit(main())
"#,
        signature = finding.signature.replace('"', "'"),
        import = runner.import,
        version = runner.version,
        run = runner.run,
    )
}

/// The model's live input names ([`crate::emit::read::live_input_names`]) as a Python list,
/// written as JSON like `CULPRITS` (every input when the bytes do not decode).
fn python_live(model: &OnnxModel) -> String {
    let live = crate::emit::read::live_input_names(&model.bytes)
        .unwrap_or_else(|| model.inputs.iter().map(|(_, n)| n.clone()).collect());
    serde_json::to_string(&live).expect("a list of strings is JSON")
}

fn python_tensor(t: &Tensor) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(t.data.to_le_bytes());
    let ty = TensorType::new(t.data.dtype(), t.shape.clone());
    format!(
        "np.frombuffer(base64.b64decode('{b64}'), dtype=np.{}).reshape({:?})",
        ty.dtype.numpy_name(),
        ty.shape
    )
}

/// A standalone Python reproducer needing only the compiler's package (run as `runner` says,
/// at the backend's `levels`) and numpy; with `culprits`, it also shows that disabling them
/// makes the failure go away.
pub fn repro_py(
    runner: &PythonRunner,
    levels: &[&str],
    model: &OnnxModel,
    case: &TestCase,
    finding: &Finding,
    culprits: Option<&Culprits>,
    envelope: Option<&Envelope>,
) -> String {
    let feeds: Vec<String> = model
        .inputs
        .iter()
        .map(|(n, name)| format!("    {name:?}: {},", python_tensor(&case.values[n])))
        .collect();
    let live = python_live(model);
    if matches!(
        finding.kind,
        FindingKind::Crash | FindingKind::Hang | FindingKind::OutOfMemory
    ) && finding.level == "process"
    {
        return death_repro_py(runner, levels, finding, &feeds.join("\n"), &live);
    }
    let unoptimized = levels[0];
    let level = if levels.contains(&finding.level.as_str()) {
        finding.level.as_str()
    } else {
        levels[levels.len() - 1]
    };
    let expected = python_expected(envelope, model.outputs.len());
    format!(
        r#"#!/usr/bin/env python3
"""dlcfuzz finding: {signature}
Runs model.onnx with {import} at its least optimized level '{unoptimized}' and at level
'{level}', and judges each run against EXPECTED: the exact result (every float computed in
float64) with, per element, how far rounding alone can move it (ALLOWED, from dlcfuzz's
precision analysis of every legal evaluation order and precision). Exit status 1 when the
bug shows, 0 when it does not."""
import base64, os, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "model.onnx")
FEEDS = {{
{feeds}
}}
# The inputs some output depends on (a compiler may drop the others when it reads the model).
LIVE = {live}

# Per output: (exact values, allowed deviation), or None where the output is not compared
# (it sits within rounding of a discontinuity, or on behaviour the ONNX spec leaves open).
# An empty list: no exact result is known, and the unoptimized run is the reference.
EXPECTED = {expected}

# Culprit optimizations from bisection (empty: not bisected).
CULPRITS = {culprits}

{run}
def wrong(got, ref):
    """Where `got` strays from the exact result farther than rounding explains (or, with no
    exact result, from `ref` beyond 1e-3)."""
    if not EXPECTED:
        for i, (r, g) in enumerate(zip(ref, got)):
            if r.shape != g.shape or not np.allclose(r.astype(np.float64), g.astype(np.float64), rtol=1e-3, atol=1e-3, equal_nan=True):
                return f"output {{i}} differs from the unoptimized run"
        return None
    for i, (want, g) in enumerate(zip(EXPECTED, got)):
        if want is None:
            continue
        exact, allowed = want
        g = np.asarray(g)
        if g.shape != exact.shape:
            return f"output {{i}}: shape {{g.shape}}, expected {{exact.shape}}"
        err = np.abs(g.astype(np.float64) - exact)
        bad = ~(err <= allowed)
        if bad.any():
            j = int(np.argmax(np.where(bad, np.nan_to_num(err - allowed, nan=np.inf), -np.inf)))
            return f"output {{i}} element {{j}}: {{g.flat[j]}}, exact {{exact.flat[j]}} (allowed +-{{allowed.flat[j]:.3g}})"
    return None

def failure(ref, level, disabled=()):
    try:
        got = run(level, disabled)
    except Exception as e:  # the optimized level fails where the unoptimized one runs
        return f"FAILURE: {{e}}"
    found = wrong(got, ref)
    return f"WRONG RESULT: {{found}}" if found else None

def main():
    import {import}
    print("release: {import}", {version})
    try:
        ref = run("{unoptimized}")
    except Exception as e:  # a crash of the unoptimized run itself
        print("unoptimized ({unoptimized}): FAILURE:", e)
        return 1
    unoptimized = wrong(ref, ref)
    print("unoptimized ({unoptimized}):", unoptimized or "right")
    found = unoptimized if "{level}" == "{unoptimized}" else failure(ref, "{level}")
    if found is None:
        print("at level {level}: right: not reproduced")
        return 0
    print("at level {level}:", found)
    if CULPRITS:
        again = failure(ref, "{level}", CULPRITS)
        print("with the culprits", CULPRITS, "disabled:", again or "the failure is gone")
    return 1

if __name__ == "__main__":
    sys.exit(main())
"#,
        import = runner.import,
        version = runner.version,
        run = runner.run,
        signature = finding.signature.replace('"', "'"),
        feeds = feeds.join("\n"),
        culprits = serde_json::to_string(&culprits.map_or(&[][..], |c| c.culprits.as_slice()))
            .expect("strings serialize"),
    )
}

/// A Python float literal (`np.inf`/`np.nan` for the non-finite ones).
fn py_float(x: f64) -> String {
    if x.is_nan() {
        "np.nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "np.inf" } else { "-np.inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// The `EXPECTED` list of a reproducer: per output, the exact values and allowed deviations
/// as float64 arrays, or `None` for a fragile output; `[]` without an envelope.
fn python_expected(envelope: Option<&Envelope>, outputs: usize) -> String {
    let Some(env) = envelope else {
        return "[]".into();
    };
    let array = |shape: &[usize], v: &[f64]| {
        let items: Vec<String> = v.iter().map(|x| py_float(*x)).collect();
        format!(
            "np.array([{}], dtype=np.float64).reshape({shape:?})",
            items.join(", ")
        )
    };
    let rows: Vec<String> = (0..outputs)
        .map(|i| match env.expected(i) {
            Some((shape, truth, allowed)) => format!(
                "    ({}, {}),",
                array(&shape, &truth),
                array(&shape, &allowed)
            ),
            None => "    None,".into(),
        })
        .collect();
    format!("[\n{}\n]", rows.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::onnx::emit_plain;
    use crate::gen::{Limits, Menu};

    #[test]
    fn the_reproducer_names_the_live_inputs_and_every_input_when_it_cannot_tell() {
        let case = TestCase::decode(&[5u8; 400], &Menu::everything(), &Limits::exact(4));
        let mut model = emit_plain(&case);
        let listed = |model: &OnnxModel| -> Vec<String> {
            serde_json::from_str(&python_live(model)).expect("a list literal")
        };
        let live = crate::emit::read::live_input_names(&model.bytes).expect("a model");
        assert_eq!(listed(&model), live);
        model.bytes = b"\x0a\x00garbage".to_vec();
        let all: Vec<String> = model.inputs.iter().map(|(_, n)| n.clone()).collect();
        assert_eq!(listed(&model), all);
    }
}
