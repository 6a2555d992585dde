//! The fuzz targets' iteration functions (`dlcfuzz::targets`) on deterministic inputs: random
//! bytes from a fixed seed, the checked-in seeds, and (for the load targets) mutated seeds.
//! Each prints its outcome counts; findings (verdicts and panics) are printed, not hidden.

mod common;

use dlcfuzz::backend::{BackendError, ErrorClass};
use dlcfuzz::oracle::{Skip, Verdict};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::Path;

/// The files of `corpus/<target>/`, sorted by name.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).expect("readable seed"))
        .collect()
}

/// `n` mutants of `seeds`: a few flipped bytes, a truncation, or a spliced-in byte run.
fn mutants(seeds: &[Vec<u8>], n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|k| {
            let mut b = seeds[k % seeds.len()].clone();
            match rng.random_range(0..3) {
                0 => {
                    for _ in 0..rng.random_range(1..5) {
                        let i = rng.random_range(0..b.len());
                        b[i] ^= 1 << rng.random_range(0..8);
                    }
                }
                1 => b.truncate(rng.random_range(0..b.len())),
                _ => {
                    let i = rng.random_range(0..b.len());
                    let run: Vec<u8> = (0..rng.random_range(1..16)).map(|_| rng.random()).collect();
                    b.splice(i..i, run);
                }
            }
            b
        })
        .collect()
}

/// Runs `f`, returning `panic: <message> (at <location>)` if it panics (a finding, printed by
/// the caller); the panic itself prints nothing.
fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    dlcfuzz::backend::panic::catch(f)
}

/// Runs a differential target on random inputs plus its seeds; prints and returns the
/// outcome counts and the fraction of valid cases.
fn differential(target: &str, run: fn(&[u8]) -> Verdict, n: usize, seed: u64) -> f64 {
    let mut inputs = seeds(target);
    inputs.extend(common::random_inputs(seed, n, 1200));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut findings: BTreeMap<String, usize> = BTreeMap::new();
    let mut invalid = Vec::new();
    for bytes in &inputs {
        let outcome = match no_panic(|| run(bytes)) {
            Ok(Verdict::Pass) => "pass",
            Ok(Verdict::Skipped(Skip::NonFinite)) => "non-finite",
            Ok(Verdict::Skipped(Skip::Explained(_))) => "explained",
            Ok(Verdict::Skipped(Skip::Unsupported(_))) => "unsupported",
            Ok(Verdict::Skipped(Skip::Rejected(_))) => "level-0 rejected",
            Ok(Verdict::Skipped(Skip::Invalid(m))) => {
                invalid.push(m);
                "invalid"
            }
            Ok(Verdict::Found(f)) => {
                *findings.entry(f.signature).or_default() += 1;
                "found"
            }
            Err(message) => {
                *findings.entry(message).or_default() += 1;
                "panic"
            }
        };
        *counts.entry(outcome).or_default() += 1;
    }
    eprintln!("{target}: {} cases: {counts:?}", inputs.len());
    for (signature, n) in &findings {
        eprintln!("{target} FINDING x{n}: {signature}");
    }
    for m in invalid.iter().take(5) {
        eprintln!(
            "{target} invalid: {}",
            m.chars().take(300).collect::<String>()
        );
    }
    1.0 - invalid.len() as f64 / inputs.len() as f64
}

/// Runs a load target on its seeds and their mutants; prints the outcome counts and returns
/// the results on the unmutated seeds.
fn load(
    target: &str,
    run: fn(&[u8]) -> Result<(), BackendError>,
    n: usize,
) -> Vec<Result<(), String>> {
    let originals = seeds(target);
    assert!(
        (10..=20).contains(&originals.len()),
        "{target}: {} seeds",
        originals.len()
    );
    let mut inputs = originals.clone();
    inputs.extend(mutants(&originals, n, 11));
    inputs.extend(common::random_inputs(12, n / 4, 600));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut on_seeds = Vec::new();
    for (k, bytes) in inputs.iter().enumerate() {
        let result = no_panic(|| run(bytes));
        let outcome = match &result {
            Ok(Ok(())) => "ok".to_string(),
            Ok(Err(e)) => format!("{:?}", e.class),
            Err(message) => {
                eprintln!("{target} FINDING on case {k}: {message}");
                "panic".to_string()
            }
        };
        if k < originals.len() {
            on_seeds.push(match result {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(message) => Err(message),
            });
        }
        *counts.entry(outcome).or_default() += 1;
    }
    eprintln!("{target}: {} cases: {counts:?}", inputs.len());
    on_seeds
}

