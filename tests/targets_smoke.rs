//! The fuzz targets' iteration functions (`dlcfuzz::targets`) on deterministic inputs: random
//! bytes from a fixed seed, the checked-in seeds, and (for the load targets) mutated seeds.
//! Each prints its outcome counts; findings (verdicts and panics) are printed, not hidden.

mod common;

use dlcfuzz::backend::ErrorClass;
use dlcfuzz::oracle::{Skip, Verdict};
use dlcfuzz::targets::{Device, FuzzTarget, TargetConfig, TARGETS};
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

/// The target `name` as libFuzzer builds it (panics propagate).
fn target(name: &str) -> Box<dyn FuzzTarget> {
    dlcfuzz::targets::build(&TargetConfig::fuzzer(name))
        .unwrap_or_else(|e| panic!("{e} (run scripts/setup.sh --python-compilers)"))
}

/// Runs a graph target on random inputs plus its seeds; prints and returns the outcome
/// counts and the fraction of valid cases.
fn differential(name: &str, n: usize, seed: u64) -> f64 {
    let target = target(name);
    let mut inputs = seeds(name);
    inputs.extend(common::random_inputs(seed, n, 1200));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut findings: BTreeMap<String, usize> = BTreeMap::new();
    let mut invalid = Vec::new();
    for bytes in &inputs {
        let outcome = match no_panic(|| target.run(bytes, &[], None)) {
            Ok(run) => match run.verdict {
                Verdict::Pass => "pass",
                Verdict::Skipped(Skip::NonFinite) => "non-finite",
                Verdict::Skipped(Skip::Explained(_)) => "explained",
                Verdict::Skipped(Skip::Unsupported(_)) => "unsupported",
                Verdict::Skipped(Skip::Rejected(_)) => "level-0 rejected",
                Verdict::Skipped(Skip::Invalid(m)) => {
                    invalid.push(m);
                    "invalid"
                }
                Verdict::Found(f) => {
                    *findings.entry(f.signature).or_default() += 1;
                    "found"
                }
            },
            Err(message) => {
                *findings.entry(message).or_default() += 1;
                "panic"
            }
        };
        *counts.entry(outcome).or_default() += 1;
    }
    eprintln!("{name}: {} cases: {counts:?}", inputs.len());
    for (signature, n) in &findings {
        eprintln!("{name} FINDING x{n}: {signature}");
    }
    for m in invalid.iter().take(5) {
        eprintln!(
            "{name} invalid: {}",
            m.chars().take(300).collect::<String>()
        );
    }
    1.0 - invalid.len() as f64 / inputs.len() as f64
}

/// Runs a load target on its seeds and their mutants; prints the outcome counts and returns
/// the verdicts on the unmutated seeds (`Err`: a panic).
fn load(name: &str, n: usize) -> Vec<Result<Verdict, String>> {
    let target = target(name);
    let originals = seeds(name);
    assert!(
        (10..=20).contains(&originals.len()),
        "{name}: {} seeds",
        originals.len()
    );
    let mut inputs = originals.clone();
    inputs.extend(mutants(&originals, n, 11));
    inputs.extend(common::random_inputs(12, n / 4, 600));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut on_seeds = Vec::new();
    for (k, bytes) in inputs.iter().enumerate() {
        let result = no_panic(|| target.run(bytes, &[], None).verdict);
        let outcome = match &result {
            Ok(Verdict::Pass) => "ok".to_string(),
            Ok(Verdict::Skipped(_)) => "rejected".to_string(),
            Ok(Verdict::Found(f)) => {
                eprintln!("{name} FINDING on case {k}: {}", f.signature);
                "found".to_string()
            }
            Err(message) => {
                eprintln!("{name} FINDING on case {k}: {message}");
                "panic".to_string()
            }
        };
        if k < originals.len() {
            on_seeds.push(result);
        }
        *counts.entry(outcome).or_default() += 1;
    }
    eprintln!("{name}: {} cases: {counts:?}", inputs.len());
    on_seeds
}

#[test]
fn tract_target_runs_mostly_valid_cases() {
    let valid = differential("tract", 300, 21);
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the cases are valid for tract"
    );
}

#[test]
fn ort_cpu_target_runs_mostly_valid_cases() {
    let valid = differential("ort_cpu", 300, 22);
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the cases are valid for ORT"
    );
}

#[test]
fn openvino_cpu_target_runs_mostly_valid_cases() {
    let valid = differential("openvino_cpu", 100, 23);
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the cases are valid for OpenVINO"
    );
}

#[test]
fn openvino_cpu_patterns_target_runs_valid_cases_with_patterns() {
    let valid = differential("openvino_cpu_patterns", 60, 25);
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the pattern cases are valid for OpenVINO"
    );
}

#[test]
fn ort_cpu_mutated_target_runs_valid_rewritten_cases() {
    let valid = differential("ort_cpu_mutated", 300, 24);
    assert!(
        valid >= 0.9,
        "only {valid:.3} of the mutated cases are valid for ORT (level-0 rejections excluded)"
    );
}

#[test]
fn ort_cpu_patterns_target_runs_valid_cases_with_patterns() {
    let valid = differential("ort_cpu_patterns", 300, 23);
    assert!(
        valid >= 0.99,
        "only {valid:.3} of the pattern cases are valid for ORT"
    );
}

