//! `cargo fuzz run torch_compile_openvino`: the `torch_compile_openvino` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("torch_compile_openvino");
