//! Coverage feedback from compilers libFuzzer cannot see into: the optimizations a binary
//! (uninstrumented) compiler reports, and the Python lines a Python-hosted compiler runs.
//!
//! ONNX Runtime ships as a prebuilt library, so libFuzzer sees no coverage inside it. What it
//! does report is which graph transformers changed each model ([`crate::backend::Backend::run_observed`]).
//! This module turns that into extra coverage: one counter per transformer and one per
//! unordered pair of transformers that fired in the same test, hashed into an array that
//! lives in libFuzzer's `__libfuzzer_extra_counters` section when built by `cargo fuzz`
//! (`cfg(fuzzing)`). libFuzzer reads that section after every run as coverage features beside
//! the compiler's inline 8-bit counters, and clears it before the next run, so a test that
//! fires a new transformer (or a new pair) counts as new coverage and enters the corpus.
//!
//! Why not the compiler's own `__sancov_cntrs` section: libFuzzer requires the PC table
//! (`__sancov_pcs`) to have exactly one entry per counter in it, and aborts at start-up with
//! "The size of coverage PC tables does not match the number of instrumented PCs" when extra
//! counters are placed there (tried: 55,150 counters vs 51,054 PCs). The extra-counters
//! section is libFuzzer's interface for exactly this kind of user-defined feature.
//!
//! `DLCFUZZ_TRANSFORMER_FEEDBACK=0` turns the counters off (the names are still tracked, for
//! measuring the feedback's effect). `DLCFUZZ_FIRED_LOG=FILE` appends each name to FILE the
//! first time a process sees it (libFuzzer's fork mode discards the children's stderr).
//!
//! The Python-hosted compilers (Dynamo, AOT Autograd and Inductor; TVM Relax) are mostly
//! Python, which no sanitizer instruments: their hosts return the lines each test ran
//! ([`crate::backend::python::coverage`]), and a second extra-counter array of
//! [`LINE_COUNTERS`] holds one counter per line id (modulo its size). A line is a set
//! counter, not a count, so two lines sharing a slot never make up a hit-count feature.
//! Pairs are kept for the few transformer names only: tens of thousands of lines would make
//! their pairs quadratic. `DLCFUZZ_PY_COVERAGE=track` (or `0`) leaves these counters alone.
//!
//! A third array holds the oracle-distance signal: one counter per near-miss feature
//! ([`crate::oracle::near_miss`]), set when a passing test comes nearer to a mismatch at an
//! output site than libFuzzer has seen (`DLCFUZZ_NEAR_MISS=0` turns it off).

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// Number of extra counters.
pub const COUNTERS: usize = 4096;

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU8 = AtomicU8::new(0);

/// The extra counters. Under `cargo fuzz` they sit beside the compiler's own counters.
#[cfg_attr(fuzzing, link_section = "__libfuzzer_extra_counters")]
#[used]
static TRANSFORMER_COUNTERS: [AtomicU8; COUNTERS] = [ZERO; COUNTERS];

/// Number of Python-line counters.
pub const LINE_COUNTERS: usize = 1 << 16;

/// One counter per Python line id modulo [`LINE_COUNTERS`], in the same section (libFuzzer
/// reads the section whole).
#[cfg_attr(fuzzing, link_section = "__libfuzzer_extra_counters")]
#[used]
static PYTHON_LINE_COUNTERS: [AtomicU8; LINE_COUNTERS] = [ZERO; LINE_COUNTERS];

/// One counter per near-miss feature ([`observe_near_miss`]) modulo [`COUNTERS`], in the
/// same section.
#[cfg_attr(fuzzing, link_section = "__libfuzzer_extra_counters")]
#[used]
static NEAR_MISS_COUNTERS: [AtomicU8; COUNTERS] = [ZERO; COUNTERS];

fn slot(key: &impl Hash) -> usize {
    // SipHash with fixed keys: the mapping is stable across runs and processes.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() % COUNTERS as u64) as usize
}

/// The counter slots a test that fired `fired` covers: one per name, one per unordered pair.
pub fn slots(fired: &[String]) -> BTreeSet<usize> {
    let names: BTreeSet<&str> = fired.iter().map(String::as_str).collect();
    let mut out: BTreeSet<usize> = names.iter().map(|n| slot(&("one", *n))).collect();
    for (i, a) in names.iter().enumerate() {
        for b in names.iter().skip(i + 1) {
            out.insert(slot(&("pair", *a, *b)));
        }
    }
    out
}

/// Whether the counters are fed (`DLCFUZZ_TRANSFORMER_FEEDBACK` is not `0`).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("DLCFUZZ_TRANSFORMER_FEEDBACK").as_deref() != Ok("0"))
}

