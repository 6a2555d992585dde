//! `cargo fuzz run tract`: fuzzer bytes → valid graph → ONNX → tract typed, decluttered and
//! optimized; a crash, a panic or an inconsistency aborts so libFuzzer saves the input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::tract(data));
});
