//! The menu of choices a generator may make: (op, dtype signature, attribute class) triples
//! that a backend supports, narrowed per test case by the swarm [`super::Config`].

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

/// Everything a generator may instantiate.
#[derive(Clone, Debug)]
pub struct Menu {
    /// Entries with at least one choice, in registry order.
    pub entries: Vec<MenuEntry>,
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
        Menu { entries }
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

    /// The sub-menu of ops whose bit is set in `op_mask` (bit = registry index mod 128) and of
    /// signatures whose dtypes are all in `dtypes`. Falls back to `self` when that is empty.
    pub fn swarm(&self, op_mask: u128, dtypes: &BTreeSet<DType>) -> Menu {
        let entries: Vec<MenuEntry> = self
            .entries
            .iter()
            .filter(|e| op_mask & (1u128 << (e.spec % 128)) != 0)
            .filter_map(|e| {
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
                (!choices.is_empty()).then_some(MenuEntry {
                    spec: e.spec,
                    choices,
                })
            })
            .collect();
        if entries.is_empty() {
            self.clone()
        } else {
            Menu { entries }
        }
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
    }
}
