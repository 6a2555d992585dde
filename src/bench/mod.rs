//! `dlcfuzz bench …`: measurements too long for tests. Each returns a JSON summary.
//!
//! - [`target`]: execs/s and verdicts of any fuzz target, in process as libFuzzer runs it.
//! - [`generation`]: decode + emit speed and the share of models ONNX Runtime runs.
//! - [`values`]: gradient value search vs sampling vs search with repair.
//! - [`patterns`]: OATest splicing on ONNX Runtime and its optimization-triggering rate;
//!   [`torch_patterns`]: the same rate for the torch rows aimed at Inductor's rewrites.

pub mod feedback;
pub mod torch_patterns;

use crate::backend::capability::Capabilities;
use crate::backend::Backend;
use crate::campaign::Stats;
use crate::emit::emit;
use crate::gen::{Limits, Menu, TestCase, CONFIG_BYTES, STEP_BYTES};
use crate::mutate::patterns::recipe::HEADER_BYTES;
use crate::mutate::patterns::Library;
use crate::oracle::{Skip, Verdict};
use crate::pipeline::{Pipeline, TestRun};
use crate::targets::FuzzTarget;
use crate::values::repair::search_with_repair;
use crate::values::search::{gradient_search, sample_search, SearchConfig, SearchOutcome};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Cases of `bench patterns` on ONNX Runtime unless `--count` says otherwise.
const PATTERN_CASES: usize = 1000;

/// Programs per aimed row of `bench patterns --target` unless `--count` says otherwise (a
/// torch.compile test takes seconds).
const TORCH_PATTERN_PROGRAMS: usize = 4;

/// A stream of seeded random inputs of `len` bytes.
pub fn random_inputs(seed: u64, len: usize) -> impl FnMut() -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    move || {
        let mut b = vec![0u8; len];
        rng.fill(b.as_mut_slice());
        b
    }
}

/// The length of a graph recipe for `nodes` operator nodes (two step chunks per node).
pub fn recipe_len(nodes: usize) -> usize {
    CONFIG_BYTES + STEP_BYTES * nodes * 2
}

/// CPU time of the calling thread in seconds (excludes time the host steals from this VM,
/// which makes wall-clock figures on a shared machine swing by 2x).
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// A short name for a skip reason.
pub fn skip_kind(skip: &Skip) -> &'static str {
    match skip {
        Skip::Unsupported(_) => "unsupported",
        Skip::Invalid(_) => "invalid",
        Skip::NonFinite => "non-finite",
        Skip::Rejected(_) => "rejected",
        Skip::Explained(_) => "explained",
    }
}

/// A skip's reason without its numbers and cut short, so that like skips count together.
fn reason_key(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_ascii_digit())
        .take(180)
        .collect()
}

/// Verdict, finding and skip tallies of a benchmark, shared by its jobs.
#[derive(Default)]
struct Tally {
    verdicts: BTreeMap<String, usize>,
    findings: BTreeMap<String, usize>,
    examples: BTreeMap<String, String>,
    skips: BTreeMap<String, usize>,
    programs: usize,
}

impl Tally {
    /// Counts one verdict (and the programs the test compiled, when timed).
    fn add(&mut self, verdict: &Verdict) {
        let (key, example) = match verdict {
            Verdict::Pass => ("pass".to_string(), String::new()),
            Verdict::Skipped(skip) => {
                *self
                    .skips
                    .entry(reason_key(&format!("{skip:?}")))
                    .or_default() += 1;
                (format!("skip:{}", skip_kind(skip)), format!("{skip:?}"))
            }
            Verdict::Found(f) => {
                *self.findings.entry(f.signature.clone()).or_default() += 1;
                (format!("found:{:?}", f.kind), f.detail.clone())
            }
        };
        if !example.is_empty() {
            let cut: String = example.chars().take(400).collect();
            self.examples.entry(key.clone()).or_insert(cut);
        }
        *self.verdicts.entry(key).or_default() += 1;
    }
}

