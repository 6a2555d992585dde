//! `cargo fuzz run ort_cpu_patterns`: like `ort_cpu`, with ONNX Runtime optimizer patterns
//! (OATest) spliced into each seed graph; the header of the input picks the patterns and
//! where they go. `DLCFUZZ_PATTERNS=<library.json>` uses an extracted library instead of the
//! built-in one.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::ort_cpu_patterns(data));
});
