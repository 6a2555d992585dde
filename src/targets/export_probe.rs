//! Which torch-surface rows the PyTorch ONNX exporter has no conversion for, probed once
//! per torch version and surface (as [`crate::backend::capability`] probes the ONNX
//! backends): each row alone, in up to [`TRIES`] small programs of that row only, is
//! exported; a row whose every instantiating program fails at export as *unsupported*
//! (no ONNX function, no decomposition) is never drawn by `torch_onnx_export`. Without this,
//! one unconvertible row among a test's rows made most tests unsupported.
//!
//! The same probe reads which element types ONNX Runtime can run the exported model on:
//! for each op of the first exported program, the types ONNX Runtime's CPU kernel table
//! (`get_all_opkernel_def`) registers at the model's opset; a row is then only given the
//! types every one of its ops has (float16 always: ONNX Runtime casts ops without a
//! float16 kernel to float32 itself). ONNX Runtime's missing kernels were most of the
//! target's unsupported tests (`Could not find an implementation for Softplus(1)`).
//!
//! The result is cached under [`crate::paths::cache_dir`], keyed by the torch version and a
//! fingerprint of the rows, so every worker of a campaign and every replay sees the same
//! rows and decodes the same bytes the same way.

use super::surface::profiled;
use crate::backend::python::classify::PyOutcome;
use crate::backend::python::{runs, PythonHost, Run};
use crate::gen::menu::op_key;
use crate::ir::ScalarType;
use crate::mutate::program::render::{render, Dialect};
use crate::mutate::program::{ProgramPlan, Stmt};
use crate::torch::gen::{generate_only, Lacks, TorchProgram};
use crate::torch::ops::{table, TorchOp};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;

/// Programs of each row exported: a row none of them instantiates is kept.
pub const TRIES: u64 = 3;

/// The cached probe.
#[derive(Serialize, Deserialize)]
struct Probe {
    /// torch's version in the Python host.
    torch: String,
    /// [`fingerprint`] of the rows probed.
    rows: u64,
    /// Rows the exporter has no conversion for.
    excluded: BTreeSet<String>,
    /// Per row whose exported model ONNX Runtime's CPU kernel table restricts: the element
    /// types (torch names) every op of that model has a CPU kernel for.
    types: BTreeMap<String, BTreeSet<String>>,
}

/// What one row's probe learnt.
struct RowProbe {
    /// Some program of the row alone exported (or failed for another reason than a missing
    /// conversion), or none could be made.
    exports: bool,
    /// The element types ONNX Runtime's CPU kernels handle for every op the row exported
    /// to, when its kernel table restricts them.
    types: Option<BTreeSet<String>>,
}

/// A hash of every row's name and template: a changed row is probed again.
fn fingerprint() -> u64 {
    table().iter().fold(0, |h, op| {
        h ^ op_key(&format!("{}={}", op.name, op.template), h)
    })
}

fn cache_path() -> PathBuf {
    // v2: with the element types per row; v3: probed on float arguments where the row takes
    // them; v4: the ops of the exported model's local functions read too; v5: the bodies of
    // ONNX functions, and the types every program of a row allows; v6: every program on the
    // first one's argument type.
    crate::paths::cache_dir().join(format!(
        "torch-onnx-export-rows-v6-{:016x}.json",
        fingerprint()
    ))
}

/// The probe made once for the torch wheel `scripts/setup.sh` installs, checked in
/// (`export_probe.json`): used whenever torch's version and the rows match, so a fresh
/// machine draws at once what every other one draws. Re-pinned from the cache by
/// `DLCFUZZ_BLESS=1 cargo test --release --lib export_probe` after a probe.
fn pinned() -> Option<Probe> {
    serde_json::from_str(include_str!("export_probe.json")).ok()
}

/// What `torch.onnx.export` followed by ONNX Runtime (in `host`, torch `torch_version`)
/// lacks: the rows the exporter cannot convert, and per row the element types ONNX
/// Runtime's CPU kernels handle for what it exports to. Pinned, from the cache, or probed
/// now (a few seconds per row, once).
pub fn lacks(host: &Mutex<PythonHost>, torch_version: &str) -> Lacks {
    let path = cache_path();
    let fits = |p: &Probe| p.torch == torch_version && p.rows == fingerprint();
    let cached = pinned().filter(fits).or_else(|| {
        std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Probe>(&b).ok())
            .filter(fits)
    });
    let probe = match cached {
        Some(p) => p,
        None => {
            let probe = probe_rows(host, torch_version, &path);
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
            probe
        }
    };
    let mut lacks = Lacks::default();
    for op in table() {
        if probe.excluded.contains(op.name) {
            lacks.rows.insert(op.name);
        }
        if let Some(names) = probe.types.get(op.name) {
            let handled: BTreeSet<ScalarType> = ScalarType::ALL
                .into_iter()
                .filter(|s| names.contains(s.torch_name()))
                .collect();
            lacks.types.insert(op.name, handled);
        }
    }
    lacks
}

