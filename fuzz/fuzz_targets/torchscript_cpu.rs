//! `cargo fuzz run torchscript_cpu`: the `torchscript_cpu` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("torchscript_cpu");
