//! `dlcfuzz bench patterns --target torch_compile_cpu`: how often the torch rows shaped like
//! Inductor's pattern-matcher rewrites ([`TorchOp::aims`]) make Inductor fire the rewrite
//! they aim at. For each aimed row, seeded random inputs are decoded (nothing runs) until
//! `per_row` of them generate a program holding the row; each such program is then tested
//! as the campaign tests it (forward, static shapes, compiled once; the default
//! configuration, or freezing for a row whose aim fires only there), and the optimizations
//! Inductor reports are read from the test run. With a misses folder, the first programs
//! of each row whose aim did not fire are written there (`ROW-K.py`: the program, what fired
//! instead; `ROW-K.bin`: the input, for `dlcfuzz replay --target`).

use super::random_inputs;
use crate::mutate::program::render::{render, Dialect};
use crate::oracle::Verdict;
use crate::targets::torch_compile::TorchCompileHarness;
use crate::torch::ops::{table, TorchOp};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Random inputs decoded per program wanted before a row counts as unreachable.
const TRIES_PER_PROGRAM: usize = 400;

/// Programs written per row by a misses folder.
const MISSES_PER_ROW: usize = 3;

/// Writes a missed program of `row` into `dir`: its input bytes and its source, headed by
/// what fired instead.
fn write_miss(
    dir: &std::path::Path,
    harness: &TorchCompileHarness,
    row: &TorchOp,
    k: usize,
    bytes: &[u8],
    fired: &[String],
) -> Result<(), String> {
    let (_, program) = harness.source.decode(&bytes[1..]);
    let header: String = fired.iter().map(|f| format!("# fired: {f}\n")).collect();
    let source = render(&program.program, Dialect::Python);
    let stem = dir.join(format!("{}-{k}", row.name));
    let write = |path: std::path::PathBuf, data: &[u8]| {
        std::fs::write(&path, data).map_err(|e| format!("writing {}: {e}", path.display()))
    };
    write(stem.with_extension("bin"), bytes)?;
    write(
        stem.with_extension("py"),
        format!(
            "# {} aims at {}\n{header}{source}",
            row.name,
            row.aims.unwrap_or("")
        )
        .as_bytes(),
    )
}

/// Length of each random input: the mode byte, then the program's bytes.
pub const INPUT_LEN: usize = 600;

/// The mode byte of a test of `row`: static shapes, forward, compiled once, in the default
/// configuration (Inductor's inference patterns are the ones registered for it), or in
/// freezing (the top bits `0b10`) when the row's aim needs frozen weights.
fn mode_byte(row: &TorchOp) -> u8 {
    if row.frozen {
        0b1000_0000
    } else {
        0
    }
}

/// The rows that aim at an optimization.
pub fn aimed_rows() -> Vec<&'static TorchOp> {
    table().iter().filter(|op| op.aims.is_some()).collect()
}

/// Per aimed row and per aim: programs tested, how many fired the aim, how many ran valid.
#[derive(Default)]
struct Tally {
    tested: usize,
    fired: usize,
    valid: usize,
}

impl Tally {
    fn add(&mut self, fired: bool, valid: bool) {
        self.tested += 1;
        self.fired += usize::from(fired);
        self.valid += usize::from(valid);
    }

    fn rate(&self) -> f64 {
        self.fired as f64 / self.tested.max(1) as f64
    }

    fn json(&self) -> Value {
        json!({"tested": self.tested, "fired": self.fired, "valid": self.valid,
               "triggering_rate": self.rate()})
    }
}

/// Up to `per_row` inputs of `harness` (the row's mode byte first, [`INPUT_LEN`] bytes from
/// `next`) whose programs hold `row`; nothing runs.
pub fn inputs_holding(
    harness: &TorchCompileHarness,
    row: &TorchOp,
    per_row: usize,
    next: &mut impl FnMut() -> Vec<u8>,
) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    for _ in 0..per_row * TRIES_PER_PROGRAM {
        if found.len() == per_row {
            break;
        }
        let mut bytes = next();
        bytes[0] = mode_byte(row);
        let (_, program) = harness.source.decode(&bytes[1..]);
        if program.ops.contains(&row.name) {
            found.push(bytes);
        }
    }
    found
}

