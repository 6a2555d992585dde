//! The Python host and the torch.compile / TVM targets' building blocks: outcome
//! classification of planted failures (a Python exception, an unsupported feature, a native
//! crash, a hang), torch-surface programs valid in eager and unchanged by TorchProbe's
//! mutations, program reduction replaying from its edits, standalone reproducers, and the
//! compilers' Python line coverage and the optimizations Inductor reports.

use dlcfuzz::backend::python::frame::Frame;
use dlcfuzz::backend::python::{runs, HostConfig, HostFailure, PythonHost, Run};
use dlcfuzz::oracle::{FindingKind, Skip, Verdict};
use dlcfuzz::targets::hosted::{call, host_failure, stage_failure};
use serde_json::json;
use std::sync::Mutex;
use std::time::Duration;

mod common;

/// A host allowed to plant faults, with `timeout`.
fn faulty_host(timeout: Duration) -> Mutex<PythonHost> {
    let mut config = HostConfig::local(timeout);
    config.env.push(("DLCFUZZ_ALLOW_FAULTS".into(), "1".into()));
    Mutex::new(PythonHost::new(config))
}

fn fault(kind: &str) -> Frame {
    Frame::new(json!({"op": "fault", "kind": kind}))
}

/// The verdict on a planted fault, as the targets judge a compile stage.
fn planted(host: &Mutex<PythonHost>, kind: &str) -> Verdict {
    let response = match call(host, "planted", &fault(kind)) {
        Ok(r) => r,
        Err(verdict) => return verdict,
    };
    let runs = runs(&response).expect("well-formed runs");
    match &runs[0].1 {
        Run::Failed(e) => stage_failure("planted", &runs[0].0, e),
        Run::Outputs(_) => panic!("a planted fault produced outputs"),
    }
}

#[test]
fn planted_failures_are_classified() {
    let host = faulty_host(Duration::from_secs(60));
    match planted(&host, "internal") {
        Verdict::Found(f) => {
            assert_eq!(f.kind, FindingKind::Crash);
            assert!(
                f.signature
                    .starts_with("crash:planted:compile:planted:AssertionError"),
                "{}",
                f.signature
            );
            assert!(f.detail.contains("invariant violated"), "{}", f.detail);
        }
        other => panic!("an internal error must be a finding: {other:?}"),
    }
    // A C++ compile error whose error line sits behind pages of warnings still signs
    // with its error line (the host keeps `error:` lines when it cuts a long message).
    match planted(&host, "compile_error_after_warnings") {
        Verdict::Found(f) => assert!(
            f.signature
                .ends_with("C++ compile error: no matching function for call to 'planted()'"),
            "{}",
            f.signature
        ),
        other => panic!("a compile error must be a finding: {other:?}"),
    }
    match planted(&host, "unsupported") {
        Verdict::Skipped(Skip::Unsupported(m)) => assert!(m.contains("NotImplementedError"), "{m}"),
        other => panic!("an unsupported feature must be skipped: {other:?}"),
    }
    match planted(&host, "segfault") {
        Verdict::Found(f) => {
            assert_eq!(f.kind, FindingKind::Crash);
            assert!(f.signature.contains("signal 11"), "{}", f.signature);
            assert!(f.detail.contains("Segmentation fault"), "{}", f.detail);
        }
        other => panic!("a native crash must be a crash finding: {other:?}"),
    }
    // The host comes back after the crash.
    let versions = host
        .lock()
        .unwrap()
        .versions(&[])
        .expect("a fresh host answers after a crash");
    assert!(versions["python"].as_str().unwrap().starts_with("3."));
}

#[test]
fn a_hung_host_is_killed_and_reported() {
    let host = faulty_host(Duration::from_secs(3));
    let failure = host.lock().unwrap().call(&fault("hang")).unwrap_err();
    assert!(matches!(failure, HostFailure::Hung { .. }), "{failure:?}");
    match host_failure("planted", &failure) {
        Verdict::Found(f) => assert_eq!(f.kind, FindingKind::Hang),
        other => panic!("a hang must be a finding: {other:?}"),
    }
    assert!(host.lock().unwrap().versions(&[]).is_ok());
}

#[test]
fn a_missing_module_names_the_environment() {
    let mut config = HostConfig::local(Duration::from_secs(60));
    config.pythonpath = "/nonexistent".into();
    let error = PythonHost::new(config)
        .versions(&["tvm"])
        .expect_err("tvm cannot import from an empty path");
    assert!(
        error.contains("cannot import tvm") && error.contains("scripts/setup.sh"),
        "{error}"
    );
}

