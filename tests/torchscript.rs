//! TorchProbe on TorchScript: each program mutation preserves semantics on ≥ 500 programs
//! (the plain JIT interpreter gives the same outputs before and after), source generation
//! replays exactly, and the `torchscript_cpu` target runs mostly valid programs.

mod common;

use dlcfuzz::backend::torchscript::{JitMode, Script};
use dlcfuzz::gen::Limits;
use dlcfuzz::mutate::program::lower::lower;
use dlcfuzz::mutate::program::render::{render, torchscript_spelling, Dialect, ENTRY};
use dlcfuzz::mutate::program::{Program, ProgramMutation, ProgramPlan};
use dlcfuzz::oracle::Verdict;
use dlcfuzz::reference::{convert, TorchReference};
use dlcfuzz::targets::torchscript::TorchScriptHarness;

fn run_plain(program: &Program) -> Result<Vec<Vec<f64>>, String> {
    JitMode::PLAIN.apply();
    let script = Script::compile(&render(program, Dialect::TorchScript))
        .map_err(|e| format!("{e}\n{}", render(program, Dialect::TorchScript)))?;
    let inputs: Vec<tch::Tensor> = program
        .params
        .iter()
        .map(|p| convert::to_tch(&program.profile[p]))
        .collect();
    let outs = script.run(ENTRY, &inputs, program.outputs.len())?;
    Ok(outs
        .iter()
        .map(|t| {
            Vec::<f64>::try_from(&t.to_kind(tch::Kind::Double).flatten(0, -1)).unwrap_or_default()
        })
        .collect())
}

/// Equal outputs (any NaN matching any NaN), allowing `ulps` float32 epsilons relative to
/// max(1, |value|).
fn same(a: &[Vec<f64>], b: &[Vec<f64>], ulps: f64) -> bool {
    let close = |p: f64, q: f64| {
        p == q
            || (p.is_nan() && q.is_nan())
            || (p - q).abs() <= ulps * f64::from(f32::EPSILON) * (1.0 + p.abs().max(q.abs()))
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(*p, *q)))
}

/// `program` with its float parameters moved by one float32 epsilon (relative).
fn nudged(program: &Program) -> Program {
    let mut p = program.clone();
    for param in &program.params {
        let t = &program.profile[param];
        let moved: Vec<f64> = t
            .data
            .to_f64_vec()
            .iter()
            .map(|v| v * (1.0 + f64::from(f32::EPSILON)))
            .collect();
        let data = dlcfuzz::ir::Buffer::from_f64(t.data.dtype(), &moved);
        p.profile.insert(
            param.clone(),
            dlcfuzz::ir::Tensor {
                shape: t.shape.clone(),
                data,
            },
        );
    }
    p
}

/// Checks `mutation` on 500 programs it applies to; `ulps` is 0 (identical) except for
/// operator resolution, whose strided slices take libtorch's scalar kernels where the whole
/// tensor takes the vectorized ones (transcendentals then differ in the last bit).
fn preserves(name: &str, ulps: f64, mutation: impl Fn(u8) -> ProgramMutation) {
    let h = TorchScriptHarness::cpu(Limits::default());
    let mut checked = 0;
    for (k, bytes) in common::random_inputs(71, 1500, 1000).iter().enumerate() {
        let (_, case) = h.source.prepare(bytes);
        let Ok(values) = TorchReference.values_of(&case, &case.graph.values()) else {
            continue;
        };
        let values = case.graph.values().into_iter().zip(values).collect();
        let Ok(original) = lower(&case, &values) else {
            continue;
        };
        let mut mutated = original.clone();
        let plan = ProgramPlan {
            mutations: vec![mutation(k as u8)],
        };
        if plan.apply(&mut mutated).is_empty() {
            continue;
        }
        let want = run_plain(&original).unwrap_or_else(|e| panic!("{name}: original fails: {e}"));
        // Where last-bit differences are allowed, a program whose outputs a last-bit change
        // of its inputs moves beyond them (tan near a pole) cannot tell a mutation's effect
        // from rounding: not compared.
        if ulps > 0.0
            && !same(
                &want,
                &run_plain(&nudged(&original)).unwrap_or_default(),
                ulps,
            )
        {
            continue;
        }
        let got = run_plain(&mutated).unwrap_or_else(|e| panic!("{name}: mutated fails: {e}"));
        assert!(
            same(&want, &got, ulps),
            "{name}: outputs differ on input {k}:\n{}",
            render(&mutated, Dialect::TorchScript)
        );
        checked += 1;
        if checked == 500 {
            return;
        }
    }
    panic!("{name}: only {checked} programs took the mutation");
}

