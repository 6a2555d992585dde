//! Build script: compiles the vendored `proto/onnx.proto` with prost-build + protox (no
//! protoc needed), and points the binaries at the project-local libz3 and ONNX Runtime.

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
    // Where scripts/setup.sh installs Python packages; the default for ONNX Runtime's dylib.
    println!("cargo:rustc-env=DLCFUZZ_DEPS_DIR={}", deps.display());
}