/// The sum of the jobs' per-stage timings (`{stage: {seconds, runs}}`), `None` when no
/// target keeps any.
fn merged_timings(targets: &[Box<dyn FuzzTarget>]) -> Option<Value> {
    let mut merged: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let mut any = false;
    for t in targets {
        let Some(Value::Object(stages)) = t.timings() else {
            continue;
        };
        any = true;
        for (stage, v) in stages {
            let entry = merged.entry(stage).or_default();
            entry.0 += v["seconds"].as_f64().unwrap_or(0.0);
            entry.1 += v["runs"].as_u64().unwrap_or(0);
        }
    }
    any.then(|| {
        json!(merged
            .into_iter()
            .map(|(k, (s, n))| (k, json!({"seconds": s, "runs": n})))
            .collect::<serde_json::Map<String, Value>>())
    })
}

/// Runs `count` seeded random inputs of `len` bytes through `targets`, one thread per
/// target (a job: each has its own compiler host), as a campaign with that many jobs does.
/// The inputs are the same whatever the number of jobs; the jobs take them in order from
/// one queue. Setup time is the caller's (the targets are built); each job's first input is
/// timed apart (lazy set-up in the compiler, `first_s` is the slowest), then execs/s over
/// the rest, programs/s (a test of a program target compiles several programs), verdict
/// counts, the share of inputs the compiler compiled and ran (a pass or a finding, not a
/// skip), and the skips by reason. `tick` is called after each input.
pub fn target(
    targets: &[Box<dyn FuzzTarget>],
    count: usize,
    seed: u64,
    len: usize,
    tick: &(dyn Fn() + Sync),
) -> Value {
    let jobs = targets.len().clamp(1, count.max(1));
    let mut next = random_inputs(seed, len);
    let inputs: Vec<Vec<u8>> = (0..count.max(jobs)).map(|_| next()).collect();
    let tally = std::sync::Mutex::new(Tally::default());
    let record = |verdict: &Verdict, programs: Option<usize>| {
        let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
        tally.add(verdict);
        tally.programs += programs.unwrap_or(0);
        tick();
    };
    let warm = std::sync::Barrier::new(jobs);
    let queue = std::sync::atomic::AtomicUsize::new(jobs);
    let (first, elapsed) = std::thread::scope(|scope| {
        let handles: Vec<_> = targets[..jobs]
            .iter()
            .enumerate()
            .map(|(job, target)| {
                let (inputs, record, warm, queue) = (&inputs, &record, &warm, &queue);
                scope.spawn(move || {
                    let first = Instant::now();
                    record(&target.run(&inputs[job], &[], None).verdict, None);
                    let first = first.elapsed();
                    warm.wait();
                    let start = Instant::now();
                    loop {
                        let k = queue.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(input) = inputs.get(k) else { break };
                        let run = target.run(input, &[], None);
                        record(&run.verdict, Some(run.programs));
                    }
                    (first, start.elapsed())
                })
            })
            .collect();
        let times: Vec<(Duration, Duration)> = handles
            .into_iter()
            .map(|h| h.join().expect("a benchmark job panicked"))
            .collect();
        let first = times.iter().map(|t| t.0).max().unwrap_or_default();
        let elapsed = times.iter().map(|t| t.1).max().unwrap_or_default();
        (first, elapsed)
    });
    let tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let compiled: usize = tally
        .verdicts
        .iter()
        .filter(|(k, _)| !k.starts_with("skip:"))
        .map(|(_, n)| n)
        .sum();
    let timed = inputs.len().saturating_sub(jobs);
    let seconds = elapsed.as_secs_f64().max(1e-9);
    json!({
        "target": targets[0].info().name,
        "compiler": targets[0].version(),
        "inputs": inputs.len(),
        "jobs": jobs,
        "first_s": first.as_secs_f64(),
        "execs_per_s": timed as f64 / seconds,
        "programs_per_s": tally.programs as f64 / seconds,
        "compiled_share": compiled as f64 / inputs.len().max(1) as f64,
        "verdicts": tally.verdicts,
        "findings": tally.findings,
        "first_of_each": tally.examples,
        "skip_reasons": tally.skips,
        "timings": merged_timings(targets),
    })
}

