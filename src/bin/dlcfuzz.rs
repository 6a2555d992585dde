//! The `dlcfuzz` command line: generate models, fuzz a backend, replay findings, check the
//! reference, benchmark.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use dlcfuzz::backend::capability::Capabilities;
use dlcfuzz::backend::ort::OrtCpu;
use dlcfuzz::backend::tract::Tract;
use dlcfuzz::backend::Backend;
use dlcfuzz::campaign::executor::{Executor, InProcess, Target};
use dlcfuzz::campaign::harness::Harness;
use dlcfuzz::campaign::post::{self, PostOptions};
use dlcfuzz::campaign::runner::{self, AutoReduce, CampaignConfig};
use dlcfuzz::campaign::worker::{self, Isolated, Isolation};
use dlcfuzz::campaign::{self, finding};
use dlcfuzz::emit::onnx::emit;
use dlcfuzz::emit::read::{pattern_input, read_model};
use dlcfuzz::gen::{Limits, Menu, TestCase, CONFIG_BYTES, STEP_BYTES};
use dlcfuzz::mutate::patterns::recipe::HEADER_BYTES;
use dlcfuzz::mutate::patterns::{extract, Library};
use dlcfuzz::oracle::{Skip, Verdict};
use dlcfuzz::report;
use dlcfuzz::values::repair::search_with_repair;
use dlcfuzz::values::search::{gradient_search, sample_search, SearchConfig, SearchOutcome};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "dlcfuzz",
    version,
    about = "Fuzz deep-learning compilers with valid generated graphs"
)]
struct Cli {
    /// ONNX Runtime release to test (installed by `scripts/setup.sh --ort VERSION`); default:
    /// `DLCFUZZ_ORT_VERSION`, else the newest (1.32.0). Workers and reducers inherit it.
    #[arg(long, global = true)]
    ort_version: Option<String>,
    /// An ONNX Runtime shared library to test instead (any build, release 1.31 or newer).
    #[arg(long, global = true)]
    ort_lib: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write generated ONNX models (plus their fuzz inputs) to a folder.
    Gen {
        /// Operator nodes per model.
        #[arg(long, default_value_t = 10)]
        nodes: usize,
        /// Number of models.
        #[arg(long, default_value_t = 10)]
        count: usize,
        /// RNG seed for the fuzz inputs.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
        /// Use every op spec instead of those the backend supports.
        #[arg(long)]
        all_ops: bool,
        /// Backend whose capability table picks the ops (`ort` or `tract`).
        #[arg(long, default_value = "ort")]
        backend: String,
    },
    /// Run a crash-safe differential fuzz campaign: each test in an isolated worker process
    /// (per-test timeout and RSS limit; crashes, hangs and OOMs become findings), state on
    /// disk (`--resume` continues after kill -9), stats in OUT/stats.csv, new findings reduced
    /// automatically.
    Fuzz {
        /// Backend to test (`ort` or `tract`; `faulty` for reliability tests).
        #[arg(long, default_value = "ort")]
        backend: String,
        /// Time budget of this run in seconds.
        #[arg(long, default_value_t = 60)]
        time: u64,
        /// Campaign folder.
        #[arg(long, default_value = "out/fuzz")]
        out: PathBuf,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Most operator nodes per test.
        #[arg(long, default_value_t = 10)]
        max_nodes: usize,
        /// Stop after this many tests in total (0 = until the time is up).
        #[arg(long, default_value_t = 0)]
        max_tests: u64,
        /// Splice optimizer patterns into each seed graph (OATest): `builtin` or a library
        /// written by `dlcfuzz patterns extract`.
        #[arg(long)]
        patterns: Option<String>,
        /// Read a mutation header first: HirFuzz constraint levels (p = 0.6 of level 0,
        /// adapted by α = 0.01 per new bug in campaigns) and ONNX function, If and Loop
        /// rewrites, as the `ort_cpu_mutated` fuzz target does.
        #[arg(long)]
        mutate: bool,
        /// Worker processes running tests in parallel.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Per-test timeout in seconds (isolated runs).
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// RSS limit of a worker in MiB (isolated runs).
        #[arg(long, default_value_t = 2048)]
        rss_limit_mb: u64,
        /// Run tests in this process: faster, but a crashing backend ends the run (its input
        /// is filed as a crash on --resume).
        #[arg(long)]
        no_isolation: bool,
        /// Continue the campaign in --out.
        #[arg(long)]
        resume: bool,
        /// Reduction budget per new finding in seconds (0: do not reduce automatically).
        #[arg(long, default_value_t = 30)]
        reduce_budget: u64,
    },
    /// Serve tests for an isolated campaign over stdin/stdout (started by `fuzz` and
    /// `reduce`).
    #[command(hide = true)]
    Worker {
        /// Backend.
        #[arg(long)]
        backend: String,
        /// Most operator nodes.
        #[arg(long)]
        max_nodes: usize,
        /// Pattern library.
        #[arg(long)]
        patterns: Option<String>,
        /// Read a mutation header first: HirFuzz constraint levels (p = 0.6 of level 0,
        /// adapted by α = 0.01 per new bug in campaigns) and ONNX function, If and Loop
        /// rewrites, as the `ort_cpu_mutated` fuzz target does.
        #[arg(long)]
        mutate: bool,
        /// Folder for the in-flight model.
        #[arg(long)]
        inflight: PathBuf,
    },
    /// Reduce a finding folder (delta debugging on the graph, every candidate isolated), bisect
    /// its culprit passes (ONNX Runtime) and write its report.md.
    Reduce {
        /// The finding folder.
        finding: PathBuf,
        /// Time budget in seconds.
        #[arg(long, default_value_t = 60)]
        budget: u64,
        /// Per-candidate timeout in seconds.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Worker RSS limit in MiB.
        #[arg(long, default_value_t = 2048)]
        rss_limit_mb: u64,
    },
    /// Write a campaign summary (report.md with PNG plots, distinct bugs after dedup) into a
    /// campaign folder.
    Report {
        /// The campaign folder (`--out` of `dlcfuzz fuzz`).
        dir: PathBuf,
    },
    /// Re-run a finding folder or a raw fuzz input and print the verdict.
    Replay {
        /// Finding folder (with input.bin) or input file.
        path: PathBuf,
        /// Backend the input was found on (`ort` or `tract`).
        #[arg(long, default_value = "ort")]
        backend: String,
        /// Most operator nodes (must match the campaign that found it).
        #[arg(long, default_value_t = 10)]
        max_nodes: usize,
        /// When the input still finds a bug, write a finding folder (model, repro.py, report)
        /// under this folder: turns a libFuzzer crash artifact into a full report.
        #[arg(long)]
        save: Option<PathBuf>,
        /// The pattern library the campaign used (`builtin` or a file), if any.
        #[arg(long)]
        patterns: Option<String>,
        /// Read a mutation header first: HirFuzz constraint levels (p = 0.6 of level 0,
        /// adapted by α = 0.01 per new bug in campaigns) and ONNX function, If and Loop
        /// rewrites, as the `ort_cpu_mutated` fuzz target does.
        #[arg(long)]
        mutate: bool,
        /// Replay the input as found, ignoring the folder's reduction.json.
        #[arg(long)]
        unreduced: bool,
    },
    /// Re-run a raw input (a libFuzzer artifact, say) on any differential fuzz target and print
    /// its verdict; `--save DIR` also writes a standalone reproducer there (torch.compile:
    /// `repro.py` with the program and inputs inline; TVM: `model.onnx` + `repro.py`).
    ReplayTarget {
        /// cargo-fuzz target name (`torch_compile_cpu`, `tvm_llvm`, `ort_cpu`, ...).
        name: String,
        /// Input file.
        input: PathBuf,
        /// Folder for the reproducer.
        #[arg(long)]
        save: Option<PathBuf>,
    },
    /// Run a standalone ONNX file (a reduced reproducer) at every level of a backend, on the
    /// documented pattern inputs (element i = (7 i mod 11) - 3), and print each level's
    /// outputs or error.
    RunModel {
        /// The `.onnx` file (static input and output shapes).
        path: PathBuf,
        /// Backend (`ort` or `tract`).
        #[arg(long, default_value = "ort")]
        backend: String,
        /// Most elements printed per output.
        #[arg(long, default_value_t = 16)]
        show: usize,
    },
    /// Show (probing if needed) the op × dtype table a backend supports.
    Capabilities {
        /// Backend (`ort` or `tract`).
        #[arg(long, default_value = "ort")]
        backend: String,
    },
    /// Check the libtorch reference against the ONNX backend test models (with expected
    /// outputs) that the pip `onnx` package ships; prints one line per model and the pass rate.
    ReferenceCheck {
        /// The `onnx/backend/test/data` folder (default: the one under .deps/py).
        #[arg(long)]
        data: Option<PathBuf>,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: Bench,
    },
    /// Optimizer-pattern libraries (OATest).
    Patterns {
        #[command(subcommand)]
        what: PatternsCommand,
    },
}

