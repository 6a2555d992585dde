//! `cargo fuzz run ort_cpu`: fuzzer bytes → valid graph → ONNX → ONNX Runtime CPU at every
//! optimization level; a crash or inconsistency panics so libFuzzer saves the input. The
//! graph transformers that changed the model feed libFuzzer as extra coverage counters
//! (`dlcfuzz::feedback`); each one seen for the first time is printed.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::ort_cpu(data));
});