/// Generation speed and validity: decode + emit `count` models of `nodes` nodes on
/// `backend`'s menu (timed), then run each unoptimized on it (untimed).
pub fn generation(backend: &dyn Backend, nodes: usize, count: usize, seed: u64) -> Value {
    let menu = Capabilities::load_or_probe(backend).menu();
    let mut next = random_inputs(seed, recipe_len(nodes));
    let inputs: Vec<Vec<u8>> = (0..count).map(|_| next()).collect();
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    let models: Vec<_> = inputs
        .iter()
        .map(|b| {
            let case = TestCase::decode(b, &menu, &Limits::exact(nodes));
            let model = emit(&case);
            (case, model)
        })
        .collect();
    let elapsed = start.elapsed();
    let cpu = thread_cpu_seconds() - cpu_start;
    let mut valid = 0usize;
    let mut node_total = 0usize;
    for (case, model) in &models {
        node_total += case.graph.op_count();
        if backend
            .run(model, &Pipeline::inputs(case, model), 0)
            .is_ok()
        {
            valid += 1;
        }
    }
    let n = count.max(1) as f64;
    json!({
        "models": count,
        "nodes": nodes,
        "mean_nodes": node_total as f64 / n,
        "ms_per_model": elapsed.as_secs_f64() * 1e3 / n,
        "cpu_ms_per_model": cpu * 1e3 / n,
        "valid_fraction": valid as f64 / n,
    })
}

/// Counts of a value-search benchmark.
#[derive(Default)]
struct ValueTally {
    valid: usize,
    initially_valid: usize,
    backend_finite: usize,
    searched: usize,
    searched_valid: usize,
    repaired: usize,
    ms_total: f64,
    ms_searched: f64,
    still_failing: BTreeMap<String, usize>,
}

impl ValueTally {
    fn add(&mut self, outcome: &SearchOutcome, backend_finite: bool) {
        let ms = outcome.elapsed.as_secs_f64() * 1e3;
        self.ms_total += ms;
        self.valid += usize::from(outcome.valid);
        self.backend_finite += usize::from(backend_finite);
        self.repaired += usize::from(outcome.cuts > 0);
        if outcome.initially_valid {
            self.initially_valid += 1;
            return;
        }
        self.searched += 1;
        self.searched_valid += usize::from(outcome.valid);
        self.ms_searched += ms;
        if !outcome.valid {
            let op = outcome.error.as_ref().map_or_else(
                || outcome.failing_op.clone().unwrap_or_default(),
                |e| format!("error: {}", e.chars().take(80).collect::<String>()),
            );
            *self.still_failing.entry(op).or_default() += 1;
        }
    }

    fn summary(&self, count: usize) -> Value {
        let n = count.max(1) as f64;
        json!({
            "valid_fraction": self.valid as f64 / n,
            "ort_finite_fraction": self.backend_finite as f64 / n,
            "initially_valid_fraction": self.initially_valid as f64 / n,
            "success_when_searched": self.searched_valid as f64 / self.searched.max(1) as f64,
            "repaired_fraction": self.repaired as f64 / n,
            "mean_ms": self.ms_total / n,
            "mean_ms_when_searched": self.ms_searched / self.searched.max(1) as f64,
            "still_failing_ops": self.still_failing,
        })
    }
}

