//! Python exceptions from the host, classified: an unsupported feature is not a finding, a
//! broken environment stops the run with a message, anything else is an internal compiler
//! error, localized to the component whose frames raised it (Dynamo, AOT Autograd, Inductor,
//! a named TVM pass, TVM's frontend, build or runtime).

use serde::{Deserialize, Serialize};

/// One exception of a chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PyException {
    /// Qualified type name (`torch._dynamo.exc.BackendCompilerFailed`).
    #[serde(rename = "type")]
    pub kind: String,
    /// `str(exception)`.
    pub message: String,
}

/// A failed stage as the host reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PyError {
    /// The host's stage (`eager`, `compile:inductor`, `import`, `pass:FuseOps`, `build`, ...).
    pub stage: String,
    /// The exception chain, outermost first (`__cause__`/`__context__` links).
    pub chain: Vec<PyException>,
    /// The innermost exception's last frames, `path:line:function`, innermost last; paths
    /// start at the package (`torch/_inductor/...`).
    pub frames: Vec<String>,
}

/// What a Python failure means for the oracle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PyOutcome {
    /// The compiler does not support something in the test: never a finding.
    Unsupported,
    /// The environment is broken (missing module, compiler or header): stop, naming it.
    Environment,
    /// An internal compiler error in `component`.
    Internal {
        /// `dynamo`, `aot-autograd`, `inductor`, `tvm:pass:<Name>`, `tvm:frontend`, ...
        component: String,
    },
}

const UNSUPPORTED_TYPES: [&str; 5] = [
    "NotImplementedError",
    "torch._dynamo.exc.Unsupported",
    "tvm.error.OpNotImplemented",
    "tvm.error.OpAttributeUnImplemented",
    "tvm.error.OpAttributeRequired",
];
const UNSUPPORTED_WORDS: [&str; 10] = [
    "not supported",
    // torch.export's documented limit: no data-dependent control flow (EMI conditions on
    // values), which the ONNX exporter inherits.
    "data-dependent",
    // The ONNX exporter without a conversion for an operator, and ONNX Runtime without a
    // kernel for a type: missing features.
    "no onnx function found",
    "no decompositions registered",
    "could not find an implementation",
    "not implemented",
    "unsupported",
    "is not yet supported",
    "no implementation",
    // TVM's ONNX importer on inputs of a kind a converter lacks ("Node Max cannot handle
    // ShapeExpr inputs"): a missing feature, not a wrong one.
    "cannot handle",
];
const ENVIRONMENT_TYPES: [&str; 2] = ["ModuleNotFoundError", "ImportError"];
const ENVIRONMENT_WORDS: [&str; 4] = [
    "python.h: no such file",
    "no such file or directory: 'g++'",
    "no such file or directory: 'gcc'",
    "invalid compiler",
];

/// Frame path prefixes and the component they localize to, most specific first.
const COMPONENTS: [(&str, &str); 7] = [
    ("torch/onnx/", "exporter"),
    ("onnxscript/", "exporter"),
    ("torch/export/", "torch.export"),
    ("torch/_inductor/", "inductor"),
    ("torch/_functorch/", "aot-autograd"),
    ("torch/_dynamo/", "dynamo"),
    ("torch/fx/", "fx"),
];

impl PyError {
    /// The innermost exception as `Type: first line`.
    pub fn headline(&self) -> String {
        match self.chain.last() {
            Some(e) => format!(
                "{}: {}",
                e.kind,
                e.message.lines().next().unwrap_or_default()
            ),
            None => format!("failure in stage {}", self.stage),
        }
    }

    /// What identifies the failure in a signature: the headline, except for a compile
    /// error of generated C++ (Inductor's kernels), where the innermost exception is the
    /// g++ command with the kernel's hashed file name: its first `error:` line, without the
    /// file's path, names the bug instead.
    pub fn key(&self) -> String {
        let compile_error = self
            .chain
            .iter()
            .find(|e| e.message.contains("C++ compile error"))
            .and_then(|e| e.message.lines().find(|l| l.contains(" error: ")));
        match compile_error {
            Some(line) => format!(
                "C++ compile error: {}",
                line.split_once(" error: ").map_or(line, |(_, m)| m).trim()
            ),
            None => self.headline(),
        }
    }

    /// The full chain and frames, for reports.
    pub fn detail(&self) -> String {
        let chain: Vec<String> = self
            .chain
            .iter()
            .map(|e| format!("{}: {}", e.kind, e.message))
            .collect();
        format!(
            "stage {}\n{}\nframes (innermost last):\n  {}",
            self.stage,
            chain.join("\n  caused by "),
            self.frames.join("\n  ")
        )
    }

    /// The component that raised: a TVM stage by name, else the innermost torch frame's
    /// package, else the stage.
    pub fn component(&self) -> String {
        if let Some(pass) = self.stage.strip_prefix("pass:") {
            return format!("tvm:pass:{pass}");
        }
        match self.stage.as_str() {
            "import" => return "tvm:frontend".into(),
            "build" => return "tvm:build".into(),
            "load" | "run" => return "tvm:runtime".into(),
            // The ONNX exporter's targets: an exported model the checker rejects is the
            // exporter's; ONNX Runtime's own failures are ONNX Runtime's.
            "check" => return "exporter:invalid-model".into(),
            "ort" => return "onnxruntime".into(),
            _ => {}
        }
        let from_frames = self.frames.iter().rev().find_map(|f| {
            COMPONENTS
                .iter()
                .find(|(prefix, _)| f.starts_with(prefix))
                .map(|(_, c)| c.to_string())
        });
        from_frames.unwrap_or_else(|| self.stage.clone())
    }

