//! Starting a campaign (`dlcfuzz fuzz`): the target's executors (isolated workers, or the
//! target in this process) and the runner's configuration, from the command's options.

use super::executor::{Executor, InProcess};
use super::pool::PassPool;
use super::runner::{self, AutoReduce, CampaignConfig};
use super::worker::{Isolated, Isolation};
use super::Stats;
use crate::targets::TargetConfig;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `dlcfuzz fuzz` was asked for.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// The target and its configuration.
    pub target: TargetConfig,
    /// The campaign folder.
    pub out: PathBuf,
    /// Time budget of this run.
    pub time: Duration,
    /// Seed of the input stream.
    pub seed: u64,
    /// Stop after this many tests in total (0: when the time is up).
    pub max_tests: u64,
    /// Worker processes running tests in parallel.
    pub jobs: usize,
    /// Limits on each isolated test.
    pub isolation: Isolation,
    /// Run tests in this process instead of isolated workers.
    pub in_process: bool,
    /// Continue the campaign in `out`.
    pub resume: bool,
    /// Reduction budget per new finding (zero: no automatic reduction).
    pub reduce_budget: Duration,
    /// The `dlcfuzz` executable workers and reducers run.
    pub program: PathBuf,
    /// Learn as it runs (corpus, seed pool); `false`: pure generation.
    pub guided: bool,
}

/// Runs the campaign `options` describe; `progress` sees the stats after each test.
pub fn fuzz(options: &FuzzOptions, progress: &(dyn Fn(&Stats) + Sync)) -> Result<Stats, String> {
    let info = crate::targets::by_name(&options.target.name)?;
    // Older campaigns named a backend (`ort`); campaign.json records the target's own name.
    let target = TargetConfig {
        name: info.name.to_string(),
        ..options.target.clone()
    };
    let config = CampaignConfig {
        out: options.out.clone(),
        target: target.clone(),
        time: options.time,
        max_tests: options.max_tests,
        seed: options.seed,
        input_len: info.input.random_len(target.max_nodes),
        resume: options.resume,
        reduce: (!options.reduce_budget.is_zero()).then(|| AutoReduce {
            program: options.program.clone(),
            budget: options.reduce_budget,
            isolation: options.isolation,
        }),
        // The pool steers by fired transformers, which only ONNX Runtime reports.
        pool: (target.name == crate::targets::differential::PATTERNS_TARGET)
            .then(|| target.pattern_library())
            .flatten()
            .transpose()?
            .map(|library| PassPool::new(&library)),
        guided: options.guided,
    };
    if info.input == crate::targets::Input::OnnxFile && !options.resume {
        seed_corpus(&options.out, info.name)?;
    }
    // The workers and their hosts inherit this.
    crate::backend::python::share_cores(options.jobs);
    let mut executors: Vec<Box<dyn Executor + Send>> = Vec::new();
    for k in 0..options.jobs.max(1) {
        executors.push(if options.in_process {
            Box::new(InProcess {
                target: crate::targets::build(&target)?,
            })
        } else {
            let inflight = options.out.join("inflight").join(format!("job-{k}"));
            Box::new(Isolated::start(
                &options.program,
                &target,
                options.isolation,
                &inflight,
            )?)
        });
    }
    runner::run(&config, executors, !options.in_process, progress)
}

/// Copies the checked-in seeds of target `name` into the campaign corpus of `out`, when that
/// corpus is empty: random bytes are almost never an ONNX file, so the load targets mutate
/// real models from the start.
fn seed_corpus(out: &Path, name: &str) -> Result<(), String> {
    let corpus = out.join(super::runner::CORPUS);
    let empty = std::fs::read_dir(&corpus).map_or(true, |mut d| d.next().is_none());
    let Ok(seeds) = std::fs::read_dir(crate::paths::seeds(name)) else {
        return Ok(());
    };
    if !empty {
        return Ok(());
    }
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    for seed in seeds.flatten() {
        let file = format!("seed-{}", seed.file_name().to_string_lossy());
        std::fs::copy(seed.path(), corpus.join(&file)).map_err(|e| format!("{file}: {e}"))?;
    }
    Ok(())
}
