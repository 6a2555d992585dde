//! `cargo fuzz run torchscript_cpu`: TorchProbe on TorchScript. A program-mutation header
//! (operator resolution, mutate-then-recover, functionalization, EMI blocks) rewrites the
//! generated graph's SSA program; the TorchScript JIT (plain, then optimized with the CPU
//! fuser) must agree with libtorch eager.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::torchscript_cpu(data));
});
