//! Where dlcfuzz finds its project-local dependencies and caches.

use std::path::PathBuf;

/// The folder `scripts/setup.sh` installs Python packages into (`.deps/py`), overridable
/// with `DLCFUZZ_DEPS_DIR`.
pub fn deps_dir() -> PathBuf {
    std::env::var_os("DLCFUZZ_DEPS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("DLCFUZZ_DEPS_DIR")))
}

/// The checked-in seeds of target `name` (`corpus/<name>/` of this checkout), or the folder
/// `DLCFUZZ_SEEDS_DIR` names.
pub fn seeds(name: &str) -> PathBuf {
    std::env::var_os("DLCFUZZ_SEEDS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"))
        .join(name)
}

/// The newest ONNX Runtime release, which `scripts/setup.sh` installs into [`deps_dir`] and
/// the ORT targets test unless told otherwise.
pub const ORT_NEWEST: &str = "1.32.0";

/// The ONNX Runtime release to test: `DLCFUZZ_ORT_VERSION` (installed by `scripts/setup.sh
/// --ort VERSION` into `.deps/ort/VERSION`), else [`ORT_NEWEST`].
pub fn ort_version() -> String {
    std::env::var("DLCFUZZ_ORT_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| ORT_NEWEST.to_string())
}

/// The ONNX Runtime shared library: `ORT_DYLIB_PATH` if set (any build, by path); else the
/// wheel of [`ort_version`]: the newest in [`deps_dir`], another in `.deps/ort/VERSION`;
/// else `lib/onnxruntime/` beside the executable (where `oss-fuzz/build.sh` puts it in
/// `$OUT`).
pub fn ort_dylib() -> PathBuf {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        return PathBuf::from(p);
    }
    let version = ort_version();
    let file = format!("libonnxruntime.so.{version}");
    let wheel = if version == ORT_NEWEST {
        deps_dir()
    } else {
        ort_wheel_dir(&version)
    }
    .join("onnxruntime/capi")
    .join(&file);
    let installed = wheel.exists();
    local_else_out(wheel, installed, &format!("lib/onnxruntime/{file}"))
}

/// Where `scripts/setup.sh --ort VERSION` installs an ONNX Runtime release other than the
/// newest: `.deps/ort/VERSION` beside [`deps_dir`].
pub fn ort_wheel_dir(version: &str) -> PathBuf {
    let deps = deps_dir();
    deps.parent()
        .map(|p| p.join("ort").join(version))
        .unwrap_or_else(|| PathBuf::from(".deps/ort").join(version))
}

/// Where `scripts/setup.sh --openvino` installs the OpenVINO wheel (its C library and the
/// Python package a finding's `repro.py` imports): `.deps/openvino` beside [`deps_dir`], else
/// (on a fuzzing cluster) `lib/openvino` beside the executable.
pub fn openvino_dir() -> PathBuf {
    let deps = deps_dir();
    let local = deps
        .parent()
        .map(|p| p.join("openvino"))
        .unwrap_or_else(|| PathBuf::from(".deps/openvino"));
    let installed = local.exists();
    local_else_out(local, installed, "lib/openvino")
}

/// Cache folder (capability tables): `DLCFUZZ_CACHE_DIR`, else `.deps/cache` beside the
/// Python packages, else (when there is no `.deps`, as on a fuzzing cluster) `lib/cache`
/// beside the executable, which `oss-fuzz/build.sh` fills.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DLCFUZZ_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    let deps = deps_dir();
    let local = deps
        .parent()
        .map(|p| p.join("cache"))
        .unwrap_or_else(|| PathBuf::from(".dlcfuzz-cache"));
    local_else_out(local, deps.exists(), "lib/cache")
}

/// The `python3` interpreter used for checks, with [`deps_dir`] on its `PYTHONPATH`.
pub fn python() -> std::process::Command {
    let mut cmd = std::process::Command::new(
        std::env::var_os("DLCFUZZ_PYTHON").unwrap_or_else(|| "python3".into()),
    );
    cmd.env("PYTHONPATH", deps_dir());
    cmd
}

/// The Python environment of the Python-hosted compilers (full `torch` and `apache-tvm`):
/// `DLCFUZZ_PYTHON_ENV`, else `.deps/python` beside [`deps_dir`], else (on a fuzzing cluster,
/// where there is no `.deps`) `lib/python` beside the executable, which `oss-fuzz/build.sh`
/// fills with that environment less Triton.
pub fn python_env() -> PathBuf {
    if let Some(dir) = std::env::var_os("DLCFUZZ_PYTHON_ENV") {
        return PathBuf::from(dir);
    }
    let local = deps_dir()
        .parent()
        .map(|p| p.join("python"))
        .unwrap_or_else(|| PathBuf::from(".deps/python"));
    let installed = local.exists();
    local_else_out(local, installed, "lib/python")
}

/// The interpreter that runs the Python-hosted compilers, with the environment it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interpreter {
    /// The program to start.
    pub program: PathBuf,
    /// Variables it needs set (a relocated interpreter: its home and its shared library).
    pub env: Vec<(String, PathBuf)>,
}

/// The interpreter of the Python-hosted compilers: `DLCFUZZ_PYTHON`; else, when the
/// environment is the one in `$OUT` ([`python_env`] is `lib/python` beside the executable),
/// the interpreter `oss-fuzz/build.sh` relocated to `lib/cpython` beside it (a fuzzing
/// cluster's runner image may have no Python, or another one); else `python3`.
pub fn python_interpreter() -> Interpreter {
    if let Some(program) = std::env::var_os("DLCFUZZ_PYTHON") {
        return Interpreter {
            program: program.into(),
            env: Vec::new(),
        };
    }
    let bundled = beside_exe("lib/cpython").filter(|home| {
        home.join("bin/python3").exists() && Some(python_env()) == beside_exe("lib/python")
    });
    match bundled {
        Some(home) => Interpreter {
            program: home.join("bin/python3"),
            env: vec![
                ("PYTHONHOME".into(), home.clone()),
                ("LD_LIBRARY_PATH".into(), home.join("lib")),
            ],
        },
        None => Interpreter {
            program: "python3".into(),
            env: Vec::new(),
        },
    }
}

/// `local` (a project-local install), unless it is not `installed` and `relative` exists
/// beside the executable: there `oss-fuzz/build.sh` puts the same thing in `$OUT`, for a
/// fuzzing cluster that has no `.deps`.
fn local_else_out(local: PathBuf, installed: bool, relative: &str) -> PathBuf {
    match beside_exe(relative) {
        Some(out) if !installed && out.exists() => out,
        _ => local,
    }
}

/// `relative` inside the folder of the running executable (`None` when it cannot be found).
fn beside_exe(relative: &str) -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(relative)))
}