/// Numeric validity: gradient-guided value search vs plain sampling vs the gradient search
/// with structural repair (each with `budget`), on the same `count` graphs of `nodes`
/// nodes; each result is checked afterwards on `backend` (untimed).
pub fn values(
    backend: &dyn Backend,
    nodes: usize,
    count: usize,
    seed: u64,
    budget: Duration,
) -> Value {
    let menu = Capabilities::load_or_probe(backend).menu();
    let config = SearchConfig {
        budget,
        max_steps: u32::MAX,
        seed,
    };
    let mut next = random_inputs(seed, recipe_len(nodes));
    let cases: Vec<TestCase> = (0..count)
        .map(|_| TestCase::decode(&next(), &menu, &Limits::exact(nodes)))
        .collect();
    type Search = fn(&mut TestCase, &SearchConfig) -> SearchOutcome;
    let methods: [(&str, Search); 3] = [
        ("gradient", gradient_search),
        ("sampling", sample_search),
        ("gradient_and_repair", search_with_repair),
    ];
    let mut report = serde_json::Map::new();
    for (method, search) in methods {
        let mut tally = ValueTally::default();
        for case in &cases {
            let mut case = case.clone();
            let outcome = search(&mut case, &config);
            let model = emit(&case);
            let finite = backend
                .run(&model, &Pipeline::inputs(&case, &model), 0)
                .is_ok_and(|outs| outs.iter().all(crate::ir::Tensor::is_finite));
            tally.add(&outcome, finite);
        }
        report.insert(method.into(), tally.summary(count));
    }
    report.insert("nodes".into(), nodes.into());
    report.insert("models".into(), count.into());
    report.insert("budget_ms".into(), (budget.as_millis() as u64).into());
    Value::Object(report)
}

/// Counts of a pattern-synthesis benchmark: the campaign's [`Stats`] plus splices and
/// triggering.
#[derive(Default)]
struct PatternTally {
    stats: Stats,
    spliced_cases: usize,
    splices: usize,
    /// Per pass: (tests whose splice targets it and whose transformer is known, of those
    /// the tests in which it fired).
    triggered: BTreeMap<String, (usize, usize)>,
    /// The transformer each pass shows itself by.
    transformers: BTreeMap<String, String>,
    /// Where to write the models whose targeted pass did not fire, and how many per pass.
    misses: Option<(std::path::PathBuf, BTreeMap<String, usize>)>,
}

/// Models kept per pass by `bench patterns --misses`.
const MISSES_PER_PASS: usize = 3;

impl PatternTally {
    fn add(&mut self, run: &TestRun, reference_level: &str) {
        self.stats.record(
            &run.verdict,
            run.case.graph.op_count(),
            &run.fired,
            reference_level,
        );
        self.splices += run.case.spliced.len();
        self.spliced_cases += usize::from(!run.case.spliced.is_empty());
        let mut seen = BTreeSet::new();
        for s in &run.case.spliced {
            let Some(t) = &s.transformer else { continue };
            if !seen.insert(s.pass.clone()) {
                continue;
            }
            self.transformers.insert(s.pass.clone(), t.clone());
            let entry = self.triggered.entry(s.pass.clone()).or_default();
            entry.0 += 1;
            let fired = run.fired.contains(t);
            entry.1 += usize::from(fired);
            if !fired {
                self.keep_miss(run, &s.pattern, &s.pass);
            }
        }
    }

    /// Writes the model of a test whose pattern `pattern` did not fire `pass`, with what did
    /// fire, while the pass has fewer than [`MISSES_PER_PASS`] kept.
    fn keep_miss(&mut self, run: &TestRun, pattern: &str, pass: &str) {
        let Some((dir, kept)) = &mut self.misses else {
            return;
        };
        let n = kept.entry(pass.to_string()).or_default();
        if *n >= MISSES_PER_PASS {
            return;
        }
        *n += 1;
        let stem = dir.join(format!("{pass}_{n}"));
        let note = json!({ "pattern": pattern, "pass": pass, "fired": run.fired });
        let written = std::fs::write(stem.with_extension("onnx"), &run.model.bytes)
            .and_then(|()| std::fs::write(stem.with_extension("json"), note.to_string()));
        if let Err(e) = written {
            eprintln!("dlcfuzz: writing {}: {e}", stem.display());
        }
    }