/// Probes every row, showing progress.
fn probe_rows(host: &Mutex<PythonHost>, torch_version: &str, path: &std::path::Path) -> Probe {
    let rows = table();
    super::status(&format!(
        "probing which of {} torch rows torch.onnx.export converts, and on which element types ONNX Runtime runs them (once per torch version, a few seconds per row; cached in {})",
        rows.len(),
        path.display()
    ));
    let mut probe = Probe {
        torch: torch_version.to_string(),
        rows: fingerprint(),
        excluded: BTreeSet::new(),
        types: BTreeMap::new(),
    };
    for (i, op) in rows.iter().enumerate() {
        let row = probe_row(host, op);
        if !row.exports {
            probe.excluded.insert(op.name.to_string());
        }
        if let Some(types) = row.types {
            probe.types.insert(op.name.to_string(), types);
        }
        if (i + 1) % 20 == 0 || i + 1 == rows.len() {
            super::status(&format!(
                "export probe: {}/{} rows, {} without a conversion, {} on fewer element types",
                i + 1,
                rows.len(),
                probe.excluded.len(),
                probe.types.len()
            ));
        }
    }
    probe
}

/// Exports [`TRIES`] programs of row `row` alone: whether one exports (or fails for another
/// reason than a missing conversion; `true` too when no program of it could be made to run
/// in eager: nothing to learn), and the element types ONNX Runtime's CPU kernels handle for
/// what every exported program on the first one's argument type became (a row's constants
/// choose its ONNX ops: `adaptive_avg_pool1d` is a ReduceMean for one output, an AveragePool
/// for several).
fn probe_row(host: &Mutex<PythonHost>, row: &'static TorchOp) -> RowProbe {
    let name = row.name;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(op_key(name, 0));
    let (mut unsupported, mut exported) = (0, false);
    let mut types: Option<BTreeSet<String>> = None;
    // The element type the first exported program read: the others count for the types
    // only when they read it too (a row's ops change with it: bitwise_and on bool is And).
    let mut read: Option<ScalarType> = None;
    for _ in 0..TRIES {
        let Some((generated, data_type)) = candidate(&mut rng, row) else {
            continue;
        };
        let plan = ProgramPlan::default();
        let Ok(test) = profiled(host, "torch.onnx.export", "cpu", plan, generated, &[]) else {
            continue;
        };
        if !test.ops.contains(&name) {
            continue;
        }
        let source = render(&test.program, Dialect::Python);
        let request = test.request(
            &source,
            "cpu",
            json!({"op": "torch_onnx_export", "kernel_types": data_type.torch_name()}),
        );
        let Ok(response) = super::hosted::call(host, "torch.onnx.export", &request) else {
            continue;
        };
        let handled: Option<BTreeSet<String>> =
            serde_json::from_value(response.header["ort_types"].clone())
                .ok()
                .filter(|_| *read.get_or_insert(data_type) == data_type);
        types = match (types, handled) {
            (Some(t), Some(h)) => Some(t.intersection(&h).cloned().collect()),
            (t, h) => t.or(h),
        };
        let missing = runs(&response).is_ok_and(|named| {
            named.iter().any(|(n, r)| {
                n == "export"
                    && matches!(r, Run::Failed(e) if e.outcome() == PyOutcome::Unsupported)
            })
        });
        if missing {
            unsupported += 1;
        } else {
            exported = true;
        }
    }
    RowProbe {
        exports: exported || unsupported == 0,
        types,
    }
}

/// How many programs [`candidate`] draws in search of a float32 argument.
const DRAWS: usize = 16;

/// A program of row `row` alone and the element type of the row's first argument, preferring
/// float32, then any float type: the types a float row's exported ops read are the float
/// types, while an integer argument is often cast to float first, and the kernel table of
/// a cast says nothing about the row's own op (probed on an integer, `cosh` and `softplus`
/// looked as if ONNX Runtime ran them on float64).
fn candidate(rng: &mut impl Rng, row: &'static TorchOp) -> Option<(TorchProgram, ScalarType)> {
    let rank = |t: ScalarType| match t {
        ScalarType::F32 => 0,
        t if t.is_float() => 1,
        _ => 2,
    };
    let mut best: Option<(TorchProgram, ScalarType)> = None;
    for _ in 0..DRAWS {
        let mut bytes = vec![0u8; 400];
        rng.fill(&mut bytes[..]);
        let generated = generate_only(&bytes, 3, row);
        let Some(t) = argument_type(&generated, row.name) else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, b)| rank(t) < rank(*b)) {
            best = Some((generated, t));
        }
        if rank(t) == 0 {
            break;
        }
    }
    best
}

/// The element type of the first argument of the first statement row `name` made in
/// `generated`: the type the probe learns ONNX Runtime's support for.
fn argument_type(generated: &TorchProgram, name: &str) -> Option<ScalarType> {
    generated.program.body.iter().find_map(|stmt| match stmt {
        Stmt::Let { var, call } if generated.producers.get(var) == Some(&name) => {
            call.args.first().map(|a| generated.program.types[a].scalar)
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pinned probe is of today's rows (`DLCFUZZ_BLESS=1`: pinned from the cache of a
    /// probe made on this machine, e.g. by `dlcfuzz bench target torch_onnx_export`).
    #[test]
    fn the_pinned_probe_fits_the_rows() {
        if std::env::var("DLCFUZZ_BLESS").as_deref() == Ok("1") {
            let probe = std::fs::read(cache_path()).expect("a probe cached on this machine");
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("src/targets/export_probe.json");
            std::fs::write(path, probe).expect("the source tree is writable");
            return;
        }
        let pinned = pinned().expect("export_probe.json parses");
        assert_eq!(
            pinned.rows,
            fingerprint(),
            "the rows changed: probe, then re-pin (DLCFUZZ_BLESS=1)"
        );
        assert!(pinned.torch.starts_with("2."), "{}", pinned.torch);
    }
}
