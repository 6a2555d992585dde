//! Lets the fuzz targets find the project-local libz3 and libtorch at run time (cargo fuzz owns
//! RUSTFLAGS, so the rpath goes here): in `.deps/` when run from the checkout, and under
//! `lib/` beside the binary when `oss-fuzz/build.sh` copied them to `$OUT`.

fn main() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let z3_lib = std::env::var("Z3_LIBRARY_PATH_OVERRIDE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("../.deps/py/z3/lib"));
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", z3_lib.display());
    println!("cargo:rerun-if-env-changed=Z3_LIBRARY_PATH_OVERRIDE");
    let torch_lib = std::env::var("LIBTORCH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("../.deps/torch/torch"))
        .join("lib");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", torch_lib.display());
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    // Where oss-fuzz/build.sh puts the same libraries beside the binaries in $OUT.
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/lib/z3");
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/lib/torch/lib");
}
