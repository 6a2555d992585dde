//! `dlcfuzz bench feedback`: does learning as it runs pay? The guided campaign (corpus
//! mutation, the pattern pool's aim) and pure generation (the same generator, every input
//! fresh, no corpus) run side by side on the same build, one isolated worker each, at the
//! same time for the same wall time, so on a machine with two free cores each gets one.
//!
//! The yardstick is the compiler's own work as a campaign sees it
//! ([`crate::campaign::Stats::compiler_coverage`]: distinct (optimization fired, op type)
//! pairs, Python lines of a Python-hosted compiler, and tract's own edges in a build made by
//! `scripts/sancov-build`), sampled over time from each side's
//! `stats.csv`, and the distinct bugs after dedup ([`crate::report::summarize`]). Written
//! under the bench folder: both campaigns, `feedback.csv` (one row per sample and side), and
//! `feedback.png` (coverage over time, both sides).

use crate::campaign::launch::{fuzz, FuzzOptions};
use crate::campaign::worker::Isolation;
use crate::report::plot::{line_chart, Series};
use crate::targets::TargetConfig;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The two sides, in the order of the CSV and the figure.
const SIDES: [(&str, bool); 2] = [("guided", true), ("random", false)];

/// What one side reached.
#[derive(Debug, Default)]
struct Side {
    /// `(seconds, tests, compiler coverage)` samples from `stats.csv`.
    samples: Vec<(f64, u64, usize)>,
    tests: u64,
    coverage: usize,
    bugs: usize,
    signatures: usize,
}

/// Runs the guided campaign and pure generation of `target` side by side for `time` each
/// (seed `seed`, campaigns under `out`, which must not hold an earlier run), and returns the
/// summary.
pub fn feedback(target: &str, time: Duration, seed: u64, out: &Path) -> Result<Value, String> {
    if out.exists() {
        return Err(format!(
            "{} exists: choose a fresh --out (a bench compares two fresh campaigns)",
            out.display()
        ));
    }
    let info = crate::targets::by_name(target)?;
    let config = TargetConfig::new(info.name, crate::gen::Limits::DEFAULT_MAX_NODES);
    let program =
        std::env::current_exe().map_err(|e| format!("locating the dlcfuzz executable: {e}"))?;
    let options = |guided: bool, dir: PathBuf| FuzzOptions {
        target: config.clone(),
        out: dir,
        time,
        seed,
        max_tests: 0,
        jobs: 1,
        isolation: Isolation::for_target(info),
        in_process: false,
        resume: false,
        // Reduction would spend one side's CPU on its findings, not on tests.
        reduce_budget: Duration::ZERO,
        program: program.clone(),
        guided,
    };
    // Both sides run at once: each host gets its share of the cores for Inductor's C++
    // compile workers, or a side whose programs compile many kernels in parallel takes the
    // other side's CPU (and its own campaign's `share_cores(1)` would give it every core).
    crate::backend::python::share_cores(SIDES.len());
    let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = SIDES
            .iter()
            .map(|(name, guided)| {
                let opts = options(*guided, out.join(name));
                scope.spawn(move || fuzz(&opts, &|_| {}).map(|_| ()))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a side panicked".into())))
            .collect()
    });
    for ((name, _), result) in SIDES.iter().zip(results) {
        result.map_err(|e| format!("the {name} campaign: {e}"))?;
    }
    let sides: Vec<Side> = SIDES
        .iter()
        .map(|(name, _)| side(&out.join(name)))
        .collect::<Result<_, _>>()?;
    write_csv(&out.join("feedback.csv"), &sides)?;
    let png = out.join("feedback.png");
    draw(&png, &sides, info.name)?;
    let (guided, random) = (&sides[0], &sides[1]);
    Ok(json!({
        "target": info.name,
        "seed": seed,
        "seconds_per_side": time.as_secs_f64(),
        "coverage": "distinct (optimization fired, op type) pairs + Python lines of the compiler + its instrumented edges (sancov builds)",
        "guided_coverage": guided.coverage,
        "random_coverage": random.coverage,
        "coverage_ratio": guided.coverage as f64 / random.coverage.max(1) as f64,
        "guided_bugs": guided.bugs,
        "random_bugs": random.bugs,
        "guided_signatures": guided.signatures,
        "random_signatures": random.signatures,
        "guided_tests": guided.tests,
        "random_tests": random.tests,
        "csv": out.join("feedback.csv"),
        "png": png,
    }))
}

/// One side's samples, final figures and bugs, read from its campaign folder.
fn side(dir: &Path) -> Result<Side, String> {
    let rows = crate::report::csv_rows(dir)?;
    let samples: Vec<(f64, u64, usize)> = rows
        .iter()
        .filter_map(|r| {
            let at = |k: &str| r.get(k).copied();
            Some((
                at("seconds")?,
                at("tests")? as u64,
                at("compiler_coverage")? as usize,
            ))
        })
        .collect();
    if samples.is_empty() && !rows.is_empty() {
        return Err(format!(
            "{}: no compiler_coverage column (a campaign of an older dlcfuzz?)",
            dir.join(crate::campaign::runner::STATS_CSV).display()
        ));
    }
    let (_, tests, coverage) = samples.last().copied().unwrap_or_default();
    let summary = crate::report::summarize(dir);
    Ok(Side {
        samples,
        tests,
        coverage,
        bugs: summary.clusters.len(),
        signatures: summary.signatures,
    })
}

fn write_csv(path: &Path, sides: &[Side]) -> Result<(), String> {
    let mut csv = String::from("side,seconds,tests,compiler_coverage\n");
    for ((name, _), side) in SIDES.iter().zip(sides) {
        for (s, t, c) in &side.samples {
            csv.push_str(&format!("{name},{s:.1},{t},{c}\n"));
        }
    }
    std::fs::write(path, csv).map_err(|e| format!("{}: {e}", path.display()))
}

/// Coverage over time, one line per side.
fn draw(path: &Path, sides: &[Side], target: &str) -> Result<(), String> {
    let series: Vec<Series> = SIDES
        .iter()
        .zip(sides)
        .map(|((name, _), side)| Series {
            label: name,
            points: side
                .samples
                .iter()
                .map(|(s, _, c)| (*s, *c as f64))
                .collect(),
        })
        .collect();
    line_chart(
        path,
        &format!("{target}: guided vs pure generation"),
        "compiler coverage",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_read_from_its_stats_series() {
        let dir = std::env::temp_dir().join(format!("dlcfuzz-feedback-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(crate::campaign::runner::STATS_CSV),
            "seconds,tests,compiler_coverage\n1.0,10,4\n2.5,30,9\n",
        )
        .unwrap();
        let side = side(&dir).unwrap();
        assert_eq!(side.samples, vec![(1.0, 10, 4), (2.5, 30, 9)]);
        assert_eq!((side.tests, side.coverage, side.bugs), (30, 9, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
