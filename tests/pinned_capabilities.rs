//! The pinned capability tables (`src/backend/capability/pinned/`) fit the registry and the
//! backend releases `scripts/setup.sh` installs; a table that no longer fits would silently
//! fall back to probing this machine, and corpora would decode differently from machine to
//! machine. Re-pin with `DLCFUZZ_BLESS=1 cargo test --release --test pinned_capabilities`.

use dlcfuzz::backend::by_name;
use dlcfuzz::backend::capability::{pinned, registry_fingerprint, Capabilities};

#[test]
fn pinned_tables_fit_the_registry_and_the_installed_releases() {
    let bless = std::env::var("DLCFUZZ_BLESS").as_deref() == Ok("1");
    for name in pinned::backends() {
        let backend =
            by_name(name).unwrap_or_else(|e| panic!("{e} (run scripts/setup.sh cargo test)"));
        if bless {
            let caps = Capabilities::probe(backend.as_ref());
            let text = serde_json::to_string_pretty(&caps).expect("serializable") + "\n";
            std::fs::write(pinned::path(name), text).expect("the pinned folder is writable");
            continue;
        }
        let caps = pinned::table(name).expect("listed");
        assert_eq!(
            caps.registry_fingerprint,
            registry_fingerprint(),
            "{name}: the pinned table predates the registry; re-pin (DLCFUZZ_BLESS=1)"
        );
        assert_eq!(
            caps.backend,
            backend.version(),
            "{name}: the pinned table is of another release; re-pin (DLCFUZZ_BLESS=1)"
        );
    }
}
