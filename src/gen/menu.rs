//! The menu of choices a generator may make: (op, dtype signature, attribute class) triples
//! that a backend supports, narrowed per test case by the swarm [`super::Config`].
//!
//! Ops are identified in the decoder by a stable id derived from their name
//! ([`op_key`]), never by their position in the registry: the swarm mask bit of an op is its
//! id mod 128, and a drawn `u16` picks an op by consistent hashing ([`Menu::pick`]: the first
//! of the ops' ring points at or after the draw, [`RING_POINTS`] points per op so that each
//! op gets a near-equal share). Adding an op takes over only the draws that land just
//! before its own points; every other draw still picks the op it picked before, so existing
//! seeds keep their meaning.

use crate::ir::DType;
use crate::ops::{registry, Sig, SpecId};
use std::collections::BTreeSet;

/// One allowed way to instantiate an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The dtype signature.
    pub sig: Sig,
    /// The attribute class.
    pub class: &'static str,
}

/// The allowed choices of one op.
#[derive(Clone, Debug)]
pub struct MenuEntry {
    /// The spec.
    pub spec: SpecId,
    /// Allowed (signature, class) pairs.
    pub choices: Vec<Choice>,
}

/// Points per op on the consistent-hashing ring.
pub const RING_POINTS: u64 = 64;

