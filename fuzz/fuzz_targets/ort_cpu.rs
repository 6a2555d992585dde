//! `cargo fuzz run ort_cpu`: fuzzer bytes → valid graph → ONNX → ONNX Runtime CPU at every
//! optimization level; a crash or inconsistency panics so libFuzzer saves the input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::ort_cpu(data));
});
