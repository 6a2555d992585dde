//! How close a passing test came to a finding: the oracle-distance signal.
//!
//! A test passes when every compared output lies within what rounding explains (the
//! precision envelope, or the fixed per-dtype tolerances without it). How far inside it lies
//! is a graded answer the pass/fail verdict throws away: an output whose error is 0.9 of
//! what rounding allows sits on the verge of a mismatch, one at 10⁻⁶ of it nowhere near.
//! As libFuzzer's value profile rewards inputs that bring a comparison's operands closer,
//! the campaign admits to its corpus a test that comes closer to the edge than any before it
//! at the same *site* (the op type and element type of the output), in powers of two
//! ([`NearMiss::feature`]); the libFuzzer targets get the same features as extra counters
//! ([`crate::feedback::observe_near_miss`]).
//!
//! Only float outputs have a grade: an integer or boolean output either equals the exact
//! result or is a finding.

use serde::{Deserialize, Serialize};

/// The lowest bucket that counts: ratios below 2⁻⁸ of the allowed error are ordinary
/// rounding, not a near miss.
pub const LOWEST_BUCKET: i32 = -8;

/// The nearest a passing test's outputs came to the edge of what rounding explains.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NearMiss {
    /// Where: the op type and element type of the output (`Softmax:f16`).
    pub site: String,
    /// The largest `|computed − exact| / allowed` over the output's elements (1: on the edge).
    pub ratio: f64,
}

impl NearMiss {
    /// `ratio`'s power-of-two bucket: `⌊log₂ ratio⌋`, at most 0.
    pub fn bucket(&self) -> i32 {
        self.ratio.log2().floor().clamp(f64::from(i32::MIN), 0.0) as i32
    }

    /// The coverage feature of this near miss, `near:SITE:BUCKET`, when it counts (a
    /// positive ratio of at least 2^[`LOWEST_BUCKET`]).
    pub fn feature(&self) -> Option<String> {
        let counts = self.ratio.is_finite() && self.ratio > 0.0 && self.bucket() >= LOWEST_BUCKET;
        counts.then(|| format!("near:{}:{}", self.site, self.bucket()))
    }
}

/// The largest of the ratios seen so far and the output it was seen at: what the oracle
/// keeps while it judges one test's levels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Nearest(Option<(usize, f64)>);

impl Nearest {
    /// Records output `output`'s ratio (NaN is ignored).
    pub fn see(&mut self, output: usize, ratio: f64) {
        if ratio.is_nan() {
            return;
        }
        if self.0.is_none_or(|(_, r)| ratio > r) {
            self.0 = Some((output, ratio));
        }
    }

    /// Records the largest of `(output, ratio)` pairs.
    pub fn see_all(&mut self, ratios: impl IntoIterator<Item = (usize, f64)>) {
        for (output, ratio) in ratios {
            self.see(output, ratio);
        }
    }

    /// The output and ratio of the nearest miss, if any output was graded.
    pub fn get(&self) -> Option<(usize, f64)> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn miss(ratio: f64) -> NearMiss {
        NearMiss {
            site: "Add:f32".into(),
            ratio,
        }
    }

    #[test]
    fn near_misses_are_bucketed_by_powers_of_two_and_rounding_noise_does_not_count() {
        assert_eq!(miss(1.0).feature().as_deref(), Some("near:Add:f32:0"));
        assert_eq!(miss(0.75).feature().as_deref(), Some("near:Add:f32:-1"));
        assert_eq!(miss(0.5).feature().as_deref(), Some("near:Add:f32:-1"));
        assert_eq!(miss(0.3).feature().as_deref(), Some("near:Add:f32:-2"));
        assert_eq!(
            miss(2f64.powi(-8)).feature().as_deref(),
            Some("near:Add:f32:-8")
        );
        assert_eq!(miss(2f64.powi(-9)).feature(), None);
        assert_eq!(miss(0.0).feature(), None);
        assert_eq!(miss(f64::NAN).feature(), None);
        assert_eq!(miss(f64::INFINITY).feature(), None);
    }

    #[test]
    fn the_nearest_keeps_the_largest_ratio_and_its_output() {
        let mut n = Nearest::default();
        assert_eq!(n.get(), None);
        n.see_all([(0, 0.1), (2, 0.4), (1, f64::NAN), (3, 0.2)]);
        assert_eq!(n.get(), Some((2, 0.4)));
    }
}
