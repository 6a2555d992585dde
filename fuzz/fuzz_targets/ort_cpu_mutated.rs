//! `cargo fuzz run ort_cpu_mutated`: HirFuzz on ONNX Runtime CPU. A mutation header picks
//! the constraint level (level 0 breaks one constraint: only internal assertions and crashes
//! count) and the function, If and Loop rewrites the generated model goes through before it
//! is compared with the original at every optimization level.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::ort_cpu_mutated(data));
});
