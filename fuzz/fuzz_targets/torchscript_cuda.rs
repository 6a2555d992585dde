//! `cargo fuzz run torchscript_cuda`: the `torchscript_cuda` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("torchscript_cuda");
