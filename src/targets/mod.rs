//! The target model: every fuzz target is a value of one trait, [`FuzzTarget`], built from
//! one table, [`TARGETS`]. The CLI (`dlcfuzz targets`, `fuzz --target`, `replay`,
//! `bench target`), the campaign runner and its workers, the reducer, `fuzz/` (one
//! [`fuzz_target_glue!`](crate::fuzz_target_glue) line per target) and the conformance test
//! all read that table, so a target is one row plus one implementation.
//!
//! A target turns fuzzer bytes into one test and an [`Outcome`]-like [`TargetRun`]: the
//! verdict, the graph it tested (when the input decodes to one, so the reducer can edit it),
//! the optimizations that fired and the compiler's Python lines that ran (coverage features),
//! and the files a finding folder gets (the model, the program, a standalone `repro.py`).
//!
//! - Differential ONNX targets ([`differential`]): bytes → graph → ONNX → every level of one
//!   backend against the libtorch reference.
//! - Program targets ([`torchscript`], [`torch_compile`]): bytes → program plan + graph → SSA
//!   program → TorchScript / `torch.compile` against libtorch eager.
//! - The PyTorch ONNX exporter ([`torch_onnx_export`]): a torch program exported to ONNX and
//!   run by ONNX Runtime against torch eager.
//! - TVM ([`tvm`]): a graph through TVM Relax, plain and after a pass sequence.
//! - Load targets ([`load`]): bytes are an untrusted ONNX file; only crashes are findings.
//! - The decoder ([`decoder`]): no compiler; bytes → test case → ONNX, checked in process.
//!
//! Every fuzz binary also mutates its inputs by their layout ([`mutator`]).

pub mod compile_mode;
pub mod decoder;
pub mod differential;
pub mod export_probe;
pub mod hosted;
pub mod load;
pub mod mutator;
pub mod program;
pub mod repro;
pub mod surface;
pub mod torch_compile;
pub mod torch_onnx_export;
pub mod torchscript;
pub mod tvm;

use crate::gen::{Limits, TestCase, CONFIG_BYTES, STEP_BYTES};
use crate::mutate::patterns::Library;
use crate::oracle::near_miss::NearMiss;
use crate::oracle::Verdict;
use crate::reduce::Edit;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A finding folder's (minimized, once reduced) ONNX model, and the in-flight model a worker
/// writes before the compiler sees it (so that a process death leaves it behind).
pub const MODEL: &str = "model.onnx";

/// Where a target's compiled code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Device {
    /// The host CPU.
    Cpu,
    /// CUDA device 0 (the target fails at setup, naming what is missing, without one).
    Cuda,
}

impl Device {
    /// `cpu` or `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        }
    }
}

/// How a target's input bytes are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A fixed-size header of this many bytes (pattern recipe, mutation or program plan, pass
    /// sequence), then a graph recipe: swarm config and insertion-step chunks.
    Graph {
        /// Header bytes before the graph recipe.
        header: usize,
    },
    /// An untrusted ONNX file.
    OnnxFile,
}

impl Input {
    /// The length of a random campaign input for graphs of up to `max_nodes` operator
    /// nodes (two step chunks per node, as backward insertion may use a second attempt).
    pub fn random_len(self, max_nodes: usize) -> usize {
        let graph = CONFIG_BYTES + STEP_BYTES * max_nodes * 2;
        match self {
            Input::Graph { header } => header + graph,
            Input::OnnxFile => graph,
        }
    }
}

/// Files of a finding folder, as (file name, contents).
pub type Artifacts = Vec<(String, Vec<u8>)>;

/// One pipeline test of `bytes` with `edits`, its model written to `inflight/model.onnx`
/// first (when given); `Err` holds the skip run when the edits do not apply.
pub fn run_pipeline(
    pipeline: &crate::pipeline::Pipeline,
    bytes: &[u8],
    edits: &[Edit],
    inflight: Option<&Path>,
) -> Result<crate::pipeline::TestRun, Box<TargetRun>> {
    let file = inflight.map(|dir| dir.join(MODEL));
    pipeline
        .run_edited(bytes, edits, file.as_deref())
        .map_err(|e| {
            Box::new(TargetRun::bare(Verdict::Skipped(
                crate::oracle::Skip::Invalid(e),
            )))
        })
}

/// `files()` when `verdict` is a finding, else nothing (files are only written for findings).
pub fn files_if_found(verdict: &Verdict, files: impl FnOnce() -> Artifacts) -> Artifacts {
    match verdict {
        Verdict::Found(_) => files(),
        _ => Vec::new(),
    }
}

