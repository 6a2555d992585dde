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

use std::sync::Mutex;

/// Counter arrays, as (address, length): the ones instrumented modules registered
/// ([`REGISTERED`]), or a test's own.
struct Regions(Mutex<Vec<(usize, usize)>>);

/// The counter arrays of this process's instrumented modules.
static REGISTERED: Regions = Regions(Mutex::new(Vec::new()));

impl Regions {
    /// Keeps the array `[start, stop)` once (every module of one linked section registers
    /// the same bounds).
    #[cfg_attr(not(feature = "sancov"), allow(dead_code))]
    fn register(&self, start: *mut u8, stop: *mut u8) {
        let region = (
            start as usize,
            (stop as usize).saturating_sub(start as usize),
        );
        let mut regions = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if region.1 > 0 && !regions.contains(&region) {
            regions.push(region);
        }
    }

    /// Runs `f` on every counter array.
    fn each(&self, mut f: impl FnMut(&mut [u8])) {
        let regions = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for &(start, len) in regions.iter() {
            // SAFETY: registered bounds are those of a static array of counters that lives
            // as long as the process (a section of instrumented code, or a test's static);
            // the counters are plain bytes, and tests run one at a time per process.
            f(unsafe { std::slice::from_raw_parts_mut(start as *mut u8, len) });
        }
    }

    fn counters(&self) -> usize {
        let mut total = 0;
        self.each(|c| total += c.len());
        total
    }

    fn reset(&self) {
        self.each(|c| c.fill(0));
    }

    fn edges_hit(&self) -> Vec<u32> {
        let (mut hit, mut base) = (Vec::new(), 0);
        self.each(|c| {
            hit.extend(
                c.iter()
                    .enumerate()
                    .filter(|(_, n)| **n != 0)
                    .map(|(k, _)| edge_id(base + k)),
            );
            base += c.len();
        });
        hit.sort_unstable();
        hit
    }
}

/// SanitizerCoverage's registration callback: one call per instrumented module at start-up.
///
/// # Safety
/// Called by instrumented code's constructors with the bounds of its counter section.
#[cfg(feature = "sancov")]
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, stop: *mut u8) {
    REGISTERED.register(start, stop);
}

/// Number of edge counters linked in (0 without instrumented code).
pub fn counters() -> usize {
    REGISTERED.counters()
}

/// Clears every edge counter (before a test).
pub fn reset() {
    REGISTERED.reset();
}

/// The ids of the edges run since the last [`reset`], sorted: [`edge_id`] of each counter's
/// position across the registered arrays.
pub fn edges_hit() -> Vec<u32> {
    REGISTERED.edges_hit()
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

    #[test]
    fn a_registered_counter_that_ran_is_an_edge_hit_until_reset() {
        static mut MODULE_A: [u8; 8] = [0; 8];
        static mut MODULE_B: [u8; 4] = [0; 4];
        let regions = Regions(Mutex::new(Vec::new()));
        // SAFETY: the arrays are static and only this test touches them.
        unsafe {
            let a = std::ptr::addr_of_mut!(MODULE_A) as *mut u8;
            let b = std::ptr::addr_of_mut!(MODULE_B) as *mut u8;
            regions.register(a, a.add(8));
            regions.register(a, a.add(8));
            regions.register(b, b.add(4));
            assert_eq!(
                regions.counters(),
                12,
                "a region registered twice counts once"
            );
            regions.reset();
            assert!(regions.edges_hit().is_empty());
            *a.add(3) = 1;
            *b.add(1) = 200;
        }
        // The second array's edges are numbered after the first's.
        let mut expected = vec![edge_id(3), edge_id(8 + 1)];
        expected.sort_unstable();
        assert_eq!(regions.edges_hit(), expected);
        regions.reset();
        assert!(regions.edges_hit().is_empty());
    }

    #[cfg(not(feature = "sancov"))]
    #[test]
    fn without_the_feature_nothing_registers() {
        assert_eq!(counters(), 0);
        assert!(edges_hit().is_empty());
    }
}
