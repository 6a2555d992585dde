//! `cargo fuzz run torch_onnx_export`: the `torch_onnx_export` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("torch_onnx_export");