#[test]
fn tract_target_runs_mostly_valid_cases() {
    let valid = differential("tract", dlcfuzz::targets::tract, 300, 21);
    eprintln!("tract valid fraction: {valid:.3}");
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the cases are valid for tract"
    );
}

#[test]
fn ort_cpu_target_runs_mostly_valid_cases() {
    let valid = differential("ort_cpu", dlcfuzz::targets::ort_cpu, 300, 22);
    eprintln!("ort_cpu valid fraction: {valid:.3}");
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the cases are valid for ORT"
    );
}

#[test]
fn ort_cpu_mutated_target_runs_valid_rewritten_cases() {
    let valid = differential(
        "ort_cpu_mutated",
        dlcfuzz::targets::ort_cpu_mutated,
        300,
        24,
    );
    eprintln!("ort_cpu_mutated valid fraction: {valid:.3}");
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the mutated cases are valid for ORT (level-0 rejections excluded)"
    );
}

#[test]
fn ort_cpu_patterns_target_runs_valid_cases_with_patterns() {
    let valid = differential(
        "ort_cpu_patterns",
        dlcfuzz::targets::ort_cpu_patterns,
        300,
        23,
    );
    eprintln!("ort_cpu_patterns valid fraction: {valid:.3}");
    assert!(
        valid >= 0.99,
        "only {valid:.3} of the pattern cases are valid for ORT"
    );
}

/// TVM Relax for the CPU: 300 random inputs plus the seeds; pass sequences included.
#[test]
fn tvm_llvm_target_runs_mostly_valid_cases() {
    let valid = differential("tvm_llvm", dlcfuzz::targets::tvm_llvm, 300, 23);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// torch.compile (Inductor, CPU): 160 random inputs plus the seeds. A compile takes one to
/// two seconds here (g++ on Inductor's C++), so this is the slowest smoke test.
#[test]
fn torch_compile_cpu_target_runs_mostly_valid_cases() {
    let valid = differential(
        "torch_compile_cpu",
        dlcfuzz::targets::torch_compile_cpu,
        160,
        29,
    );
    assert!(valid >= 0.9, "valid fraction {valid}");
}

#[test]
fn ort_load_target_loads_its_seeds_and_survives_mutants() {
    let on_seeds = load("ort_load", dlcfuzz::targets::ort_load, 400);
    for (k, r) in on_seeds.iter().enumerate() {
        assert_eq!(r, &Ok(()), "ort_load seed {k} does not load and run");
    }
}

#[test]
fn tract_load_target_loads_its_seeds_and_survives_mutants() {
    let on_seeds = load("tract_load", dlcfuzz::targets::tract_load, 400);
    for (k, r) in on_seeds.iter().enumerate() {
        assert_eq!(r, &Ok(()), "tract_load seed {k} does not load and run");
    }
}

#[test]
fn load_targets_reject_garbage_as_invalid_models() {
    for garbage in [
        &b""[..],
        b"\x08",
        b"\x3a\xff\xff\xff\xff\x0f",
        b"not an onnx model",
    ] {
        for (target, result) in [
            ("tract_load", dlcfuzz::targets::tract_load(garbage)),
            ("ort_load", dlcfuzz::targets::ort_load(garbage)),
        ] {
            match result {
                Err(e) if e.class == ErrorClass::Rejected => {}
                other => panic!("{target} on {garbage:?}: {other:?}"),
            }
        }
    }
}
