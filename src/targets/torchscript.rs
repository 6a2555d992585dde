//! The TorchScript targets (`torchscript_cpu`, `torchscript_cuda`): bytes → program plan +
//! generated float32 graph → value search → SSA program → TorchProbe mutations → TorchScript
//! source → `torch::jit::compile` → runs under the plain interpreter and, three times, under
//! the optimizing profiling executor with CPU fusion (the third run uses the optimized plan),
//! each compared with libtorch eager on the original graph.

use super::program::ProgramSource;
use crate::backend::torchscript::{JitMode, Script};
use crate::emit::program::{render, Dialect, ENTRY};
use crate::gen::Limits;
use crate::ir::Tensor;
use crate::oracle::{compare, normalize_message, Finding, FindingKind, Verdict};
use crate::reference::convert;

/// Runs of the optimized mode: the profiling executor records shapes on the first runs and
/// runs its optimized (fused) plan afterwards.
pub const OPTIMIZED_RUNS: usize = 3;

/// A TorchScript test setup: the program source and the device.
pub struct TorchScriptHarness {
    /// Where programs come from.
    pub source: ProgramSource,
    /// Where the compiled program runs.
    pub device: tch::Device,
}

/// Everything one TorchScript test produced.
pub struct ScriptRun {
    /// The verdict.
    pub verdict: Verdict,
    /// The mutated program's source (empty when lowering failed).
    pub source: String,
    /// The program mutations that applied.
    pub applied: Vec<String>,
}

impl TorchScriptHarness {
    /// TorchScript on the CPU.
    pub fn cpu(limits: Limits) -> TorchScriptHarness {
        TorchScriptHarness {
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
            device: tch::Device::Cuda(0),
            ..Self::cpu(limits)
        })
    }

    /// One test.
    pub fn test(&self, bytes: &[u8]) -> ScriptRun {
        let test = match self.source.program(bytes) {
            Ok(t) => t,
            Err(skip) => {
                return ScriptRun {
                    verdict: Verdict::Skipped(skip),
                    source: String::new(),
                    applied: Vec::new(),
                }
            }
        };
        let source = render(&test.program, Dialect::TorchScript);
        let inputs: Vec<tch::Tensor> = test
            .inputs()
            .into_iter()
            .map(|t| convert::to_tch(t).to_device(self.device))
            .collect();
        let verdict = self.judge(&source, &inputs, &test.expected, &test.fragile, &test.ops);
        ScriptRun {
            verdict,
            source,
            applied: test.applied,
        }
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

fn crash(level: &str, stage: &str, message: &str) -> Verdict {
    Verdict::Found(Finding {
        kind: FindingKind::Crash,
        level: level.into(),
        signature: format!("crash:{level}:{stage}:{}", normalize_message(message)),
        detail: message.into(),
        blame: None,
    })
}
