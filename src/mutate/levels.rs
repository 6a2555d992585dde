//! HirFuzz constraint levels. Level 1 is the valid generator; level 0 deliberately breaks
//! exactly one constraint of the emitted model ([`Violation`]) to test the compiler's
//! exception handling, where a clean error is expected and only a crash, hang or internal
//! assertion is a bug.
//!
//! The level is the first byte of a mutated input: level 0 when it is below
//! [`LEVEL0_BYTES`] (p₀ = 0.6 of the byte range). A campaign realizes its current p
//! ([`LevelPolicy`]) by choosing that byte, so the bytes alone decide the level and every
//! input replays the same.

pub use crate::headers::{Level, Mutations, HEADER_BYTES, LEVEL0_BYTES};
use serde::{Deserialize, Serialize};

/// HirFuzz's initial probability of constraint level 0.
pub const INITIAL_P: f64 = 0.6;
/// HirFuzz's step for p.
pub const ALPHA: f64 = 0.01;
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
