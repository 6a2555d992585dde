//! HirFuzz constraint levels. Level 1 is the valid generator; level 0 deliberately breaks
//! exactly one constraint of the emitted model ([`Violation`]) to test the compiler's
//! exception handling, where a clean error is expected and only a crash, hang or internal
//! assertion is a bug.
//!
//! The level is the first byte of a mutated input: level 0 when it is below
//! [`LEVEL0_BYTES`] (p₀ = 0.6 of the byte range). A campaign realizes its current p
//! ([`LevelPolicy`]) by choosing that byte, so the bytes alone decide the level and every
//! input replays the same.

use super::functions::{RewritePlan, PLAN_BYTES};
use super::violation::{Violation, VIOLATION_BYTES};
use crate::gen::padded_head;
use serde::{Deserialize, Serialize};

/// HirFuzz's initial probability of constraint level 0.
pub const INITIAL_P: f64 = 0.6;
/// HirFuzz's step for p.
pub const ALPHA: f64 = 0.01;
/// Level-byte values below this mean level 0: ⌈0.6 · 256⌉.
pub const LEVEL0_BYTES: u8 = 154;
/// Bytes the [`Mutations`] header occupies: level byte, violation, rewrite plan.
pub const HEADER_BYTES: usize = 1 + VIOLATION_BYTES + PLAN_BYTES;

/// A constraint level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// One constraint deliberately broken: exception handling is under test.
    Zero,
    /// Every constraint holds: functional correctness is under test.
    One,
}

impl Level {
    /// The level a level byte selects.
    pub fn of_byte(b: u8) -> Level {
        if b < LEVEL0_BYTES {
            Level::Zero
        } else {
            Level::One
        }
    }
}

/// The mutation header of an `ort_cpu_mutated` input: the constraint level, the constraint a
/// level-0 case breaks, and the function rewrites applied at either level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutations {
    /// The constraint level.
    pub level: Level,
    /// The broken constraint (only at level 0).
    pub violation: Option<Violation>,
    /// The function and control-flow rewrites.
    pub plan: RewritePlan,
}

impl Mutations {
    /// Decodes the header at the start of `bytes` (missing bytes read as zero) and returns
    /// it with the rest of the input (the graph recipe).
    pub fn split(bytes: &[u8]) -> (Mutations, &[u8]) {
        let ([level_byte], rest) = padded_head::<1>(bytes);
        let level = Level::of_byte(level_byte);
        let (head, rest) = padded_head::<VIOLATION_BYTES>(rest);
        let (plan, rest) = RewritePlan::split(rest);
        let violation = (level == Level::Zero).then(|| Violation::decode(head));
        (
            Mutations {
                level,
                violation,
                plan,
            },
            rest,
        )
    }
}

/// HirFuzz's constraint relaxation: the probability p of level 0 starts at 0.6 and moves by
/// α = 0.01 towards the level at which a new distinct bug appeared.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelPolicy {
    /// Probability of level 0.
    pub p: f64,
    /// Step.
    pub alpha: f64,
}

impl Default for LevelPolicy {
    fn default() -> Self {
        LevelPolicy {
            p: INITIAL_P,
            alpha: ALPHA,
        }
    }
}

impl LevelPolicy {
    /// Records a new distinct finding at `level`: p rises after one at level 0 and falls after
    /// one at level 1, staying within [α, 1 − α] so neither level starves.
    pub fn record_new_finding(&mut self, level: Level) {
        let step = match level {
            Level::Zero => self.alpha,
            Level::One => -self.alpha,
        };
        self.p = (self.p + step).clamp(self.alpha, 1.0 - self.alpha);
    }

    /// The level byte for a draw `u` in [0, 1) and a free byte `spare`: a byte of level 0 when
    /// `u < p`, else one of level 1, spread over that level's byte range by `spare`.
    pub fn level_byte(&self, u: f64, spare: u8) -> u8 {
        if u < self.p {
            spare % LEVEL0_BYTES
        } else {
            LEVEL0_BYTES + spare % (u8::MAX - LEVEL0_BYTES + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_byte_realizes_the_policy_and_decodes_back() {
        let policy = LevelPolicy::default();
        let mut zero = 0;
        for i in 0..1000u32 {
            let u = f64::from(i) / 1000.0;
            let b = policy.level_byte(u, (i * 37) as u8);
            if Level::of_byte(b) == Level::Zero {
                zero += 1;
            }
            assert_eq!(Level::of_byte(b) == Level::Zero, u < policy.p);
        }
        assert_eq!(zero, 600);
    }

    #[test]
    fn p_moves_by_alpha_towards_the_level_that_found_a_bug() {
        let mut policy = LevelPolicy::default();
        policy.record_new_finding(Level::Zero);
        assert!((policy.p - 0.61).abs() < 1e-12);
        policy.record_new_finding(Level::One);
        policy.record_new_finding(Level::One);
        assert!((policy.p - 0.59).abs() < 1e-12);
        for _ in 0..200 {
            policy.record_new_finding(Level::One);
        }
        assert!((policy.p - ALPHA).abs() < 1e-12);
    }

    #[test]
    fn header_splits_level_violation_and_plan() {
        let mut bytes = vec![200u8, 1, 2, 3, 1, 0, 0, 0];
        bytes.resize(HEADER_BYTES + 5, 9);
        let (m, rest) = Mutations::split(&bytes);
        assert_eq!(m.level, Level::One);
        assert!(m.violation.is_none());
        assert_eq!(m.plan.rewrites.len(), 4);
        assert_eq!(rest.len(), 5);
        let (m0, _) = Mutations::split(&[3]);
        assert_eq!(m0.level, Level::Zero);
        assert!(m0.violation.is_some());
    }
}
