//! `cargo fuzz run torch_compile_cpu`: TorchProbe programs as plain Python (closures,
//! hoisting, writes through views, data-dependent `if`, loops, comprehensions) through
//! `torch.compile(backend="inductor")` on the CPU in the Python host; compiled must agree with
//! eager, on a batch of one and, after a recompilation, of two.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    dlcfuzz::targets::assert_no_finding(dlcfuzz::targets::torch_compile_cpu(data));
});