    /// The summary; `registered` lists the transformers the session runs (when the backend
    /// reports them): a pass whose transformer is not among them cannot fire and is counted
    /// apart.
    fn summary(&mut self, elapsed: Duration, registered: Option<&[String]>) -> Value {
        self.stats.finish(elapsed);
        let stats = &self.stats;
        let n = stats.tests.max(1) as f64;
        let runs = |pass: &String| {
            registered.is_none_or(|r| self.transformers.get(pass).is_some_and(|t| r.contains(t)))
        };
        let rate = |include: &dyn Fn(&String) -> bool| {
            let (targeted, fired) = self
                .triggered
                .iter()
                .filter(|(p, _)| include(p))
                .fold((0, 0), |(a, b), (_, (t, f))| (a + t, b + f));
            fired as f64 / targeted.max(1) as f64
        };
        let per_pass: BTreeMap<&String, String> = self
            .triggered
            .iter()
            .filter(|(p, _)| runs(p))
            .map(|(p, (t, f))| (p, format!("{f}/{t}")))
            .collect();
        let not_run: BTreeMap<&String, String> = self
            .triggered
            .iter()
            .filter(|(p, _)| !runs(p))
            .map(|(p, (t, f))| (p, format!("{f}/{t}")))
            .collect();
        json!({
            "cases": stats.tests,
            "cases_with_a_pattern": self.spliced_cases as f64 / n,
            "patterns_per_case": self.splices as f64 / n,
            "mean_nodes": stats.mean_nodes,
            "valid_fraction": stats.valid_fraction,
            "numerically_valid_fraction": stats.valid_fraction - stats.non_finite_fraction,
            "optimization_triggering_rate": rate(&runs),
            "triggered_per_pass": per_pass,
            "rate_including_passes_not_run": rate(&|_| true),
            "passes_not_run_by_the_session": not_run,
            "tests_per_s": stats.tests_per_s,
            "findings": stats.signatures,
            "invalid_samples": stats.sample_skips,
        })
    }
}

/// Pattern synthesis on `backend` (ONNX Runtime: it reports fired transformers): splice
/// success, validity of the synthesized models, and the optimization-triggering rate (the
/// spliced pattern's pass fired at some level), over `count` cases of `library`; passes the
/// session does not run are counted apart. With `misses`, the first models whose targeted
/// pass did not fire are written there, per pass.
pub fn patterns(
    backend: Box<dyn Backend>,
    library: Library,
    count: usize,
    seed: u64,
    max_nodes: usize,
    misses: Option<&std::path::Path>,
    tick: &dyn Fn(),
) -> Result<Value, String> {
    if let Some(dir) = misses {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let limits = Limits {
        min_nodes: 1,
        max_nodes,
    };
    let pipeline = Pipeline::probed(backend, limits).with_patterns(library);
    let reference_level = pipeline.backend.levels()[0];
    let mut next = random_inputs(seed, HEADER_BYTES + recipe_len(max_nodes));
    let mut tally = PatternTally {
        misses: misses.map(|d| (d.to_path_buf(), BTreeMap::new())),
        ..PatternTally::default()
    };
    let mut registered = None;
    let start = Instant::now();
    for _ in 0..count {
        let run = pipeline.test(&next());
        tally.add(&run, reference_level);
        registered = registered.or_else(|| {
            let log = pipeline.backend.optimization_log(&run.model)?;
            Some(log.into_iter().map(|(name, _)| name).collect::<Vec<_>>())
        });
        tick();
    }
    Ok(tally.summary(start.elapsed(), registered.as_deref()))
}

/// Whether the pass-test models of `dir` (`DIR/<pass>/*.onnx`) are a pass's input or its
/// result: each is compiled as it is at `backend`'s highest level, and counted when the
/// transformer of its pass fires on it. A pattern of a model its own pass does not fire on
/// shows the pass's output form, and triggers the pass only where extraction undoes it
/// (`mutate::patterns::defuse`).
pub fn pattern_sources(
    backend: Box<dyn Backend>,
    dir: &std::path::Path,
    tick: &dyn Fn(),
) -> Result<Value, String> {
    use crate::mutate::patterns::{extract::models_by_pass, transformer_for_pass};
    let mut per_pass = serde_json::Map::new();
    let (mut models, mut fired, mut unloadable) = (0, 0, 0);
    for (pass, files) in models_by_pass(dir)? {
        let transformer = transformer_for_pass(&pass);
        let (mut pass_fired, mut pass_unloadable) = (0, 0);
        for file in &files {
            let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let model = crate::emit::onnx::OnnxModel {
                bytes,
                inputs: Vec::new(),
                outputs: Vec::new(),
                output_types: Vec::new(),
            };
            match backend.optimization_log(&model) {
                Some(log) => {
                    let fires = |(name, modified): &(String, bool)| {
                        *modified && transformer.as_ref() == Some(name)
                    };
                    pass_fired += usize::from(log.iter().any(fires));
                }
                None => pass_unloadable += 1,
            }
            tick();
        }
        models += files.len();
        fired += pass_fired;
        unloadable += pass_unloadable;
        per_pass.insert(
            pass,
            json!({ "models": files.len(), "fires_its_pass": pass_fired, "not_loaded": pass_unloadable }),
        );
    }
    Ok(json!({
        "models": models,
        "fire_their_own_pass": fired,
        "not_loaded": unloadable,
        "per_pass": per_pass,
    }))
}

/// The menu a `gen` command draws from: every spec, or what `backend` supports.
pub fn menu(backend: Option<&dyn Backend>) -> Menu {
    match backend {
        Some(b) => Capabilities::load_or_probe(b).menu(),
        None => Menu::everything(),
    }
}

/// Writes `count` generated models of `nodes` nodes from `menu` (and their fuzz inputs) into
/// `out` (`dlcfuzz gen`).
pub fn write_models(
    menu: &Menu,
    nodes: usize,
    count: usize,
    seed: u64,
    out: &std::path::Path,
) -> Result<Value, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut next = random_inputs(seed, recipe_len(nodes));
    for k in 0..count {
        let bytes = next();
        let case = TestCase::decode(&bytes, menu, &Limits::exact(nodes));
        let write = |name: String, contents: &[u8]| {
            std::fs::write(out.join(&name), contents).map_err(|e| format!("{name}: {e}"))
        };
        write(format!("model_{k:05}.onnx"), &emit(&case).bytes)?;
        write(format!("model_{k:05}.bin"), &bytes)?;
    }
    Ok(json!({ "models": count, "nodes": nodes, "out": out }))
}

