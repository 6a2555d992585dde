//! The `dlcfuzz` command line: clap definitions and calls into the library. Targets come from
//! `dlcfuzz::targets::TARGETS`, backends from `dlcfuzz::backend::BACKENDS`.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use dlcfuzz::campaign::launch::{self, FuzzOptions};
use dlcfuzz::campaign::post::{self, PostOptions};
use dlcfuzz::campaign::replay::{self, ReplayOptions};
use dlcfuzz::campaign::worker::{self, Isolation};
use dlcfuzz::mutate::patterns::{extract, Library};
use dlcfuzz::targets::TargetConfig;
use dlcfuzz::{backend, bench, report};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::Duration;

// mimalloc, with its `override` feature, serves every allocation of the process (libtorch's
// and ONNX Runtime's too): glibc's malloc took a seventh of a campaign's time.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// Which target, and its graph size: shared by `fuzz`, `worker`, `replay` and `bench target`.
#[derive(clap::Args, Clone)]
struct TargetArgs {
    /// The fuzz target (`dlcfuzz targets` lists them). `--backend ort|tract|tvm` is an alias
    /// of its plain target.
    #[arg(long, alias = "backend", default_value = "ort_cpu")]
    target: String,
    /// Most operator nodes per generated graph.
    #[arg(long, default_value_t = 10)]
    max_nodes: usize,
    /// The pattern library of a pattern target (`builtin` or a file written by `dlcfuzz
    /// patterns extract`); given with another target, selects its pattern target
    /// (`tvm_llvm_patterns` for TVM, `openvino_cpu_patterns` for OpenVINO, else
    /// `ort_cpu_patterns`).
    #[arg(long)]
    patterns: Option<String>,
    /// Shorthand for `--target ort_cpu_mutated` (HirFuzz constraint levels and ONNX
    /// function, If and Loop rewrites).
    #[arg(long)]
    mutate: bool,
}

impl TargetArgs {
    fn config(&self) -> TargetConfig {
        let name = match (&self.patterns, self.mutate) {
            (Some(_), _) => dlcfuzz::targets::pattern_target_for(&self.target),
            (None, true) => "ort_cpu_mutated",
            (None, false) => self.target.as_str(),
        };
        TargetConfig {
            patterns: self.patterns.clone(),
            ..TargetConfig::new(name, self.max_nodes)
        }
    }
}

/// Limits on each isolated test.
#[derive(clap::Args, Clone, Copy)]
struct IsolationArgs {
    /// Per-test timeout in seconds (default: the target's, `dlcfuzz targets`).
    #[arg(long)]
    timeout: Option<f64>,
    /// RSS limit of a worker in MiB.
    #[arg(long, default_value_t = Isolation::DEFAULT_RSS_MB)]
    rss_limit_mb: u64,
}

impl IsolationArgs {
    /// The limits for tests of `target`.
    fn isolation(self, target: &str) -> Result<Isolation> {
        lib(Isolation::asked(target, self.timeout, self.rss_limit_mb))
    }
}

/// `dlcfuzz fuzz`'s options.
#[derive(clap::Args)]
struct FuzzArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    isolation: IsolationArgs,
    /// Time budget of this run in seconds.
    #[arg(long, default_value_t = 60)]
    time: u64,
    /// Campaign folder.
    #[arg(long, default_value = "out/fuzz")]
    out: PathBuf,
    /// RNG seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop after this many tests in total (0 = until the time is up).
    #[arg(long, default_value_t = 0)]
    max_tests: u64,
    /// Worker processes running tests in parallel.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Run tests in this process: faster, but a crashing backend ends the run (its input
    /// is filed as a crash on --resume).
    #[arg(long)]
    no_isolation: bool,
    /// Continue the campaign in --out.
    #[arg(long)]
    resume: bool,
    /// Reduction budget per new finding in seconds (0: do not reduce automatically;
    /// default: the target's, three per-test time limits and at least 30 s).
    #[arg(long)]
    reduce_budget: Option<u64>,
    /// Pure generation: every input fresh, no corpus (what feedback is measured against).
    #[arg(long)]
    no_feedback: bool,
}

