//! `cargo fuzz run ort_load -- -dict=../dicts/onnx.dict`: the bytes as an untrusted ONNX
//! file for ONNX Runtime; load errors are fine, crashes and sanitizer reports are findings.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = dlcfuzz::targets::ort_load(data);
});
