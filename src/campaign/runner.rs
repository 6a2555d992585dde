//! The crash-safe campaign runner. All state lives under the campaign folder:
//!
//! ```text
//! <out>/campaign.json        target, seed and input length (checked on --resume)
//! <out>/state.json           next input index, stats, coverage features and Python line ids
//!                            (saved every second)
//! <out>/stats.csv            time series, one row every few seconds
//! <out>/corpus/<index>.bin   inputs that reached a new feature (transformer fired, op type,
//!                            a line of a Python-hosted compiler)
//! <out>/findings/<folder>/   one folder per signature (see `finding`), with `count`
//! <out>/inflight/job-<k>/    the input (and model) each job is testing right now
//! ```
//!
//! Inputs are a pure function of (seed, index, corpus), findings are written the moment they
//! are seen, and the in-flight input of every job is on disk while it runs. So after
//! `kill -9`, `--resume` re-runs what was in flight (isolated jobs; an in-process job that
//! died files its input as a crash), re-queues findings still lacking a `report.md` for
//! reduction, and goes on from the saved index: at worst a second of tests runs twice.

use super::executor::{Death, Executor, Outcome, Request};
use super::finding::Envelope;
use super::finding::{self, read_count, write_count};
use super::pool::{PassPool, PoolState};
use super::worker::Isolation;
use super::Stats;
use crate::gen::menu::op_key;
use crate::mutate::levels::{Level, LevelPolicy};
use crate::oracle::near_miss::NearMiss;
use crate::oracle::Verdict;
use crate::targets::mutator::Mutator;
use crate::targets::TargetConfig;
use rand::distr::weighted::WeightedIndex;
use rand::distr::Distribution;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Sub-folder of findings.
pub const FINDINGS: &str = "findings";
/// Sub-folder of the corpus.
pub const CORPUS: &str = "corpus";
/// The stats time series.
pub const STATS_CSV: &str = "stats.csv";
const CAMPAIGN_JSON: &str = "campaign.json";
/// The campaign state file under the output folder.
pub const STATE_JSON: &str = "state.json";
const INFLIGHT: &str = "inflight";
const INFLIGHT_INPUT: &str = "input.bin";
const CSV_HEADER: &str = "seconds,tests,tests_per_s,valid_fraction,unsupported_fraction,findings,finding_tests,transformers_fired,features,peak_test_rss_mb,restarts,py_lines,compiler_coverage";

/// Automatic reduction of new findings, each in a `dlcfuzz reduce` child process.
#[derive(Clone, Debug)]
pub struct AutoReduce {
    /// The `dlcfuzz` executable.
    pub program: PathBuf,
    /// Budget per finding.
    pub budget: Duration,
    /// Limits on each candidate.
    pub isolation: Isolation,
}

/// A campaign's settings.
#[derive(Clone, Debug)]
pub struct CampaignConfig {
    /// The campaign folder.
    pub out: PathBuf,
    /// What is tested.
    pub target: TargetConfig,
    /// Time budget of this run.
    pub time: Duration,
    /// Stop after this many tests in total (0: no limit).
    pub max_tests: u64,
    /// Seed of the input stream.
    pub seed: u64,
    /// Length of a fresh random input.
    pub input_len: usize,
    /// Continue the campaign already in `out`.
    pub resume: bool,
    /// Reduce new findings automatically.
    pub reduce: Option<AutoReduce>,
    /// The seed pool of a pattern campaign ([`super::pool`]).
    pub pool: Option<PassPool>,
    /// Whether the campaign learns as it runs (mutates its corpus, aims its seed pool);
    /// `false`: pure generation, every input fresh, no corpus (the baseline of `dlcfuzz
    /// bench feedback`). Coverage is tracked either way.
    pub guided: bool,
}

impl CampaignConfig {
    /// The mutator of the target's inputs (structure-aware on graph recipes).
    pub fn mutator(&self) -> Mutator {
        crate::targets::by_name(&self.target.name)
            .map_or(Mutator::of(crate::targets::Input::OnnxFile), |t| {
                Mutator::of(t.input)
            })
    }

    /// Whether the target's inputs start with a HirFuzz constraint-level byte, which the
    /// campaign sets from its adaptive level-0 probability.
    pub fn constraint_levels(&self) -> bool {
        crate::targets::by_name(&self.target.name).is_ok_and(|t| t.constraint_levels)
    }
}

