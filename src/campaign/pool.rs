//! OATest's seed pool for pattern campaigns (high-order synthesis): inputs that pass go back
//! into the pool with the set of optimizations they fired, and the campaign favours what has
//! fired least.
//!
//! - A corpus parent is drawn with weight `Σ 1 / (1 + fired(t))` over the transformers `t`
//!   it fired (plus a floor, so that no entry starves): entries that reach rare passes are
//!   mutated more often.
//! - An input that passes and fires a transformer fired fewer than [`POOL_DEPTH`] times
//!   before joins the corpus even without a new feature.
//! - Half the inputs are aimed: one splice of the pattern header is pointed at a pattern of
//!   the transformer fired least so far (ties broken by the input's draw), until every
//!   transformer of the library has fired; a transformer aimed at [`GIVE_UP`] times without
//!   firing once is left alone (the session may not run it).
//!
//! Everything is a function of the campaign's seed, the input index and the saved
//! [`PoolState`], so `--resume` continues the same stream.

use crate::mutate::patterns::recipe::{HEADER_BYTES, MAX_SPLICES, SPLICE_BYTES};
use crate::mutate::patterns::Library;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Firings below which a transformer is still rare: an input firing it joins the pool.
pub const POOL_DEPTH: u64 = 4;
/// Inputs aimed at a transformer that never fired before it is left alone.
pub const GIVE_UP: u64 = 64;
/// Weight of a corpus entry that fired nothing rare.
const FLOOR: f64 = 0.05;

/// What the pool remembers across `--resume` (part of `state.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolState {
    /// Times each transformer fired.
    pub fired: BTreeMap<String, u64>,
    /// Inputs aimed at each transformer.
    pub aimed: BTreeMap<String, u64>,
    /// The transformers each corpus entry fired, by its file name.
    pub entries: BTreeMap<String, Vec<String>>,
}

/// The pattern library of a pattern campaign, indexed by the transformer each pattern shows.
#[derive(Clone, Debug)]
pub struct PassPool {
    /// Per transformer, the library indices of its patterns.
    patterns: BTreeMap<String, Vec<u16>>,
}

impl PassPool {
    /// The pool of `library` (patterns without a known transformer are not aimed at).
    pub fn new(library: &Library) -> PassPool {
        let mut patterns: BTreeMap<String, Vec<u16>> = BTreeMap::new();
        for (i, p) in library
            .patterns
            .iter()
            .enumerate()
            .take(usize::from(u16::MAX))
        {
            if let Some(t) = &p.transformer {
                patterns.entry(t.clone()).or_default().push(i as u16);
            }
        }
        PassPool { patterns }
    }

    /// The transformers of the library.
    pub fn transformers(&self) -> impl Iterator<Item = &String> {
        self.patterns.keys()
    }

    /// Books a test's fired transformers; returns whether the input should join the pool
    /// (it passed and fired something still rare).
    pub fn record(&self, state: &mut PoolState, fired: &[String], passed: bool) -> bool {
        let rare = fired
            .iter()
            .any(|t| state.fired.get(t).copied().unwrap_or(0) < POOL_DEPTH);
        for t in fired {
            *state.fired.entry(t.clone()).or_default() += 1;
        }
        passed && rare
    }