impl FuzzArgs {
    fn options(self) -> Result<FuzzOptions> {
        let target = self.target.config();
        Ok(FuzzOptions {
            isolation: self.isolation.isolation(&target.name)?,
            out: self.out,
            time: Duration::from_secs(self.time),
            seed: self.seed,
            max_tests: self.max_tests,
            jobs: self.jobs,
            in_process: self.no_isolation,
            resume: self.resume,
            reduce_budget: lib(dlcfuzz::targets::reduce_budget(
                &target.name,
                self.reduce_budget,
            ))?,
            program: program()?,
            guided: !self.no_feedback,
            target,
        })
    }
}

#[derive(Subcommand)]
enum Command {
    /// List the fuzz targets: name, device, compiler, what one test does.
    Targets,
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
        /// Backend whose capability table picks the ops.
        #[arg(long, default_value = "ort")]
        backend: String,
    },
    /// Run a crash-safe fuzz campaign on any target: each test in an isolated worker process
    /// (per-test timeout and RSS limit; crashes, hangs and OOMs become findings), state on
    /// disk (`--resume` continues after kill -9), stats in OUT/stats.csv, new findings
    /// deduplicated, reduced, bisected and reported automatically.
    Fuzz(FuzzArgs),
    /// Serve tests for an isolated campaign over stdin/stdout (started by `fuzz` and
    /// `reduce`).
    #[command(hide = true)]
    Worker {
        #[command(flatten)]
        target: TargetArgs,
        /// Folder for the in-flight model.
        #[arg(long)]
        inflight: PathBuf,
    },
    /// Reduce a finding folder (delta debugging on the graph, every candidate isolated),
    /// bisect its culprit passes (ONNX Runtime), re-check it on the newest release and write
    /// its report.md.
    Reduce {
        /// The finding folder.
        finding: PathBuf,
        /// Time budget in seconds (default: the target's, as a campaign reduces with:
        /// three per-test limits, at least 30 s).
        #[arg(long)]
        budget: Option<u64>,
        #[command(flatten)]
        isolation: IsolationArgs,
    },
    /// Write a campaign summary (report.md with PNG plots, distinct bugs after dedup) into a
    /// campaign folder.
    Report {
        /// The campaign folder (`--out` of `dlcfuzz fuzz`).
        dir: PathBuf,
    },
    /// List the known upstream bugs (docs/findings/known-upstream.json) that findings are
    /// matched against; `--recheck` re-runs each one's repro.py on the newest release.
    Known {
        /// Re-run each row's reproducer on the newest release.
        #[arg(long)]
        recheck: bool,
    },
    /// Re-run a finding folder (its target.json names the target) or a raw input such as a
    /// libFuzzer artifact (name its target) and print the verdict.
    Replay {
        /// Finding folder (with input.bin) or input file.
        path: PathBuf,
        #[command(flatten)]
        target: TargetArgs,
        /// When the input still finds a bug, write a finding folder (artifacts: model,
        /// program, repro.py; report) under this folder.
        #[arg(long)]
        save: Option<PathBuf>,
        /// Replay the input as found, ignoring the folder's reduction.json.
        #[arg(long)]
        unreduced: bool,
    },
    /// Run a standalone ONNX file (a reduced reproducer) at every level of a backend, on the
    /// documented pattern inputs (element i = (7 i mod 11) - 3), and print each level's
    /// outputs or error.
    RunModel {
        /// The `.onnx` file (static input and output shapes).
        path: PathBuf,
        /// Backend (`ort`, `tract` or `tvm`).
        #[arg(long, default_value = "ort")]
        backend: String,
        /// Most elements printed per output.
        #[arg(long, default_value_t = 16)]
        show: usize,
    },
    /// Show (probing if needed) the op × dtype table a backend supports, or what a target's
    /// generator offers its compiler (`--target`).
    Capabilities {
        /// Backend (`ort`, `tract` or `tvm`).
        #[arg(long, default_value = "ort")]
        backend: String,
        /// A fuzz target instead: the torch-surface targets list their operator rows and
        /// element types; the others their backend's table.
        #[arg(long)]
        target: Option<String>,
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
        what: bench::BenchCommand,
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

fn progress(len: Option<u64>) -> ProgressBar {
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    bar
}

fn program() -> Result<PathBuf> {
    std::env::current_exe().context("locating the dlcfuzz executable")
}

/// A library error (a message) as a CLI error.
fn lib<T>(result: Result<T, String>) -> Result<T> {
    result.map_err(anyhow::Error::msg)
}

/// Prints `value` as one line of JSON (what scripts and tests read: the last stdout line).
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
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
        Command::Targets => print!("{}", dlcfuzz::targets::listing()),
        Command::Gen {
            nodes,
            count,
            seed,
            out,
            all_ops,
            backend: name,
        } => {
            let backend = (!all_ops).then(|| backend::by_name(&name)).transpose();
            let menu = bench::menu(lib(backend)?.as_deref());
            print_json(&lib(bench::write_models(&menu, nodes, count, seed, &out))?)?;
        }
        Command::Fuzz(args) => {
            let bar = progress(None);
            let stats = launch::fuzz(&args.options()?, &|s| {
                if s.tests % 8 == 0 {
                    bar.set_message(s.progress_line());
                    bar.tick();
                }
            });
            bar.finish_and_clear();
            let stats = lib(stats)?;
            for (sig, n) in &stats.signatures {
                eprintln!("finding x{n}: {sig}");
            }
            println!("{}", serde_json::to_string(&stats)?);
        }
        Command::Worker { target, inflight } => {
            let target = lib(dlcfuzz::targets::build(&target.config()))?;
            worker::serve(target.as_ref(), &inflight)?;
        }
        Command::Reduce {
            finding,
            budget,
            isolation,
        } => {
            let target = lib(dlcfuzz::campaign::finding::Envelope::read(&finding))?.target;
            let opts = PostOptions {
                program: program()?,
                budget: lib(dlcfuzz::targets::reduce_budget(&target.name, budget))?,
                isolation: isolation.isolation(&target.name)?,
            };
            let reduction = lib(post::process(&finding, &opts))?;
            eprintln!("{}", post::summary(&finding, &reduction));
            println!("{}", serde_json::to_string(&reduction)?);
        }
        Command::Report { dir } => print_json(&lib(report::campaign_json(&dir))?)?,
        Command::Known { recheck } => print!("{}", dlcfuzz::campaign::known::listing(recheck)),
        Command::Replay {
            path,
            target,
            save,
            unreduced,
        } => {
            let options = ReplayOptions {
                target: target.config(),
                unreduced,
                save,
            };
            let replayed = lib(replay::replay(&path, &options))?;
            for warning in &replayed.warnings {
                eprintln!("warning: {warning}");
            }
            if let Some(dir) = &replayed.saved_to {
                eprintln!("finding written to {}", dir.display());
            }
            print_json(&replayed)?;
        }
        Command::RunModel {
            path,
            backend,
            show,
        } => {
            let built = lib(dlcfuzz::backend::by_name(&backend))?;
            for line in lib(dlcfuzz::backend::run_file(built.as_ref(), &path, show))? {
                println!("{line}");
            }
        }
        Command::Capabilities {
            backend: name,
            target,
        } => print!(
            "{}",
            lib(dlcfuzz::targets::capabilities(target.as_deref(), &name))?
        ),
        Command::ReferenceCheck { data } => {
            print!(
                "{}",
                lib(dlcfuzz::reference::onnx_models::check_report(data))?
            )
        }
        Command::Patterns { what } => match what {
            PatternsCommand::Extract { dir, out } => {
                let library = lib(extract::extract(&dir))?;
                lib(library.save(&out))?;
                print!("{}", library.stats());
                eprintln!("written to {}", out.display());
            }
            PatternsCommand::Stats { library } => {
                print!("{}", lib(Library::named(&library))?.stats())
            }
        },
        Command::Bench { what } => {
            let bar = progress(what.count().map(|n| n as u64));
            let summary = what.run(&|| bar.inc(1));
            bar.finish_and_clear();
            print_json(&lib(summary)?)?;
        }
    }
    Ok(())
}
