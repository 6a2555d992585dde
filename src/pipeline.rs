//! The core differential test pipeline: bytes → test case → value search → ONNX → backend at
//! every level and the libtorch reference → verdict. Every ONNX target (and TVM's plain
//! build) runs through it.

use crate::backend::capability::Capabilities;
use crate::backend::Backend;
use crate::emit::emit;
use crate::emit::onnx::{emit_plain, OnnxModel};
use crate::gen::{Limits, Menu, TestCase};
use crate::ir::Tensor;
use crate::mutate::levels::{Level, Mutations};
use crate::mutate::patterns::recipe::synthesize;
use crate::mutate::patterns::Library;
use crate::oracle::exceptions::exception_handling;
use crate::oracle::localize::localize;
use crate::oracle::near_miss::{NearMiss, Nearest};
use crate::oracle::{
    differential, normalize_message, Blame, Finding, FindingKind, ReferenceRun, Skip, Verdict,
};
use crate::reduce::{apply_all, Edit};
use crate::reference::envelope::Envelope;
use crate::reference::TorchReference;
use crate::values::repair::search_with_repair;
use crate::values::search::SearchConfig;
use std::path::Path;
use std::sync::Arc;

/// A backend plus the generator menu learned for it, and how its inputs decode.
pub struct Pipeline {
    /// The backend under test.
    pub backend: Box<dyn Backend>,
    /// Supported (op, signature, class) triples.
    pub menu: Menu,
    /// Graph-size bounds.
    pub limits: Limits,
    /// Gradient-guided value search with structural repair before each test (`None`: sampled
    /// values as decoded).
    pub values: Option<SearchConfig>,
    /// Whether libtorch eager joins the oracle as the third side.
    pub reference: bool,
    /// Patterns spliced into every seed graph (OATest synthesis); `None`: plain generation.
    pub patterns: Option<Arc<Library>>,
    /// Whether inputs start with a [`Mutations`] header (constraint level, level-0
    /// violation, function rewrites: HirFuzz, `ort_cpu_mutated`).
    pub mutations: bool,
}

/// Everything one test produced.
pub struct TestRun {
    /// The decoded test case.
    pub case: TestCase,
    /// The emitted model.
    pub model: OnnxModel,
    /// The oracle's verdict.
    pub verdict: Verdict,
    /// The optimizations that changed the model at some level (sorted, distinct).
    pub fired: Vec<String>,
    /// How far rounding alone can move each output; `None` without a reference.
    pub envelope: Option<Envelope>,
    /// On a pass, the output that came nearest to a mismatch ([`NearMiss`]).
    pub near_miss: Option<NearMiss>,
}

impl TestRun {
    /// Per output, whether the reference marks it fragile (never compared); empty without a
    /// reference. This completes the precision analysis ([`Envelope`]).
    pub fn fragile(&self) -> Vec<bool> {
        self.envelope
            .as_ref()
            .map_or_else(Vec::new, Envelope::fragile_outputs)
    }
}

impl Pipeline {
    /// `backend` with its cached (or freshly probed) capabilities.
    pub fn probed(backend: Box<dyn Backend>, limits: Limits) -> Pipeline {
        let caps = Capabilities::load_or_probe(backend.as_ref());
        Pipeline {
            menu: caps.menu(),
            backend,
            limits,
            values: Some(SearchConfig::default()),
            reference: true,
            patterns: None,
            mutations: false,
        }
    }

    /// The pipeline of the backend called `name` ([`crate::backend::by_name`]).
    pub fn of(name: &str, limits: Limits) -> Result<Pipeline, String> {
        Ok(Self::probed(crate::backend::by_name(name)?, limits))
    }

    /// The same pipeline without value search and without the reference (the backend's own
    /// levels only).
    pub fn without_reference(self) -> Pipeline {
        Pipeline {
            values: None,
            reference: false,
            ..self
        }
    }

    /// The same pipeline splicing patterns of `library` into each seed graph (the input bytes
    /// then start with a [`PatternRecipe`](crate::mutate::patterns::recipe::PatternRecipe)
    /// header).
    pub fn with_patterns(self, library: Library) -> Pipeline {
        Pipeline {
            patterns: Some(Arc::new(library)),
            ..self
        }
    }

    /// The same pipeline reading a [`Mutations`] header before the graph recipe: HirFuzz's
    /// constraint levels and ONNX function and control-flow rewrites.
    pub fn with_mutations(self) -> Pipeline {
        Pipeline {
            mutations: true,
            ..self
        }
    }

