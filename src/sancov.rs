//! Edge coverage of the compilers linked into this binary, read in-process: what the
//! `sancov` feature gives a build whose compiler crates were compiled with LLVM's
//! SanitizerCoverage inline 8-bit counters (`scripts/sancov-build`, which passes the flags to
//! tract's crates only, through a `RUSTC_WRAPPER`).
//!
//! Every instrumented module registers its counters at start-up by calling
//! `__sanitizer_cov_8bit_counters_init(start, stop)`, the callback libFuzzer implements under
//! `cargo fuzz`. Outside libFuzzer this module implements it (so the feature must stay off in
//! the fuzz binaries, which link libFuzzer's). A test clears the counters ([`reset`]) and
//! reads the edges it ran ([`edges_hit`]), which the executor adds to the test's compiler
//! coverage beside Python lines: a campaign then counts tract's own edges, and feeds new ones
//! back, as libFuzzer would, without ASan and without libFuzzer's process model.
//!
//! Without the feature, or in a build whose compiler is not instrumented, there are no
//! counters: [`edges_hit`] is empty and [`counters`] is 0.

#[cfg(feature = "sancov")]
mod registered {
    use std::sync::Mutex;

    /// The counter arrays instrumented modules registered, as (address, length).
    pub static REGIONS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    /// SanitizerCoverage's registration callback: one call per instrumented module at
    /// start-up, every call of one linked section alike (modules share the section), so a
    /// region is kept once.
    ///
    /// # Safety
    /// Called by instrumented code's constructors with the bounds of a counter section.
    #[no_mangle]
    pub unsafe extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, stop: *mut u8) {
        let region = (
            start as usize,
            (stop as usize).saturating_sub(start as usize),
        );
        let mut regions = REGIONS.lock().unwrap_or_else(|p| p.into_inner());
        if region.1 > 0 && !regions.contains(&region) {
            regions.push(region);
        }
    }

    /// Runs `f` on every counter array.
    pub fn each(mut f: impl FnMut(&mut [u8])) {
        let regions = REGIONS.lock().unwrap_or_else(|p| p.into_inner());
        for &(start, len) in regions.iter() {
            // SAFETY: the instrumented modules registered these bounds of a static section
            // of counters that lives as long as the process; the counters are plain bytes
            // the instrumented code bumps, and tests run one at a time per process.
            f(unsafe { std::slice::from_raw_parts_mut(start as *mut u8, len) });
        }
    }
}

/// Number of edge counters linked in (0 without instrumented code).
pub fn counters() -> usize {
    let mut total = 0;
    #[cfg(feature = "sancov")]
    registered::each(|c| total += c.len());
    total
}

/// Clears every edge counter (before a test).
pub fn reset() {
    #[cfg(feature = "sancov")]
    registered::each(|c| c.fill(0));
}

/// The ids of the edges run since the last [`reset`], sorted: [`edge_id`] of each counter's
/// position across the registered arrays.
pub fn edges_hit() -> Vec<u32> {
    #[allow(unused_mut)]
    let mut hit = Vec::new();
    #[cfg(feature = "sancov")]
    {
        let mut base = 0;
        registered::each(|c| {
            hit.extend(
                c.iter()
                    .enumerate()
                    .filter(|(_, n)| **n != 0)
                    .map(|(k, _)| edge_id(base + k)),
            );
            base += c.len();
        });
        hit.sort_unstable();
    }
    hit
}

/// The coverage id of edge counter `index`: a hash in the id space of Python lines
/// ([`crate::backend::python::coverage::line_id`]), so that both count in one set.
pub fn edge_id(index: usize) -> u32 {
    crate::gen::menu::op_key("sancov-edge", index as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_ids_are_distinct_and_stable() {
        let ids: std::collections::BTreeSet<u32> = (0..100_000).map(edge_id).collect();
        assert!(ids.len() >= 99_990, "{} distinct", ids.len());
        assert_eq!(edge_id(7), edge_id(7));
    }

    #[cfg(not(feature = "sancov"))]
    #[test]
    fn without_the_feature_there_are_no_counters() {
        reset();
        assert_eq!(counters(), 0);
        assert!(edges_hit().is_empty());
    }

    #[cfg(feature = "sancov")]
    #[test]
    fn a_registered_counter_that_ran_is_an_edge_hit_until_reset() {
        static mut FAKE_MODULE: [u8; 8] = [0; 8];
        let base = counters();
        // SAFETY: the array is static and only this test touches it.
        unsafe {
            let start = std::ptr::addr_of_mut!(FAKE_MODULE) as *mut u8;
            registered::__sanitizer_cov_8bit_counters_init(start, start.add(8));
            registered::__sanitizer_cov_8bit_counters_init(start, start.add(8));
            assert_eq!(
                counters(),
                base + 8,
                "a region registered twice counts once"
            );
            reset();
            *start.add(3) = 1;
        }
        assert!(edges_hit().contains(&edge_id(base + 3)));
        reset();
        assert!(!edges_hit().contains(&edge_id(base + 3)));
    }
}
