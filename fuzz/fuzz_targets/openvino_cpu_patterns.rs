//! `cargo fuzz run openvino_cpu_patterns`: the `openvino_cpu_patterns` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("openvino_cpu_patterns");
