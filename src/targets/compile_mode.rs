//! What a torch.compile test compiles with, drawn from its mode byte ([`Mode`]): dynamic
//! shapes, gradients, a recompilation, and Inductor's configuration ([`Setting`]); and the
//! backend under test ([`Compiler`]). The target, its reproducers and its localization all
//! read the mode from here.

use serde_json::{json, Value};

/// Batch sizes of the recompilation mode, in order.
pub const BATCHES: [usize; 2] = [1, 2];

/// What the mode byte selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// `torch.compile(dynamic=True)`.
    pub dynamic: bool,
    /// Gradients too.
    pub backward: bool,
    /// Batch sizes 1 then 2 (forward only).
    pub recompile: bool,
    /// The Inductor configuration compiled under (Inductor only).
    pub setting: Setting,
}

impl Mode {
    /// The mode of byte `m` for `compiler`: bits 0-1 dynamic, 2-3 backward, 4-5 recompile,
    /// 6-7 Inductor's [`Setting`].
    pub fn of(m: u8, compiler: Compiler) -> Mode {
        let backward = m & 0b1100 == 0b1100;
        let setting = match compiler {
            Compiler::Inductor => Setting::of(m >> 6, backward),
            Compiler::OpenVino => Setting::Default,
        };
        Mode {
            dynamic: m & 0b11 == 0b11,
            backward,
            recompile: !backward && m & 0b11_0000 == 0b11_0000,
            setting,
        }
    }

    /// Whether the compiled program holds the rows' weights as module parameters, as a
    /// model does (under freezing, Inductor's constants): in a forward test compiled once.
    /// Gradients are taken with respect to every float parameter, and a batched entry
    /// slices every parameter, so those tests pass the weights as arguments.
    pub fn weights_as_parameters(&self) -> bool {
        !self.backward && !self.recompile
    }

    /// `static`/`dynamic`, `fwd`/`bwd`, `once`/`recompile`, and a setting other than the
    /// default, for signatures.
    pub fn label(&self) -> String {
        let setting = self
            .setting
            .label()
            .map_or(String::new(), |s| format!(":{s}"));
        format!(
            "{}:{}:{}{setting}",
            if self.dynamic { "dynamic" } else { "static" },
            if self.backward { "bwd" } else { "fwd" },
            if self.recompile { "recompile" } else { "once" }
        )
    }

    /// The host's compile spec for `backend` with its `options` and Inductor `config`
    /// patched (over the setting's, for Inductor).
    pub fn compile(&self, backend: &str, options: &Value, config: &Value) -> Value {
        let batches: &[usize] = if self.recompile { &BATCHES } else { &[] };
        let setting = if backend == Compiler::Inductor.backend() {
            self.setting
        } else {
            Setting::Default
        };
        let mut patch = setting.config();
        if let (Some(patch), Some(config)) = (patch.as_object_mut(), config.as_object()) {
            patch.extend(config.clone());
        }
        json!({"backend": backend, "options": options, "dynamic": self.dynamic,
               "batches": batches, "config": patch, "mode": setting.compile_mode(),
               "no_grad": setting.no_grad()})
    }
}

/// The Inductor configurations users compile with, one drawn per test: the default, the C++
/// wrapper (`cpp_wrapper`, the AOT-style host code), freezing (weights as constants, only
/// under `torch.no_grad()`: forward tests), and `mode="max-autotune-no-cudagraphs"` (template
/// and tile autotuning; cudagraphs mean nothing on the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `torch.compile` as called without arguments.
    Default,
    /// `torch._inductor.config.cpp_wrapper = True`.
    CppWrapper,
    /// `torch._inductor.config.freezing = True`, the compiled calls under `torch.no_grad()`.
    Freezing,
    /// `torch.compile(mode="max-autotune-no-cudagraphs")`.
    MaxAutotune,
}

impl Setting {
    /// The setting of two mode bits; freezing needs a forward-only test.
    fn of(bits: u8, backward: bool) -> Setting {
        match bits & 0b11 {
            1 => Setting::CppWrapper,
            2 if !backward => Setting::Freezing,
            3 => Setting::MaxAutotune,
            _ => Setting::Default,
        }
    }

    /// Its name in signatures (`None`: the default).
    pub fn label(self) -> Option<&'static str> {
        match self {
            Setting::Default => None,
            Setting::CppWrapper => Some("cpp_wrapper"),
            Setting::Freezing => Some("freezing"),
            Setting::MaxAutotune => Some("max-autotune"),
        }
    }

    /// The Inductor config it patches, as a JSON object.
    pub fn config(self) -> Value {
        match self {
            Setting::CppWrapper => json!({"cpp_wrapper": true}),
            Setting::Freezing => json!({"freezing": true}),
            Setting::Default | Setting::MaxAutotune => json!({}),
        }
    }

    /// Its `torch.compile(mode=...)`, if any.
    pub fn compile_mode(self) -> Option<&'static str> {
        (self == Setting::MaxAutotune).then_some("max-autotune-no-cudagraphs")
    }

    /// Whether the compiled calls run under `torch.no_grad()`.
    pub fn no_grad(self) -> bool {
        self == Setting::Freezing
    }
}