/// What one test of a target produced.
pub struct TargetRun {
    /// The oracle's verdict.
    pub verdict: Verdict,
    /// The graph the test ran (after reduction edits), when the input decodes to one.
    pub case: Option<TestCase>,
    /// Optimizations the compiler reported as having changed the model (sorted, distinct).
    pub fired: Vec<String>,
    /// The compiler's own Python lines the test ran, as sorted, distinct
    /// [`line_id`](crate::backend::python::coverage::line_id)s (the Python-hosted targets;
    /// empty elsewhere).
    pub coverage: Vec<u32>,
    /// The ONNX model the compiler was given, when the target emits one.
    pub model: Option<Vec<u8>>,
    /// Files for a finding folder: the model, the program, `repro.py`. Filled only when the
    /// verdict is a finding.
    pub artifacts: Artifacts,
    /// Independent programs the run tested (several packed into one compilation, or 1).
    pub programs: usize,
    /// The operator rows of the tested program (program targets; a graph's are its case's).
    pub program_ops: Vec<&'static str>,
    /// On a pass, how near the test came to a mismatch ([`crate::oracle::near_miss`]).
    pub near_miss: Option<NearMiss>,
}

impl TargetRun {
    /// A run that tested nothing (`verdict` is a skip, typically).
    pub fn bare(verdict: Verdict) -> TargetRun {
        TargetRun {
            verdict,
            case: None,
            fired: Vec::new(),
            coverage: Vec::new(),
            model: None,
            artifacts: Vec::new(),
            programs: 1,
            program_ops: Vec::new(),
            near_miss: None,
        }
    }

    /// A run that tested `case` (no fired optimizations, no ONNX model).
    pub fn tested(verdict: Verdict, case: TestCase, artifacts: Artifacts) -> TargetRun {
        TargetRun {
            verdict,
            case: Some(case),
            fired: Vec::new(),
            coverage: Vec::new(),
            model: None,
            artifacts,
            programs: 1,
            program_ops: Vec::new(),
            near_miss: None,
        }
    }

    /// Operator nodes of the tested graph (0 without one).
    pub fn nodes(&self) -> usize {
        self.case.as_ref().map_or(0, |c| c.graph.op_count())
    }

    /// Sorted, distinct op types of the tested graph (empty without one): what a finding's
    /// report names.
    pub fn op_types(&self) -> String {
        self.case
            .as_ref()
            .map(TestCase::op_types)
            .unwrap_or_default()
    }

    /// Sorted, distinct op types of the tested graph, or the rows of the tested program:
    /// what the campaign pairs with the optimizations fired as coverage.
    pub fn ops_tested(&self) -> String {
        match &self.case {
            Some(case) => case.op_types(),
            None => crate::gen::distinct_ops(self.program_ops.clone()),
        }
    }
}

/// Where a finding's `repro.py` finds the newest release of its compiler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewestEnv {
    /// The `PYTHONPATH` holding the newest release (ONNX Runtime's wheel in
    /// [`crate::paths::deps_dir`]; torch and TVM in [`crate::paths::python_env`]).
    pub python_path: std::path::PathBuf,
    /// The release's name, unless the script prints `onnxruntime <version>`.
    pub release: String,
}

impl NewestEnv {
    /// The newest ONNX Runtime wheel, whatever release the campaign tested.
    pub fn onnx_runtime() -> NewestEnv {
        NewestEnv {
            python_path: crate::paths::deps_dir(),
            release: crate::paths::ORT_NEWEST.to_string(),
        }
    }

    /// Where a backend's `repro.py` finds the newest release of its Python package (the
    /// runner's path and release).
    pub fn of(runner: &crate::backend::PythonRunner) -> NewestEnv {
        NewestEnv {
            python_path: (runner.python_path)(),
            release: format!("{} {}", runner.import, runner.newest),
        }
    }

    /// The Python-hosted compilers' environment (the newest torch and TVM that
    /// `scripts/setup.sh --python-compilers` installs), where `release` is tested.
    pub fn python_compilers(release: &str) -> NewestEnv {
        NewestEnv {
            python_path: crate::paths::python_env(),
            release: release.to_string(),
        }
    }
}

/// A fuzz target, ready to test (its compiler loaded, its capabilities probed).
pub trait FuzzTarget: Send + Sync {
    /// Its registry row.
    fn info(&self) -> &'static TargetInfo;

    /// The compiler and its version.
    fn version(&self) -> String;

    /// The level name of the unoptimized run: a finding there means the model did not run
    /// validly, so it does not count as a valid test.
    fn reference_level(&self) -> &str;

    /// The graph `bytes` decode to before any edit (value search done), for the reducer;
    /// `None` when the target's input is not a graph.
    fn decode(&self, bytes: &[u8]) -> Option<TestCase>;

    /// What a program reduction of `bytes` can edit, for targets whose input decodes to a
    /// program rather than a graph ([`crate::reduce::program`]); `None` otherwise.
    fn outline(&self, bytes: &[u8]) -> Option<crate::reduce::program::Outline> {
        let _ = bytes;
        None
    }

    /// One test of `bytes` with reduction `edits` applied to its graph. When `inflight` is
    /// given, the model goes there before the compiler sees it, so that a process death
    /// leaves it behind.
    fn run(&self, bytes: &[u8], edits: &[Edit], inflight: Option<&Path>) -> TargetRun;

    /// Where a finding's `repro.py` runs the newest release of the compiler (the campaign
    /// re-checks every reduced finding there).
    fn newest_env(&self) -> NewestEnv {
        NewestEnv::onnx_runtime()
    }

