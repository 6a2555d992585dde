//! Build script: compiles the vendored `proto/onnx.proto` with prost-build + protox (no
//! protoc needed), builds the TorchScript shim (`csrc/`, with `cc`) and its Rust bindings
//! (bindgen), and points the binaries at the project-local libz3, libtorch and ONNX Runtime.

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
    build_torchscript_shim(&torch_lib);
    // Where scripts/setup.sh installs Python packages; the default for ONNX Runtime's dylib.
    println!("cargo:rustc-env=DLCFUZZ_DEPS_DIR={}", deps.display());
}

/// Compiles `csrc/torchscript.cpp` against libtorch's headers (C++17, the C++11 ABI the pip
/// wheels use) and generates Rust bindings for `csrc/torchscript.h`.
fn build_torchscript_shim(torch_lib: &std::path::Path) {
    println!("cargo:rerun-if-changed=csrc/torchscript.cpp");
    println!("cargo:rerun-if-changed=csrc/torchscript.h");
    let include = torch_lib
        .parent()
        .expect("libtorch's lib folder has a parent")
        .join("include");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .include(&include)
        .include(include.join("torch/csrc/api/include"))
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-deprecated-declarations")
        .cargo_warnings(false)
        .file("csrc/torchscript.cpp")
        .compile("dlcfuzz_torchscript");
    println!("cargo:rustc-link-search=native={}", torch_lib.display());
    println!("cargo:rustc-link-lib=dylib=torch_cpu");
    println!("cargo:rustc-link-lib=dylib=c10");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindgen::Builder::default()
        .header("csrc/torchscript.h")
        .allowlist_function("dlc_.*")
        .generate()
        .expect("bindgen: generating the TorchScript shim bindings (needs libclang-dev)")
        .write_to_file(out.join("torchscript_shim.rs"))
        .expect("writing the shim bindings");
}