    /// The corpus entry to mutate among `names` (corpus file names, in corpus order), drawn
    /// by rarity of what each fired.
    pub fn parent(&self, state: &PoolState, names: &[String], rng: &mut impl Rng) -> usize {
        let weights: Vec<f64> = names
            .iter()
            .map(|n| {
                let fired = state.entries.get(n).map(Vec::as_slice).unwrap_or_default();
                FLOOR
                    + fired
                        .iter()
                        .map(|t| 1.0 / (1.0 + state.fired.get(t).copied().unwrap_or(0) as f64))
                        .sum::<f64>()
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let mut draw = rng.random_range(0.0..total.max(f64::MIN_POSITIVE));
        for (i, w) in weights.iter().enumerate() {
            if draw < *w {
                return i;
            }
            draw -= w;
        }
        names.len().saturating_sub(1)
    }

    /// The transformer to aim at: fired least, not given up on; `None` once every one has
    /// fired as often as the pool keeps ([`POOL_DEPTH`]).
    fn target(&self, state: &PoolState, rng: &mut impl Rng) -> Option<&String> {
        let count = |m: &BTreeMap<String, u64>, t: &String| m.get(t).copied().unwrap_or(0);
        let open: Vec<&String> = self
            .patterns
            .keys()
            .filter(|t| count(&state.fired, t) < POOL_DEPTH)
            .filter(|t| count(&state.fired, t) > 0 || count(&state.aimed, t) < GIVE_UP)
            .collect();
        let least = open.iter().map(|t| count(&state.fired, t)).min()?;
        let rarest: Vec<&String> = open
            .into_iter()
            .filter(|t| count(&state.fired, t) == least)
            .collect();
        Some(rarest[rng.random_range(0..rarest.len())])
    }

    /// Half the time, points one splice of the pattern header of `bytes` at a pattern of the
    /// transformer fired least; returns it.
    pub fn aim(
        &self,
        state: &mut PoolState,
        bytes: &mut [u8],
        rng: &mut impl Rng,
    ) -> Option<String> {
        if bytes.len() < HEADER_BYTES || !rng.random_bool(0.5) {
            return None;
        }
        let t = self.target(state, rng)?.clone();
        let candidates = &self.patterns[&t];
        let pattern = candidates[rng.random_range(0..candidates.len())];
        let splices = 1 + usize::from(bytes[0]) % MAX_SPLICES;
        let at = 1 + rng.random_range(0..splices) * (2 + SPLICE_BYTES);
        bytes[at..at + 2].copy_from_slice(&pattern.to_le_bytes());
        *state.aimed.entry(t.clone()).or_default() += 1;
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::patterns::builtin;
    use crate::mutate::patterns::recipe::PatternRecipe;
    use rand::SeedableRng;

    #[test]
    fn aimed_inputs_splice_a_pattern_of_the_rarest_transformer() {
        let library = builtin::library();
        let pool = PassPool::new(&library);
        let mut state = PoolState::default();
        for t in pool.transformers().cloned().collect::<Vec<_>>() {
            if t != "SkipLayerNormFusion" {
                state.fired.insert(t, 1);
            }
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut aimed = 0;
        for _ in 0..20 {
            let mut bytes = vec![0u8; HEADER_BYTES + 50];
            rng.fill(bytes.as_mut_slice());
            if let Some(t) = pool.aim(&mut state, &mut bytes, &mut rng) {
                assert_eq!(t, "SkipLayerNormFusion");
                let recipe = PatternRecipe::from_bytes(&bytes);
                assert!(recipe.splices.iter().any(|s| {
                    let p = &library.patterns[usize::from(s.pattern) % library.patterns.len()];
                    p.transformer.as_deref() == Some("SkipLayerNormFusion")
                }));
                aimed += 1;
            }
        }
        assert!(aimed > 3, "about half the inputs are aimed, got {aimed}");
        assert_eq!(state.aimed["SkipLayerNormFusion"], aimed);
    }

    #[test]
    fn a_transformer_that_never_fires_is_given_up_and_rare_firings_join_the_pool() {
        let library = builtin::library();
        let pool = PassPool::new(&library);
        let mut state = PoolState::default();
        for t in pool.transformers() {
            state.fired.insert(t.clone(), POOL_DEPTH);
        }
        state.fired.insert("GeluFusionL2".into(), 0);
        state.aimed.insert("GeluFusionL2".into(), GIVE_UP);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(pool.target(&state, &mut rng), None);
        assert!(pool.record(&mut state, &["GeluFusionL2".into()], true));
        assert!(!pool.record(&mut state, &["GeluFusionL2".into()], false));
        assert!(!pool.record(&mut state, &["Level1_RuleBasedTransformer".into()], true));
    }

    #[test]
    fn parents_that_fired_rare_passes_are_drawn_more_often() {
        let pool = PassPool::new(&builtin::library());
        let mut state = PoolState::default();
        state.fired.insert("common".into(), 1000);
        state.fired.insert("rare".into(), 0);
        state.entries.insert("a".into(), vec!["common".into()]);
        state.entries.insert("b".into(), vec!["rare".into()]);
        let names = vec!["a".to_string(), "b".to_string()];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let b = (0..1000)
            .filter(|_| pool.parent(&state, &names, &mut rng) == 1)
            .count();
        assert!(b > 900, "the rare entry is drawn {b} times in 1000");
    }
}