    /// Decodes `bytes` into a test case: a generated graph, with patterns spliced in when the
    /// pipeline has a library, and the mutation header read first when the pipeline mutates.
    pub fn decode(&self, bytes: &[u8]) -> TestCase {
        let (mutations, bytes) = if self.mutations {
            let (m, rest) = Mutations::split(bytes);
            (Some(m), rest)
        } else {
            (None, bytes)
        };
        let mut case = match &self.patterns {
            Some(library) => synthesize(bytes, library, &self.menu, &self.limits).case,
            None => TestCase::decode(bytes, &self.menu, &self.limits),
        };
        case.mutations = mutations;
        case
    }

    /// The same pipeline testing `backend` instead (which must share the probed backend's
    /// capabilities, e.g. tract with panics propagating).
    pub fn with_backend(self, backend: Box<dyn Backend>) -> Pipeline {
        Pipeline { backend, ..self }
    }

    /// The model inputs of `case`, in model order.
    pub fn inputs<'c>(case: &'c TestCase, model: &OnnxModel) -> Vec<&'c Tensor> {
        model.inputs.iter().map(|(n, _)| &case.values[n]).collect()
    }

    /// A finding whose unoptimized level already departs from the reference (every level
    /// against it, the unoptimized level alone, or both sides differently) narrowed to the
    /// first op at fault ([`localize`]) and re-signed by that op and its dtypes, so that one
    /// kernel bug is one finding whatever graph it sits in and whichever level showed it
    /// first (an optimized level disagreeing with an already wrong unoptimized one is that
    /// kernel bug seen through a rewrite). When every level agrees, a difference the
    /// reference reproduces from the backend's own inputs of that op is amplified rounding
    /// and explained away. Other verdicts, and findings that cannot be localized, pass
    /// through.
    fn localized(&self, case: &TestCase, verdict: Verdict) -> Verdict {
        let Verdict::Found(finding) = verdict else {
            return verdict;
        };
        let every_level = finding.blame == Some(Blame::KernelsOrReference);
        let unoptimized_departs = matches!(
            finding.blame,
            Some(Blame::Ambiguous | Blame::UnoptimizedKernels)
        );
        if !every_level && !unoptimized_departs {
            return Verdict::Found(finding);
        }
        let backend = self.backend.as_ref();
        let Ok(Some(divergence)) = localize(backend, case) else {
            return Verdict::Found(finding);
        };
        if divergence.conditioning {
            if !every_level {
                return Verdict::Found(finding);
            }
            return Verdict::Skipped(Skip::Explained(format!(
                "rounding amplified by {}({})",
                divergence.op_type, divergence.sig
            )));
        }
        Verdict::Found(Finding {
            signature: divergence.signature(),
            detail: format!(
                "first op at fault: node {} {}({}): {}\nwhole graph: {}",
                divergence.node.index(),
                divergence.op_type,
                divergence.sig,
                divergence.detail,
                finding.detail
            ),
            ..finding
        })
    }

    /// Runs one differential test on `bytes`: decode, value search, emit, reference, every
    /// backend level, verdict.
    pub fn test(&self, bytes: &[u8]) -> TestRun {
        self.judge(self.prepare(bytes))
    }

    /// Decodes `bytes` and, when the pipeline searches values, makes every value finite: the
    /// test case [`judge`](Self::judge) runs.
    pub fn prepare(&self, bytes: &[u8]) -> TestCase {
        let mut case = self.decode(bytes);
        if let Some(config) = &self.values {
            let config = SearchConfig {
                seed: case.config.value_seed,
                ..*config
            };
            search_with_repair(&mut case, &config);
        }
        case
    }

    /// [`prepare`](Self::prepare) with reduction `edits` applied.
    pub fn prepare_edited(&self, bytes: &[u8], edits: &[Edit]) -> Result<TestCase, String> {
        let mut case = self.prepare(bytes);
        apply_all(&mut case, edits).map_err(|e| format!("reduction edits: {e}"))?;
        Ok(case)
    }

    /// One test of `bytes` with reduction `edits`: the model is written to the file
    /// `inflight` (when given) before the backend sees it, so that a process death leaves it
    /// behind; `Err` when the edits do not apply.
    pub fn run_edited(
        &self,
        bytes: &[u8],
        edits: &[Edit],
        inflight: Option<&Path>,
    ) -> Result<TestRun, String> {
        let case = self.prepare_edited(bytes, edits)?;
        let model = emit(&case);
        if let Some(file) = inflight {
            // Best effort: a full disk must not stop the test.
            let _ = std::fs::write(file, &model.bytes);
        }
        Ok(self.judge_emitted(case, model))
    }

    /// Runs a prepared test case: emit, reference, every backend level, verdict.
    pub fn judge(&self, case: TestCase) -> TestRun {
        let model = emit(&case);
        self.judge_emitted(case, model)
    }

    /// [`judge`](Self::judge) for a case already emitted as `model` (`emit(&case)`).
    ///
    /// A constraint-level-0 case goes to the exception-handling oracle instead (no reference:
    /// only internal assertions count). A rewritten level-1 case is judged against the
    /// original graph: the reference computes the original's semantics (or, without the
    /// reference, the original model's unoptimized run stands in), and a rewritten model
    /// that the backend rejects while it runs the original is a finding.
    pub fn judge_emitted(&self, case: TestCase, model: OnnxModel) -> TestRun {
        let mut fired = Vec::new();
        let inputs = Self::inputs(&case, &model);
        let level = case.mutations.as_ref().map(|m| m.level);
        if level == Some(Level::Zero) {
            let verdict = exception_handling(self.backend.as_ref(), &model, &inputs, &mut fired);
            return Self::run_of(case, model, verdict, fired, None, Nearest::default());
        }
        let rewritten = case
            .mutations
            .as_ref()
            .is_some_and(|m| !m.plan.rewrites.is_empty());
        let reference = if self.reference {
            Some(TorchReference.judge(&case, &model))
        } else if rewritten {
            Some(self.original_run(&case))
        } else {
            None
        };
        let mut nearest = Nearest::default();
        let verdict = differential(
            self.backend.as_ref(),
            &model,
            &inputs,
            reference.as_ref(),
            || case.op_types(),
            &mut fired,
            &mut nearest,
        );
        let verdict = match verdict {
            Verdict::Skipped(Skip::Invalid(message)) if rewritten => {
                // Without the libtorch reference, `reference` already is the original's run.
                let original = if self.reference {
                    None
                } else {
                    reference.as_ref()
                };
                self.rejected_rewrite(&case, original, message)
            }
            other => other,
        };
        let verdict = self.localized(&case, verdict);
        Self::run_of(case, model, verdict, fired, reference, nearest)
    }

    /// The original (unrewritten) model's unoptimized run, as the reference of a rewritten
    /// one.
    fn original_run(&self, case: &TestCase) -> ReferenceRun {
        let plain = emit_plain(case);
        let outputs = self
            .backend
            .run(&plain, &Self::inputs(case, &plain), 0)
            .map_err(|e| e.to_string());
        ReferenceRun {
            outputs,
            marks: Vec::new(),
            envelope: None,
        }
    }

    /// The verdict on a rewritten model the backend rejected: a crash finding when the
    /// backend runs the original model (the rewrites preserve validity), else the skip.
    /// `original` is the original's unoptimized run when it was already made.
    fn rejected_rewrite(
        &self,
        case: &TestCase,
        original: Option<&ReferenceRun>,
        message: String,
    ) -> Verdict {
        let level = self.backend.levels()[0];
        let original_runs = match original {
            Some(run) => run.outputs.is_ok(),
            None => self.original_run(case).outputs.is_ok(),
        };
        if !original_runs {
            return Verdict::Skipped(Skip::Invalid(message));
        }
        Verdict::Found(Finding {
            kind: FindingKind::Crash,
            level: level.into(),
            signature: format!("rewrite-rejected:{level}:{}", normalize_message(&message)),
            detail: format!(
                "the original model runs, its semantics-preserving rewrite is rejected: {message}"
            ),
            blame: None,
        })
    }

    /// A test run with its fired optimizations sorted and distinct.
    fn run_of(
        case: TestCase,
        model: OnnxModel,
        verdict: Verdict,
        mut fired: Vec<String>,
        reference: Option<ReferenceRun>,
        nearest: Nearest,
    ) -> TestRun {
        let envelope = reference.and_then(|r| r.envelope);
        fired.sort_unstable();
        fired.dedup();
        let near_miss = nearest.get().and_then(|(output, ratio)| {
            let (value, _) = model.outputs.get(output)?;
            let crate::ir::NodeKind::Op(op) = &case.graph.node(value.node).kind else {
                return None;
            };
            let dtype = case.graph.ty(*value).dtype.name();
            let site = format!("{}:{dtype}", op.op_type());
            Some(NearMiss { site, ratio })
        });
        TestRun {
            case,
            model,
            verdict,
            fired,
            envelope,
            near_miss,
        }
    }
}