/// TVM Relax for the CPU: 300 random inputs plus the seeds; pass sequences included.
#[test]
fn tvm_llvm_target_runs_mostly_valid_cases() {
    let valid = differential("tvm_llvm", 300, 23);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// TVM Relax with ONNX Runtime's fusion patterns spliced in: 20 random inputs plus the seeds
/// (fewer than `tvm_llvm`: the spliced graphs are larger and TVM compiles each twice).
#[test]
fn tvm_llvm_patterns_target_runs_mostly_valid_cases() {
    let valid = differential("tvm_llvm_patterns", 20, 29);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// torch.compile (Inductor, CPU): 80 random inputs plus the seeds. A test compiles three
/// packed programs, 4 to 8 seconds here (g++ on each of Inductor's kernels), so this is the
/// slowest smoke test.
#[test]
fn torch_compile_cpu_target_runs_mostly_valid_cases() {
    let valid = differential("torch_compile_cpu", 80, 29);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// torch.compile with OpenVINO's backend (CPU): 30 random inputs plus the seeds (about a
/// second a test).
#[test]
fn torch_compile_openvino_target_runs_mostly_valid_cases() {
    let valid = differential("torch_compile_openvino", 30, 31);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// The PyTorch ONNX exporter with ONNX Runtime: 60 random inputs plus the seeds (an export
/// takes about a second).
#[test]
fn torch_onnx_export_target_runs_mostly_valid_cases() {
    let valid = differential("torch_onnx_export", 60, 37);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// TorchScript (CPU) through the same registry path.
#[test]
fn torchscript_cpu_target_runs_mostly_valid_cases() {
    let valid = differential("torchscript_cpu", 200, 31);
    assert!(valid >= 0.9, "valid fraction {valid}");
}

/// The decoder itself (no compiler): its seeds and 300 random inputs decode, emit, re-type
/// and re-decode with every invariant kept (a panic propagates, as under libFuzzer).
#[test]
fn decoder_target_keeps_every_invariant() {
    let target = target("decoder");
    let mut inputs = seeds("decoder");
    inputs.extend(common::random_inputs(41, 300, 1200));
    for (k, bytes) in inputs.iter().enumerate() {
        let verdict = target.run(bytes, &[], None).verdict;
        assert!(matches!(verdict, Verdict::Pass), "case {k}: {verdict:?}");
    }
}

#[test]
fn ort_load_target_loads_its_seeds_and_survives_mutants() {
    for (k, r) in load("ort_load", 400).iter().enumerate() {
        assert!(matches!(r, Ok(Verdict::Pass)), "ort_load seed {k}: {r:?}");
    }
}

#[test]
fn tract_load_target_loads_its_seeds_and_survives_mutants() {
    for (k, r) in load("tract_load", 400).iter().enumerate() {
        assert!(matches!(r, Ok(Verdict::Pass)), "tract_load seed {k}: {r:?}");
    }
}

#[test]
fn load_targets_reject_garbage_as_invalid_models() {
    let ort = dlcfuzz::backend::ort::OrtCpu::new().expect("ONNX Runtime (scripts/setup.sh)");
    let tract = dlcfuzz::backend::tract::Tract::new();
    for garbage in [
        &b""[..],
        b"\x08",
        b"\x3a\xff\xff\xff\xff\x0f",
        b"not an onnx model",
    ] {
        for (target, result) in [
            ("tract_load", tract.load_only(garbage)),
            ("ort_load", ort.load_only(garbage)),
        ] {
            match result {
                Err(e) if e.class == ErrorClass::Rejected => {}
                other => panic!("{target} on {garbage:?}: {other:?}"),
            }
        }
    }
}

/// Every cargo-fuzz target of the registry is wired the same way: a one-line glue file, a
/// `[[bin]]` in fuzz/Cargo.toml, and (CPU targets) checked-in seeds; every GPU target fails
/// at setup on a machine without CUDA, naming what is missing, instead of testing nothing.
#[test]
fn every_registry_target_is_wired_and_gpu_targets_say_what_is_missing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).expect("fuzz/Cargo.toml");
    for info in TARGETS.iter().filter(|t| t.fuzz_binary) {
        let glue = root
            .join("fuzz/fuzz_targets")
            .join(format!("{}.rs", info.name));
        let glue =
            std::fs::read_to_string(&glue).unwrap_or_else(|e| panic!("{}: {e}", glue.display()));
        assert!(
            glue.contains(&format!("dlcfuzz::fuzz_target_glue!(\"{}\");", info.name)),
            "{}: the glue is the one macro line",
            info.name
        );
        assert!(
            manifest.contains(&format!("name = \"{}\"", info.name)),
            "{}: no [[bin]]",
            info.name
        );
        let options = root.join("fuzz").join(format!("{}.options", info.name));
        assert_eq!(
            std::fs::read_to_string(&options).ok(),
            Some(info.libfuzzer_options()),
            "{}: write TargetInfo::libfuzzer_options() there",
            options.display()
        );
        if info.device == Device::Cpu {
            assert!(
                root.join("corpus").join(info.name).is_dir(),
                "{}: no seeds",
                info.name
            );
        } else if !tch::Cuda::is_available() {
            let error = info.build(&TargetConfig::new(info.name, 10)).err();
            let error = error.unwrap_or_else(|| panic!("{} builds without a GPU", info.name));
            assert!(
                error.to_lowercase().contains("cuda"),
                "{}: {error}",
                info.name
            );
        }
    }
}
