//! Shared helpers of the integration tests.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};

/// `n` random byte strings of random length in `0..max_len`, from `seed`.
pub fn random_inputs(seed: u64, n: usize, max_len: usize) -> Vec<Vec<u8>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let len = rng.random_range(0..max_len);
            let mut b = vec![0u8; len];
            rng.fill(b.as_mut_slice());
            b
        })
        .collect()
}
