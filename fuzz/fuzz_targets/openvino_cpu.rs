//! `cargo fuzz run openvino_cpu`: the `openvino_cpu` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("openvino_cpu");