    /// The files a finding folder holds for `bytes` with `edits`, and the graph they show,
    /// computed **without running the compiler under test** (the reducer calls this in its
    /// own process after a finding that may kill whoever runs it).
    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts);

    /// [`files`](Self::files) for `finding`, with its bisected `culprits` in the reproducer
    /// where the target's reproducer shows them.
    fn artifacts(
        &self,
        bytes: &[u8],
        edits: &[Edit],
        finding: &crate::oracle::Finding,
        culprits: Option<&crate::backend::bisect::Culprits>,
    ) -> (Option<TestCase>, Artifacts) {
        let _ = (finding, culprits);
        self.files(bytes, edits)
    }

    /// The culprit optimizations of `finding`, whose reduced files are in the finding folder
    /// `dir`, by bisection ([`crate::backend::Backend::bisect`]) of its reduced `case` (as
    /// [`artifacts`](Self::artifacts) returned it: `None` when the reduced input no longer
    /// decodes); `None` when the target cannot narrow it.
    fn bisect(
        &self,
        dir: &Path,
        case: Option<&TestCase>,
        finding: &crate::oracle::Finding,
    ) -> Option<Result<crate::backend::bisect::Culprits, String>> {
        let _ = (dir, case, finding);
        None
    }

    /// What the target's generator offers the compiler, for `dlcfuzz capabilities
    /// --target` (the torch-surface targets: their rows and element types); `None` for
    /// targets whose menu is their backend's probed capability table.
    fn capabilities(&self) -> Option<String> {
        None
    }

    /// Where this target's time went so far, by stage (seconds and calls), for targets
    /// that measure it (`bench target` prints it).
    fn timings(&self) -> Option<serde_json::Value> {
        None
    }
}

/// How a campaign, a worker or a fuzz binary builds a target: everything a separate process
/// needs to rebuild the same one. Saved with the campaign and with every finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetConfig {
    /// The target's registry name (`ort_cpu`, `tvm_llvm`, ...).
    pub name: String,
    /// Most operator nodes per generated graph.
    pub max_nodes: usize,
    /// The pattern library of a pattern target (`builtin` or a file); `None`: the target's
    /// default (`DLCFUZZ_PATTERNS`, else `builtin`).
    #[serde(default)]
    pub patterns: Option<String>,
    /// Whether panics in an in-process compiler propagate (libFuzzer reports them with their
    /// stack) instead of becoming crash findings.
    #[serde(skip)]
    pub propagate_panics: bool,
}

/// The pattern targets: a seed graph with optimizer patterns spliced in, per compiler.
const PATTERN_TARGETS: [&str; 3] = [
    differential::PATTERNS_TARGET,
    tvm::PATTERNS_TARGET,
    differential::OPENVINO_PATTERNS_TARGET,
];

/// The pattern target that splices patterns for target `name`: TVM's for the TVM targets,
/// OpenVINO's for OpenVINO's, else ONNX Runtime's.
pub fn pattern_target_for(name: &str) -> &'static str {
    match name {
        "tvm" | "tvm_llvm" | tvm::PATTERNS_TARGET => tvm::PATTERNS_TARGET,
        "openvino" | "openvino_cpu" | differential::OPENVINO_PATTERNS_TARGET => {
            differential::OPENVINO_PATTERNS_TARGET
        }
        _ => differential::PATTERNS_TARGET,
    }
}

impl TargetConfig {
    /// The configuration of target `name` with `max_nodes`-node graphs.
    pub fn new(name: &str, max_nodes: usize) -> TargetConfig {
        TargetConfig {
            name: name.into(),
            max_nodes,
            patterns: None,
            propagate_panics: false,
        }
    }

    /// The pattern library a pattern target splices from (the one `patterns` names, else
    /// the file `DLCFUZZ_PATTERNS` names, else `builtin`); `None` for other targets.
    pub fn pattern_library(&self) -> Option<Result<Library, String>> {
        PATTERN_TARGETS.contains(&self.name.as_str()).then(|| {
            let name = self.patterns.clone().unwrap_or_else(|| {
                std::env::var_os("DLCFUZZ_PATTERNS")
                    .map_or_else(|| "builtin".into(), |p| p.to_string_lossy().into_owned())
            });
            Library::named(&name)
        })
    }

    /// The pattern library of a pattern target, or why there is none (not a pattern target,
    /// or the library does not load): what a pattern target's build fn needs.
    pub fn required_pattern_library(&self) -> Result<Library, String> {
        self.pattern_library()
            .ok_or_else(|| format!("{} is not a pattern target", self.name))?
    }

    /// The graph-size bounds.
    pub fn limits(&self) -> Limits {
        Limits {
            min_nodes: 1,
            max_nodes: self.max_nodes,
        }
    }

    /// The configuration libFuzzer runs: default graph sizes, panics propagating.
    pub fn fuzzer(name: &str) -> TargetConfig {
        TargetConfig {
            propagate_panics: true,
            ..Self::new(name, Limits::default().max_nodes)
        }
    }
}

