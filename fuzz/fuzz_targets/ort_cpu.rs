//! `cargo fuzz run ort_cpu`: fuzzer bytes → valid graph → ONNX → ONNX Runtime CPU at every
//! optimization level; a crash or inconsistency panics so libFuzzer saves the input. The
//! graph transformers that changed the model feed libFuzzer as extra coverage counters
//! (`dlcfuzz::feedback`); each one seen for the first time is printed.
#![no_main]

use dlcfuzz::campaign::harness::Harness;
use dlcfuzz::gen::Limits;
use dlcfuzz::oracle::Verdict;
use std::sync::OnceLock;

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        Harness::ort_cpu(Limits::default()).unwrap_or_else(|e| panic!("ort_cpu setup: {e}"))
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let run = harness().test(data);
    for name in dlcfuzz::feedback::observe(&run.fired) {
        eprintln!("dlcfuzz: transformer fired: {name}");
    }
    if let Verdict::Found(f) = run.verdict {
        panic!("{}\n{}", f.signature, f.detail);
    }
});
