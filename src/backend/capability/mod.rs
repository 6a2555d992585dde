//! Capability probing: which (op, dtype signature, attribute class) triples a backend
//! implements, learned from single-op models as NNSmith's dtype_test does, and cached on disk.

mod forked;
pub mod pinned;

use super::{Backend, ErrorClass};
use crate::emit::onnx::emit_plain as emit;
use crate::gen::menu::{Choice, MenuEntry};
use crate::gen::{Limits, Menu, TestCase};
use crate::ops::{registry, SpecId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// Single-op cases tried per triple before it counts as not instantiable.
const PROBE_CASES: u8 = 8;

/// A supported triple: (op name, signature key, class).
pub type Triple = (String, String, String);

/// What a backend supports.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capabilities {
    /// Backend name and version the table was probed on.
    pub backend: String,
    /// Fingerprint of the op registry the table was probed with.
    pub registry_fingerprint: u64,
    /// Triples that compiled and ran at every level.
    pub supported: BTreeSet<Triple>,
    /// Triples the backend reported as unsupported.
    pub unsupported: BTreeSet<Triple>,
    /// Triples whose single-op model fails with an internal error even unoptimized (a backend
    /// bug), with the message: reported, and kept out of generation.
    pub broken: Vec<(Triple, String)>,
}

/// The result of probing one triple.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Probe {
    Supported,
    Unsupported,
    Broken(String),
    /// No single-op model could be generated for the triple.
    NotInstantiated,
}

/// A hash of every spec's name, signatures and classes: changes when the specs change.
pub fn registry_fingerprint() -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for s in registry() {
        s.name().hash(&mut h);
        s.sigs().hash(&mut h);
        s.classes().hash(&mut h);
    }
    h.finish()
}

fn triple(spec: SpecId, sig: &crate::ops::Sig, class: &str) -> Triple {
    (
        registry()[spec].name().to_string(),
        sig.key(),
        class.to_string(),
    )
}

/// Which levels a probe compiles at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The unoptimized level and the top one.
    Ends,
    /// The unoptimized level only: whether the backend supports the triple at all, when the
    /// top level killed the process (a crash there is a campaign's finding, not a capability).
    Unoptimized,
}

/// Probes one triple on a few single-op models.
fn probe_one(backend: &dyn Backend, spec: SpecId, choice: &Choice, scope: Scope) -> Probe {
    let menu = Menu::from_entries(vec![MenuEntry {
        spec,
        choices: vec![choice.clone()],
    }]);
    let mut generated = false;
    for k in 0..PROBE_CASES {
        let bytes: Vec<u8> = (0..256u32)
            .map(|i| (i.wrapping_mul(37) ^ (u32::from(k) * 101)) as u8)
            .collect();
        let case = TestCase::decode(&bytes, &menu, &Limits::exact(1));
        let has_op = case
            .graph
            .op_nodes()
            .iter()
            .any(|n| match &case.graph.node(*n).kind {
                crate::ir::NodeKind::Op(op) => op.spec == spec,
                _ => false,
            });
        if !has_op {
            continue;
        }
        generated = true;
        let model = emit(&case);
        let inputs: Vec<&crate::ir::Tensor> =
            model.inputs.iter().map(|(n, _)| &case.values[n]).collect();
        let top = backend.levels().len() - 1;
        let levels = match scope {
            Scope::Ends if top > 0 => vec![0, top],
            _ => vec![0],
        };
        for level in levels {
            match backend.probe(&model, &inputs, level) {
                // Unsupported, or rejected by the backend's schema check: not to generate.
                Err(e) if e.class != ErrorClass::Internal => return Probe::Unsupported,
                Err(e) if level == 0 => return Probe::Broken(e.message),
                _ => {}
            }
        }
    }
    if generated {
        Probe::Supported
    } else {
        Probe::NotInstantiated
    }
}