/// One row of [`TARGETS`].
pub struct TargetInfo {
    /// The registry and cargo-fuzz name.
    pub name: &'static str,
    /// The compiler it tests: an ONNX backend's [`crate::backend::by_name`] name (`ort`,
    /// `tract`, `tvm`, `faulty`), a program compiler (`torchscript`, `torch_compile`,
    /// `torch_onnx_export`), or `decoder` (no compiler: dlcfuzz's own decoder and emitter).
    pub backend: &'static str,
    /// Where the compiled code runs.
    pub device: Device,
    /// How its input is laid out.
    pub input: Input,
    /// Whether its inputs start with a HirFuzz constraint-level byte (campaigns adapt the
    /// probability of level 0).
    pub constraint_levels: bool,
    /// Whether it is a cargo-fuzz binary (the fault-injecting test target is not).
    pub fuzz_binary: bool,
    /// One line for `dlcfuzz targets`.
    pub summary: &'static str,
    /// A test's default time limit in an isolated campaign, in seconds (past it the test is
    /// a hang finding): far above the slowest normal test, which for the compilers that
    /// run g++ or LLVM on every test is seconds, not milliseconds.
    pub test_seconds: f64,
    /// Builds the target, or says what is missing (a library, a Python package, a device).
    pub build: fn(&TargetConfig) -> Result<Box<dyn FuzzTarget>, String>,
}

impl TargetInfo {
    /// Its libFuzzer options file (`fuzz/<name>.options`, which `oss-fuzz/build.sh` puts
    /// beside the binary in `$OUT`): the time limit of one input is the row's
    /// [`test_seconds`](Self::test_seconds), so that a slow compiler is not a timeout
    /// crash on a cluster whose default is 25 s; the ONNX dictionary for ONNX-file inputs.
    pub fn libfuzzer_options(&self) -> String {
        let mut options = format!(
            "[libfuzzer]\ntimeout = {}\n",
            self.test_seconds.ceil() as u64
        );
        if self.input == Input::OnnxFile {
            options.push_str("dict = onnx.dict\n");
        }
        options
    }

    /// The default reduction budget of one new finding: three per-test time limits, at least
    /// 30 s (a torch.compile candidate takes seconds, and a program of 30 statements needs a
    /// few dozen candidates before its signature names the statement at fault).
    pub fn reduce_budget(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64((3.0 * self.test_seconds).max(30.0))
    }

    /// Whether its test cases are PyTorch programs (TorchScript, torch.compile, the ONNX
    /// exporter) rather than ONNX models: what a finding's report speaks of.
    pub fn compiles_programs(&self) -> bool {
        matches!(
            self.backend,
            "torchscript" | "torch_compile" | "torch_onnx_export"
        )
    }

    /// Builds the target for `config`.
    pub fn build(&self, config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
        (self.build)(config).map_err(|e| format!("{}: {e}", self.name))
    }
}

