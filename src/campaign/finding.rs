//! Writing a finding to disk: the fuzz input, the model, a standalone `repro.py` and
//! `report.json`.

use super::bisect::{bisect, Culprits};
use super::harness::TestRun;
use crate::backend::Backend;
use crate::ir::{Tensor, TensorType};
use crate::oracle::Finding;
use base64::Engine;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The machine-readable report of a finding.
#[derive(Serialize)]
pub struct Report<'a> {
    /// The finding.
    pub finding: &'a Finding,
    /// Backend and version.
    pub backend: String,
    /// Op types in the model.
    pub op_types: String,
    /// Number of operator nodes.
    pub nodes: usize,
    /// Size of the fuzz input in bytes.
    pub input_bytes: usize,
    /// How to replay.
    pub replay: String,
    /// Optimizer patterns spliced into the case (OATest), in order.
    pub spliced: &'a [crate::gen::Spliced],
    /// The culprit transformers (ONNX Runtime findings against the unoptimized run), or why
    /// the bisection could not say.
    pub culprits: Option<Result<Culprits, String>>,
}

/// A short stable hex id for a signature.
pub fn signature_id(signature: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    signature.hash(&mut h);
    format!("{:016x}", h.finish())
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

/// A standalone Python reproducer needing only onnxruntime and numpy; with `culprits`, it
/// also shows that disabling them makes the failure go away.
pub fn repro_py(run: &TestRun, finding: &Finding, culprits: Option<&Culprits>) -> String {
    let feeds: Vec<String> = run
        .model
        .inputs
        .iter()
        .map(|(n, name)| format!("    {name:?}: {},", python_tensor(&run.case.values[n])))
        .collect();
    let level = match finding.level.as_str() {
        "disable" => "ORT_DISABLE_ALL",
        "basic" => "ORT_ENABLE_BASIC",
        "extended" => "ORT_ENABLE_EXTENDED",
        _ => "ORT_ENABLE_ALL",
    };
    format!(
        r#"#!/usr/bin/env python3
"""dlcfuzz finding: {signature}
Runs model.onnx with optimizations disabled and at level '{level_name}', and compares."""
import base64, os, sys
import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
FEEDS = {{
{feeds}
}}

# Culprit transformers from bisect.py (empty: not bisected).
CULPRITS = {culprits}

def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(HERE, "model.onnx"), so, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
    return sess.run(None, FEEDS)

def failure(ref, level, disabled=()):
    try:
        got = run(level, disabled)
    except Exception as e:  # the optimized level fails where the reference runs
        return f"FAILURE: {{e}}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if r.shape != g.shape or not np.allclose(r.astype(np.float64), g.astype(np.float64), rtol=1e-3, atol=1e-3, equal_nan=True):
            diff = np.max(np.abs(r.astype(np.float64) - g.astype(np.float64))) if r.shape == g.shape else (r.shape, g.shape)
            return f"MISMATCH in output {{i}}: max abs diff {{diff}}"
    return None

def main():
    ref = run(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    level = ort.GraphOptimizationLevel.{level}
    found = failure(ref, level)
    if found is None:
        print("outputs agree: not reproduced")
        return 0
    print("at level {level_name}:", found)
    if CULPRITS:
        again = failure(ref, level, CULPRITS)
        print("with the culprits", CULPRITS, "disabled:", again or "the failure is gone")
    return 1

if __name__ == "__main__":
    sys.exit(main())
"#,
        signature = finding.signature.replace('"', "'"),
        level_name = finding.level,
        feeds = feeds.join("\n"),
        culprits = serde_json::to_string(&culprits.map_or(&[][..], |c| c.culprits.as_slice()))
            .expect("strings serialize"),
    )
}

/// Writes a finding folder under `out` and returns its path. One folder per signature: a
/// repeated signature only bumps its `count` file. The standalone `repro.py` drives ONNX
/// Runtime, so it is written for backends with ORT's levels; every folder replays with
/// `dlcfuzz replay --backend <name>`.
pub fn write_finding(
    out: &Path,
    bytes: &[u8],
    run: &TestRun,
    finding: &Finding,
    backend: &dyn Backend,
) -> std::io::Result<PathBuf> {
    let dir = out.join(format!("finding-{}", signature_id(&finding.signature)));
    let count_file = dir.join("count");
    if dir.exists() {
        let n: u64 = std::fs::read_to_string(&count_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        std::fs::write(&count_file, format!("{}\n", n + 1))?;
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("input.bin"), bytes)?;
    std::fs::write(dir.join("model.onnx"), &run.model.bytes)?;
    let mut culprits = None;
    if backend.levels() == crate::backend::ort::LEVELS {
        std::fs::write(dir.join("repro.py"), repro_py(run, finding, None))?;
        if finding.level != crate::backend::ort::LEVELS[0] {
            let found = bisect(&dir, &finding.level);
            if let Ok(c) = &found {
                std::fs::write(dir.join("repro.py"), repro_py(run, finding, Some(c)))?;
            }
            culprits = Some(found);
        }
    }
    let report = Report {
        finding,
        backend: backend.version(),
        op_types: super::harness::Harness::op_types(&run.case),
        nodes: run.case.graph.op_count(),
        input_bytes: bytes.len(),
        replay: format!(
            "dlcfuzz replay --backend {}{} {}",
            backend.name(),
            if run.case.spliced.is_empty() {
                ""
            } else {
                " --patterns <the campaign's library: builtin or its file>"
            },
            dir.display()
        ),
        spliced: &run.case.spliced,
        culprits,
    };
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_vec_pretty(&report).expect("serializable"),
    )?;
    std::fs::write(count_file, "1\n")?;
    Ok(dir)
}
