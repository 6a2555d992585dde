//! `cargo fuzz run tvm_llvm`: a generated model through TVM Relax (`from_onnx`, `tvm.compile`
//! for `llvm`, the Relax VM), plain against the libtorch reference, and after a pass sequence
//! decoded from the input's head against the plain build.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::tvm_llvm(data));
});