/// The `torch.compile` backend under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// Inductor, PyTorch's own (C++ kernels on the CPU, Triton on CUDA).
    Inductor,
    /// OpenVINO's backend (`backend="openvino"`, registered by the `openvino` package), on the
    /// CPU at float32 inference precision: its default is bf16 on CPUs with avx512_bf16 or
    /// AMX, a documented precision trade.
    OpenVino,
}

impl Compiler {
    /// Its `torch.compile(backend=...)` name.
    pub fn backend(self) -> &'static str {
        match self {
            Compiler::Inductor => "inductor",
            Compiler::OpenVino => "openvino",
        }
    }

    /// Its `torch.compile(options=...)` for a test in `mode`, as JSON (`null`: none).
    /// OpenVINO's backend captures the backward graph only with `aot_autograd`, which its
    /// documentation says "is needed to enable dynamic shapes or to finetune a model" and is
    /// off by default ("PyTorch Deployment via torch.compile", Options): without it a
    /// partition's outputs come back detached, so a backward or dynamic-shape test turns it on.
    pub fn options(self, mode: Mode) -> Value {
        match self {
            Compiler::Inductor => Value::Null,
            Compiler::OpenVino => json!({
                "device": "CPU",
                "config": {"INFERENCE_PRECISION_HINT": "f32"},
                "aot_autograd": mode.backward || mode.dynamic,
            }),
        }
    }

    /// [`options`](Self::options) as a Python expression, for `repro.py` (which imports
    /// `json`): JSON's `true` and `false` are not Python.
    pub fn python_options(self, mode: Mode) -> String {
        match self.options(mode) {
            Value::Null => "None".into(),
            options => format!("json.loads({:?})", options.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_bytes_top_bits_draw_inductors_configuration() {
        let settings: Vec<Setting> = (0..4u8)
            .map(|b| Mode::of(b << 6, Compiler::Inductor).setting)
            .collect();
        assert_eq!(
            settings,
            [
                Setting::Default,
                Setting::CppWrapper,
                Setting::Freezing,
                Setting::MaxAutotune
            ]
        );
        // Freezing only where nothing needs gradients; OpenVINO takes none of them.
        assert_eq!(
            Mode::of(0b10_00_11_00, Compiler::Inductor).setting,
            Setting::Default
        );
        assert_eq!(
            Mode::of(0b11_00_00_00, Compiler::OpenVino).setting,
            Setting::Default
        );
        assert_eq!(
            Mode::of(0b01_00_00_11, Compiler::Inductor).label(),
            "dynamic:fwd:once:cpp_wrapper"
        );
        assert_eq!(Mode::of(0, Compiler::Inductor).label(), "static:fwd:once");
    }

    #[test]
    fn openvino_options_compile_gradients_with_aot_autograd_and_read_as_python() {
        let forward = Mode::of(0, Compiler::OpenVino);
        let backward = Mode::of(0b1100, Compiler::OpenVino);
        let options = |mode| Compiler::OpenVino.options(mode)["aot_autograd"].clone();
        assert_eq!(
            (options(forward), options(backward)),
            (json!(false), json!(true))
        );
        let python = Compiler::OpenVino.python_options(backward);
        assert!(
            python.starts_with("json.loads(\"") && python.ends_with("\")"),
            "{python}"
        );
        assert_eq!(Compiler::Inductor.python_options(backward), "None");
    }

    #[test]
    fn a_settings_compile_spec_carries_its_mode_config_and_grad_mode() {
        let frozen = Mode::of(0b10 << 6, Compiler::Inductor);
        let spec = frozen.compile("inductor", &Value::Null, &json!({"cpp.simdlen": 1}));
        assert_eq!(spec["config"], json!({"freezing": true, "cpp.simdlen": 1}));
        assert_eq!(spec["no_grad"], json!(true));
        assert!(spec["mode"].is_null());
        let tuned = Mode::of(0b11 << 6, Compiler::Inductor);
        let spec = tuned.compile("inductor", &Value::Null, &json!({}));
        assert_eq!(spec["mode"], json!("max-autotune-no-cudagraphs"));
        // Another backend (aot_eager, for localization) compiles as called plainly.
        let spec = frozen.compile("aot_eager", &Value::Null, &json!({}));
        assert_eq!(
            (spec["config"].clone(), spec["no_grad"].clone()),
            (json!({}), json!(false))
        );
    }
}
