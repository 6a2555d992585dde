//! The TorchScript targets (`torchscript_cpu`, `torchscript_cuda`): bytes → program plan +
//! generated float32 graph → value search → SSA program → TorchProbe mutations → TorchScript
//! source → `torch::jit::compile` → runs under the plain interpreter and, three times, under
//! the optimizing profiling executor with CPU fusion (the third run uses the optimized plan),
//! each compared with libtorch eager on the original graph.

use super::program::{ProgramSource, ProgramTest};
use super::{repro, Artifacts, FuzzTarget, TargetConfig, TargetInfo, TargetRun};
use crate::backend::torchscript::{JitMode, Script};
use crate::gen::{Limits, TestCase};
use crate::ir::Tensor;
use crate::mutate::program::render::{render, Dialect, ENTRY};
use crate::oracle::{compare, normalize_message, Finding, FindingKind, Verdict};
use crate::reduce::Edit;
use crate::reference::convert;
use std::path::Path;

/// Runs of the optimized mode: the profiling executor records shapes on the first runs and
/// runs its optimized (fused) plan afterwards.
pub const OPTIMIZED_RUNS: usize = 3;

/// A TorchScript test setup: the program source and the device.
pub struct TorchScriptHarness {
    info: &'static TargetInfo,
    /// Where programs come from.
    pub source: ProgramSource,
    /// Where the compiled program runs.
    pub device: tch::Device,
}

impl TorchScriptHarness {
    /// TorchScript on the CPU.
    pub fn cpu(limits: Limits) -> TorchScriptHarness {
        TorchScriptHarness {
            info: super::by_name("torchscript_cpu").expect("a registry row"),
            source: ProgramSource::new(limits),
            device: tch::Device::Cpu,
        }
    }

    /// TorchScript on CUDA device 0, or why not.
    pub fn cuda(limits: Limits) -> Result<TorchScriptHarness, String> {
        if !tch::Cuda::is_available() {
            return Err("torchscript_cuda needs a CUDA device, and libtorch sees none (tch::Cuda::is_available() is false)".into());
        }
        Ok(TorchScriptHarness {
            info: super::by_name("torchscript_cuda")?,
            device: tch::Device::Cuda(0),
            ..Self::cpu(limits)
        })
    }

    fn device_name(&self) -> &'static str {
        if self.device == tch::Device::Cpu {
            "cpu"
        } else {
            "cuda"
        }
    }

    /// One test of `bytes` with reduction `edits`: the verdict, the graph, and (for a
    /// finding) the program source and a standalone `repro.py`.
    pub fn test(&self, bytes: &[u8], edits: &[Edit]) -> TargetRun {
        let test = match self.source.program(bytes, edits) {
            Ok(t) => t,
            Err(skip) => return TargetRun::bare(Verdict::Skipped(skip)),
        };
        let source = render(&test.program, Dialect::TorchScript);
        let inputs: Vec<tch::Tensor> = test
            .inputs()
            .into_iter()
            .map(|t| convert::to_tch(t).to_device(self.device))
            .collect();
        let verdict = self.judge(&source, &inputs, &test.expected, &test.fragile, &test.ops);
        let artifacts = super::files_if_found(&verdict, || self.finding_files(&test, source));
        TargetRun::tested(verdict, test.case, artifacts)
    }

    /// A finding folder's files: the program, a standalone `repro.py`, the mutations.
    fn finding_files(&self, test: &ProgramTest, source: String) -> Artifacts {
        let repro = repro::torchscript(&source, &test.inputs(), &test.expected, self.device_name());
        vec![
            ("program.ts".to_string(), source.into_bytes()),
            ("repro.py".to_string(), repro.into_bytes()),
            (
                "mutations.txt".to_string(),
                test.applied.join("\n").into_bytes(),
            ),
        ]
    }

    /// Compiles and runs `source` in the plain and the optimized JIT modes against
    /// `expected`.
    fn judge(
        &self,
        source: &str,
        inputs: &[tch::Tensor],
        expected: &[Tensor],
        fragile: &[bool],
        ops: &str,
    ) -> Verdict {
        let modes = [
            ("jit-plain", JitMode::PLAIN, 1),
            ("jit-optimized", JitMode::OPTIMIZED, OPTIMIZED_RUNS),
        ];
        for (name, mode, runs) in modes {
            mode.apply();
            let script = match Script::compile(source) {
                Ok(s) => s,
                Err(e) => return crash(name, "compile", &e),
            };
            for run in 1..=runs {
                let level = format!("{name}#{run}");
                let args: Vec<tch::Tensor> = inputs.iter().map(tch::Tensor::copy).collect();
                let outputs = match script.run(ENTRY, &args, expected.len()) {
                    Ok(o) => o,
                    Err(e) => return crash(&level, "run", &e),
                };
                for (k, (want, got)) in expected.iter().zip(&outputs).enumerate() {
                    if fragile.get(k).copied().unwrap_or(false) {
                        continue;
                    }
                    let got = match convert::from_tch(
                        &got.to_device(tch::Device::Cpu),
                        want.data.dtype(),
                    ) {
                        Ok(t) => t,
                        Err(e) => return crash(&level, "output", &e.to_string()),
                    };
                    if let Some(detail) = compare(want, &got) {
                        return Verdict::Found(Finding {
                            kind: FindingKind::Inconsistency,
                            level: level.clone(),
                            signature: format!("inconsistency:{name}:{ops}"),
                            detail: format!("output {k} against libtorch eager: {detail}"),
                            blame: None,
                        });
                    }
                }
            }
        }
        Verdict::Pass
    }
}

impl FuzzTarget for TorchScriptHarness {
    fn info(&self) -> &'static TargetInfo {
        self.info
    }

    fn version(&self) -> String {
        format!("TorchScript (libtorch {})", crate::reference::version())
    }

    fn reference_level(&self) -> &str {
        "reference"
    }

    fn newest_env(&self) -> super::NewestEnv {
        super::NewestEnv::python_compilers(&self.version())
    }

    fn decode(&self, bytes: &[u8]) -> Option<TestCase> {
        Some(self.source.prepare(bytes).1)
    }

    fn run(&self, bytes: &[u8], edits: &[Edit], _inflight: Option<&Path>) -> TargetRun {
        self.test(bytes, edits)
    }

    fn files(&self, bytes: &[u8], edits: &[Edit]) -> (Option<TestCase>, Artifacts) {
        match self.source.program(bytes, edits) {
            Ok(test) => {
                let source = render(&test.program, Dialect::TorchScript);
                let files = self.finding_files(&test, source);
                (Some(test.case), files)
            }
            Err(_) => (None, Vec::new()),
        }
    }
}

/// `torchscript_cpu`: TorchProbe on TorchScript (CPU).
pub fn build_cpu(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TorchScriptHarness::cpu(config.limits())))
}

/// `torchscript_cuda`: the compiled program on CUDA device 0 (the reference stays libtorch
/// eager on the CPU); fails naming what is missing when libtorch sees no CUDA device.
pub fn build_cuda(config: &TargetConfig) -> Result<Box<dyn FuzzTarget>, String> {
    Ok(Box::new(TorchScriptHarness::cuda(config.limits())?))
}

fn crash(level: &str, stage: &str, message: &str) -> Verdict {
    Verdict::Found(Finding {
        kind: FindingKind::Crash,
        level: level.into(),
        signature: format!("crash:{level}:{stage}:{}", normalize_message(message)),
        detail: message.into(),
        blame: None,
    })
}