impl std::fmt::Debug for TargetInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Every target. The order is the listing order; nothing depends on it.
pub static TARGETS: &[TargetInfo] = &[
    TargetInfo {
        name: "ort_cpu",
        backend: "ort",
        device: Device::Cpu,
        input: Input::Graph { header: 0 },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "generated graphs through ONNX Runtime CPU at every optimization level, against the libtorch reference; fired graph transformers are coverage",
        test_seconds: 10.0,
        build: differential::build_ort,
    },
    TargetInfo {
        name: differential::PATTERNS_TARGET,
        backend: "ort",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::patterns::recipe::HEADER_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "ort_cpu with optimizer patterns (OATest) spliced into each seed graph: the built-in library, DLCFUZZ_PATTERNS or --patterns",
        test_seconds: 10.0,
        build: differential::build_ort_patterns,
    },
    TargetInfo {
        name: "ort_cpu_mutated",
        backend: "ort",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::levels::HEADER_BYTES,
        },
        constraint_levels: true,
        fuzz_binary: true,
        summary: "HirFuzz on ONNX Runtime CPU: constraint levels (level 0 breaks one constraint: only assertions and crashes count) and function, If and Loop rewrites",
        test_seconds: 10.0,
        build: differential::build_ort_mutated,
    },
    TargetInfo {
        name: "tract",
        backend: "tract",
        device: Device::Cpu,
        input: Input::Graph { header: 0 },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "generated graphs through tract typed, decluttered and optimized (compiled into the fuzz build: libFuzzer sees its edges)",
        test_seconds: 10.0,
        build: differential::build_tract,
    },
    TargetInfo {
        name: "openvino_cpu",
        backend: "openvino",
        device: Device::Cpu,
        input: Input::Graph { header: 0 },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "generated graphs through OpenVINO's ONNX frontend and CPU plugin (accuracy, performance and dynamic-shape levels, float32 precision), against the libtorch reference",
        test_seconds: 10.0,
        build: differential::build_openvino,
    },
    TargetInfo {
        name: differential::OPENVINO_PATTERNS_TARGET,
        backend: "openvino",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::patterns::recipe::HEADER_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "openvino_cpu with the optimizer patterns of ort_cpu_patterns (OATest) spliced into each seed graph: OpenVINO's common transformations fuse many of the same subgraphs",
        test_seconds: 10.0,
        build: differential::build_openvino_patterns,
    },
    TargetInfo {
        name: "ort_load",
        backend: "ort",
        device: Device::Cpu,
        input: Input::OnnxFile,
        constraint_levels: false,
        fuzz_binary: true,
        summary: "an untrusted ONNX file through ONNX Runtime session creation (all optimizations) and one run: only crashes are findings",
        test_seconds: 10.0,
        build: load::build_ort,
    },
    TargetInfo {
        name: "tract_load",
        backend: "tract",
        device: Device::Cpu,
        input: Input::OnnxFile,
        constraint_levels: false,
        fuzz_binary: true,
        summary: "an untrusted ONNX file through tract's parser, analysis and optimizer and one run: only panics and crashes are findings",
        test_seconds: 10.0,
        build: load::build_tract,
    },
    TargetInfo {
        name: "torchscript_cpu",
        backend: "torchscript",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::program::PLAN_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "TorchProbe programs through the TorchScript JIT (plain, then the profiling executor with the CPU fuser) against libtorch eager",
        test_seconds: 10.0,
        build: torchscript::build_cpu,
    },
    TargetInfo {
        name: "torchscript_cuda",
        backend: "torchscript",
        device: Device::Cuda,
        input: Input::Graph {
            header: crate::mutate::program::PLAN_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "torchscript_cpu with the compiled program on CUDA device 0",
        test_seconds: 10.0,
        build: torchscript::build_cuda,
    },
    TargetInfo {
        name: "torch_compile_cpu",
        backend: "torch_compile",
        device: Device::Cpu,
        input: Input::Graph {
            header: 1 + crate::mutate::program::PLAN_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "torch-surface programs (199 operator rows, 10 element types) with TorchProbe mutations, eager vs torch.compile (Inductor, C++) in the Python host; a mode byte picks dynamic shapes, backward, recompilation",
        test_seconds: 120.0,
        build: torch_compile::build_cpu,
    },
    TargetInfo {
        name: "torch_compile_openvino",
        backend: "torch_compile",
        device: Device::Cpu,
        input: Input::Graph {
            header: 1 + crate::mutate::program::PLAN_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "torch_compile_cpu's programs and modes, eager vs torch.compile(backend=\"openvino\") (OpenVINO's PyTorch frontend and CPU plugin, float32 precision) in the Python host",
        test_seconds: 120.0,
        build: torch_compile::build_openvino,
    },
    TargetInfo {
        name: "torch_compile_cuda",
        backend: "torch_compile",
        device: Device::Cuda,
        input: Input::Graph {
            header: 1 + crate::mutate::program::PLAN_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "torch_compile_cpu on CUDA device 0 (Inductor's Triton backend)",
        test_seconds: 120.0,
        build: torch_compile::build_cuda,
    },
    TargetInfo {
        name: "torch_onnx_export",
        backend: "torch_onnx_export",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::program::PLAN_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "torch-surface programs with TorchProbe mutations through torch.onnx.export (the wheel's default exporter), the ONNX checker and ONNX Runtime (no optimizations), against torch eager; mismatches localized with the onnx reference implementation",
        test_seconds: 60.0,
        build: torch_onnx_export::build,
    },
    TargetInfo {
        name: "tvm_llvm",
        backend: "tvm",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::passes::PASS_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "generated graphs through TVM Relax for llvm: the plain build against the reference, then a pass sequence from the input's head against the plain build",
        test_seconds: 60.0,
        build: tvm::build_llvm,
    },
    TargetInfo {
        name: tvm::PATTERNS_TARGET,
        backend: "tvm",
        device: Device::Cpu,
        input: Input::Graph {
            header: crate::mutate::passes::PASS_BYTES + crate::mutate::patterns::recipe::HEADER_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "tvm_llvm with optimizer patterns (OATest) spliced into each seed graph: the plain build and a pass sequence from the input's head, the pattern header after it",
        test_seconds: 60.0,
        build: tvm::build_llvm_patterns,
    },
    TargetInfo {
        name: "tvm_cuda",
        backend: "tvm",
        device: Device::Cuda,
        input: Input::Graph {
            header: crate::mutate::passes::PASS_BYTES,
        },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "tvm_llvm built for CUDA device 0",
        test_seconds: 60.0,
        build: tvm::build_cuda,
    },
    TargetInfo {
        name: "decoder",
        backend: "decoder",
        device: Device::Cpu,
        input: Input::Graph { header: 0 },
        constraint_levels: false,
        fuzz_binary: true,
        summary: "the fuzzer under fuzzing, no compiler: bytes decoded into a test case (every op of the registry) and emitted as ONNX; a panic, a structurally invalid model, an ill-typed graph or a different model on a second decode is a finding",
        test_seconds: 10.0,
        build: decoder::build,
    },
    TargetInfo {
        name: "faulty",
        backend: "faulty",
        device: Device::Cpu,
        input: Input::Graph { header: 0 },
        constraint_levels: false,
        fuzz_binary: false,
        summary: "reliability tests only (needs DLCFUZZ_ALLOW_FAULTS=1): ort_cpu whose first optimized level segfaults, aborts, hangs or allocates on trigger ops",
        test_seconds: 10.0,
        build: differential::build_faulty,
    },
];

/// The target called `name`, or an error listing the names there are. The backend names
/// of older campaigns (`ort`, `tvm`) name their plain target.
pub fn by_name(name: &str) -> Result<&'static TargetInfo, String> {
    let name = match name {
        "ort" => "ort_cpu",
        "tvm" => "tvm_llvm",
        other => other,
    };
    TARGETS.iter().find(|t| t.name == name).ok_or_else(|| {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        format!(
            "unknown target {name:?}; the targets are: {}",
            names.join(", ")
        )
    })
}

/// `dlcfuzz targets`: one line per target with a fuzz binary (name, device, backend,
/// summary).
pub fn listing() -> String {
    TARGETS
        .iter()
        .filter(|t| t.fuzz_binary)
        .map(|t| {
            format!(
                "{:20} {:5} {:14} {}\n",
                t.name,
                t.device.name(),
                t.backend,
                t.summary
            )
        })
        .collect()
}

/// `dlcfuzz capabilities`: what `target` offers (a program target's own listing of rows,
/// else its backend's capability table), or, without a target, the capability table of the
/// backend called `backend`; the table ends with its one-line JSON summary.
pub fn capabilities(target: Option<&str>, backend: &str) -> Result<String, String> {
    let backend = match target {
        Some(target) => {
            let built = build(&TargetConfig::new(target, 10))?;
            if let Some(listing) = built.capabilities() {
                return Ok(listing + "\n");
            }
            built.info().backend.to_string()
        }
        None => backend.to_string(),
    };
    let caps = crate::backend::capability::Capabilities::load_or_probe(
        crate::backend::by_name(&backend)?.as_ref(),
    );
    Ok(format!("{}{}\n", caps.listing(), caps.summary()))
}

/// The reduction budget a user asked for on findings of the target called `target`:
/// `seconds`, or the target's default ([`TargetInfo::reduce_budget`]).
pub fn reduce_budget(target: &str, seconds: Option<u64>) -> Result<std::time::Duration, String> {
    match seconds {
        Some(s) => Ok(std::time::Duration::from_secs(s)),
        None => Ok(by_name(target)?.reduce_budget()),
    }
}

/// Builds the target `config` names.
pub fn build(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    // The reference, the value search and TorchScript run libtorch on tiny tensors: one
    // intra-op thread. With OpenMP's default (a thread per core) the idle threads spin after
    // every op, which cost an ONNX Runtime campaign about a tenth of its CPU.
    tch::set_num_threads(1);
    by_name(&config.name)?.build(config)
}

/// A program target's artifact naming the operator rows its (reduced) program still
/// computes, one per line (`ops.txt` names every row the bytes instantiated).
pub const LIVE_OPS: &str = "live-ops.txt";

/// The rows a [`LIVE_OPS`] (or `ops.txt`) text names, sorted and distinct.
pub fn live_rows(text: &str) -> Vec<&str> {
    let rows: std::collections::BTreeSet<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    rows.into_iter().collect()
}

/// The prefix of a status line a target prints on stderr while it sets up for long (a probe
/// of its compiler): an isolated campaign's worker passes such lines on to the user.
pub const STATUS_PREFIX: &str = "[dlcfuzz] ";

/// Prints a set-up status line (see [`STATUS_PREFIX`]).
pub fn status(message: &str) {
    eprintln!("{STATUS_PREFIX}{message}");
}

/// Builds the target `name` once, with [`TargetConfig::fuzzer`], from libFuzzer's
/// initialization (so its set-up, a compiler load or a Python host start, counts against no
/// input's time limit); a setup failure ends the process naming what is missing
/// ([`exit_unable_to_run`]).
pub fn fuzz_init<'t>(
    target: &'t std::sync::OnceLock<Box<dyn FuzzTarget>>,
    name: &str,
) -> &'t dyn FuzzTarget {
    target
        .get_or_init(|| {
            build(&TargetConfig::fuzzer(name)).unwrap_or_else(|e| exit_unable_to_run(name, &e))
        })
        .as_ref()
}

/// One libFuzzer iteration of the target `name` (built by [`fuzz_init`] unless it was): fired
/// optimizations and covered Python lines go to libFuzzer's extra counters
/// ([`crate::feedback`]; each first fired optimization is printed), and a finding panics with
/// its signature so libFuzzer saves the input.
pub fn fuzz_one(
    target: &'static std::sync::OnceLock<Box<dyn FuzzTarget>>,
    name: &str,
    data: &[u8],
) {
    let target = fuzz_init(target, name);
    let run = target.run(data, &[], None);
    for fired in crate::feedback::observe(&run.fired) {
        eprintln!("dlcfuzz: transformer fired: {fired}");
    }
    crate::feedback::observe_lines(&run.coverage);
    crate::feedback::observe_near_miss(run.near_miss.as_ref());
    assert_no_finding(run.verdict);
}

/// Ends a fuzz binary that cannot run here (a missing library, environment, compiler or
/// device), naming what is missing, with exit status 2 and **without** libFuzzer's exit
/// handler: the input in hand is not a finding, so no `crash-*` file may be written for it
/// (a panic or `exit` would make libFuzzer save it as one).
pub fn exit_unable_to_run(name: &str, why: &str) -> ! {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "dlcfuzz: the fuzz target {name} cannot run here: {why}"
    );
    let _ = stderr.flush();
    // SAFETY: _exit ends the process at once; nothing of this process is used after it.
    unsafe { libc::_exit(2) }
}

