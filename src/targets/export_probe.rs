//! Which torch-surface rows the PyTorch ONNX exporter has no conversion for, probed once
//! per torch version and surface (as [`crate::backend::capability`] probes the ONNX
//! backends): each row alone, in up to [`TRIES`] small programs of that row only, is
//! exported; a row whose every instantiating program fails at export as *unsupported*
//! (no ONNX function, no decomposition) is never drawn by `torch_onnx_export`. Without this,
//! one unconvertible row among a test's rows made most tests unsupported.
//!
//! The result is cached under [`crate::paths::cache_dir`], keyed by the torch version and a
//! fingerprint of the rows, so every worker of a campaign and every replay sees the same
//! rows and decodes the same bytes the same way.

use super::surface::profiled;
use crate::backend::python::classify::PyOutcome;
use crate::backend::python::{runs, PythonHost, Run};
use crate::gen::menu::op_key;
use crate::mutate::program::render::{render, Dialect};
use crate::mutate::program::ProgramPlan;
use crate::torch::gen::generate_only;
use crate::torch::ops::{table, TorchOp};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// Programs tried per row before it counts as not instantiable (kept).
pub const TRIES: u64 = 2;

/// The cached probe.
#[derive(Serialize, Deserialize)]
struct Probe {
    /// torch's version in the Python host.
    torch: String,
    /// [`fingerprint`] of the rows probed.
    rows: u64,
    /// Rows the exporter has no conversion for.
    excluded: BTreeSet<String>,
}

/// A hash of every row's name and template: a changed row is probed again.
fn fingerprint() -> u64 {
    table().iter().fold(0, |h, op| {
        h ^ op_key(&format!("{}={}", op.name, op.template), h)
    })
}

fn cache_path() -> PathBuf {
    crate::paths::cache_dir().join(format!(
        "torch-onnx-export-rows-{:016x}.json",
        fingerprint()
    ))
}

/// The rows `torch.onnx.export` (in `host`, torch `torch_version`) cannot convert, from the
/// cache or probed now (about a second per row, once).
pub fn unexportable(host: &Mutex<PythonHost>, torch_version: &str) -> BTreeSet<&'static str> {
    let path = cache_path();
    let cached = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Probe>(&b).ok())
        .filter(|p| p.torch == torch_version && p.rows == fingerprint());
    let excluded = match cached {
        Some(p) => p.excluded,
        None => {
            let rows = table();
            super::status(&format!(
                "probing which of {} torch rows torch.onnx.export converts (once per torch version, about a second per row; cached in {})",
                rows.len(),
                path.display()
            ));
            let mut excluded: BTreeSet<String> = BTreeSet::new();
            for (i, op) in rows.iter().enumerate() {
                if !exports(host, op) {
                    excluded.insert(op.name.to_string());
                }
                if (i + 1) % 20 == 0 || i + 1 == rows.len() {
                    super::status(&format!(
                        "export probe: {}/{} rows, {} without a conversion",
                        i + 1,
                        rows.len(),
                        excluded.len()
                    ));
                }
            }
            let probe = Probe {
                torch: torch_version.to_string(),
                rows: fingerprint(),
                excluded,
            };
            // Written whole under a unique name, then renamed: concurrent workers never
            // read half a file.
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            let _ = std::fs::create_dir_all(crate::paths::cache_dir());
            if std::fs::write(
                &tmp,
                serde_json::to_vec_pretty(&probe).expect("serializable"),
            )
            .is_ok()
            {
                let _ = std::fs::rename(&tmp, &path);
            }
            probe.excluded
        }
    };
    table()
        .iter()
        .map(|op| op.name)
        .filter(|n| excluded.contains(*n))
        .collect()
}

/// Whether some program of row `name` alone exports (or fails for another reason than a
/// missing conversion); `true` too when no program of it could be made to run in eager
/// (nothing to learn).
fn exports(host: &Mutex<PythonHost>, row: &'static TorchOp) -> bool {
    let name = row.name;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(op_key(name, 0));
    let mut unsupported = 0;
    for _ in 0..TRIES {
        let mut bytes = vec![0u8; 400];
        rng.fill(&mut bytes[..]);
        let generated = generate_only(&bytes, 3, row);
        let plan = ProgramPlan::default();
        let Ok(test) = profiled(host, "torch.onnx.export", "cpu", plan, generated, &[]) else {
            continue;
        };
        if !test.ops.contains(&name) {
            continue;
        }
        let source = render(&test.program, Dialect::Python);
        let request = test.request(&source, "cpu", json!({"op": "torch_onnx_export"}));
        let Ok(response) = super::hosted::call(host, "torch.onnx.export", &request) else {
            continue;
        };
        let missing = runs(&response).is_ok_and(|named| {
            named.iter().any(|(n, r)| {
                n == "export"
                    && matches!(r, Run::Failed(e) if e.outcome() == PyOutcome::Unsupported)
            })
        });
        if !missing {
            return true;
        }
        unsupported += 1;
    }
    unsupported == 0
}