/// The torch surface in eager: `count` programs of up to `ops` rows decoded from seeded
/// random inputs and run once eagerly in the Python host (no compiler): the share eager runs
/// with every value of the predicted type (validity), why the rest do not, and which rows
/// and element types the programs reached.
pub fn surface(
    count: usize,
    ops: usize,
    seed: u64,
    len: usize,
    tick: &dyn Fn(),
) -> Result<Value, String> {
    use crate::backend::python::{request_timeout, HostConfig, PythonHost};
    use crate::targets::surface::SurfaceSource;
    let host = std::sync::Mutex::new(PythonHost::new(HostConfig::local(request_timeout())));
    let source = SurfaceSource::new(ops, 1);
    let mut input = random_inputs(seed, len);
    let (mut valid, mut rows_total) = (0usize, 0usize);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut examples: BTreeMap<String, String> = BTreeMap::new();
    let mut rows: BTreeMap<&str, usize> = BTreeMap::new();
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..count {
        let bytes = input();
        let (_, generated) = source.decode(&bytes);
        rows_total += generated.ops.len();
        match source.program(&host, "torch.compile", "cpu", &bytes, &[]) {
            Ok(test) => {
                valid += 1;
                for op in &test.ops {
                    *rows.entry(op).or_default() += 1;
                }
                for ty in test.program.types.values() {
                    *types.entry(ty.scalar.torch_name().to_string()).or_default() += 1;
                }
            }
            Err(verdict) => {
                let text = format!("{verdict:?}");
                let key = reason_key(&text);
                examples
                    .entry(key.clone())
                    .or_insert_with(|| text.chars().take(300).collect());
                *reasons.entry(key).or_default() += 1;
            }
        }
        tick();
    }
    let table = crate::torch::ops::table();
    let never: Vec<&str> = table
        .iter()
        .map(|o| o.name)
        .filter(|n| !rows.contains_key(n))
        .collect();
    Ok(json!({
        "programs": count,
        "valid_share": valid as f64 / count.max(1) as f64,
        "mean_rows": rows_total as f64 / count.max(1) as f64,
        "invalid": reasons,
        "first_of_each": examples,
        "rows_declared": table.len(),
        "rows_reached_in_valid_programs": rows.len(),
        "rows_never_valid": never,
        "element_types_reached": types,
        "rows": rows,
    }))
}

