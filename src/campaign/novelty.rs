//! Novelty-directed generation: where a guided campaign would draw a fresh input, it draws
//! [`CANDIDATES`] and keeps the one whose content (read from its bytes without running it,
//! [`crate::targets::TargetInfo::preview`]) the campaign's feedback values most.
//!
//! Each key of an input's content (an operator row and its element type, the compile mode)
//! has a value `(1 + paid) / (1 + tested)`: `tested` counts the tests whose content held the
//! key, `paid` those among them that reached new compiler coverage (joined the corpus). An
//! untested key is worth 1, a key that keeps paying stays near its rate of paying, one that
//! stopped paying decays; a candidate's score is the sum over its distinct keys. At a few
//! programs a second (torch.compile) every compile counts, and random draws repeat the
//! common (row, type) pairs while leaving others untried for minutes.
//!
//! The choice is a function of the campaign's seed, the input index and the saved
//! [`NoveltyState`], so `--resume` continues the same stream, and the input kept is plain
//! bytes: it replays like any other. `DLCFUZZ_NOVELTY=0` draws one fresh input as before
//! ([`fed`]).

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Fresh inputs drawn per kept one.
pub const CANDIDATES: usize = 16;

/// Whether fresh inputs are chosen by novelty (`DLCFUZZ_NOVELTY` is not `0`).
pub fn fed() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("DLCFUZZ_NOVELTY").as_deref() != Ok("0"))
}

/// What the campaign has learnt of each content key (part of `state.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NoveltyState {
    /// Tests whose content held each key.
    pub tested: BTreeMap<String, u64>,
    /// Tests among those that reached new coverage.
    pub paid: BTreeMap<String, u64>,
}

impl NoveltyState {
    /// The value of an input whose content is `keys` (repeats count once).
    pub fn score(&self, keys: &[String]) -> f64 {
        let distinct: BTreeSet<&String> = keys.iter().collect();
        distinct
            .into_iter()
            .map(|k| {
                let count = |m: &BTreeMap<String, u64>| m.get(k).copied().unwrap_or(0) as f64;
                (1.0 + count(&self.paid)) / (1.0 + count(&self.tested))
            })
            .sum()
    }

    /// Books one test of content `keys`; `paid`: it reached new coverage.
    pub fn record(&mut self, keys: &[String], paid: bool) {
        let distinct: BTreeSet<&String> = keys.iter().collect();
        for k in distinct {
            *self.tested.entry(k.clone()).or_default() += 1;
            if paid {
                *self.paid.entry(k.clone()).or_default() += 1;
            }
        }
    }

    /// Of [`CANDIDATES`] fresh inputs of `len` random bytes from `rng`, the one whose
    /// content (`preview`) scores highest (the first of equals).
    pub fn choose(
        &self,
        len: usize,
        rng: &mut impl Rng,
        preview: impl Fn(&[u8]) -> Vec<String>,
    ) -> Vec<u8> {
        let mut best: Option<(f64, Vec<u8>)> = None;
        for _ in 0..CANDIDATES {
            let mut bytes = vec![0u8; len];
            rng.fill(bytes.as_mut_slice());
            let score = self.score(&preview(&bytes));
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, bytes));
            }
        }
        best.map(|(_, b)| b).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn keys(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn untried_keys_outrank_tried_ones_and_paying_keys_outrank_spent_ones() {
        let mut state = NoveltyState::default();
        for _ in 0..9 {
            state.record(&keys(&["relu:f32"]), false);
            state.record(&keys(&["mm:f16"]), true);
        }
        assert_eq!(state.score(&keys(&["new:f32"])), 1.0);
        assert!((state.score(&keys(&["relu:f32"])) - 0.1).abs() < 1e-9);
        assert!((state.score(&keys(&["mm:f16"])) - 1.0).abs() < 1e-9);
        assert_eq!(
            state.score(&keys(&["new:f32", "new:f32"])),
            1.0,
            "a repeated key counts once"
        );
    }

    #[test]
    fn the_candidate_kept_is_the_one_with_the_most_novel_content() {
        let mut state = NoveltyState::default();
        // Content: the first byte's parity; odd inputs are what the campaign has seen a lot.
        let preview = |b: &[u8]| keys(&[if b[0] % 2 == 1 { "seen" } else { "unseen" }]);
        for _ in 0..50 {
            state.record(&keys(&["seen"]), false);
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let kept: Vec<Vec<u8>> = (0..20)
            .map(|_| state.choose(8, &mut rng, preview))
            .collect();
        assert!(kept.iter().all(|b| b.len() == 8 && b[0] % 2 == 0));
        let mut again = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        assert_eq!(
            state.choose(8, &mut again, preview),
            kept[0],
            "deterministic"
        );
    }
}
