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

/// Whether `python3` can import `onnx` (scripts/setup.sh installs it into .deps/py).
pub fn python_has_onnx() -> bool {
    dlcfuzz::paths::python()
        .args(["-c", "import onnx"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `onnx.checker.check_model(full_check=True)` over every model in `dir`
/// (`scripts/check_models.py`) and returns its report: `checked` and the `failed` list.
pub fn check_models(dir: &std::path::Path) -> serde_json::Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check_models.py");
    let out = dlcfuzz::paths::python()
        .arg(script)
        .arg(dir)
        .output()
        .expect("run checker");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("checker JSON")
}
