//! `cargo fuzz run torch_compile_cuda`: `torch_compile_cpu` on CUDA device 0 (Inductor's
//! Triton backend; GPU machines only: setup fails, naming the missing device, elsewhere).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::torch_compile_cuda(data));
});
