//! `cargo fuzz run tract_load -- -dict=../dicts/onnx.dict`: the bytes as an untrusted ONNX
//! file for tract; load errors are fine, panics and sanitizer reports are findings.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = dlcfuzz::targets::tract_load(data);
});