    /// Classifies the failure.
    pub fn outcome(&self) -> PyOutcome {
        let types = || self.chain.iter().map(|e| e.kind.as_str());
        let messages = || self.chain.iter().map(|e| e.message.to_lowercase());
        if types().any(|t| ENVIRONMENT_TYPES.contains(&t))
            || messages().any(|m| ENVIRONMENT_WORDS.iter().any(|w| m.contains(w)))
        {
            return PyOutcome::Environment;
        }
        // A model the ONNX checker rejects is invalid whatever the words ("has unsupported
        // type": the exporter emitted an op on a type the ONNX spec does not allow for it).
        let invalid_model = self.stage == "check";
        if !invalid_model
            && (types().any(|t| UNSUPPORTED_TYPES.contains(&t))
                || messages().any(|m| UNSUPPORTED_WORDS.iter().any(|w| m.contains(w))))
        {
            return PyOutcome::Unsupported;
        }
        PyOutcome::Internal {
            component: self.component(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(stage: &str, chain: &[(&str, &str)], frames: &[&str]) -> PyError {
        PyError {
            stage: stage.into(),
            chain: chain
                .iter()
                .map(|(k, m)| PyException {
                    kind: k.to_string(),
                    message: m.to_string(),
                })
                .collect(),
            frames: frames.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn inductor_errors_are_internal_and_localized() {
        let e = error(
            "compile:inductor",
            &[
                (
                    "torch._dynamo.exc.BackendCompilerFailed",
                    "backend='inductor' raised",
                ),
                ("AssertionError", "size mismatch"),
            ],
            &[
                "torch/_dynamo/output_graph.py:1:call_user_compiler",
                "torch/_inductor/lowering.py:2:make_pointwise",
            ],
        );
        assert_eq!(
            e.outcome(),
            PyOutcome::Internal {
                component: "inductor".into()
            }
        );
        assert_eq!(e.headline(), "AssertionError: size mismatch");
    }

    #[test]
    fn exporter_failures_are_localized_and_an_invalid_model_is_always_a_finding() {
        let e = error(
            "check",
            &[(
                "onnx.onnx_cpp2py_export.shape_inference.InferenceError",
                "(op_type:HardSwish): X typestr: T, has unsupported type: tensor(bfloat16)",
            )],
            &["onnx/checker.py:163:check_model"],
        );
        assert_eq!(
            e.outcome(),
            PyOutcome::Internal {
                component: "exporter:invalid-model".into()
            }
        );
        let e = error(
            "export",
            &[(
                "torch.onnx._internal.exporter._errors.DispatchError",
                "No ONNX function found for <OpOverload(op='prims.digamma')>",
            )],
            &["torch/onnx/_internal/exporter/_core.py:1:_handle_call_function_node"],
        );
        assert_eq!(e.outcome(), PyOutcome::Unsupported);
        let e = error(
            "export",
            &[("RuntimeError", "boom")],
            &["torch/onnx/_internal/exporter/_core.py:1:f"],
        );
        assert_eq!(
            e.outcome(),
            PyOutcome::Internal {
                component: "exporter".into()
            }
        );
        let e = error(
            "ort",
            &[("onnxruntime.capi.onnxruntime_pybind_state.Fail", "bad")],
            &[],
        );
        assert_eq!(
            e.outcome(),
            PyOutcome::Internal {
                component: "onnxruntime".into()
            }
        );
    }

    #[test]
    fn a_cpp_compile_error_is_keyed_by_its_first_error_not_the_kernel_file() {
        let e = error(
            "compile:inductor",
            &[
                ("torch._inductor.exc.InductorError", "CppCompileError: C++ compile error\n\nOutput:\n/tmp/torchinductor_root/rw/crw.main.cpp:76:57: error: no matching function for call to 'max_masked_reduce(...)'\n"),
                ("subprocess.CalledProcessError", "Command '['g++', '/tmp/torchinductor_root/rw/crw.main.cpp']' returned non-zero exit status 1."),
            ],
            &["torch/_inductor/codecache.py:1:compile"],
        );
        assert_eq!(
            e.key(),
            "C++ compile error: no matching function for call to 'max_masked_reduce(...)'"
        );
        let plain = error("compile:inductor", &[("AssertionError", "x")], &[]);
        assert_eq!(plain.key(), plain.headline());
    }

    #[test]
    fn unsupported_and_environment_are_not_findings() {
        let e = error("compile:inductor", &[("NotImplementedError", "x")], &[]);
        assert_eq!(e.outcome(), PyOutcome::Unsupported);
        let e = error(
            "import",
            &[(
                "tvm.error.OpNotImplemented",
                "Operator Foo is not supported",
            )],
            &[],
        );
        assert_eq!(e.outcome(), PyOutcome::Unsupported);
        let e = error(
            "import",
            &[("ValueError", "Node 7_Max cannot handle ShapeExpr inputs.")],
            &[],
        );
        assert_eq!(e.outcome(), PyOutcome::Unsupported);
        let e = error(
            "setup",
            &[("ModuleNotFoundError", "No module named 'torch'")],
            &[],
        );
        assert_eq!(e.outcome(), PyOutcome::Environment);
    }

    #[test]
    fn tvm_stages_name_the_component() {
        let e = error(
            "pass:FuseTIR",
            &[("tvm.error.InternalError", "Check failed")],
            &[],
        );
        assert_eq!(
            e.outcome(),
            PyOutcome::Internal {
                component: "tvm:pass:FuseTIR".into()
            }
        );
        assert_eq!(error("import", &[], &[]).component(), "tvm:frontend");
        assert_eq!(error("run", &[], &[]).component(), "tvm:runtime");
    }
}
