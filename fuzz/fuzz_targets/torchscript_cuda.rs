//! `cargo fuzz run torchscript_cuda`: `torchscript_cpu` with the compiled program on CUDA
//! device 0 (GPU machines only: setup fails, naming the missing device, elsewhere).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::torchscript_cuda(data));
});
