//! `cargo fuzz run tvm_llvm_patterns`: the `tvm_llvm_patterns` row of `dlcfuzz::targets::TARGETS`
//! (`dlcfuzz targets` describes it); a finding panics with its signature so libFuzzer saves the
//! input.
#![no_main]

dlcfuzz::fuzz_target_glue!("tvm_llvm_patterns");