/// The stable 64-bit id of the op spec called `name`, salted by `salt` (FNV-1a over the
/// name's bytes and the salt's, then SplitMix64's finalizer so that every bit depends on
/// every input bit): independent of the registry's order.
pub fn op_key(name: &str, salt: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(salt.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The swarm-mask bit of spec `spec`.
pub fn mask_bit(spec: SpecId) -> u32 {
    (op_key(registry()[spec].name(), 0) % 128) as u32
}

/// Everything a generator may instantiate.
#[derive(Clone, Debug)]
pub struct Menu {
    /// Entries with at least one choice, in registry order.
    pub entries: Vec<MenuEntry>,
    /// The consistent-hashing ring: (point, index into `entries`), sorted.
    ring: Vec<(u16, usize)>,
}

impl Menu {
    /// Every (op, signature, class) triple for which `allowed` holds.
    pub fn new(allowed: impl Fn(SpecId, &Sig, &str) -> bool) -> Menu {
        let entries = registry()
            .iter()
            .enumerate()
            .filter_map(|(spec, s)| {
                let classes = s.classes();
                let choices: Vec<Choice> = s
                    .sigs()
                    .into_iter()
                    .flat_map(|sig| {
                        classes.iter().map(move |c| Choice {
                            sig: sig.clone(),
                            class: c,
                        })
                    })
                    .filter(|c| allowed(spec, &c.sig, c.class))
                    .collect();
                (!choices.is_empty()).then_some(MenuEntry { spec, choices })
            })
            .collect();
        Menu::from_entries(entries)
    }

    /// The menu of `entries`, with its ring.
    pub fn from_entries(entries: Vec<MenuEntry>) -> Menu {
        let mut ring: Vec<(u16, usize)> = entries
            .iter()
            .enumerate()
            .flat_map(|(i, e)| {
                let name = registry()[e.spec].name();
                (1..=RING_POINTS).map(move |k| ((op_key(name, k) >> 48) as u16, i))
            })
            .collect();
        ring.sort_unstable();
        Menu { entries, ring }
    }

    /// The entry a drawn `u16` picks: the owner of the first ring point at or after `draw`
    /// (wrapping). Panics on an empty menu.
    pub fn pick(&self, draw: u16) -> &MenuEntry {
        let at = self.ring.partition_point(|(point, _)| *point < draw);
        let (_, index) = self.ring[at % self.ring.len()];
        &self.entries[index]
    }

    /// The allowed choices of `spec` (empty when it is not on the menu).
    pub fn choices(&self, spec: SpecId) -> &[Choice] {
        self.entries
            .iter()
            .find(|e| e.spec == spec)
            .map_or(&[], |e| e.choices.as_slice())
    }

    /// Whether the triple `(spec, sig, class)` is on the menu.
    pub fn allows(&self, spec: SpecId, sig: &Sig, class: &str) -> bool {
        self.choices(spec)
            .iter()
            .any(|c| &c.sig == sig && c.class == class)
    }

    /// Every triple of every spec (no backend filter).
    pub fn everything() -> Menu {
        Menu::new(|_, _, _| true)
    }

    /// The sub-menu of ops whose bit is set in `op_mask` ([`mask_bit`]) and of
    /// signatures whose dtypes are all in `dtypes`. Falls back to `self` when that is empty.
    pub fn swarm(&self, op_mask: u128, dtypes: &BTreeSet<DType>) -> Menu {
        // Per entry of `self`, its index in the sub-menu when it stays.
        let mut kept = vec![None; self.entries.len()];
        let mut entries: Vec<MenuEntry> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if op_mask & (1u128 << mask_bit(e.spec)) == 0 {
                continue;
            }
            let choices: Vec<Choice> = e
                .choices
                .iter()
                .filter(|c| {
                    c.sig
                        .inputs
                        .iter()
                        .chain(&c.sig.outputs)
                        .all(|d| dtypes.contains(d))
                })
                .cloned()
                .collect();
            if !choices.is_empty() {
                kept[i] = Some(entries.len());
                entries.push(MenuEntry {
                    spec: e.spec,
                    choices,
                });
            }
        }
        if entries.is_empty() {
            return self.clone();
        }
        // The ring `from_entries` would build, without hashing and sorting again: the kept
        // entries' points, already in order (indices are renumbered in the same order).
        let ring = self
            .ring
            .iter()
            .filter_map(|(point, i)| kept[*i].map(|j| (*point, j)))
            .collect();
        Menu { entries, ring }
    }

    /// Dtypes that some choice takes as its first input.
    pub fn first_input_dtypes(&self) -> Vec<DType> {
        let set: BTreeSet<DType> = self
            .entries
            .iter()
            .flat_map(|e| {
                e.choices
                    .iter()
                    .filter_map(|c| c.sig.inputs.first().copied())
            })
            .collect();
        set.into_iter().collect()
    }

    /// Total number of (op, signature, class) triples.
    pub fn len(&self) -> usize {
        self.entries.iter().map(|e| e.choices.len()).sum()
    }

    /// True when nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swarm_narrows_and_falls_back() {
        let all = Menu::everything();
        let f32_only: BTreeSet<DType> = [DType::F32].into_iter().collect();
        let narrow = all.swarm(u128::MAX, &f32_only);
        assert!(narrow.len() < all.len());
        assert!(narrow.entries.iter().all(|e| e.choices.iter().all(|c| c
            .sig
            .inputs
            .iter()
            .all(|d| *d == DType::F32))));
        let none = all.swarm(0, &f32_only);
        assert_eq!(none.len(), all.len());
        // The filtered ring is the one built from scratch.
        assert_eq!(narrow.ring, Menu::from_entries(narrow.entries.clone()).ring);
    }

    #[test]
    fn picks_depend_on_names_not_on_registry_order_and_shares_are_even() {
        let all = Menu::everything();
        let picks: Vec<SpecId> = (0..=u16::MAX)
            .step_by(7)
            .map(|d| all.pick(d).spec)
            .collect();
        // Dropping one op (as if it had just been added) changes only the draws it owned.
        let dropped = all.entries[3].spec;
        let fewer = Menu::from_entries(
            all.entries
                .iter()
                .filter(|e| e.spec != dropped)
                .cloned()
                .collect(),
        );
        let moved = (0..=u16::MAX)
            .step_by(7)
            .zip(&picks)
            .filter(|(d, p)| **p != dropped && fewer.pick(*d).spec != **p)
            .count();
        assert_eq!(moved, 0);
        // Every op gets a share within a factor of two of the mean.
        let mut counts = std::collections::BTreeMap::<SpecId, usize>::new();
        for p in &picks {
            *counts.entry(*p).or_default() += 1;
        }
        let mean = picks.len() as f64 / all.entries.len() as f64;
        assert_eq!(counts.len(), all.entries.len());
        for (spec, n) in counts {
            let share = n as f64 / mean;
            assert!(
                (0.5..2.0).contains(&share),
                "{}: {share:.2}",
                registry()[spec].name()
            );
        }
    }
}