/// Tests `per_row` programs holding each aimed row on `target` (an Inductor target) and
/// reports, per row and per aimed rewrite, the share of tests that fired it, the pattern
/// names that fired instead when it did not, and the overall `optimization_triggering_rate`;
/// with `misses`, writes the first missed programs of each row there.
pub fn torch_patterns(
    target: &str,
    per_row: usize,
    seed: u64,
    max_ops: usize,
    misses: Option<&std::path::Path>,
    tick: &(dyn Fn() + Sync),
) -> Result<Value, String> {
    let device = match target {
        "torch_compile_cpu" => "cpu",
        "torch_compile_cuda" => "cuda",
        other => {
            return Err(format!(
                "bench patterns: no pattern rows aim at `{other}`; use torch_compile_cpu or torch_compile_cuda (Inductor), or leave --target out for ONNX Runtime"
            ))
        }
    };
    let harness = TorchCompileHarness::on(device, max_ops)?;
    if let Some(dir) = misses {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let mut next = random_inputs(seed, INPUT_LEN);
    let mut rows: Vec<(&TorchOp, Tally)> = Vec::new();
    let mut aims: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut instead: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    let mut unreachable = Vec::new();
    let mut overall = Tally::default();
    for row in aimed_rows() {
        let aim = row.aims.expect("aimed rows aim");
        let inputs = inputs_holding(&harness, row, per_row, &mut next);
        if inputs.is_empty() {
            unreachable.push(row.name);
        }
        let mut tally = Tally::default();
        let mut written = 0;
        for bytes in inputs {
            let run = harness.test(&bytes, &[]);
            tick();
            let fired = run.fired.iter().any(|f| row.hits(f));
            let valid = !matches!(run.verdict, Verdict::Skipped(_));
            if !fired {
                if let Some(dir) = misses.filter(|_| written < MISSES_PER_ROW) {
                    write_miss(dir, &harness, row, written, &bytes, &run.fired)?;
                    written += 1;
                }
                let other = instead.entry(row.name).or_default();
                for name in run.fired.iter().filter(|f| f.starts_with("pattern:")) {
                    *other.entry(name.clone()).or_default() += 1;
                }
            }
            tally.add(fired, valid);
            aims.entry(aim).or_default().add(fired, valid);
            overall.add(fired, valid);
        }
        if tally.tested > 0 {
            rows.push((row, tally));
        }
    }
    Ok(json!({
        "target": target,
        "torch": harness.torch_version,
        "aimed_rows": aimed_rows().len(),
        "programs_per_row": per_row,
        "programs": overall.tested,
        "valid": overall.valid,
        "optimization_triggering_rate": overall.rate(),
        "rows_firing_their_aim_at_least_once": rows.iter().filter(|(_, t)| t.fired > 0).count(),
        "rows": rows.iter().map(|(row, t)| {
            let mut v = t.json();
            v["aims"] = json!(row.aims);
            (row.name.to_string(), v)
        }).collect::<serde_json::Map<String, Value>>(),
        "aims": aims.iter().map(|(a, t)| (a.to_string(), t.json())).collect::<serde_json::Map<String, Value>>(),
        "patterns_fired_instead": instead,
        "unreachable_rows": unreachable,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_aiming_at_a_freezing_pass_is_tested_under_freezing() {
        use crate::targets::compile_mode::{Compiler, Mode, Setting};
        for row in aimed_rows() {
            let mode = Mode::of(mode_byte(row), Compiler::Inductor);
            let want = if row.frozen {
                Setting::Freezing
            } else {
                Setting::Default
            };
            assert_eq!(mode.setting, want, "{}", row.name);
            assert!(
                mode.weights_as_parameters() && !mode.dynamic,
                "{}",
                row.name
            );
        }
    }

    #[test]
    fn aimed_rows_name_a_pattern_and_read_their_arguments() {
        let rows = aimed_rows();
        assert!(rows.len() >= 10, "{} aimed rows", rows.len());
        for row in rows {
            let aim = row.aims.unwrap();
            assert!(
                (aim.starts_with("pattern:") || aim.starts_with("inductor:")) && aim.len() > 9,
                "{}: {aim}",
                row.name
            );
            assert!(row.template.contains("{0}"), "{}", row.name);
        }
    }
}