/// `dlcfuzz bench …`: what to measure.
#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// Execs/s and verdicts of any fuzz target on seeded random inputs, run in process
    /// exactly as libFuzzer runs it; the first test (lazy set-up) is timed apart.
    Target {
        /// The target (`dlcfuzz targets`).
        name: String,
        /// Number of inputs.
        #[arg(long, default_value_t = 100)]
        count: usize,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Length of each random input in bytes.
        #[arg(long, default_value_t = 600)]
        len: usize,
        /// Jobs running tests in parallel, each with its own target (and compiler host), as
        /// `dlcfuzz fuzz --jobs` runs them.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
    },
    /// Does feedback pay? The guided campaign and pure generation (fresh inputs, no corpus)
    /// side by side for the same time, one isolated worker each: the compiler coverage each
    /// reached over time (CSV, PNG) and the distinct bugs after dedup (JSON).
    Feedback {
        /// The target (`dlcfuzz targets`).
        #[arg(long)]
        target: String,
        /// Seconds per side (both run at once).
        #[arg(long, default_value_t = 300)]
        time: u64,
        /// RNG seed of both campaigns.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Folder of the two campaigns and the figures (must not exist).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// The torch surface in eager (no compiler): validity of generated programs (eager runs,
    /// every value of the predicted type), and the rows and element types reached.
    Surface {
        /// Number of programs.
        #[arg(long, default_value_t = 300)]
        count: usize,
        /// Most operator rows per program.
        #[arg(long, default_value_t = 10)]
        ops: usize,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Length of each random input in bytes.
        #[arg(long, default_value_t = 600)]
        len: usize,
    },
    /// Generation speed and validity: decode + emit, then check each model on ORT (untimed).
    Gen {
        /// Operator nodes per model.
        #[arg(long, default_value_t = 10)]
        nodes: usize,
        /// Number of models.
        #[arg(long, default_value_t = 500)]
        count: usize,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Pattern synthesis on ONNX Runtime: splice success, validity of the synthesized models,
    /// and the optimization-triggering rate (the spliced pattern's pass fired at some level).
    /// With `--target torch_compile_cpu`: how often each torch row shaped like an Inductor
    /// rewrite makes Inductor fire it.
    Patterns {
        /// `builtin` or a library file.
        #[arg(long, default_value = "builtin")]
        library: String,
        /// An Inductor target (`torch_compile_cpu`) instead of ONNX Runtime.
        #[arg(long)]
        target: Option<String>,
        /// Number of cases (with `--target`: programs per aimed row) [default: 1000; 4 with
        /// `--target`].
        #[arg(long)]
        count: Option<usize>,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Most operator nodes of the seed graph.
        #[arg(long, default_value_t = 10)]
        max_nodes: usize,
        /// Writes the first models whose targeted pass did not fire into this folder (a few
        /// per pass, each with a JSON note of what fired instead; with `--target`, a few
        /// programs per row, each with its input).
        #[arg(long)]
        misses: Option<std::path::PathBuf>,
    },
    /// Whether each pass-test model `DIR/<pass>/*.onnx` fires its own pass when ONNX Runtime
    /// compiles it as it is (a model the pass does not fire on holds the pass's result)
    Sources {
        /// Folder of ONNX models grouped by optimizer pass.
        dir: std::path::PathBuf,
    },
    /// Numeric validity: gradient-guided value search vs plain sampling vs the gradient search
    /// with structural repair (each round with the budget), on the same graphs, each result
    /// checked afterwards on ORT (untimed).
    Values {
        /// Operator nodes per model.
        #[arg(long, default_value_t = 10)]
        nodes: usize,
        /// Number of models.
        #[arg(long, default_value_t = 300)]
        count: usize,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Search budget per model, in milliseconds.
        #[arg(long, default_value_t = 20)]
        budget_ms: u64,
    },
}

impl BenchCommand {
    /// How many items the benchmark runs through a progress tick, when it ticks.
    pub fn count(&self) -> Option<usize> {
        match self {
            BenchCommand::Target { count, .. } | BenchCommand::Surface { count, .. } => {
                Some(*count)
            }
            BenchCommand::Patterns { count, target, .. } => Some(match target {
                Some(_) => {
                    count.unwrap_or(TORCH_PATTERN_PROGRAMS) * torch_patterns::aimed_rows().len()
                }
                None => count.unwrap_or(PATTERN_CASES),
            }),
            _ => None,
        }
    }

    /// Runs the benchmark (`tick` after each item) and returns its JSON summary.
    pub fn run(self, tick: &(dyn Fn() + Sync)) -> Result<Value, String> {
        let ort = || crate::backend::by_name("ort");
        Ok(match self {
            BenchCommand::Target {
                name,
                count,
                seed,
                len,
                jobs,
            } => {
                crate::backend::python::share_cores(jobs);
                let config = crate::targets::TargetConfig::new(&name, 10);
                let built = (0..jobs.max(1))
                    .map(|_| crate::targets::build(&config))
                    .collect::<Result<Vec<_>, _>>()?;
                target(&built, count, seed, len, tick)
            }
            BenchCommand::Surface {
                count,
                ops,
                seed,
                len,
            } => surface(count, ops, seed, len, tick)?,
            BenchCommand::Gen { nodes, count, seed } => {
                generation(ort()?.as_ref(), nodes, count, seed)
            }
            BenchCommand::Values {
                nodes,
                count,
                seed,
                budget_ms,
            } => values(
                ort()?.as_ref(),
                nodes,
                count,
                seed,
                Duration::from_millis(budget_ms),
            ),
            BenchCommand::Patterns {
                target: Some(target),
                count,
                seed,
                max_nodes,
                misses,
                ..
            } => torch_patterns::torch_patterns(
                &target,
                count.unwrap_or(TORCH_PATTERN_PROGRAMS),
                seed,
                max_nodes,
                misses.as_deref(),
                tick,
            )?,
            BenchCommand::Patterns {
                library,
                target: None,
                count,
                seed,
                max_nodes,
                misses,
            } => patterns(
                ort()?,
                Library::named(&library)?,
                count.unwrap_or(PATTERN_CASES),
                seed,
                max_nodes,
                misses.as_deref(),
                tick,
            )?,
            BenchCommand::Sources { dir } => pattern_sources(ort()?, &dir, tick)?,
            BenchCommand::Feedback {
                target,
                time,
                seed,
                out,
            } => {
                let out = out.unwrap_or_else(|| {
                    format!("out/bench-feedback/{target}-seed{seed}-{time}s").into()
                });
                feedback::feedback(&target, Duration::from_secs(time), seed, &out)?
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_the_session_does_not_run_are_counted_apart() {
        let mut tally = PatternTally::default();
        tally.triggered.insert("Fusion".into(), (10, 8));
        tally.triggered.insert("TrainingOnly".into(), (10, 0));
        tally.transformers.insert("Fusion".into(), "Fusion".into());
        tally
            .transformers
            .insert("TrainingOnly".into(), "TrainingOnly".into());
        let registered = vec!["Fusion".to_string()];
        let summary = tally.summary(Duration::from_secs(1), Some(&registered));
        assert_eq!(summary["optimization_triggering_rate"], 0.8);
        assert_eq!(summary["rate_including_passes_not_run"], 0.4);
        assert_eq!(
            summary["passes_not_run_by_the_session"]["TrainingOnly"],
            "0/10"
        );
        assert_eq!(summary["triggered_per_pass"]["Fusion"], "8/10");
        // A backend that lists nothing counts every pass.
        let all = tally.summary(Duration::from_secs(1), None);
        assert_eq!(all["optimization_triggering_rate"], 0.4);
    }
}