/// Panics with the signature and details of a finding, so libFuzzer saves the input.
pub fn assert_no_finding(verdict: Verdict) {
    if let Verdict::Found(f) = verdict {
        panic!("{}\n{}", f.signature, f.detail);
    }
}

/// The whole `fuzz/fuzz_targets/<name>.rs` of a target: `dlcfuzz::fuzz_target_glue!("ort_cpu");`
/// (the fuzz crate depends on `libfuzzer-sys`): the iteration ([`fuzz_one`]) and the
/// structure-aware mutator and crossover of the row's input layout ([`mutator::Mutator`]),
/// which fall back to libFuzzer's own mutation.
#[macro_export]
macro_rules! fuzz_target_glue {
    ($name:literal) => {
        static TARGET: ::std::sync::OnceLock<::std::boxed::Box<dyn $crate::targets::FuzzTarget>> =
            ::std::sync::OnceLock::new();
        libfuzzer_sys::fuzz_target!(
            init: {
                $crate::targets::fuzz_init(&TARGET, $name);
            },
            |data: &[u8]| {
                $crate::targets::fuzz_one(&TARGET, $name, data);
            }
        );
        // The row's mutator, looked up once (libFuzzer mutates thousands of times a second).
        static MUTATOR: ::std::sync::OnceLock<$crate::targets::mutator::Mutator> =
            ::std::sync::OnceLock::new();
        libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
            MUTATOR
                .get_or_init(|| $crate::targets::mutator::Mutator::for_target($name))
                .mutate(
                    data,
                    size,
                    max_size,
                    seed,
                    &mut libfuzzer_sys::fuzzer_mutate,
                )
        });
        libfuzzer_sys::fuzz_crossover!(|data1: &[u8], data2: &[u8], out: &mut [u8], seed: u32| {
            MUTATOR
                .get_or_init(|| $crate::targets::mutator::Mutator::for_target($name))
                .crossover(data1, data2, out, seed, &mut libfuzzer_sys::fuzzer_mutate)
        });
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_rows_are_sorted_and_distinct() {
        assert_eq!(
            live_rows("silu\nNeg\n\nsilu\nany\n"),
            ["Neg", "any", "silu"]
        );
        assert!(live_rows("").is_empty());
    }

    #[test]
    fn what_a_user_asks_for_resolves_against_the_target_row() {
        assert!(listing().lines().any(|l| l.starts_with("ort_cpu ")));
        assert!(listing().lines().all(|l| !l.starts_with("ort_cpu_faulty")));
        assert_eq!(
            reduce_budget("ort_cpu", Some(5)),
            Ok(std::time::Duration::from_secs(5))
        );
        let row = by_name("torch_compile_cpu").unwrap();
        assert_eq!(
            reduce_budget("torch_compile_cpu", None),
            Ok(row.reduce_budget())
        );
        let isolation =
            crate::campaign::worker::Isolation::asked("torch_compile_cpu", None, 99).unwrap();
        assert_eq!(isolation.timeout.as_secs_f64(), row.test_seconds);
        assert_eq!(isolation.rss_limit_mb, 99);
        assert!(reduce_budget("no_such_target", None)
            .unwrap_err()
            .contains("the targets are"));
    }

    #[test]
    fn names_are_unique_and_legacy_backend_names_resolve() {
        let mut names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TARGETS.len());
        assert_eq!(by_name("ort").unwrap().name, "ort_cpu");
        assert_eq!(by_name("tvm").unwrap().name, "tvm_llvm");
        assert_eq!(pattern_target_for("tvm_llvm"), "tvm_llvm_patterns");
        assert_eq!(pattern_target_for("ort_cpu"), "ort_cpu_patterns");
        assert_eq!(pattern_target_for("openvino_cpu"), "openvino_cpu_patterns");
        let err = by_name("nope").unwrap_err();
        assert!(err.contains("torchscript_cpu"), "{err}");
        assert!(by_name("torch_compile_cpu").unwrap().compiles_programs());
        assert!(by_name("torch_onnx_export").unwrap().compiles_programs());
        assert!(!by_name("ort_cpu").unwrap().compiles_programs());
    }

    #[test]
    fn every_fuzz_binary_has_its_file_and_a_known_backend() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
            .collect();
        files.sort();
        let mut binaries: Vec<String> = TARGETS
            .iter()
            .filter(|t| t.fuzz_binary)
            .map(|t| t.name.to_string())
            .collect();
        binaries.sort();
        assert_eq!(files, binaries);
        for t in TARGETS {
            let program = matches!(
                t.backend,
                "torchscript" | "torch_compile" | "torch_onnx_export" | "decoder"
            );
            assert!(
                program || crate::backend::BACKENDS.iter().any(|b| b.name == t.backend),
                "{}: backend {}",
                t.name,
                t.backend
            );
        }
    }

    /// A stand-in for `libfuzzer_sys`, so that the glue macro expands and type-checks here
    /// exactly as in `fuzz/fuzz_targets/*.rs`: each macro becomes a plain function.
    mod libfuzzer_sys {
        macro_rules! fuzz_target_stub {
            (init: $init:block, |$data:ident: &[u8]| $body:block) => {
                pub fn glue_init() $init
                pub fn glue_entry($data: &[u8]) $body
            };
        }
        macro_rules! fuzz_mutator_stub {
            (|$data:ident: &mut [u8], $size:ident: usize, $max_size:ident: usize, $seed:ident: u32| $body:block) => {
                pub fn glue_mutate($data: &mut [u8], $size: usize, $max_size: usize, $seed: u32) -> usize $body
            };
        }
        macro_rules! fuzz_crossover_stub {
            (|$data1:ident: &[u8], $data2:ident: &[u8], $out:ident: &mut [u8], $seed:ident: u32| $body:block) => {
                pub fn glue_crossover($data1: &[u8], $data2: &[u8], $out: &mut [u8], $seed: u32) -> usize $body
            };
        }
        pub(crate) use fuzz_crossover_stub as fuzz_crossover;
        pub(crate) use fuzz_mutator_stub as fuzz_mutator;
        pub(crate) use fuzz_target_stub as fuzz_target;

        /// libFuzzer's own mutation, standing in: every byte inverted, the size kept.
        pub fn fuzzer_mutate(data: &mut [u8], size: usize, max_size: usize) -> usize {
            let n = size.min(max_size);
            data[..n].iter_mut().for_each(|b| *b = !*b);
            n
        }
    }

    mod glued {
        use super::libfuzzer_sys;
        crate::fuzz_target_glue!("ort_load");
    }

    mod glued_graph {
        use super::libfuzzer_sys;
        crate::fuzz_target_glue!("decoder");
    }

    #[test]
    fn the_glue_macro_runs_its_target_and_panics_on_nothing_for_a_clean_rejection() {
        // `ort_load` on garbage: a clean load error, never a finding.
        glued::glue_init();
        glued::glue_entry(b"not an onnx model");
        glued_graph::glue_init();
        glued_graph::glue_entry(&[9u8; 300]);
    }

    #[test]
    fn the_glue_macro_mutates_by_the_rows_layout() {
        // An ONNX file has no structure: libFuzzer's own mutation, every time.
        for seed in 0..8 {
            let mut data = *b"onnx\0\0\0\0";
            assert_eq!(glued::glue_mutate(&mut data, 4, 8, seed), 4);
            assert_eq!(&data[..4], b"onnx".map(|b| !b));
            let mut out = [0u8; 8];
            assert_eq!(glued::glue_crossover(b"ab", b"cd", &mut out, seed), 2);
            assert_eq!(&out[..2], b"ab".map(|b| !b));
        }
        // A graph: within max_size, whole chunks, a parent's config first.
        let len = CONFIG_BYTES + 3 * STEP_BYTES;
        let (a, b) = (vec![1u8; len], vec![2u8; len + STEP_BYTES]);
        for seed in 0..64 {
            let max_size = len + STEP_BYTES;
            let mut data = a.clone();
            data.resize(max_size, 0);
            let n = glued_graph::glue_mutate(&mut data, len, max_size, seed);
            assert!(
                n <= max_size && (n - CONFIG_BYTES).is_multiple_of(STEP_BYTES),
                "{n}"
            );
            let mut out = vec![0u8; max_size];
            let n = glued_graph::glue_crossover(&a, &b, &mut out, seed);
            assert!(n <= max_size);
            let head = &out[..CONFIG_BYTES];
            assert!(head == &a[..CONFIG_BYTES] || head == &b[..CONFIG_BYTES]);
        }
    }

    #[test]
    fn libfuzzer_options_carry_the_rows_time_limit_and_the_dictionary_of_onnx_inputs() {
        let options = |name| by_name(name).unwrap().libfuzzer_options();
        assert_eq!(options("torch_compile_cpu"), "[libfuzzer]\ntimeout = 120\n");
        assert_eq!(
            options("ort_load"),
            "[libfuzzer]\ntimeout = 10\ndict = onnx.dict\n"
        );
    }

    #[test]
    fn input_lengths_hold_the_header_and_two_steps_per_node() {
        let plain = Input::Graph { header: 0 }.random_len(10);
        assert_eq!(plain, CONFIG_BYTES + 20 * STEP_BYTES);
        assert_eq!(Input::Graph { header: 7 }.random_len(10), plain + 7);
    }
}