/// What `campaign.json` pins: a resumed campaign must match it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Pinned {
    target: TargetConfig,
    seed: u64,
    input_len: usize,
    decoder_version: u32,
}

/// What `state.json` saves.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    next_index: u64,
    stats: Stats,
    features: BTreeSet<String>,
    /// HirFuzz's constraint-level policy (targets with mutations).
    #[serde(default)]
    levels: LevelPolicy,
    /// Ids of the Python lines ([`crate::backend::python::coverage::line_id`]) and
    /// instrumented edges ([`crate::sancov::edge_id`]) covered so far: features too, kept as
    /// numbers rather than among the named ones.
    #[serde(default)]
    py_lines: BTreeSet<u32>,
    /// The seed pool's counts (pattern campaigns).
    #[serde(default)]
    pool: PoolState,
    /// Every (optimization fired, op type of the test) pair seen, as a hash of the two
    /// names: the finest view of an uninstrumented compiler's work a campaign has, counted in
    /// [`Stats::compiler_coverage`].
    #[serde(default)]
    fired_ops: BTreeSet<u64>,
    /// The near-miss features seen ([`NearMiss::feature`]): how near to a mismatch each
    /// output site has come, in powers of two.
    #[serde(default)]
    near_misses: BTreeSet<String>,
}

struct Shared {
    state: State,
    corpus: Vec<Vec<u8>>,
    /// The file name of each corpus entry.
    corpus_names: Vec<String>,
    /// The optimizations each corpus entry fired (empty for entries of an earlier run).
    corpus_fired: Vec<Vec<String>>,
    /// [`rarest_first`]'s weights and when they were computed: refreshed once a second, not
    /// for every input (entries admitted since wait for the refresh).
    chooser: Option<(WeightedIndex<f64>, Instant)>,
    pending: Vec<Vec<u8>>,
    last_save: Instant,
    last_csv: Instant,
    error: Option<String>,
}

/// Sets the level byte of a mutated input (its first) so that level 0 comes with the
/// policy's current probability; the draw is a function of (seed, index).
fn set_level_byte(bytes: &mut [u8], policy: &LevelPolicy, seed: u64, index: u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ index.rotate_left(17) ^ 0x1e7e1);
    if let Some(first) = bytes.first_mut() {
        *first = policy.level_byte(rng.random(), rng.random());
    }
}

/// Input number `index` of the stream: fresh random bytes of `len`, or (half the time, once
/// there is a corpus) a corpus entry changed by one `mutator` mutation (structure-aware on a
/// graph recipe: one node's bytes, a step inserted, duplicated, deleted or swapped, a fresh
/// recipe…, at most `len` bytes long; a few bytes overwritten otherwise), as the libFuzzer
/// targets mutate.
pub fn input(seed: u64, index: u64, len: usize, corpus: &[Vec<u8>], mutator: Mutator) -> Vec<u8> {
    input_choosing(seed, index, len, corpus, mutator, |rng| {
        rng.random_range(0..corpus.len())
    })
}

/// [`input`] with the corpus entry to mutate chosen by `choose`.
fn input_choosing(
    seed: u64,
    index: u64,
    len: usize,
    corpus: &[Vec<u8>],
    mutator: Mutator,
    choose: impl FnOnce(&mut rand_chacha::ChaCha8Rng) -> usize,
) -> Vec<u8> {
    let mut rng =
        rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index);
    if !corpus.is_empty() && rng.random_bool(0.5) {
        let parent = &corpus[choose(&mut rng)];
        let max = len.max(parent.len());
        let mut data = parent.clone();
        data.resize(max, 0);
        let mut overwrite = |data: &mut [u8], size: usize, _max: usize| {
            for _ in 0..rng.random_range(1..=8) {
                if size > 0 {
                    let at = rng.random_range(0..size);
                    data[at] = rng.random();
                }
            }
            size
        };
        let seed = (index as u32) ^ (seed as u32).rotate_left(7);
        let size = mutator.mutate(&mut data, parent.len(), max, seed, &mut overwrite);
        data.truncate(size);
        data
    } else {
        let mut bytes = vec![0u8; len];
        rng.fill(bytes.as_mut_slice());
        bytes
    }
}