/// Torch-surface programs run in eager with every value of the type the generator
/// predicted (validity at least 90 %), and every TorchProbe mutation (closures, hoisted
/// nested functions, writes through views, loops, comprehensions, data-dependent `if`)
/// preserves what they compute: the mutated program's outputs equal the unmutated
/// program's profiled values.
#[test]
fn torch_surface_programs_are_valid_and_mutations_preserve_them() {
    use dlcfuzz::mutate::program::render::{render, Dialect};
    use dlcfuzz::oracle::accuracy::error;
    use dlcfuzz::targets::surface::SurfaceSource;
    let host = Mutex::new(PythonHost::new(HostConfig::local(Duration::from_secs(120))));
    let source = SurfaceSource::new(10, 2);
    let (mut valid, mut mutated, mut closures, mut views) = (0, 0, 0, 0);
    let inputs = common::random_inputs(5, 300, 600);
    for bytes in &inputs {
        let Ok(test) = source.program(&host, "torch.compile", "cpu", bytes, &[]) else {
            continue;
        };
        valid += 1;
        if test.applied.is_empty() {
            continue;
        }
        let python = render(&test.program, Dialect::Python);
        let response = call(
            &host,
            "torch.compile",
            &test.request(&python, "cpu", json!({})),
        )
        .unwrap_or_else(|v| panic!("{v:?}\n{python}"));
        let outputs = match runs(&response).expect("runs").into_iter().next() {
            Some((_, Run::Outputs(o))) => o,
            other => panic!("mutated program fails in eager: {other:?}\n{python}"),
        };
        for (var, got) in test.program.outputs.iter().zip(&outputs) {
            let want = &test.program.profile[var];
            let scalar = test.program.types[var].scalar;
            assert!(
                error(got, want, scalar) <= 1.0,
                "{var} changed under {:?}:\n{python}",
                test.applied
            );
        }
        mutated += 1;
        closures += usize::from(python.contains("    def fn"));
        views += usize::from(python.contains("[...] = "));
    }
    eprintln!("{valid} valid programs; {mutated} mutated, {closures} with nested functions, {views} writing through views");
    assert!(
        valid * 100 >= inputs.len() * 85,
        "only {valid} of {} valid",
        inputs.len()
    );
    assert!(mutated * 3 >= valid, "{mutated} of {valid} mutated");
    assert!(
        closures >= 20 && views >= 20,
        "{closures} closures, {views} views"
    );
}

/// The standalone reproducers of the Python-hosted and TorchScript targets run without
/// dlcfuzz in the Python compilers' environment: on seeds that pass, each prints its release
/// and says "not reproduced" (exit 0), so a live finding's exit 1 means the bug. (The
/// Python-hosted targets' runs carry their Python line coverage; torch.compile's, the ATen
/// ops Inductor lowered.)
#[test]
fn reproducers_of_passing_seeds_run_standalone_and_say_not_reproduced() {
    use dlcfuzz::targets::{build, TargetConfig};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in [
        "torchscript_cpu",
        "torch_compile_cpu",
        "torch_compile_openvino",
        "torch_onnx_export",
        "tvm_llvm",
    ] {
        let target = build(&TargetConfig::new(name, 10)).expect("target builds");
        let mut seeds: Vec<_> = std::fs::read_dir(root.join("corpus").join(name))
            .expect("seeds")
            .map(|e| e.expect("entry").path())
            .collect();
        seeds.sort();
        let mut ran = 0;
        for seed in seeds.iter().take(6) {
            let bytes = std::fs::read(seed).expect("seed");
            let run = target.run(&bytes, &[], None);
            if run.verdict != Verdict::Pass {
                continue;
            }
            // The Python-hosted targets return their compiler's Python lines with each test.
            let hosted = name != "torchscript_cpu";
            let collects = dlcfuzz::backend::python::coverage::Mode::current().collects();
            assert_eq!(!run.coverage.is_empty(), hosted && collects, "{name}");
            // torch.compile's runs name what Inductor lowered, and the program's rows (the
            // openvino backend's runs are in the list for their repro.py, whose backend options
            // once held JSON's `false`).
            if name == "torch_compile_cpu" {
                assert!(
                    run.fired.iter().any(|f| f.starts_with("lowering:")),
                    "{:?}",
                    run.fired
                );
                assert!(!run.ops_tested().is_empty());
            }
            let (_, files) = target.files(&bytes, &[]);
            let (code, text) = run_repro(&files);
            assert_eq!(code, Some(0), "{name} {}:\n{text}", seed.display());
            assert!(
                text.contains("release: ") && text.contains("not reproduced"),
                "{text}"
            );
            ran += 1;
            if ran == 2 {
                break;
            }
        }
        assert!(ran > 0, "{name}: no passing seed to check");
    }
}

