//! The TorchScript targets (`torchscript_cpu`, `torchscript_cuda`): bytes → program plan +
//! generated float32 graph → value search → SSA program → TorchProbe mutations → TorchScript
//! source → `torch::jit::compile` → runs under the plain interpreter and, three times, under
//! the optimizing profiling executor with CPU fusion (the third run uses the optimized plan),
//! each compared with libtorch eager on the original graph.

use crate::backend::torchscript::{JitMode, Script};
use crate::emit::onnx::emit_plain;
use crate::emit::torchscript::{render, ENTRY};
use crate::gen::{Limits, Menu, TestCase};
use crate::ir::Tensor;
use crate::mutate::program::lower::{lower, supported};
use crate::mutate::program::ProgramPlan;
use crate::ops::registry;
use crate::oracle::{compare, normalize_message, Finding, FindingKind, Skip, Verdict};
use crate::reference::{convert, TorchReference};
use crate::values::repair::search_with_repair;
use crate::values::search::SearchConfig;

/// Runs of the optimized mode: the profiling executor records shapes on the first runs and
/// runs its optimized (fused) plan afterwards.
pub const OPTIMIZED_RUNS: usize = 3;

/// A TorchScript test setup: the lowerable menu, graph size, and the device.
pub struct TorchScriptHarness {
    /// Ops and signatures the program lowering writes (float32).
    pub menu: Menu,
    /// Graph-size bounds.
    pub limits: Limits,
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
            menu: Menu::new(|spec, sig, _| {
                let dtypes: Vec<_> = sig.inputs.iter().chain(&sig.outputs).copied().collect();
                supported(registry()[spec].op_type(), &dtypes)
            }),
            limits,
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

    /// Decodes `bytes` (program plan, then graph recipe) and searches finite values.
    pub fn prepare(&self, bytes: &[u8]) -> (ProgramPlan, TestCase) {
        let (plan, rest) = ProgramPlan::split(bytes);
        let mut case = TestCase::decode(rest, &self.menu, &self.limits);
        let config = SearchConfig {
            seed: case.config.value_seed,
            ..SearchConfig::default()
        };
        search_with_repair(&mut case, &config);
        (plan, case)
    }

    /// One test.
    pub fn test(&self, bytes: &[u8]) -> ScriptRun {
        let (plan, case) = self.prepare(bytes);
        let skipped = |s: Skip| ScriptRun {
            verdict: Verdict::Skipped(s),
            source: String::new(),
            applied: Vec::new(),
        };
        let (reference, values) = TorchReference.judge_profiled(&case, &emit_plain(&case));
        let values = match values {
            Ok(v) => v,
            Err(e) => return skipped(Skip::Invalid(format!("reference: {e}"))),
        };
        let mut program = match lower(&case, &values) {
            Ok(p) => p,
            Err(e) => return skipped(Skip::Unsupported(e)),
        };
        let applied = plan.apply(&mut program);
        let source = render(&program);
        let Ok(expected) = &reference.outputs else {
            return skipped(Skip::Invalid("the reference failed".into()));
        };
        if expected.iter().any(|t| !t.is_finite()) {
            return skipped(Skip::NonFinite);
        }
        let inputs: Vec<tch::Tensor> = program
            .params
            .iter()
            .map(|p| convert::to_tch(&program.profile[p]).to_device(self.device))
            .collect();
        let ops = crate::campaign::harness::Harness::op_types(&case);
        let verdict = self.judge(&source, &inputs, expected, &reference.fragile, &ops);
        ScriptRun {
            verdict,
            source,
            applied,
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