#[test]
fn operator_resolution_preserves_semantics() {
    preserves("resolve", 8.0, |k| ProgramMutation::Resolve {
        at: k,
        axis: k / 7,
        comprehension: k % 2 == 0,
    });
}

#[test]
fn mutate_then_recover_preserves_semantics() {
    preserves("recover", 0.0, |k| ProgramMutation::Recover {
        at: k,
        value: k / 3,
    });
}

#[test]
fn functionalization_preserves_semantics() {
    preserves("functionalize", 0.0, |k| ProgramMutation::Functionalize {
        at: k,
        len: k / 5,
    });
}

#[test]
fn emi_blocks_preserve_semantics() {
    preserves("emi", 0.0, |k| ProgramMutation::Emi {
        at: k,
        len: k / 5,
        pick: k.wrapping_mul(37),
    });
}

#[test]
fn source_replays_and_the_target_runs_valid_programs() {
    let h = TorchScriptHarness::cpu(Limits::default());
    let inputs = common::random_inputs(72, 150, 1000);
    let (mut pass, mut found) = (0, Vec::new());
    for bytes in &inputs {
        let run = h.test(bytes, &[]);
        let again = h.test(bytes, &[]);
        assert_eq!(run.op_types(), again.op_types(), "replay");
        assert_eq!(run.artifacts, again.artifacts, "replay");
        match run.verdict {
            Verdict::Pass => pass += 1,
            Verdict::Found(f) => found.push(f.signature),
            Verdict::Skipped(_) => {}
        }
    }
    eprintln!(
        "torchscript_cpu: {pass} of {} pass; findings {found:?}",
        inputs.len()
    );
    assert!(
        pass >= inputs.len() * 8 / 10,
        "only {pass} of {} pass: {found:?}",
        inputs.len()
    );
}

/// Every declared torch form of the element-wise declarations compiles as TorchScript (the
/// C++ `torch::jit::compile`, respelled as the TorchScript dialect renders it), so the
/// TorchScript target never reports its own spelling as a finding.
#[test]
fn every_declared_torch_form_compiles_as_torchscript() {
    let mut failures = Vec::new();
    let unary = dlcfuzz::ops::unary::table().iter().filter_map(|u| {
        let form = u.floats.iter().fold(u.torch?.replace("{x}", "x"), |f, a| {
            f.replace(&format!("{{{}}}", a.name), &format!("{:?}", a.default))
        });
        Some((
            u.name,
            format!(
                "def fn(x: Tensor, y: Tensor) -> Tensor:\n    return {}\n",
                torchscript_spelling(&form)
            ),
        ))
    });
    let binary = dlcfuzz::ops::binary::table().iter().filter_map(|b| {
        let form = b.torch?.replace("{a}", "x").replace("{b}", "y");
        Some((
            b.name,
            format!(
                "def fn(x: Tensor, y: Tensor) -> Tensor:\n    return {}\n",
                torchscript_spelling(&form)
            ),
        ))
    });
    let mut compiled = 0;
    for (name, source) in unary.chain(binary) {
        match Script::compile(&source) {
            Ok(_) => compiled += 1,
            Err(e) => failures.push(format!("{name}: {e}\n{source}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compiled >= 50, "{compiled} torch forms");
}