impl Capabilities {
    /// Probes every triple of the registry on `backend`: in this process, or in forked
    /// children when the backend asks for it ([`Backend::probe_in_child`]).
    pub fn probe(backend: &dyn Backend) -> Capabilities {
        let all = Menu::everything();
        let probes: Vec<(Triple, SpecId, &Choice)> = all
            .entries
            .iter()
            .flat_map(|entry| {
                entry
                    .choices
                    .iter()
                    .map(move |c| (triple(entry.spec, &c.sig, c.class), entry.spec, c))
            })
            .collect();
        let results: Vec<(Triple, Probe)> = if backend.probe_in_child() {
            forked::probe_all(&probes, |spec, choice, scope| {
                probe_one(backend, spec, choice, scope)
            })
        } else {
            probes
                .iter()
                .map(|(t, spec, c)| (t.clone(), probe_one(backend, *spec, c, Scope::Ends)))
                .collect()
        };
        let mut caps = Capabilities {
            backend: backend.version(),
            registry_fingerprint: registry_fingerprint(),
            supported: BTreeSet::new(),
            unsupported: BTreeSet::new(),
            broken: Vec::new(),
        };
        for (t, result) in results {
            match result {
                Probe::Supported => {
                    caps.supported.insert(t);
                }
                Probe::Unsupported => {
                    caps.unsupported.insert(t);
                }
                Probe::Broken(message) => caps.broken.push((t, message)),
                Probe::NotInstantiated => {}
            }
        }
        caps
    }

    /// The cache file for `backend`.
    pub fn cache_path(backend: &dyn Backend) -> PathBuf {
        crate::paths::cache_dir().join(format!(
            "capabilities-{}-{:016x}.json",
            backend.name(),
            registry_fingerprint()
        ))
    }

    /// Whether this table was probed on `backend` as it is now (same release, same registry).
    fn fits(&self, backend: &dyn Backend) -> bool {
        self.registry_fingerprint == registry_fingerprint() && self.backend == backend.version()
    }

    /// The table for `backend`: the pinned one when it fits ([`pinned`]), else the cached one,
    /// else a fresh probe (cached).
    pub fn load_or_probe(backend: &dyn Backend) -> Capabilities {
        if let Some(caps) = pinned::table(backend.name()).filter(|c| c.fits(backend)) {
            return caps;
        }
        let path = Self::cache_path(backend);
        if let Some(caps) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Capabilities>(&b).ok())
            .filter(|c| c.fits(backend))
        {
            return caps;
        }
        tracing::info!(
            "probing {} capabilities into {}",
            backend.version(),
            path.display()
        );
        let caps = Self::probe(backend);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension("tmp");
        if std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(&caps).expect("serializable"),
        )
        .is_ok()
        {
            let _ = std::fs::rename(&tmp, &path);
        }
        caps
    }

    /// The generator menu of supported triples.
    pub fn menu(&self) -> Menu {
        Menu::new(|spec, sig, class| self.supported.contains(&triple(spec, sig, class)))
    }

    /// The table as text, one op per line, then the broken triples with their messages
    /// (`dlcfuzz capabilities`).
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for (op, sigs) in self.table() {
            out += &format!("{op:24} {}\n", sigs.join(" "));
        }
        for ((op, sig, class), message) in &self.broken {
            let message: String = message.chars().take(160).collect();
            out += &format!("BROKEN {op} {sig} [{class}]: {message}\n");
        }
        out
    }

    /// Counts of the table, for `dlcfuzz capabilities`.
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "backend": self.backend,
            "supported": self.supported.len(),
            "unsupported": self.unsupported.len(),
            "broken": self.broken.len(),
            "ops": self.table().len(),
        })
    }

    /// Op × dtype table: for each op, the input-dtype signatures supported.
    pub fn table(&self) -> Vec<(String, Vec<String>)> {
        let mut rows: Vec<(String, Vec<String>)> = Vec::new();
        for (op, sig, class) in &self.supported {
            let cell = if class == crate::ops::DEFAULT_CLASS {
                sig.clone()
            } else {
                format!("{sig}[{class}]")
            };
            match rows.last_mut() {
                Some((name, cells)) if name == op => cells.push(cell),
                _ => rows.push((op.clone(), vec![cell])),
            }
        }
        rows
    }
}
