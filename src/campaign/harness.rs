//! One differential test: bytes → test case → value search → ONNX → backend at every level
//! and the libtorch reference → verdict.

use super::executor::Target;
use crate::backend::capability::Capabilities;
use crate::backend::faulty::Faulty;
use crate::backend::ort::OrtCpu;
use crate::backend::tract::Tract;
use crate::backend::Backend;
use crate::emit::onnx::{emit, OnnxModel};
use crate::gen::{Limits, Menu, TestCase};
use crate::ir::{NodeKind, Tensor};
use crate::mutate::patterns::recipe::synthesize;
use crate::mutate::patterns::Library;
use crate::oracle::localize::{known_deviation, localize};
use crate::oracle::{differential, Blame, Finding, Skip, Verdict};
use crate::reference::TorchReference;
use crate::values::repair::search_with_repair;
use crate::values::search::SearchConfig;
use std::sync::Arc;

/// A backend plus the generator menu learned for it.
pub struct Harness {
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
}

impl Harness {
    /// `backend` with its cached (or freshly probed) capabilities.
    pub fn probed(backend: Box<dyn Backend>, limits: Limits) -> Harness {
        let caps = Capabilities::load_or_probe(backend.as_ref());
        Harness {
            menu: caps.menu(),
            backend,
            limits,
            values: Some(SearchConfig::default()),
            reference: true,
            patterns: None,
        }
    }

    /// ONNX Runtime CPU with its cached (or freshly probed) capabilities.
    pub fn ort_cpu(limits: Limits) -> Result<Harness, String> {
        Ok(Self::probed(Box::new(OrtCpu::new()?), limits))
    }

    /// The harness a campaign [`Target`] names: its backend (`ort`, `tract`, or `faulty`, the
    /// fault-injecting wrapper of ONNX Runtime for reliability tests, which uses ORT's
    /// capability table), graph-size limit and pattern library.
    pub fn for_target(target: &Target) -> Result<Harness, String> {
        let limits = Limits {
            min_nodes: 1,
            max_nodes: target.max_nodes,
        };
        let harness = match target.backend.as_str() {
            "ort" => Self::ort_cpu(limits)?,
            "tract" => Self::tract(limits),
            "faulty" => {
                let faulty = Faulty::new(Box::new(OrtCpu::new()?))?;
                Self::ort_cpu(limits)?.with_backend(Box::new(faulty))
            }
            other => {
                return Err(format!(
                    "unknown backend {other:?}: this build supports `ort` (ONNX Runtime CPU) and `tract`"
                ))
            }
        };
        Ok(match &target.patterns {
            Some(name) => harness.with_patterns(Library::named(name)?),
            None => harness,
        })
    }

    /// tract with its cached (or freshly probed) capabilities; tract's panics become crash
    /// findings.
    pub fn tract(limits: Limits) -> Harness {
        Self::probed(Box::new(Tract::new()), limits)
    }

    /// The same harness without value search and without the reference (the backend's own
    /// levels only).
    pub fn without_reference(self) -> Harness {
        Harness {
            values: None,
            reference: false,
            ..self
        }
    }

    /// The same harness splicing patterns of `library` into each seed graph (the input bytes
    /// then start with a [`PatternRecipe`](crate::mutate::patterns::recipe::PatternRecipe)
    /// header).
    pub fn with_patterns(self, library: Library) -> Harness {
        Harness {
            patterns: Some(Arc::new(library)),
            ..self
        }
    }

    /// Decodes `bytes` into a test case: a generated graph, with patterns spliced in when the
    /// harness has a library.
    pub fn decode(&self, bytes: &[u8]) -> TestCase {
        match &self.patterns {
            Some(library) => synthesize(bytes, library, &self.menu, &self.limits).case,
            None => TestCase::decode(bytes, &self.menu, &self.limits),
        }
    }

    /// The same harness testing `backend` instead (which must share the probed backend's
    /// capabilities, e.g. tract with panics propagating).
    pub fn with_backend(self, backend: Box<dyn Backend>) -> Harness {
        Harness { backend, ..self }
    }

    /// The model inputs of `case`, in model order.
    pub fn inputs<'c>(case: &'c TestCase, model: &OnnxModel) -> Vec<&'c Tensor> {
        model.inputs.iter().map(|(n, _)| &case.values[n]).collect()
    }

    /// Sorted, de-duplicated op types of a case (part of inconsistency signatures).
    pub fn op_types(case: &TestCase) -> String {
        let mut ops: Vec<&str> = case
            .graph
            .op_nodes()
            .into_iter()
            .filter_map(|n| match &case.graph.node(n).kind {
                NodeKind::Op(op) => Some(op.op_type()),
                _ => None,
            })
            .collect();
        ops.sort_unstable();
        ops.dedup();
        ops.join(",")
    }

    /// A reference mismatch (every level against the reference) narrowed to the first op at
    /// fault ([`localize`]): explained away as a documented kernel deviation or as amplified
    /// rounding, or re-signed by that op and its dtypes so that one kernel bug is one finding
    /// whatever graph it sits in. Other verdicts, and mismatches that cannot be localized,
    /// pass through.
    fn localized(&self, case: &TestCase, verdict: Verdict) -> Verdict {
        let Verdict::Found(finding) = verdict else {
            return verdict;
        };
        if finding.blame != Some(Blame::KernelsOrReference) {
            return Verdict::Found(finding);
        }
        let backend = self.backend.as_ref();
        let Ok(Some(divergence)) = localize(backend, case) else {
            return Verdict::Found(finding);
        };
        if divergence.conditioning {
            return Verdict::Skipped(Skip::Explained(format!(
                "rounding amplified by {}({})",
                divergence.op_type, divergence.sig
            )));
        }
        if let Some(reason) = known_deviation(backend.name(), &divergence) {
            return Verdict::Skipped(Skip::Explained(reason.to_string()));
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

    /// Decodes `bytes` and, when the harness searches values, makes every value finite: the
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

    /// Runs a prepared test case: emit, reference, every backend level, verdict.
    pub fn judge(&self, case: TestCase) -> TestRun {
        let model = emit(&case);
        self.judge_emitted(case, model)
    }

    /// [`judge`](Self::judge) for a case already emitted as `model` (`emit(&case)`).
    pub fn judge_emitted(&self, case: TestCase, model: OnnxModel) -> TestRun {
        let reference = self.reference.then(|| TorchReference.judge(&case, &model));
        let mut fired = Vec::new();
        let verdict = differential(
            self.backend.as_ref(),
            &model,
            &Self::inputs(&case, &model),
            reference.as_ref(),
            || Self::op_types(&case),
            &mut fired,
        );
        fired.sort_unstable();
        fired.dedup();
        let verdict = self.localized(&case, verdict);
        TestRun {
            case,
            model,
            verdict,
            fired,
        }
    }
}