/// Runs a finding's `repro.py` from its files (written to a fresh folder, run from
/// elsewhere: the script must find its model beside itself): its exit code and its output.
fn run_repro(files: &[(String, Vec<u8>)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (file, contents) in files {
        std::fs::write(dir.path().join(file), contents).expect("written");
    }
    let out = dlcfuzz::paths::python()
        .env("PYTHONPATH", dlcfuzz::paths::python_env())
        .arg(dir.path().join("repro.py"))
        .current_dir(std::env::temp_dir())
        .output()
        .expect("python3 runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

/// Program reduction on real torch-surface programs: with "output X keeps its eager value"
/// as the failure to keep, the reducer drops every other output (the other packed programs
/// go whole), cuts statements X does not need computed, and its edits replay from the
/// bytes to a smaller program whose X is still the same.
#[test]
fn program_reduction_keeps_what_an_output_needs_and_replays_from_its_edits() {
    use dlcfuzz::mutate::program::render::{render, Dialect};
    use dlcfuzz::oracle::accuracy::error;
    use dlcfuzz::reduce::program::reduce;
    use dlcfuzz::targets::surface::{SurfaceSource, SurfaceTest};
    let host = Mutex::new(PythonHost::new(HostConfig::local(Duration::from_secs(120))));
    let source = SurfaceSource::new(6, 3);
    // X's value when the (edited, mutated) program runs in eager, if it is still an output.
    let value_of = |test: &SurfaceTest, var: &str| {
        let k = test.program.outputs.iter().position(|o| o == var)?;
        let python = render(&test.program, Dialect::Python);
        let response = call(
            &host,
            "torch.compile",
            &test.request(&python, "cpu", json!({})),
        )
        .ok()?;
        match runs(&response).ok()?.into_iter().next() {
            Some((_, Run::Outputs(o))) => o.into_iter().nth(k),
            _ => None,
        }
    };
    let mut reduced = 0;
    for bytes in &common::random_inputs(11, 60, 700) {
        let Ok(test) = source.program(&host, "torch.compile", "cpu", bytes, &[]) else {
            continue;
        };
        if test.program.outputs.len() < 3 || test.program.body.len() < 6 {
            continue;
        }
        let var = test.program.outputs.last().expect("outputs").clone();
        let (want, scalar) = (
            test.program.profile[&var].clone(),
            test.program.types[&var].scalar,
        );
        let same = |edits: &[dlcfuzz::reduce::Edit]| {
            source
                .program(&host, "torch.compile", "cpu", bytes, edits)
                .ok()
                .and_then(|t| value_of(&t, &var))
                .is_some_and(|got| error(&got, &want, scalar) <= 1.0)
        };
        let reduction = reduce(&source.outline(bytes), Duration::from_secs(120), same);
        assert!(!reduction.out_of_budget, "{reduction:?}");
        let replayed = source
            .program(&host, "torch.compile", "cpu", bytes, &reduction.edits)
            .expect("the reduced program replays");
        assert_eq!(replayed.program.outputs, vec![var.clone()], "{reduction:?}");
        assert!(
            replayed.program.body.len() < test.program.body.len(),
            "{} statements before, {} after",
            test.program.body.len(),
            replayed.program.body.len()
        );
        let got = value_of(&replayed, &var).expect("the reduced program runs");
        assert!(error(&got, &want, scalar) <= 1.0);
        reduced += 1;
        if reduced == 2 {
            break;
        }
    }
    assert_eq!(
        reduced, 2,
        "too few programs with three outputs and six statements"
    );
}

/// Python line coverage: a torch.compile request under the torch scope returns the lines of
/// Dynamo, AOT Autograd and Inductor it ran (Inductor's by the thousand, nothing outside the
/// scope), and the host keeps them as the line ids the targets return.
#[test]
fn a_torch_compile_returns_the_inductor_lines_it_ran() {
    use dlcfuzz::backend::python::coverage::{self, Mode};
    if !python_compilers_installed() {
        return;
    }
    if !Mode::current().collects() {
        eprintln!("skipped: DLCFUZZ_PY_COVERAGE=0");
        return;
    }
    let config = HostConfig::local(Duration::from_secs(300)).covering(coverage::TORCH);
    let host = Mutex::new(PythonHost::new(config));
    host.lock()
        .unwrap()
        .versions(&["torch"])
        .expect("torch and coverage import");
    let source = "import torch\n\ndef main(x, w):\n    h = torch.relu(x @ w)\n    return (torch.softmax(h, dim=1) * torch.sin(x).sum(1, keepdim=True),)\n";
    let request = two_input_program(source, json!({"backend": "inductor"}));
    host.lock().unwrap().take_coverage();
    let response = call(&host, "torch.compile", &request).expect("the host answers");
    let named = runs(&response).expect("runs");
    assert!(
        named.iter().all(|(_, r)| matches!(r, Run::Outputs(_))),
        "{named:?}"
    );
    let files = coverage::files(&response).expect("well-formed coverage");
    let lines_under = |prefix: &str| -> usize {
        files
            .iter()
            .filter(|(f, _)| f.starts_with(prefix))
            .map(|(_, l)| l.len())
            .sum()
    };
    let (inductor, dynamo) = (
        lines_under("torch/_inductor/"),
        lines_under("torch/_dynamo/"),
    );
    eprintln!(
        "{} files: {inductor} Inductor lines, {dynamo} Dynamo lines",
        files.len()
    );
    assert!(inductor >= 2000 && dynamo >= 1000, "{inductor}, {dynamo}");
    assert!(
        files
            .iter()
            .all(|(f, _)| coverage::TORCH.iter().any(|p| f.starts_with(p))),
        "a file outside the scope"
    );
    let ids = host.lock().unwrap().take_coverage();
    assert_eq!(ids, coverage::ids(&response).expect("ids"));
    assert!(host.lock().unwrap().take_coverage().is_empty());
}

/// Whether the Python-hosted compilers are installed in `.deps/python`; says the test is
/// skipped when not.
fn python_compilers_installed() -> bool {
    let installed = dlcfuzz::paths::python_env().exists();
    if !installed {
        eprintln!("skipped: no .deps/python (scripts/setup.sh --python-compilers)");
    }
    installed
}

/// A `torch_program` request of `source` on two float32 [4, 4] inputs, compiled as
/// `compile` says.
fn two_input_program(source: &str, compile: serde_json::Value) -> Frame {
    use dlcfuzz::ir::{Buffer, Tensor};
    let mut request = Frame::new(json!({}));
    let input = Tensor {
        data: Buffer::F32((0..16).map(|k| k as f32 / 8.0 - 1.0).collect()),
        shape: vec![4, 4],
    };
    let inputs = vec![request.tensor(&input), request.tensor(&input)];
    request.header = json!({
        "op": "torch_program",
        "source": source,
        "inputs": inputs,
        "compile": compile,
    });
    request
}

/// Inductor's own work as the optimizations a torch.compile request fired: the ops it
/// lowered, the ATen fallbacks it kept, its counters; and the same set again when the same
/// program is compiled again (no on-disk cache answers in the compiler's stead).
#[test]
fn a_torch_compile_reports_the_lowerings_and_counters_it_fired_every_time() {
    if !python_compilers_installed() {
        return;
    }
    let host = Mutex::new(PythonHost::new(HostConfig::local(Duration::from_secs(300))));
    let source =
        "import torch\n\ndef main(x, w):\n    return (torch.relu(x @ w), torch.cumsum(x, 0))\n";
    let compile_once = || {
        let request = two_input_program(source, json!({"backend": "inductor"}));
        call(&host, "torch.compile", &request).expect("the host answers");
        host.lock().unwrap().take_fired()
    };
    let first = compile_once();
    for name in [
        "lowering:aten::relu",
        "fallback:aten::cumsum",
        "metrics:generated_kernel_count",
        "inductor:extern_calls",
    ] {
        assert!(first.iter().any(|f| f == name), "{name} not in {first:?}");
    }
    assert!(
        first
            .iter()
            .all(|f| !f.contains("cache") && !f.contains('\n')),
        "{first:?}"
    );
    assert_eq!(compile_once(), first, "a second compile does the same work");
    assert!(host.lock().unwrap().take_fired().is_empty());
}

/// Every Inductor configuration a torch.compile test may draw (cpp_wrapper, freezing under
/// no_grad, max-autotune) compiles and runs a small program in the host, and agrees with
/// eager on it; their specs are the ones the target sends.
#[test]
fn every_inductor_setting_compiles_a_program_the_host_runs() {
    use dlcfuzz::targets::compile_mode::{Compiler, Mode};
    if !python_compilers_installed() {
        return;
    }
    let host = Mutex::new(PythonHost::new(HostConfig::local(Duration::from_secs(600))));
    let source = "import torch\n\ndef main(x, w):\n    return (torch.relu(x @ w + 1.0).sum(0),)\n";
    for bits in 1..4u8 {
        let mode = Mode::of(bits << 6, Compiler::Inductor);
        let label = mode.setting.label().expect("not the default");
        let compile = mode.compile("inductor", &serde_json::Value::Null, &json!({}));
        let request = two_input_program(source, compile);
        let response = call(&host, "torch.compile", &request).expect("the host answers");
        let named = runs(&response).expect("runs");
        let (Some((_, Run::Outputs(eager))), Some((_, Run::Outputs(compiled)))) =
            (named.first(), named.get(1))
        else {
            panic!("{label}: {named:?}");
        };
        let (want, got) = (eager[0].data.to_f64_vec(), compiled[0].data.to_f64_vec());
        assert!(
            want.iter()
                .zip(&got)
                .all(|(a, b)| (a - b).abs() <= 1e-4 * (1.0 + a.abs())),
            "{label}: {want:?} vs {got:?}"
        );
    }
}

/// The torch rows shaped like Inductor's pattern-matcher rewrites make Inductor fire the
/// rewrite they aim at: a program holding an attention row fires `fuse_attention`'s pattern,
/// one holding a scaled softmax the joint-graph softmax rewrite, and one holding a
/// convolution with an activation, under freezing (its weights held as module parameters),
/// oneDNN's unary fusion; the reproducer of such a test holds the weights the same way and
/// agrees with the campaign.
#[test]
fn rows_aimed_at_inductor_rewrites_fire_them() {
    use dlcfuzz::bench::torch_patterns::{inputs_holding, INPUT_LEN};
    use dlcfuzz::targets::torch_compile::TorchCompileHarness;
    if !python_compilers_installed() {
        return;
    }
    let harness = TorchCompileHarness::on("cpu", 10).expect("the torch.compile host starts");
    let mut next = dlcfuzz::bench::random_inputs(1, INPUT_LEN);
    for name in ["sdpa_divided", "softmax_divided", "conv2d_pointwise"] {
        let row = dlcfuzz::torch::ops::by_name(name).expect("a row");
        let inputs = inputs_holding(&harness, row, 3, &mut next);
        assert_eq!(inputs.len(), 3, "{name}: programs holding it are drawn");
        let mut fired: Vec<Vec<String>> = inputs
            .iter()
            .map(|bytes| harness.test(bytes, &[]).fired)
            .collect();
        let hit = |fired: &[Vec<String>]| fired.iter().any(|f| f.iter().any(|n| row.hits(n)));
        // A row of an element type the CPU's kernels cannot fuse fires nothing (oneDNN fuses
        // bfloat16 convolutions only on AVX-512 CPUs): a few more programs, drawn from a
        // stream of their own only when the first three missed, leave every other draw as
        // it is on a CPU they hit on.
        if !hit(&fired) {
            let mut spare = dlcfuzz::bench::random_inputs(2, INPUT_LEN);
            let more = inputs_holding(&harness, row, 5, &mut spare);
            fired.extend(more.iter().map(|bytes| harness.test(bytes, &[]).fired));
        }
        assert!(hit(&fired), "{name} never fired {:?}: {fired:?}", row.aims);
    }
    let conv = dlcfuzz::torch::ops::by_name("conv2d_pointwise").expect("a row");
    let bytes = &inputs_holding(&harness, conv, 1, &mut next)[0];
    let target = dlcfuzz::targets::build(&dlcfuzz::targets::TargetConfig::new(
        "torch_compile_cpu",
        10,
    ))
    .expect("target builds");
    let (_, files) = target.files(bytes, &[]);
    let repro = files
        .iter()
        .find(|(f, _)| f == "repro.py")
        .expect("repro.py");
    let script = String::from_utf8_lossy(&repro.1);
    assert!(script.contains("WEIGHTS = [") && !script.contains("WEIGHTS = []"));
    let (code, text) = run_repro(&files);
    assert_eq!(code, Some(0), "{text}");
}