/// Records one test's fired transformers: bumps their counters when feedback is enabled, and
/// returns the names never seen before in this process (the fuzz targets print them, which is
/// how the feedback's effect is measured).
pub fn observe(fired: &[String]) -> Vec<String> {
    if enabled() {
        for s in slots(fired) {
            let c = &TRANSFORMER_COUNTERS[s];
            c.store(
                c.load(Ordering::Relaxed).saturating_add(1),
                Ordering::Relaxed,
            );
        }
    }
    static SEEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let new: Vec<String> = fired
        .iter()
        .filter(|n| seen.insert((*n).clone()))
        .cloned()
        .collect();
    if let (false, Some(path)) = (new.is_empty(), std::env::var_os("DLCFUZZ_FIRED_LOG")) {
        append_lines(std::path::Path::new(&path), &new);
    }
    new
}

/// The counter slot of Python line `id` ([`crate::backend::python::coverage::line_id`]).
pub fn line_slot(id: u32) -> usize {
    id as usize % LINE_COUNTERS
}

/// Whether covered Python lines are fed to the counters
/// ([`crate::backend::python::coverage::Mode::feeds`]).
pub fn lines_fed() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| crate::backend::python::coverage::Mode::current().feeds())
}

/// Records one test's covered Python lines ([`crate::targets::TargetRun::coverage`]): sets
/// the counter of each, when they are fed.
pub fn observe_lines(ids: &[u32]) {
    if lines_fed() {
        for id in ids {
            PYTHON_LINE_COUNTERS[line_slot(*id)].store(1, Ordering::Relaxed);
        }
    }
}

/// Whether near misses are fed back ([`crate::oracle::near_miss`]; `DLCFUZZ_NEAR_MISS` is not
/// `0`): a test that comes nearer to a mismatch at some output site than any before it
/// enters the corpus (`dlcfuzz fuzz`) or sets a new extra counter (libFuzzer).
pub fn near_misses_fed() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("DLCFUZZ_NEAR_MISS").as_deref() != Ok("0"))
}

/// Records one test's near miss: sets the counter of its feature, when near misses are fed.
pub fn observe_near_miss(near: Option<&crate::oracle::near_miss::NearMiss>) {
    let feature = near.and_then(crate::oracle::near_miss::NearMiss::feature);
    if let (Some(feature), true) = (feature, near_misses_fed()) {
        NEAR_MISS_COUNTERS[slot(&("near", feature))].store(1, Ordering::Relaxed);
    }
}

/// Appends `lines` to `path` in one write (best effort: a diagnostics log must not stop a
/// fuzz run).
fn append_lines(path: &std::path::Path, lines: &[String]) {
    use std::io::Write;
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

/// The current value of counter `slot` (for tests and diagnostics).
pub fn counter(slot: usize) -> u8 {
    TRANSFORMER_COUNTERS[slot].load(Ordering::Relaxed)
}

/// The current value of Python-line counter `slot` (for tests and diagnostics).
pub fn line_counter(slot: usize) -> u8 {
    PYTHON_LINE_COUNTERS[slot].load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_and_pairs_get_distinct_stable_slots() {
        let a = slots(&names(&["ConstantFolding"]));
        let ab = slots(&names(&["ConstantFolding", "ReshapeFusion"]));
        assert_eq!(a.len(), 1);
        assert_eq!(ab.len(), 3, "two names and their pair");
        assert!(a.is_subset(&ab));
        assert_eq!(ab, slots(&names(&["ReshapeFusion", "ConstantFolding"])));
        assert!(slots(&[]).is_empty());
    }

    #[test]
    fn observing_bumps_counters_and_reports_new_names_once() {
        let fired = names(&["UnitTestTransformerA", "UnitTestTransformerB"]);
        let before: Vec<u8> = slots(&fired).into_iter().map(counter).collect();
        assert_eq!(observe(&fired), fired);
        assert!(observe(&fired).is_empty());
        let after: Vec<u8> = slots(&fired).into_iter().map(counter).collect();
        if enabled() {
            assert!(after.iter().zip(&before).all(|(a, b)| a > b));
        } else {
            assert_eq!(after, before);
        }
    }

    #[test]
    fn python_lines_set_their_slots_without_counting_collisions() {
        // Two ids sharing a slot, and one of its own; slots no other test sets.
        let base = 0x7654_0000u32 + 0x1234;
        let ids = [base, base + LINE_COUNTERS as u32, base + 1];
        assert_eq!(line_slot(ids[0]), line_slot(ids[1]));
        assert_ne!(line_slot(ids[0]), line_slot(ids[2]));
        let slots = [line_slot(ids[0]), line_slot(ids[2])];
        assert!(slots.iter().all(|s| line_counter(*s) == 0));
        observe_lines(&ids);
        observe_lines(&ids);
        let want = u8::from(lines_fed());
        assert!(slots.iter().all(|s| line_counter(*s) == want), "{slots:?}");
    }
}