#[derive(Subcommand)]
enum PatternsCommand {
    /// Extract abstract patterns from `DIR/<pass>/*.onnx` and write the library as JSON.
    Extract {
        /// Folder of ONNX models grouped by optimizer pass.
        dir: PathBuf,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Print patterns per pass, drops by reason and uncovered ops of a library (`builtin` or a
    /// file).
    Stats {
        /// `builtin` or a library file.
        library: String,
    },
}

#[derive(Subcommand)]
enum Bench {
    /// Execs/s and verdicts of one differential fuzz target (`ort_cpu`, `torch_compile_cpu`,
    /// `tvm_llvm`, ...) on seeded random inputs, run in process exactly as libFuzzer runs it;
    /// the first test's setup (capability probing, host start) is timed apart.
    Target {
        /// cargo-fuzz target name.
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
    /// Pattern synthesis on ONNX Runtime: splice success, validity of the synthesized models
    /// (the unoptimized run succeeds and the value search makes every value finite), and the
    /// optimization-triggering rate (the spliced pattern's pass fired at some level).
    Patterns {
        /// `builtin` or a library file.
        #[arg(long, default_value = "builtin")]
        library: String,
        /// Number of cases.
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// RNG seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Most operator nodes of the seed graph.
        #[arg(long, default_value_t = 10)]
        max_nodes: usize,
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

/// The backend called `name`.
fn backend(name: &str) -> Result<Box<dyn Backend>> {
    Ok(match name {
        "ort" => Box::new(OrtCpu::new().map_err(anyhow::Error::msg)?),
        "tract" => Box::new(Tract::new()),
        "tvm" => Box::new(
            dlcfuzz::backend::tvm::Tvm::llvm(dlcfuzz::backend::python::request_timeout())
                .map_err(anyhow::Error::msg)?,
        ),
        _ => bail!(
            "unknown backend {name:?}: this build supports `ort` (ONNX Runtime CPU), `tract` and `tvm`"
        ),
    })
}

/// The pattern library called `name`: `builtin`, or a file written by `patterns extract`.
fn library(name: &str) -> Result<Library> {
    Library::named(name).map_err(anyhow::Error::msg)
}

/// The harness testing the backend called `name`, splicing the patterns of `patterns` when
/// given.
fn harness(name: &str, max_nodes: usize, patterns: Option<&str>) -> Result<Harness> {
    Harness::for_target(&Target {
        backend: name.to_string(),
        max_nodes,
        patterns: patterns.map(str::to_string),
        mutations: false,
    })
    .map_err(anyhow::Error::msg)
}

/// Counts of a value-search benchmark.
#[derive(Default)]
struct ValueTally {
    valid: usize,
    initially_valid: usize,
    ort_finite: usize,
    searched: usize,
    searched_valid: usize,
    repaired: usize,
    ms_total: f64,
    ms_searched: f64,
    still_failing: std::collections::BTreeMap<String, usize>,
}

impl ValueTally {
    fn add(&mut self, outcome: &SearchOutcome, ort_finite: bool) {
        let ms = outcome.elapsed.as_secs_f64() * 1e3;
        self.ms_total += ms;
        self.valid += usize::from(outcome.valid);
        self.ort_finite += usize::from(ort_finite);
        self.repaired += usize::from(outcome.cuts > 0);
        if outcome.initially_valid {
            self.initially_valid += 1;
        } else {
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
    }

    fn summary(&self, count: usize) -> serde_json::Value {
        let n = count.max(1) as f64;
        serde_json::json!({
            "valid_fraction": self.valid as f64 / n,
            "ort_finite_fraction": self.ort_finite as f64 / n,
            "initially_valid_fraction": self.initially_valid as f64 / n,
            "success_when_searched": self.searched_valid as f64 / self.searched.max(1) as f64,
            "repaired_fraction": self.repaired as f64 / n,
            "mean_ms": self.ms_total / n,
            "mean_ms_when_searched": self.ms_searched / self.searched.max(1) as f64,
            "still_failing_ops": self.still_failing,
        })
    }
}

/// Counts of a pattern-synthesis benchmark: the campaign's [`campaign::Stats`] plus splices
/// and triggering.
#[derive(Default)]
struct PatternTally {
    stats: campaign::Stats,
    spliced_cases: usize,
    splices: usize,
    /// Per pass: (tests whose splice targets it and whose transformer is known, of those
    /// the tests in which it fired).
    triggered: std::collections::BTreeMap<String, (usize, usize)>,
}

impl PatternTally {
    fn add(&mut self, run: &dlcfuzz::campaign::harness::TestRun) {
        let reference_level = dlcfuzz::backend::ort::LEVELS[0];
        self.stats.record(
            &run.verdict,
            run.case.graph.op_count(),
            &run.fired,
            reference_level,
        );
        self.splices += run.case.spliced.len();
        self.spliced_cases += usize::from(!run.case.spliced.is_empty());
        let mut seen = std::collections::BTreeSet::new();
        for s in &run.case.spliced {
            let Some(t) = &s.transformer else { continue };
            if !seen.insert(s.pass.clone()) {
                continue;
            }
            let entry = self.triggered.entry(s.pass.clone()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(run.fired.contains(t));
        }
    }

    fn summary(&mut self, elapsed: Duration) -> serde_json::Value {
        self.stats.finish(elapsed);
        let stats = &self.stats;
        let n = stats.tests.max(1) as f64;
        let (targeted, fired) = self
            .triggered
            .values()
            .fold((0, 0), |(a, b), (t, f)| (a + t, b + f));
        let per_pass: std::collections::BTreeMap<&String, String> = self
            .triggered
            .iter()
            .map(|(p, (t, f))| (p, format!("{f}/{t}")))
            .collect();
        serde_json::json!({
            "cases": stats.tests,
            "cases_with_a_pattern": self.spliced_cases as f64 / n,
            "patterns_per_case": self.splices as f64 / n,
            "mean_nodes": stats.mean_nodes,
            "valid_fraction": stats.valid_fraction,
            "numerically_valid_fraction": stats.valid_fraction - stats.non_finite_fraction,
            "optimization_triggering_rate": fired as f64 / targeted.max(1) as f64,
            "triggered_per_pass": per_pass,
            "tests_per_s": stats.tests_per_s,
            "findings": stats.signatures,
            "invalid_samples": stats.sample_skips,
        })
    }
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

fn random_inputs(seed: u64, nodes: usize) -> impl FnMut() -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let len = CONFIG_BYTES + STEP_BYTES * nodes * 2;
    move || {
        let mut b = vec![0u8; len];
        rng.fill(b.as_mut_slice());
        b
    }
}

fn progress(len: Option<u64>) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    bar
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Set before any thread starts; child processes (workers, reducers) inherit them.
    if let Some(v) = &cli.ort_version {
        std::env::set_var("DLCFUZZ_ORT_VERSION", v);
    }
    if let Some(p) = &cli.ort_lib {
        std::env::set_var("ORT_DYLIB_PATH", p);
    }
    match cli.command {
        Command::Gen {
            nodes,
            count,
            seed,
            out,
            all_ops,
            backend: name,
        } => {
            let menu = if all_ops {
                Menu::everything()
            } else {
                Capabilities::load_or_probe(backend(&name)?.as_ref()).menu()
            };
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            let mut next = random_inputs(seed, nodes);
            let bar = progress(Some(count as u64));
            for k in 0..count {
                let bytes = next();
                let case = TestCase::decode(&bytes, &menu, &Limits::exact(nodes));
                std::fs::write(out.join(format!("model_{k:05}.onnx")), emit(&case).bytes)?;
                std::fs::write(out.join(format!("model_{k:05}.bin")), &bytes)?;
                bar.inc(1);
            }
            bar.finish_and_clear();
            println!(
                "{}",
                serde_json::json!({ "models": count, "nodes": nodes, "out": out })
            );
        }
        Command::Fuzz {
            backend,
            time,
            out,
            seed,
            max_nodes,
            max_tests,
            patterns,
            mutate,
            jobs,
            timeout,
            rss_limit_mb,
            no_isolation,
            resume,
            reduce_budget,
        } => {
            let target = Target {
                backend,
                max_nodes,
                patterns,
                mutations: mutate,
            };
            let isolation = Isolation {
                timeout: Duration::from_secs_f64(timeout),
                rss_limit_mb,
            };
            let program = std::env::current_exe().context("locating the dlcfuzz executable")?;
            let header = if target.patterns.is_some() {
                HEADER_BYTES
            } else {
                0
            } + if target.mutations {
                dlcfuzz::mutate::levels::HEADER_BYTES
            } else {
                0
            };
            let config = CampaignConfig {
                out: out.clone(),
                target: target.clone(),
                time: Duration::from_secs(time),
                max_tests,
                seed,
                input_len: header + CONFIG_BYTES + STEP_BYTES * max_nodes * 2,
                resume,
                reduce: (reduce_budget > 0).then(|| AutoReduce {
                    program: program.clone(),
                    budget: Duration::from_secs(reduce_budget),
                    isolation,
                }),
            };
            let jobs = jobs.max(1);
            let mut executors: Vec<Box<dyn Executor + Send>> = Vec::new();
            for k in 0..jobs {
                executors.push(if no_isolation {
                    Box::new(InProcess {
                        harness: Harness::for_target(&target).map_err(anyhow::Error::msg)?,
                    })
                } else {
                    let inflight = out.join("inflight").join(format!("job-{k}"));
                    Box::new(
                        Isolated::start(&program, &target, isolation, &inflight)
                            .map_err(anyhow::Error::msg)?,
                    )
                });
            }
            let bar = progress(None);
            let stats = runner::run(&config, executors, !no_isolation, &|s| {
                if s.tests % 8 == 0 {
                    bar.set_message(format!(
                        "{} tests, {:.1}/s, valid {:.3}, unsupported {:.3}, findings {}, transformers {}, features {}, restarts {}",
                        s.tests,
                        s.tests_per_s,
                        s.valid_fraction,
                        s.unsupported_fraction,
                        s.findings,
                        s.transformer_tests.len(),
                        s.features,
                        s.restarts
                    ));
                    bar.tick();
                }
            })
            .map_err(anyhow::Error::msg)?;
            bar.finish_and_clear();
            for (sig, n) in &stats.signatures {
                eprintln!("finding x{n}: {sig}");
            }
            println!("{}", serde_json::to_string(&stats)?);
        }
        Command::Worker {
            backend,
            max_nodes,
            patterns,
            mutate,
            inflight,
        } => {
            let target = Target {
                backend,
                max_nodes,
                patterns,
                mutations: mutate,
            };
            let harness = Harness::for_target(&target).map_err(anyhow::Error::msg)?;
            worker::serve(&harness, &inflight)?;
        }
        Command::Reduce {
            finding,
            budget,
            timeout,
            rss_limit_mb,
        } => {
            let opts = PostOptions {
                program: std::env::current_exe().context("locating the dlcfuzz executable")?,
                budget: Duration::from_secs(budget),
                isolation: Isolation {
                    timeout: Duration::from_secs_f64(timeout),
                    rss_limit_mb,
                },
            };
            let reduction = post::process(&finding, &opts).map_err(anyhow::Error::msg)?;
            eprintln!(
                "reduced {} -> {} operator nodes; report in {}",
                reduction.original_nodes,
                reduction.reduced_nodes,
                finding.join("report.md").display()
            );
            println!("{}", serde_json::to_string(&reduction)?);
        }
        Command::Report { dir } => {
            let path = report::campaign(&dir).map_err(anyhow::Error::msg)?;
            let summary = report::summarize(&dir);
            println!(
                "{}",
                serde_json::json!({
                    "report": path,
                    "distinct_signatures": summary.signatures,
                    "distinct_after_dedup": summary.clusters.len(),
                    "reduced": summary.reduced,
                    "mean_reduction_ratio": summary.mean_reduction_ratio,
                })
            );
        }
        Command::Replay {
            path,
            backend,
            max_nodes,
            save,
            patterns,
            mutate,
            unreduced,
        } => {
            let bytes = campaign::read_input(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            // A finding folder names its own target; the flags are for raw inputs.
            let envelope = path
                .is_dir()
                .then(|| post::Envelope::read(&path).ok())
                .flatten();
            if let Some(e) = &envelope {
                if e.decoder_version != dlcfuzz::gen::DECODER_VERSION {
                    eprintln!(
                        "warning: saved by decoder version {}, this build decodes version {}",
                        e.decoder_version,
                        dlcfuzz::gen::DECODER_VERSION
                    );
                }
            }
            let target = envelope.map(|e| e.target).unwrap_or(Target {
                backend,
                max_nodes,
                patterns,
                mutations: mutate,
            });
            let harness = Harness::for_target(&target).map_err(anyhow::Error::msg)?;
            let edits = match post::read_reduction(&path) {
                Some(r) if !unreduced => r.edits,
                _ => Vec::new(),
            };
            let mut case = harness.prepare(&bytes);
            dlcfuzz::reduce::apply_all(&mut case, &edits).map_err(anyhow::Error::msg)?;
            let run = harness.judge(case);
            eprintln!(
                "{} op nodes: {}",
                run.case.graph.op_count(),
                Harness::op_types(&run.case)
            );
            // A finding folder also holds the model it produced: decoding drift (a changed
            // decoder or capability table) shows up here instead of as a silent non-repro.
            let saved = path
                .is_dir()
                .then(|| {
                    let name = if unreduced && path.join(post::ORIGINAL_MODEL).exists() {
                        post::ORIGINAL_MODEL
                    } else {
                        finding::MODEL
                    };
                    std::fs::read(path.join(name)).ok()
                })
                .flatten();
            let matches_saved = saved.map(|m| m == run.model.bytes);
            if matches_saved == Some(false) {
                eprintln!("warning: the bytes now decode to a different model than the saved one");
            }
            if let (Some(out), Verdict::Found(f)) = (&save, &run.verdict) {
                match finding::write_new(out, &bytes, &run, f, harness.backend.as_ref())? {
                    Some(dir) => {
                        post::Envelope::write(&dir, &target)?;
                        finding::write_count(&dir, 1)?;
                        eprintln!("finding written to {}", dir.display());
                    }
                    None => eprintln!("a folder for this signature exists under {}", out.display()),
                }
            }
            println!(
                "{}",
                serde_json::json!({ "verdict": run.verdict, "model_matches_saved": matches_saved })
            );
        }
        Command::RunModel {
            path,
            backend: name,
            show,
        } => {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let (model, input_types) = read_model(bytes).map_err(anyhow::Error::msg)?;
            let inputs: Vec<_> = input_types.iter().map(pattern_input).collect();
            let feeds: Vec<_> = inputs.iter().collect();
            let b = backend(&name)?;
            for (level, level_name) in b.levels().iter().enumerate() {
                let result = match b.run(&model, &feeds, level) {
                    Ok(outs) => {
                        serde_json::json!({ "outputs": outs.iter().map(|t| serde_json::json!({
                        "shape": t.shape,
                        "values": t.data.to_f64_vec().into_iter().take(show).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>() })
                    }
                    Err(e) => serde_json::json!({ "error": e }),
                };
                println!(
                    "{}",
                    serde_json::json!({ "level": level_name, "result": result })
                );
            }
        }
        Command::Capabilities { backend: name } => {
            let b = backend(&name)?;
            let caps = Capabilities::load_or_probe(b.as_ref());
            for (op, sigs) in caps.table() {
                println!("{op:24} {}", sigs.join(" "));
            }
            for ((op, sig, class), message) in &caps.broken {
                println!(
                    "BROKEN {op} {sig} [{class}]: {}",
                    message.chars().take(160).collect::<String>()
                );
            }
            println!(
                "{}",
                serde_json::json!({ "backend": b.version(), "supported": caps.supported.len(), "unsupported": caps.unsupported.len(), "broken": caps.broken.len(), "ops": caps.table().len() })
            );
        }
        Command::ReferenceCheck { data } => {
            use dlcfuzz::reference::onnx_models;
            let data = data.unwrap_or_else(onnx_models::default_data_dir);
            if !data.is_dir() {
                bail!(
                    "no ONNX backend test data at {} (run scripts/setup.sh)",
                    data.display()
                );
            }
            let reports = onnx_models::check_all(&data);
            print!("{}", onnx_models::table(&reports));
            println!("reference: {}", dlcfuzz::reference::version());
        }
        Command::Bench {
            what:
                Bench::Patterns {
                    library: name,
                    count,
                    seed,
                    max_nodes,
                },
        } => {
            let harness = harness("ort", max_nodes, Some(&name))?;
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let len = HEADER_BYTES + CONFIG_BYTES + STEP_BYTES * max_nodes * 2;
            let bar = progress(Some(count as u64));
            let mut tally = PatternTally::default();
            let start = Instant::now();
            for _ in 0..count {
                let mut bytes = vec![0u8; len];
                rng.fill(bytes.as_mut_slice());
                let run = harness.test(&bytes);
                tally.add(&run);
                bar.inc(1);
            }
            bar.finish_and_clear();
            println!(
                "{}",
                serde_json::to_string_pretty(&tally.summary(start.elapsed()))?
            );
        }
        Command::Patterns {
            what: PatternsCommand::Extract { dir, out },
        } => {
            let library = extract::extract(&dir).map_err(anyhow::Error::msg)?;
            library.save(&out).map_err(anyhow::Error::msg)?;
            print!("{}", library.stats());
            eprintln!("written to {}", out.display());
        }
        Command::Patterns {
            what: PatternsCommand::Stats { library: name },
        } => {
            print!("{}", library(&name)?.stats());
        }
        Command::ReplayTarget { name, input, save } => {
            let run = dlcfuzz::targets::differential_by_name(&name)
                .ok_or_else(|| anyhow::anyhow!("unknown differential target {name:?}"))?;
            let bytes =
                std::fs::read(&input).with_context(|| format!("reading {}", input.display()))?;
            let verdict = run(&bytes);
            println!("{}", serde_json::to_string_pretty(&verdict)?);
            if let Some(dir) = save {
                save_repro(&name, &bytes, &dir)?;
                eprintln!("reproducer written to {}", dir.display());
            }
        }
        Command::Bench {
            what:
                Bench::Target {
                    name,
                    count,
                    seed,
                    len,
                },
        } => {
            let run = dlcfuzz::targets::differential_by_name(&name)
                .ok_or_else(|| anyhow::anyhow!("unknown differential target {name:?}"))?;
            println!(
                "{}",
                serde_json::to_string_pretty(&bench_target(run, count, seed, len))?
            );
        }
        Command::Bench {
            what: Bench::Gen { nodes, count, seed },
        } => {
            let backend = OrtCpu::new().map_err(anyhow::Error::msg)?;
            let menu = Capabilities::load_or_probe(&backend).menu();
            let mut next = random_inputs(seed, nodes);
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
                if backend.run(model, &Harness::inputs(case, model), 0).is_ok() {
                    valid += 1;
                }
            }
            println!(
                "{}",
                serde_json::json!({
                    "models": count,
                    "nodes": nodes,
                    "mean_nodes": node_total as f64 / count.max(1) as f64,
                    "ms_per_model": elapsed.as_secs_f64() * 1e3 / count.max(1) as f64,
                    "cpu_ms_per_model": cpu * 1e3 / count.max(1) as f64,
                    "valid_fraction": valid as f64 / count.max(1) as f64,
                })
            );
        }
        Command::Bench {
            what:
                Bench::Values {
                    nodes,
                    count,
                    seed,
                    budget_ms,
                },
        } => {
            let backend = OrtCpu::new().map_err(anyhow::Error::msg)?;
            let menu = Capabilities::load_or_probe(&backend).menu();
            let config = SearchConfig {
                budget: Duration::from_millis(budget_ms),
                max_steps: u32::MAX,
                seed,
            };
            let mut next = random_inputs(seed, nodes);
            let cases: Vec<TestCase> = (0..count)
                .map(|_| TestCase::decode(&next(), &menu, &Limits::exact(nodes)))
                .collect();
            let mut report = serde_json::Map::new();
            for (method, search) in [
                (
                    "gradient",
                    gradient_search as fn(&mut TestCase, &SearchConfig) -> _,
                ),
                ("sampling", sample_search),
                ("gradient_and_repair", search_with_repair),
            ] {
                let mut tally = ValueTally::default();
                for case in &cases {
                    let mut case = case.clone();
                    let outcome = search(&mut case, &config);
                    let model = emit(&case);
                    let finite = backend
                        .run(&model, &Harness::inputs(&case, &model), 0)
                        .is_ok_and(|outs| outs.iter().all(dlcfuzz::ir::Tensor::is_finite));
                    tally.add(&outcome, finite);
                }
                report.insert(method.into(), tally.summary(count));
            }
            report.insert("nodes".into(), nodes.into());
            report.insert("models".into(), count.into());
            report.insert("budget_ms".into(), budget_ms.into());
            println!("{}", serde_json::Value::Object(report));
        }
    }
    Ok(())
}

/// Runs `target` on `count` seeded random inputs of `len` bytes: setup time (the first
/// input), execs/s over the rest, verdict counts, and the share of inputs the compiler
/// compiled and ran (a pass or a finding, not a skip).
fn bench_target(
    target: fn(&[u8]) -> Verdict,
    count: usize,
    seed: u64,
    len: usize,
) -> serde_json::Value {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut input = || {
        let mut bytes = vec![0u8; len];
        rng.fill(bytes.as_mut_slice());
        bytes
    };
    let bar = progress(Some(count as u64));
    let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
    let mut findings: BTreeMap<String, usize> = BTreeMap::new();
    let mut examples: BTreeMap<String, String> = BTreeMap::new();
    let mut tally = |verdict: Verdict| {
        let (key, example) = match &verdict {
            Verdict::Pass => ("pass".to_string(), String::new()),
            Verdict::Skipped(skip) => (format!("skip:{}", skip_kind(skip)), format!("{skip:?}")),
            Verdict::Found(f) => {
                *findings.entry(f.signature.clone()).or_default() += 1;
                (format!("found:{:?}", f.kind), f.detail.clone())
            }
        };
        if !example.is_empty() {
            let cut: String = example.chars().take(400).collect();
            examples.entry(key.clone()).or_insert(cut);
        }
        *verdicts.entry(key).or_default() += 1;
        bar.inc(1);
    };
    let setup = Instant::now();
    tally(target(&input()));
    let setup = setup.elapsed();
    let start = Instant::now();
    for _ in 1..count {
        tally(target(&input()));
    }
    let elapsed = start.elapsed();
    bar.finish_and_clear();
    let compiled: usize = verdicts
        .iter()
        .filter(|(k, _)| !k.starts_with("skip:"))
        .map(|(_, n)| n)
        .sum();
    serde_json::json!({
        "inputs": count,
        "setup_and_first_s": setup.as_secs_f64(),
        "execs_per_s": (count.saturating_sub(1)) as f64 / elapsed.as_secs_f64().max(1e-9),
        "compiled_share": compiled as f64 / count.max(1) as f64,
        "verdicts": verdicts,
        "findings": findings,
        "first_of_each": examples,
    })
}

/// A short name for a skip reason.
fn skip_kind(skip: &Skip) -> &'static str {
    match skip {
        Skip::Unsupported(_) => "unsupported",
        Skip::Invalid(_) => "invalid",
        Skip::NonFinite => "non-finite",
        Skip::Rejected(_) => "rejected",
        Skip::Explained(_) => "explained",
    }
}

/// Writes the standalone reproducer of `bytes` on the Python-hosted target `name` into `dir`.
fn save_repro(name: &str, bytes: &[u8], dir: &std::path::Path) -> Result<()> {
    use dlcfuzz::targets::{torch_compile::TorchCompileHarness, tvm::TvmHarness};
    std::fs::create_dir_all(dir)?;
    let limits = Limits::default();
    let script = match name {
        "torch_compile_cpu" | "torch_compile_cuda" => {
            let harness = if name.ends_with("cuda") {
                TorchCompileHarness::cuda(limits)
            } else {
                TorchCompileHarness::cpu(limits)
            }
            .map_err(anyhow::Error::msg)?;
            harness
                .repro(bytes)
                .map_err(|skip| anyhow::anyhow!("no program to reproduce: {skip:?}"))?
        }
        "tvm_llvm" | "tvm_cuda" => {
            let harness = if name.ends_with("cuda") {
                TvmHarness::cuda(limits)
            } else {
                TvmHarness::llvm(limits)
            }
            .map_err(anyhow::Error::msg)?;
            let (model, script) = harness.repro(bytes);
            std::fs::write(dir.join("model.onnx"), model)?;
            script
        }
        other => bail!("--save writes reproducers for the torch_compile_* and tvm_* targets; {other} findings replay with `dlcfuzz replay`"),
    };
    std::fs::write(dir.join("repro.py"), script)?;
    std::fs::write(dir.join("input.bin"), bytes)?;
    Ok(())
}
