//! Build script: compiles the vendored `proto/onnx.proto` with prost-build + protox (no
//! protoc needed), and points the binaries at the project-local libz3, libtorch and ONNX Runtime.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    println!("cargo:rerun-if-changed=build.rs");
    let fds = protox::compile(["onnx.proto"], ["proto"]).expect("vendored onnx.proto compiles");
    prost_build::Config::new()
        .compile_fds(fds)
        .expect("prost code generation for onnx.proto");

    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let deps = root.join(".deps/py");
    // libz3 is linked by z3-sys from Z3_LIBRARY_PATH_OVERRIDE; the rpath lets binaries and
    // tests find it at run time without LD_LIBRARY_PATH.
    let z3_lib = std::env::var("Z3_LIBRARY_PATH_OVERRIDE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| deps.join("z3/lib"));
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", z3_lib.display());
    println!("cargo:rerun-if-env-changed=Z3_LIBRARY_PATH_OVERRIDE");
    // libtorch (tch's torch-sys links it from LIBTORCH, set in .cargo/config.toml): the same
    // rpath treatment, so the reference and its tests run without LD_LIBRARY_PATH.
    let torch_lib = std::env::var("LIBTORCH")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".deps/torch/torch"))
        .join("lib");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", torch_lib.display());
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    // The linked libtorch's version, for `reference::version()` (pip installs record it in
    // torch/version.py).
    let torch_version = torch_lib.parent().map(|d| d.join("version.py"));
    if let Some(v) = torch_version
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("__version__ = ")
                    .map(|v| v.trim_matches(['\'', '"']).to_string())
            })
        })
    {
        println!("cargo:rustc-env=DLCFUZZ_LIBTORCH_VERSION={v}");
    }
    // Where scripts/setup.sh installs Python packages; the default for ONNX Runtime's dylib.
    println!("cargo:rustc-env=DLCFUZZ_DEPS_DIR={}", deps.display());
}
