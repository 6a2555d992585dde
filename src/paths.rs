//! Where dlcfuzz finds its project-local dependencies and caches.

use std::path::PathBuf;

/// The folder `scripts/setup.sh` installs Python packages into (`.deps/py`), overridable
/// with `DLCFUZZ_DEPS_DIR`.
pub fn deps_dir() -> PathBuf {
    std::env::var_os("DLCFUZZ_DEPS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("DLCFUZZ_DEPS_DIR")))
}

/// The ONNX Runtime shared library: `ORT_DYLIB_PATH` if set, else the pip wheel in
/// [`deps_dir`].
pub fn ort_dylib() -> PathBuf {
    std::env::var_os("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| deps_dir().join("onnxruntime/capi/libonnxruntime.so.1.31.1"))
}

/// Cache folder (capability tables): `DLCFUZZ_CACHE_DIR`, else `.deps/cache` beside the
/// Python packages.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("DLCFUZZ_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            deps_dir()
                .parent()
                .map(|p| p.join("cache"))
                .unwrap_or_else(|| PathBuf::from(".dlcfuzz-cache"))
        })
}

/// The `python3` interpreter used for checks, with [`deps_dir`] on its `PYTHONPATH`.
pub fn python() -> std::process::Command {
    let mut cmd = std::process::Command::new(
        std::env::var_os("DLCFUZZ_PYTHON").unwrap_or_else(|| "python3".into()),
    );
    cmd.env("PYTHONPATH", deps_dir());
    cmd
}
