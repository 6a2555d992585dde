//! Capability tables probed once and checked in (`pinned/<backend>.json`), one per backend
//! release. The generator's menu is the table, so a table that changes from machine to
//! machine makes a corpus decode differently on each: OpenVINO's CPU plugin, for one, chooses
//! its kernels by instruction set. A pinned table is used whenever its backend version and
//! registry fingerprint match; a triple it lists that this machine's backend rejects is then
//! an unsupported test, and one that crashes it is a finding. Another release, or a changed
//! registry, probes this machine as before. Re-pin with
//! `DLCFUZZ_BLESS=1 cargo test --release --test pinned_capabilities`.

use super::Capabilities;
use std::path::PathBuf;

/// The checked-in tables, by backend name.
const TABLES: &[(&str, &str)] = &[
    ("ort", include_str!("pinned/ort.json")),
    ("tract", include_str!("pinned/tract.json")),
    ("tvm", include_str!("pinned/tvm.json")),
    ("openvino", include_str!("pinned/openvino.json")),
];

/// The names of the backends with a pinned table.
pub fn backends() -> impl Iterator<Item = &'static str> {
    TABLES.iter().map(|(name, _)| *name)
}

/// The pinned table of `backend`, whatever its version and fingerprint.
pub fn table(backend: &str) -> Option<Capabilities> {
    let (_, text) = TABLES.iter().find(|(name, _)| *name == backend)?;
    Some(serde_json::from_str(text).expect("a pinned capability table parses"))
}

/// Where the pinned table of `backend` lives in the source tree (for re-pinning).
pub fn path(backend: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/backend/capability/pinned")
        .join(format!("{backend}.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pinned_table_parses_and_names_its_backend() {
        for name in backends() {
            let caps = table(name).expect("listed");
            assert!(
                caps.backend.to_lowercase().contains(name)
                    || (name == "ort" && caps.backend.starts_with("onnxruntime")),
                "{name}: {}",
                caps.backend
            );
            assert!(!caps.supported.is_empty(), "{name}");
        }
        assert!(table("no-such-backend").is_none());
    }
}
