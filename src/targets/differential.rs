//! The differential targets: one lazily built harness per target, one test per input.

use super::set_up as harness;
use crate::backend::tract::Tract;
use crate::campaign::harness::{Harness, TestRun};
use crate::gen::Limits;
use crate::mutate::patterns::Library;
use crate::oracle::Verdict;
use std::sync::OnceLock;

/// `ort_cpu`: a generated model through ONNX Runtime CPU at every optimization level. The
/// graph transformers that changed the model feed libFuzzer as extra coverage counters
/// ([`crate::feedback`]); each one seen for the first time is printed.
pub fn ort_cpu(data: &[u8]) -> Verdict {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    observed(harness(&HARNESS, "ort_cpu", || Harness::ort_cpu(Limits::default())).test(data))
}

/// The verdict of an ONNX Runtime run, after its fired transformers went to libFuzzer's extra
/// counters (each one seen for the first time is printed).
fn observed(run: TestRun) -> Verdict {
    for name in crate::feedback::observe(&run.fired) {
        eprintln!("dlcfuzz: transformer fired: {name}");
    }
    run.verdict
}

/// `ort_cpu_patterns`: like [`ort_cpu`], with optimizer patterns (OATest) spliced into each
/// seed graph: the built-in library, or the one in the file `DLCFUZZ_PATTERNS` names (written
/// by `dlcfuzz patterns extract`). The input starts with the splice header
/// ([`PatternRecipe`](crate::mutate::patterns::recipe::PatternRecipe)).
pub fn ort_cpu_patterns(data: &[u8]) -> Verdict {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    observed(
        harness(&HARNESS, "ort_cpu_patterns", || {
            let name = std::env::var_os("DLCFUZZ_PATTERNS")
                .map_or_else(|| "builtin".into(), |p| p.to_string_lossy().into_owned());
            Ok(Harness::ort_cpu(Limits::default())?.with_patterns(Library::named(&name)?))
        })
        .test(data),
    )
}

/// `ort_cpu_mutated`: HirFuzz on ONNX Runtime CPU. The input starts with a mutation header
/// ([`Mutations`](crate::mutate::levels::Mutations)): at constraint level 1 (40 % of level
/// bytes) the generated model goes through function, If and Loop rewrites and must agree
/// with the original at every level; at level 0 one constraint is broken as well and only an
/// internal assertion (or a crash) is a finding.
pub fn ort_cpu_mutated(data: &[u8]) -> Verdict {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    observed(
        harness(&HARNESS, "ort_cpu_mutated", || {
            Ok(Harness::ort_cpu(Limits::default())?.with_mutations())
        })
        .test(data),
    )
}

/// `tract`: a generated model through tract typed, decluttered and optimized. tract's panics
/// propagate (libFuzzer reports them with their stack); capabilities are probed with panics
/// caught.
pub fn tract(data: &[u8]) -> Verdict {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    harness(&HARNESS, "tract", || {
        Ok(Harness::tract(Limits::default())
            .with_backend(Box::new(Tract::new_propagating_panics())))
    })
    .test(data)
    .verdict
}

/// Panics with the signature and details of a finding, so libFuzzer saves the input.
pub fn assert_no_finding(verdict: Verdict) {
    if let Verdict::Found(f) = verdict {
        panic!("{}\n{}", f.signature, f.detail);
    }
}