/// The weights of corpus entries to mutate: `1 / (1 + n)` where `n` counts the tests that
/// fired the rarest optimization the entry fired (every test, for an entry that fired none):
/// entries behind rarely reached optimizations are mutated most, so that their mutants keep
/// reaching them with other ops around. `None` for an empty corpus.
fn rarest_first(
    fired: &[Vec<String>],
    tests: &BTreeMap<String, u64>,
) -> Option<WeightedIndex<f64>> {
    let everything: u64 = tests.values().sum();
    let weights = fired.iter().map(|names| {
        let rarest = names
            .iter()
            .map(|n| tests.get(n).copied().unwrap_or(0))
            .min()
            .unwrap_or(everything);
        1.0 / (1.0 + rarest as f64)
    });
    WeightedIndex::new(weights).ok()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The finding folders under a campaign's `findings/`, sorted.
pub fn finding_dirs(out: &Path) -> Vec<PathBuf> {
    finding::folders_in(&out.join(FINDINGS))
}

fn append_csv(out: &Path, stats: &Stats) -> std::io::Result<()> {
    let path = out.join(STATS_CSV);
    let fresh = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if fresh {
        writeln!(f, "{CSV_HEADER}")?;
    }
    writeln!(
        f,
        "{:.1},{},{:.2},{:.4},{:.4},{},{},{},{},{:.0},{},{},{}",
        stats.seconds,
        stats.tests,
        stats.tests_per_s,
        stats.valid_fraction,
        stats.unsupported_fraction,
        stats.findings,
        stats.finding_tests,
        stats.transformer_tests.len(),
        stats.features,
        stats.peak_test_rss_mb,
        stats.restarts,
        stats.py_lines,
        stats.compiler_coverage
    )
}

/// Opens (or, with `resume`, reopens) the campaign folder and returns the saved state.
fn open(config: &CampaignConfig) -> Result<State, String> {
    let out = &config.out;
    for sub in [FINDINGS, CORPUS, INFLIGHT] {
        std::fs::create_dir_all(out.join(sub)).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let pinned = Pinned {
        target: config.target.clone(),
        seed: config.seed,
        input_len: config.input_len,
        decoder_version: crate::gen::DECODER_VERSION,
    };
    let path = out.join(CAMPAIGN_JSON);
    match read_json::<Pinned>(&path) {
        Some(saved) if !config.resume => {
            return Err(format!(
                "{} already holds a campaign ({:?}); pass --resume to continue it or choose a fresh --out",
                out.display(),
                saved.target
            ))
        }
        Some(saved) if saved != pinned => {
            return Err(format!(
                "cannot resume {}: it was started with {saved:?}, this run asks for {pinned:?}",
                out.display()
            ))
        }
        Some(_) => {}
        None => write_atomic(&path, &serde_json::to_vec_pretty(&pinned).expect("json"))
            .map_err(|e| e.to_string())?,
    }
    let mut state: State = read_json(&out.join(STATE_JSON)).unwrap_or_default();
    // The folders are the truth about findings: counts and signatures come from them.
    state.stats.signatures.clear();
    for dir in finding_dirs(out) {
        if let Ok(report) = finding::Report::read(&dir) {
            state
                .stats
                .signatures
                .insert(report.finding.signature, read_count(&dir));
        }
        if !dir.join(super::finding::TARGET_JSON).exists() {
            let _ = Envelope::write(&dir, &config.target);
        }
    }
    Ok(state)
}

/// Inputs the previous run left in flight: re-run by isolated jobs; filed as crashes when
/// the jobs run in process (the input took the whole process down).
fn leftovers(config: &CampaignConfig, isolated: bool, shared: &Mutex<Shared>) {
    let Ok(rd) = std::fs::read_dir(config.out.join(INFLIGHT)) else {
        return;
    };
    for job in rd.filter_map(|e| e.ok()).map(|e| e.path()) {
        let Ok(bytes) = std::fs::read(job.join(INFLIGHT_INPUT)) else {
            continue;
        };
        if isolated {
            shared.lock().expect("lock").pending.push(bytes);
        } else {
            let death = Death {
                cause: "process-died".into(),
                stderr: "the campaign process died while testing this input (in-process run)"
                    .into(),
                model: std::fs::read(job.join(crate::targets::MODEL)).ok(),
                history: Vec::new(),
            };
            let outcome = Outcome::of_death(death);
            let mut s = shared.lock().expect("lock");
            record(config, &mut s, &bytes, &outcome, &mpsc::channel().0, "");
        }
        let _ = std::fs::remove_file(job.join(INFLIGHT_INPUT));
    }
}

/// Books one outcome: finding folder and count, stats, corpus (an input reaching a new
/// feature joins it), periodic saves.
fn record(
    config: &CampaignConfig,
    s: &mut Shared,
    bytes: &[u8],
    outcome: &Outcome,
    new_findings: &mpsc::Sender<PathBuf>,
    reference_level: &str,
) {
    let findings = config.out.join(FINDINGS);
    let level = config
        .constraint_levels()
        .then(|| Level::of_byte(bytes.first().copied().unwrap_or(0)));
    if let Some(level) = level {
        let stats = &mut s.state.stats;
        stats.level0_p = s.state.levels.p;
        if level == Level::Zero {
            stats.level0_tests += 1;
        }
    }
    s.state.stats.record(
        &outcome.verdict,
        outcome.nodes,
        &outcome.fired,
        reference_level,
    );
    if let Verdict::Found(f) = &outcome.verdict {
        let created = match &outcome.death {
            Some(death) => {
                let died = finding::DeadTest {
                    death,
                    ops: &outcome.ops,
                    nodes: outcome.nodes,
                };
                let dir = finding::write_death(&findings, bytes, &died, f, &config.target.name)
                    .and_then(|dir| {
                        // The inputs the dead worker ran before: a crash that needs them
                        // replays after them (`super::history`).
                        if let Some(dir) = &dir {
                            super::history::write(dir, &death.history)?;
                        }
                        Ok(dir)
                    });
                dir.unwrap_or_else(|e| {
                    tracing::error!("cannot write a finding: {e}");
                    None
                })
            }
            None => outcome.new_finding.clone(),
        };
        let dir = finding::folder(&findings, f.kind, &f.signature);
        let count = s
            .state
            .stats
            .signatures
            .get(&f.signature)
            .copied()
            .unwrap_or(1);
        let _ = write_count(&dir, count);
        if let Some(dir) = created {
            if let Some(level) = level {
                s.state.levels.record_new_finding(level);
            }
            let _ = Envelope::write(&dir, &config.target);
            let _ = new_findings.send(dir);
        }
    }
    let mut new_feature = false;
    let ops = outcome.ops.split(',').filter(|o| !o.is_empty());
    let ops: Vec<&str> = ops.collect();
    for feature in outcome
        .fired
        .iter()
        .map(|t| format!("fired:{t}"))
        .chain(ops.iter().map(|o| format!("op:{o}")))
    {
        new_feature |= s.state.features.insert(feature);
    }
    for t in &outcome.fired {
        for o in &ops {
            new_feature |= s.state.fired_ops.insert(op_key(t, op_key(o, 0)));
        }
    }
    // Python lines always count in the stats; they admit inputs only when fed back.
    let mut new_line = false;
    for id in &outcome.coverage {
        new_line |= s.state.py_lines.insert(*id);
    }
    new_feature |= new_line && crate::feedback::lines_fed();
    if let Some(near) = outcome.near_miss.as_ref().and_then(NearMiss::feature) {
        let nearer = s.state.near_misses.insert(near);
        new_feature |= nearer && crate::feedback::near_misses_fed();
        s.state.stats.near_misses = s.state.near_misses.len();
    }
    s.state.stats.py_lines = s.state.py_lines.len();
    if let Some(pool) = &config.pool {
        let passed = matches!(outcome.verdict, Verdict::Pass);
        new_feature |= pool.record(&mut s.state.pool, &outcome.fired, passed);
    }
    s.state.stats.compiler_coverage = s.state.fired_ops.len() + s.state.py_lines.len();
    if new_feature && outcome.death.is_none() && config.guided {
        let name = format!("{:08}.bin", s.state.next_index);
        let _ = std::fs::write(config.out.join(CORPUS).join(&name), bytes);
        if config.pool.is_some() {
            s.state
                .pool
                .entries
                .insert(name.clone(), outcome.fired.clone());
        }
        s.corpus.push(bytes.to_vec());
        s.corpus_names.push(name);
        s.corpus_fired.push(outcome.fired.clone());
    }
    s.state.stats.features = s.state.features.len();
}

fn save(config: &CampaignConfig, s: &mut Shared, csv: bool) {
    if let Ok(json) = serde_json::to_vec(&s.state) {
        let _ = write_atomic(&config.out.join(STATE_JSON), &json);
    }
    s.last_save = Instant::now();
    if csv {
        let _ = append_csv(&config.out, &s.state.stats);
        s.last_csv = Instant::now();
    }
}

/// Input `index` of the campaign: [`input`], or in a pattern campaign the pool's choice of
/// parent and aim.
fn next_input(config: &CampaignConfig, s: &mut Shared, index: u64, mutator: Mutator) -> Vec<u8> {
    let (seed, len) = (config.seed, config.input_len);
    if !config.guided {
        return input(seed, index, len, &[], mutator);
    }
    let Some(pool) = &config.pool else {
        let stale = s
            .chooser
            .as_ref()
            .is_none_or(|(_, at)| at.elapsed() >= Duration::from_secs(1));
        if stale {
            let weights = rarest_first(&s.corpus_fired, &s.state.stats.transformer_tests);
            s.chooser = weights.map(|w| (w, Instant::now()));
        }
        let chooser = s.chooser.as_ref().map(|(w, _)| w);
        return input_choosing(seed, index, len, &s.corpus, mutator, |rng| {
            chooser.map_or(0, |w| w.sample(rng))
        });
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ index.rotate_left(29) ^ 0x9001);
    let Shared {
        state,
        corpus,
        corpus_names,
        ..
    } = s;
    let mut bytes = input_choosing(seed, index, len, corpus, mutator, |_| {
        pool.parent(&state.pool, corpus_names, &mut rng)
    });
    pool.aim(&mut state.pool, &mut bytes, &mut rng);
    bytes
}

/// Runs one job until the campaign ends.
#[allow(clippy::too_many_arguments)]
fn job(
    k: usize,
    executor: &mut (dyn Executor + Send),
    config: &CampaignConfig,
    shared: &Mutex<Shared>,
    stop: &AtomicBool,
    new_findings: mpsc::Sender<PathBuf>,
    clock: &(Instant, f64),
    on_progress: &(dyn Fn(&Stats) + Sync),
) {
    let inflight = config.out.join(INFLIGHT).join(format!("job-{k}"));
    let _ = std::fs::create_dir_all(&inflight);
    let findings = config.out.join(FINDINGS);
    let (start, before) = *clock;
    let (mutator, levels) = (config.mutator(), config.constraint_levels());
    loop {
        let bytes = {
            let mut s = shared.lock().expect("lock");
            let done = config.max_tests > 0 && s.state.stats.tests >= config.max_tests;
            if stop.load(Ordering::Relaxed) || start.elapsed() >= config.time || done {
                break;
            }
            match s.pending.pop() {
                Some(b) => b,
                None => {
                    let index = s.state.next_index;
                    s.state.next_index += 1;
                    let mut bytes = next_input(config, &mut s, index, mutator);
                    if levels {
                        set_level_byte(&mut bytes, &s.state.levels, config.seed, index);
                    }
                    bytes
                }
            }
        };
        let _ = std::fs::write(inflight.join(INFLIGHT_INPUT), &bytes);
        let outcome = match executor.execute(&Request::fuzz(bytes.clone(), &findings)) {
            Ok(o) => o,
            Err(e) => {
                shared.lock().expect("lock").error = Some(e);
                stop.store(true, Ordering::Relaxed);
                break;
            }
        };
        let _ = std::fs::remove_file(inflight.join(INFLIGHT_INPUT));
        let mut s = shared.lock().expect("lock");
        record(
            config,
            &mut s,
            &bytes,
            &outcome,
            &new_findings,
            executor.reference_level(),
        );
        let stats = &mut s.state.stats;
        stats.peak_test_rss_mb = stats
            .peak_test_rss_mb
            .max(executor.peak_rss_kb() as f64 / 1024.0);
        stats.peak_campaign_rss_mb = stats
            .peak_campaign_rss_mb
            .max(super::executor::own_peak_rss_kb() as f64 / 1024.0);
        stats.restarts = stats.restarts.max(executor.restarts());
        stats.finish(Duration::from_secs_f64(
            before + start.elapsed().as_secs_f64(),
        ));
        if s.last_save.elapsed() >= Duration::from_secs(1) {
            let csv = s.last_csv.elapsed() >= Duration::from_secs(5);
            save(config, &mut s, csv);
        }
        on_progress(&s.state.stats);
    }
}

/// The family of a queued finding: its signature without the op list (a crash's message,
/// a localized mismatch's op, an inconsistency's level). The reducer serves the family it
/// has reduced least, so a flood of one bug's signatures does not starve the others.
fn family(dir: &Path) -> String {
    finding::Report::read(dir)
        .map(|r| crate::reduce::reduction_key(&r.finding.signature))
        .unwrap_or_default()
}

/// How long a campaign whose tests have ended goes on starting reductions of the findings
/// still queued: a tenth of its time, at most a minute (a finding reduced is one merged into
/// its bug; one left unreduced counts as a bug of its own until `--resume` or `dlcfuzz
/// reduce`).
fn drain_time(time: Duration) -> Duration {
    (time / 10).min(Duration::from_secs(60))
}

/// Reduces each new finding folder in a `dlcfuzz reduce` child, one at a time: of the folders
/// queued, one of the family reduced least so far, first come first served. Once `drain_until`
/// is set (the tests have ended), it starts no reduction after that instant.
fn reducer(reduce: &AutoReduce, queue: mpsc::Receiver<PathBuf>, drain_until: &OnceLock<Instant>) {
    let mut waiting: Vec<(String, PathBuf)> = Vec::new();
    let mut served: BTreeMap<String, usize> = BTreeMap::new();
    loop {
        if waiting.is_empty() {
            match queue.recv() {
                Ok(dir) => waiting.push((family(&dir), dir)),
                Err(_) => return,
            }
        }
        waiting.extend(queue.try_iter().map(|dir| (family(&dir), dir)));
        let next = (0..waiting.len())
            .min_by_key(|&i| (served.get(&waiting[i].0).copied().unwrap_or(0), i))
            .expect("a waiting folder");
        let (family, dir) = waiting.remove(next);
        *served.entry(family).or_default() += 1;
        if drain_until
            .get()
            .is_some_and(|until| Instant::now() > *until)
        {
            continue;
        }
        let child = std::process::Command::new(&reduce.program)
            .arg("reduce")
            .arg(&dir)
            .args(["--budget", &reduce.budget.as_secs().to_string()])
            .args([
                "--timeout",
                &reduce.isolation.timeout.as_secs_f64().to_string(),
            ])
            .args(["--rss-limit-mb", &reduce.isolation.rss_limit_mb.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(mut child) = child else { continue };
        let deadline = Instant::now() + reduce.budget + Duration::from_secs(180);
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() > deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }
}

/// Runs a campaign with one job per executor; `on_progress` sees the stats after each test.
pub fn run(
    config: &CampaignConfig,
    mut executors: Vec<Box<dyn Executor + Send>>,
    isolated: bool,
    on_progress: &(dyn Fn(&Stats) + Sync),
) -> Result<Stats, String> {
    let state = open(config)?;
    let before = state.stats.seconds;
    let mut corpus_files: Vec<PathBuf> = std::fs::read_dir(config.out.join(CORPUS))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    corpus_files.sort();
    let (corpus, corpus_names): (Vec<_>, Vec<_>) = corpus_files
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((std::fs::read(p).ok()?, name))
        })
        .unzip();
    let shared = Mutex::new(Shared {
        state,
        corpus_fired: vec![Vec::new(); corpus.len()],
        chooser: None,
        corpus,
        corpus_names,
        pending: Vec::new(),
        last_save: Instant::now(),
        last_csv: Instant::now() - Duration::from_secs(60),
        error: None,
    });
    leftovers(config, isolated, &shared);
    let (tx, rx) = mpsc::channel::<PathBuf>();
    // Findings of earlier runs that were never reported go first.
    if config.reduce.is_some() {
        for dir in finding_dirs(&config.out) {
            let stub = super::bugs::merged_into(&dir).is_some();
            if !stub && !dir.join("report.md").exists() {
                let _ = tx.send(dir);
            }
        }
    }
    let stop = AtomicBool::new(false);
    let drain_until = OnceLock::new();
    let clock = (Instant::now(), before);
    let tests_ended = std::thread::scope(|scope| {
        let reducer_thread = config.reduce.as_ref().map(|r| {
            let drain_until = &drain_until;
            scope.spawn(move || reducer(r, rx, drain_until))
        });
        let handles: Vec<_> = executors
            .iter_mut()
            .enumerate()
            .map(|(k, executor)| {
                let tx = tx.clone();
                let (shared, stop, clock) = (&shared, &stop, &clock);
                scope.spawn(move || {
                    job(
                        k,
                        executor.as_mut(),
                        config,
                        shared,
                        stop,
                        tx,
                        clock,
                        on_progress,
                    )
                })
            })
            .collect();
        for h in handles {
            let _ = h.join();
        }
        let ended = clock.0.elapsed();
        // The queue drains for a short while; what is left waits for --resume or
        // `dlcfuzz reduce`.
        let _ = drain_until.set(Instant::now() + drain_time(config.time));
        drop(tx);
        if let Some(t) = reducer_thread {
            let _ = t.join();
        }
        ended
    });
    let mut s = shared.into_inner().expect("lock");
    // The rate is over the tests' time, not the reductions' after it.
    s.state
        .stats
        .finish(Duration::from_secs_f64(before + tests_ended.as_secs_f64()));
    save(config, &mut s, true);
    // Hit counts have grown since each report.md was written: bring them up to date.
    for dir in finding_dirs(&config.out) {
        if dir.join("report.md").exists() {
            let _ = super::report_md::write(&dir);
        }
    }
    match s.error {
        Some(e) => Err(e),
        None => Ok(s.state.stats),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::executor::Outcome;

    #[test]
    fn the_reduction_queue_drains_a_tenth_of_the_campaign_at_most_a_minute() {
        assert_eq!(drain_time(Duration::from_secs(60)), Duration::from_secs(6));
        assert_eq!(
            drain_time(Duration::from_secs(3600)),
            Duration::from_secs(60)
        );
    }

    /// A guided campaign's configuration for `target`, writing under `out`.
    fn guided_config(out: &Path, target: &str) -> CampaignConfig {
        std::fs::create_dir_all(out.join(CORPUS)).expect("corpus folder");
        CampaignConfig {
            out: out.to_path_buf(),
            target: TargetConfig::new(target, 4),
            time: Duration::from_secs(1),
            max_tests: 0,
            seed: 1,
            input_len: 16,
            resume: false,
            reduce: None,
            pool: None,
            guided: true,
        }
    }

    /// A campaign's shared state before its first test.
    fn fresh_shared() -> Shared {
        Shared {
            state: State::default(),
            corpus: Vec::new(),
            corpus_names: Vec::new(),
            corpus_fired: Vec::new(),
            chooser: None,
            pending: Vec::new(),
            last_save: Instant::now(),
            last_csv: Instant::now(),
            error: None,
        }
    }

    #[test]
    fn a_test_nearer_to_a_mismatch_than_any_before_at_its_site_is_admitted() {
        let out = tempfile::tempdir().expect("temp dir");
        let config = guided_config(out.path(), "ort_cpu");
        let mut s = fresh_shared();
        let (tx, _rx) = mpsc::channel();
        let near = |site: &str, ratio: f64| Outcome {
            verdict: Verdict::Pass,
            nodes: 1,
            ops: "Add".into(),
            fired: Vec::new(),
            coverage: Vec::new(),
            new_finding: None,
            death: None,
            near_miss: Some(NearMiss {
                site: site.into(),
                ratio,
            }),
        };
        for (bytes, outcome) in [
            (b"opens", near("Add:f32", 0.01)),
            (b"same!", near("Add:f32", 0.012)),
            (b"nearr", near("Add:f32", 0.6)),
            (b"noise", near("Mul:f32", 1e-6)),
            (b"other", near("Mul:f32", 0.1)),
        ] {
            record(&config, &mut s, bytes, &outcome, &tx, "libtorch");
        }
        assert_eq!(s.state.stats.near_misses, 3);
        let admitted: Vec<Vec<u8>> = if crate::feedback::near_misses_fed() {
            // The first also brought the op type `Add`; the second is in the same bucket.
            vec![b"opens".to_vec(), b"nearr".to_vec(), b"other".to_vec()]
        } else {
            vec![b"opens".to_vec()]
        };
        assert_eq!(s.corpus, admitted);
    }

    #[test]
    fn new_python_lines_admit_an_input_and_are_counted() {
        let out = tempfile::tempdir().expect("temp dir");
        let config = guided_config(out.path(), "torch_compile_cpu");
        let mut s = fresh_shared();
        let (tx, _rx) = mpsc::channel();
        for (bytes, coverage) in [
            (b"first", vec![1, 2, 3]),
            (b"known", vec![2, 3]),
            (b"fresh", vec![3, 4]),
        ] {
            let outcome = Outcome {
                verdict: Verdict::Pass,
                nodes: 0,
                ops: String::new(),
                fired: Vec::new(),
                coverage,
                new_finding: None,
                death: None,
                near_miss: None,
            };
            record(&config, &mut s, bytes, &outcome, &tx, "eager");
        }
        assert_eq!(s.state.stats.py_lines, 4);
        assert_eq!(s.state.py_lines, BTreeSet::from([1, 2, 3, 4]));
        let admitted: Vec<Vec<u8>> = if crate::feedback::lines_fed() {
            vec![b"first".to_vec(), b"fresh".to_vec()]
        } else {
            Vec::new()
        };
        assert_eq!(s.corpus, admitted);
        // The line ids survive a save, and a state saved before they existed still loads.
        let saved = serde_json::to_value(&s.state).expect("state JSON");
        let back: State = serde_json::from_value(saved.clone()).expect("state loads");
        assert_eq!(back.py_lines, s.state.py_lines);
        let mut older = saved;
        older.as_object_mut().expect("object").remove("py_lines");
        older["stats"]
            .as_object_mut()
            .expect("object")
            .remove("py_lines");
        let back: State = serde_json::from_value(older).expect("an older state loads");
        assert!(back.py_lines.is_empty() && back.stats.py_lines == 0);
    }

    #[test]
    fn entries_behind_rare_optimizations_are_mutated_most() {
        let fired = vec![
            vec!["Common".to_string()],
            vec!["Common".to_string(), "Rare".to_string()],
            Vec::new(),
        ];
        let tests: BTreeMap<String, u64> =
            [("Common".to_string(), 999), ("Rare".to_string(), 0)].into();
        let w = rarest_first(&fired, &tests).expect("weights");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut drawn = [0usize; 3];
        for _ in 0..1000 {
            drawn[w.sample(&mut rng)] += 1;
        }
        assert!(drawn[1] > 950, "{drawn:?}");
        assert!(rarest_first(&[], &tests).is_none());
    }

    #[test]
    fn inputs_are_a_function_of_seed_index_and_corpus() {
        use crate::targets::Input;
        let graph = Mutator::of(Input::Graph { header: 1 });
        assert_eq!(input(1, 5, 64, &[], graph), input(1, 5, 64, &[], graph));
        assert_ne!(input(1, 5, 64, &[], graph), input(1, 6, 64, &[], graph));
        assert_ne!(input(1, 5, 64, &[], graph), input(2, 5, 64, &[], graph));
        let corpus = vec![vec![7u8; 64]];
        let mutated = (0..20)
            .map(|i| input(1, i, 64, &corpus, graph))
            .filter(|b| b.iter().filter(|x| **x == 7).count() >= 32)
            .count();
        assert!(
            mutated >= 5,
            "about half the inputs mutate the corpus entry"
        );
        // An ONNX file has its bytes overwritten: a corpus entry keeps its length.
        let files = [vec![7u8; 10]];
        let file = Mutator::of(Input::OnnxFile);
        let lengths: Vec<usize> = (0..20)
            .map(|i| input(1, i, 64, &files, file).len())
            .collect();
        assert!(lengths.iter().all(|n| *n == 10 || *n == 64), "{lengths:?}");
        assert!(lengths.contains(&10), "{lengths:?}");
    }
}
