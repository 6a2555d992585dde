//! `cargo fuzz run ort_load`: the `ort_load` row of `dlcfuzz::targets::TARGETS` (`dlcfuzz targets`
//! describes it); a finding panics with its signature so libFuzzer saves the input.
#![no_main]

dlcfuzz::fuzz_target_glue!("ort_load");
