//! `cargo fuzz run tvm_cuda`: `tvm_llvm` built for CUDA device 0 (GPU machines only: setup
//! fails, naming the missing device, elsewhere).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::tvm_cuda(data));
});
