//! The program side of the torch.compile targets on the torch surface: bytes → program
//! plan + generated torch program ([`crate::torch::gen`]) → an eager *profile* run in the
//! Python host (every value computed once: the types the generator predicted are checked,
//! and the values feed the EMI conditions) → TorchProbe mutations.

use crate::backend::python::frame::Frame;
use crate::backend::python::{runs, PythonHost, Run};
use crate::ir::{ScalarType, Tensor};
use crate::mutate::program::render::{render, Dialect, ENTRY};
use crate::mutate::program::{Call, Program, ProgramPlan, Stmt, Var};
use crate::oracle::accuracy::{error, judge, Evidence, Judgement};
use crate::oracle::{Skip, Verdict};
use crate::reduce::program::{dropped_mutations, Outline, ProgramEdit};
use crate::reduce::Edit;
use crate::torch::gen::{generate_without, Lacks};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// A mutated torch program ready to compile.
#[derive(Clone, Debug)]
pub struct SurfaceTest {
    /// The mutated program; `profile` holds the parameters' and the profiled values.
    pub program: Program,
    /// The program mutations that applied.
    pub applied: Vec<String>,
    /// Rows instantiated, in order.
    pub ops: Vec<&'static str>,
    /// The row that defined each operator result.
    pub producers: BTreeMap<Var, &'static str>,
    /// The packed component of each parameter and value.
    pub component_of: BTreeMap<Var, usize>,
    /// The parameters that are rows' weights: a compiled forward test holds them as module
    /// parameters, as a model does ([`SurfaceTest::weight_slots`]).
    pub weights: BTreeSet<Var>,
}

impl From<crate::torch::gen::TorchProgram> for SurfaceTest {
    /// A generated program as a test, no mutation applied yet.
    fn from(generated: crate::torch::gen::TorchProgram) -> SurfaceTest {
        SurfaceTest {
            program: generated.program,
            applied: Vec::new(),
            ops: generated.ops,
            producers: generated.producers,
            component_of: generated.component_of,
            weights: generated.weights,
        }
    }
}

impl SurfaceTest {
    /// The call of the top-level statement that defines `var` (a row's or an adapter's),
    /// if one does.
    pub fn call_defining(&self, var: &Var) -> Option<&Call> {
        self.program.body.iter().find_map(|stmt| match stmt {
            Stmt::Let { var: v, call } | Stmt::Unrolled { var: v, call, .. } if v == var => {
                Some(call)
            }
            _ => None,
        })
    }

    /// The parameters' values (carrier types) with their torch types, in call order.
    pub fn inputs(&self) -> Vec<(&Tensor, ScalarType)> {
        self.program
            .params
            .iter()
            .map(|p| (&self.program.profile[p], self.program.types[p].scalar))
            .collect()
    }

    /// The positions in call order of the parameters that are weights.
    pub fn weight_slots(&self) -> Vec<usize> {
        let params = self.program.params.iter().enumerate();
        params
            .filter(|(_, p)| self.weights.contains(*p))
            .map(|(k, _)| k)
            .collect()
    }

    /// The rows whose results the program still computes (after reduction cut statements),
    /// in order; the generated rows when none of them is left.
    pub fn live_ops(&self) -> Vec<&'static str> {
        let bodies = std::iter::once(&self.program.body)
            .chain(self.program.functions.iter().map(|f| &f.body));
        let mut live: Vec<&'static str> = Vec::new();
        for var in bodies.flatten().flat_map(|s| s.defs()) {
            if let Some(op) = self.producers.get(&var) {
                if !live.contains(op) {
                    live.push(op);
                }
            }
        }
        if live.is_empty() {
            self.ops.clone()
        } else {
            live
        }
    }

    /// How many independent programs the test packs.
    pub fn components(&self) -> usize {
        self.component_of.values().max().map_or(1, |c| c + 1)
    }

    /// The type whose tolerance judges each output of a run whose outputs have the torch
    /// types `types`: a float output by the loosest float type on its path
    /// ([`crate::mutate::program::working`]).
    pub fn tolerances(&self, types: &[Option<ScalarType>]) -> Vec<ScalarType> {
        crate::mutate::program::working::tolerance_types(&self.program, types)
    }

    /// The row that produced output `k` (`grad` beyond the outputs: a gradient).
    pub fn producer(&self, k: usize) -> &str {
        match self.program.outputs.get(k) {
            Some(v) => self.producers.get(v).copied().unwrap_or("input"),
            None => "grad",
        }
    }

    /// The test with output `k`'s path exposed: the results of the rows output `k` depends
    /// on (top-level statements, in program order) appended to its outputs, with those
    /// results' variables. `None` for a gradient or an output that no earlier row feeds.
    pub fn exposing_path(&self, k: usize) -> Option<(SurfaceTest, Vec<Var>)> {
        let out = self.program.outputs.get(k)?;
        let mut needed: BTreeSet<Var> = BTreeSet::from([out.clone()]);
        for stmt in self.program.body.iter().rev() {
            let mut touched = stmt.defs().into_iter().chain(stmt.mutates());
            if touched.any(|v| needed.contains(&v)) {
                needed.extend(stmt.reads());
            }
        }
        let path: Vec<Var> = self
            .program
            .body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::Let { var, .. }
                    if var != out && needed.contains(var) && self.producers.contains_key(var) =>
                {
                    Some(var.clone())
                }
                _ => None,
            })
            .collect();
        if path.is_empty() {
            return None;
        }
        let mut exposed = self.clone();
        exposed.program.outputs.extend(path.iter().cloned());
        Some((exposed, path))
    }

    /// The request running the program's Python source: the parameters travel in their
    /// carrier types and are cast to their torch types in the host.
    pub fn request(&self, source: &str, device: &str, extra: Value) -> Frame {
        let mut frame = Frame::new(json!({}));
        let inputs: Vec<Value> = self
            .inputs()
            .into_iter()
            .map(|(t, s)| {
                let mut spec = frame.tensor(t);
                spec["as"] = json!(s.torch_name());
                spec
            })
            .collect();
        let mut header = json!({
            "op": "torch_program",
            "source": source,
            "entry": ENTRY,
            "inputs": inputs,
            "device": device,
        });
        if let (Some(h), Some(e)) = (header.as_object_mut(), extra.as_object()) {
            h.extend(e.clone());
        }
        frame.header = header;
        frame
    }
}

/// Of an exposed test's `path` (its outputs from position `first` on, see
/// [`SurfaceTest::exposing_path`]), the earliest value the candidate run (`got`, torch types
/// `types`) computes outside its type's tolerance of eager's: the row and the variable that
/// first go wrong on the way to a wrong output, which names the bug better than the output's
/// own row (a wrong `atan2` read by a convolution and an `asinh` is an `atan2` bug).
fn first_wrong(
    exposed: &SurfaceTest,
    path: &[Var],
    first: usize,
    eager: &[Tensor],
    got: &[Tensor],
    types: &[Option<ScalarType>],
) -> Option<(&'static str, Var)> {
    let tolerances = exposed.tolerances(types);
    path.iter().enumerate().find_map(|(i, var)| {
        let k = first + i;
        let scalar = tolerances.get(k).copied().unwrap_or(ScalarType::F32);
        let wrong = match (got.get(k), eager.get(k)) {
            (Some(g), Some(e)) => error(g, e, scalar) > 1.0,
            _ => false,
        };
        // Every variable of the path is a row's result (`exposing_path`).
        wrong.then(|| (exposed.producers[var], var.clone()))
    })
}

/// The clause a finding's detail gets for wrong output `k` of `test`: the variable
/// [`locate_first_wrong`] found (`first`), else the output itself when a row produced it,
/// each with its row and the element types the row read, e.g. "`v52` (argmin of u8)".
/// Many defects hold for one element type only (a vectorized reduction on `int8` lanes), so
/// the types tell one root cause from another and let the known-bug table match them.
/// Empty for an output no row produced.
pub fn first_wrong_clause(
    test: &SurfaceTest,
    first: Option<&(&'static str, Var)>,
    k: usize,
) -> String {
    let described = |row: &str, var: &Var| {
        let read = argument_types(test, var);
        let of = if read.is_empty() {
            String::new()
        } else {
            format!(" of {}", read.join(", "))
        };
        format!("`{var}` ({row}{of})")
    };
    match first {
        Some((row, var)) => format!(
            "; the first wrong value on its path: {}",
            described(row, var)
        ),
        None => test
            .program
            .outputs
            .get(k)
            .and_then(|var| Some((*test.producers.get(var)?, var)))
            .map_or(String::new(), |(row, var)| {
                format!("; the wrong output: {}", described(row, var))
            }),
    }
}

/// The element types of the arguments of the statement that defines `var` in `test`, in
/// argument order (empty when no call defines it).
fn argument_types(test: &SurfaceTest, var: &Var) -> Vec<&'static str> {
    test.call_defining(var).map_or(Vec::new(), |call| {
        call.args
            .iter()
            .filter_map(|a| test.program.types.get(a))
            .map(|t| t.scalar.short())
            .collect()
    })
}

/// Localizes a wrong output `k` of `test` to the row whose value first goes wrong on its
/// path (`first_wrong`): `send` runs the exposed test's source as a request (eager first),
/// `candidate` names the run to compare with eager. `None` when nothing on the path is wrong
/// alone (the bug needs the output computed as it was) or a run fails.
pub fn locate_first_wrong(
    test: &SurfaceTest,
    k: usize,
    send: impl FnOnce(&SurfaceTest, &str) -> Option<Frame>,
    candidate: impl Fn(&str) -> bool,
) -> Option<(&'static str, Var)> {
    let (exposed, path) = test.exposing_path(k)?;
    let source = render(&exposed.program, Dialect::Python);
    let response = send(&exposed, &source)?;
    let named = runs(&response).ok()?;
    let Some((_, Run::Outputs(eager))) = named.first() else {
        return None;
    };
    let got = named.iter().skip(1).find_map(|(n, r)| match r {
        Run::Outputs(o) if candidate(n) => Some(o),
        _ => None,
    })?;
    let types = run_dtypes(&response, 0);
    first_wrong(
        &exposed,
        &path,
        test.program.outputs.len(),
        eager,
        got,
        &types,
    )
}

/// Perturbations of the conditioning runs, in ulps of each float parameter's type.
pub const PERTURBATIONS: [u32; 3] = [2, 4, 16];

/// How a candidate run (compiled, exported) compares with eager.
#[derive(Clone, Debug, PartialEq)]
pub enum Judged {
    /// Every output within its type's tolerance.
    Agrees,
    /// Outputs differ, and the conditioning runs explain each difference (rounding,
    /// fragile, undefined): the reasons.
    Explained(String),
    /// Output `k` is wrong: `what` is `dtype`, `arity`, `shape` or `value`.
    Wrong {
        /// What differs.
        what: &'static str,
        /// The output.
        k: usize,
        /// By how much.
        detail: String,
    },
}

/// A candidate run's outputs `got` (of types `got_types`) against eager's (`eager`,
/// `types`): a different type or a missing output is always wrong; outputs beyond the
/// tolerance of their working precision (`tolerances`: [`SurfaceTest::tolerances`]) are judged by [`crate::oracle::accuracy`] on the runs `conditioning`
/// returns (a response with a `widened` run and `perturbed<k>` runs), requested only then.
pub fn judge_against_eager(
    eager: &[Tensor],
    types: &[Option<ScalarType>],
    tolerances: &[ScalarType],
    got: &[Tensor],
    got_types: &[Option<ScalarType>],
    conditioning: impl FnOnce() -> Result<Frame, Verdict>,
) -> Result<Judged, Verdict> {
    if got.len() < eager.len() {
        let detail = format!("{} outputs, eager has {}", got.len(), eager.len());
        return Ok(Judged::Wrong {
            what: "arity",
            k: got.len(),
            detail,
        });
    }
    if let Some(k) = (0..types.len()).find(|k| got_types.get(*k) != types.get(*k)) {
        let detail = format!(
            "output {k} is {:?}, eager's is {:?}",
            got_types.get(k),
            types.get(k)
        );
        return Ok(Judged::Wrong {
            what: "dtype",
            k,
            detail,
        });
    }
    let scalar = |k: usize| {
        tolerances
            .get(k)
            .copied()
            .unwrap_or(types[k].unwrap_or(ScalarType::F32))
    };
    let suspects: Vec<usize> = (0..eager.len())
        .filter(|k| error(&got[*k], &eager[*k], scalar(*k)) > 1.0)
        .collect();
    if suspects.is_empty() {
        return Ok(Judged::Agrees);
    }
    let response = conditioning()?;
    let Ok(named) = runs(&response) else {
        return Err(Verdict::Skipped(Skip::Invalid(
            "conditioning runs: bad response".into(),
        )));
    };
    let outputs = |n: &str| {
        named.iter().find_map(|(m, r)| match r {
            Run::Outputs(o) if m == n => Some(o.clone()),
            _ => None,
        })
    };
    let Some(widened) = outputs("widened") else {
        return Ok(Judged::Explained(
            "the program does not run widened to float64/int64: no exact result to judge by".into(),
        ));
    };
    let perturbed: Vec<Vec<Tensor>> = (0..PERTURBATIONS.len())
        .filter_map(|k| outputs(&format!("perturbed{k}")))
        .collect();
    let mut reasons = Vec::new();
    for k in suspects {
        let moved: Vec<&Tensor> = perturbed.iter().filter_map(|p| p.get(k)).collect();
        let evidence = Evidence {
            scalar: scalar(k),
            eager: &eager[k],
            compiled: &got[k],
            widened: &widened[k],
            perturbed: &moved,
        };
        match judge(&evidence) {
            Judgement::Wrong(detail) => {
                let what = if got[k].shape != eager[k].shape {
                    "shape"
                } else {
                    "value"
                };
                return Ok(Judged::Wrong {
                    what,
                    k,
                    detail: format!("output {k}: {detail}"),
                });
            }
            other => reasons.push(format!("output {k}: {other:?}")),
        }
    }
    Ok(Judged::Explained(reasons.join("; ")))
}

/// The torch types of a run's outputs, from the host's `dtypes` list.
pub fn run_dtypes(response: &Frame, index: usize) -> Vec<Option<ScalarType>> {
    response.header["runs"][index]["dtypes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d.as_str().and_then(ScalarType::from_torch_name))
                .collect()
        })
        .unwrap_or_default()
}

/// Where torch programs come from.
pub struct SurfaceSource {
    /// Most operator rows per packed component.
    pub max_ops: usize,
    /// Independent programs packed into one compiled function.
    pub components: usize,
    /// EMI conditions only on shapes, never on values (for compilers that trace shapes but
    /// not data: [`ProgramPlan::shape_conditions_only`]).
    pub shape_conditions: bool,
    /// Rows never instantiated and element types never given to a row (the compiler lacks
    /// them, as probed).
    pub lacks: Lacks,
}

impl SurfaceSource {
    /// The rows this source offers (`dlcfuzz capabilities --target`): one line per row
    /// with its family, the element types its data arguments accept and its result type,
    /// or why it is excluded; then a one-line JSON summary.
    pub fn capabilities(&self) -> String {
        let mut out = String::new();
        let mut types = BTreeSet::new();
        let mut fewer_types = 0;
        for op in crate::torch::ops::table() {
            let handled = self.lacks.types.get(op.name);
            let (accepted, lacking): (Vec<ScalarType>, Vec<ScalarType>) = ScalarType::ALL
                .into_iter()
                .filter(|s| op.accept.allows(*s))
                .partition(|s| handled.is_none_or(|h| h.contains(s)));
            let accepted: Vec<&str> = accepted.into_iter().map(ScalarType::torch_name).collect();
            let status = if self.lacks.rows.contains(op.name) {
                "excluded: the compiler has no conversion (probed)".to_string()
            } else {
                types.extend(accepted.iter().copied());
                fewer_types += usize::from(!lacking.is_empty());
                format!("-> {:?}", op.out)
            };
            let family = format!("{:?}", op.family);
            out += &format!(
                "{:<22} {:<40} {:<58} {status}\n",
                op.name,
                family,
                accepted.join(",")
            );
        }
        let table = crate::torch::ops::table().len();
        out + &json!({
            "rows": table,
            "rows_offered": table - self.lacks.rows.len(),
            "rows_excluded": self.lacks.rows.iter().collect::<Vec<_>>(),
            "rows_with_fewer_types": fewer_types,
            "element_types": types,
        })
        .to_string()
    }

    /// Programs of up to `max_ops` rows per component, `components` packed, every row, EMI
    /// conditions on anything profiled.
    pub fn new(max_ops: usize, components: usize) -> SurfaceSource {
        SurfaceSource {
            max_ops,
            components,
            shape_conditions: false,
            lacks: Lacks::default(),
        }
    }
}

impl SurfaceSource {
    /// Decodes `bytes` (program plan, then the generator's bytes) without running anything.
    pub fn decode(&self, bytes: &[u8]) -> (ProgramPlan, crate::torch::gen::TorchProgram) {
        let (plan, rest) = ProgramPlan::split(bytes);
        let plan = if self.shape_conditions {
            plan.shape_conditions_only()
        } else {
            plan
        };
        (
            plan,
            generate_without(rest, self.max_ops, self.components, &self.lacks),
        )
    }

    /// What a program reduction of `bytes` can edit (nothing runs).
    pub fn outline(&self, bytes: &[u8]) -> Outline {
        let (plan, generated) = self.decode(bytes);
        let program = generated.program;
        Outline {
            mutations: plan.mutations.len(),
            outputs: program.outputs.clone(),
            statements: program.body.iter().flat_map(Stmt::defs).collect(),
        }
    }

    /// The mutated program of `bytes` with reduction `edits`, after an eager profile run in
    /// `host` on `device`; a skip when eager fails, computes a non-finite output, a value's
    /// type differs from the generator's prediction (a generator bug, reported as invalid),
    /// or the edits do not apply.
    pub fn program(
        &self,
        host: &Mutex<PythonHost>,
        backend: &str,
        device: &str,
        bytes: &[u8],
        edits: &[Edit],
    ) -> Result<SurfaceTest, Verdict> {
        let (plan, generated) = self.decode(bytes);
        profiled(host, backend, device, plan, generated, edits)
    }
}

/// A generated program's test: the eager profile run in `host` on `device` (checking
/// every value's predicted type), then reduction `edits`, then the `plan`'s mutations.
pub fn profiled(
    host: &Mutex<PythonHost>,
    backend: &str,
    device: &str,
    plan: ProgramPlan,
    generated: crate::torch::gen::TorchProgram,
    edits: &[Edit],
) -> Result<SurfaceTest, Verdict> {
    let mut test = SurfaceTest::from(generated);
    let mut everything = test.program.clone();
    everything.outputs = test.program.body.iter().flat_map(Stmt::defs).collect();
    if everything.outputs.is_empty() {
        return Err(Verdict::Skipped(Skip::Invalid(
            "no operator instantiated".into(),
        )));
    }
    let source = render(&everything, Dialect::Python);
    let request = test.request(&source, device, json!({}));
    let response = super::hosted::call(host, backend, &request)?;
    let invalid = |m: String| Verdict::Skipped(Skip::Invalid(m));
    let eager = match runs(&response).map_err(invalid)?.into_iter().next() {
        Some((_, Run::Outputs(o))) => o,
        Some((_, Run::Failed(e))) => return Err(invalid(format!("eager: {}", e.headline()))),
        None => return Err(invalid("no eager run".into())),
    };
    let dtypes = run_dtypes(&response, 0);
    for (k, (var, value)) in everything.outputs.iter().zip(eager).enumerate() {
        let want = &test.program.types[var];
        if dtypes.get(k).copied().flatten() != Some(want.scalar) || value.shape != want.shape {
            let call = test.call_defining(var);
            let args: Vec<String> = call
                .map_or(&[][..], |c| &c.args)
                .iter()
                .map(|a| test.program.types[a].to_string())
                .collect();
            return Err(invalid(format!(
                "type prediction: {var} is {:?}{:?}, predicted {want}, in {} over {}",
                dtypes.get(k).copied().flatten(),
                value.shape,
                call.map_or("", |c| &c.template),
                args.join(", ")
            )));
        }
        test.program.profile.insert(var.clone(), value);
    }
    if !edits.is_empty() {
        crate::reduce::program::apply(&mut test.program, edits)
            .map_err(|e| invalid(format!("reduction edits: {e}")))?;
    }
    drop_non_finite_outputs(&mut test.program)?;
    test.applied = plan.apply_except(&mut test.program, &dropped_mutations(edits));
    Ok(test)
}

/// Drops the outputs whose eager value is not finite (and the statements only they read), so
/// that the rest of the program is still compiled and compared; skips the test when no output
/// is finite. A program's components are packed into one compile: one component's overflow
/// no longer costs the others their test.
fn drop_non_finite_outputs(program: &mut Program) -> Result<(), Verdict> {
    let drops: Vec<Edit> = program
        .outputs
        .iter()
        .filter(|v| !program.profile[*v].is_finite())
        .map(|v| Edit::Program(ProgramEdit::DropOutput(v.clone())))
        .collect();
    if drops.is_empty() {
        return Ok(());
    }
    crate::reduce::program::apply(program, &drops).map_err(|_| Verdict::Skipped(Skip::NonFinite))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Buffer;

    fn t(values: &[f32]) -> Tensor {
        Tensor {
            shape: vec![values.len()],
            data: Buffer::F32(values.to_vec()),
        }
    }

    /// A host response with the named runs' outputs.
    fn response(named: &[(&str, Vec<Tensor>)]) -> Frame {
        let mut frame = Frame::new(json!({}));
        let runs: Vec<Value> = named
            .iter()
            .map(|(name, outputs)| {
                let specs: Vec<Value> = outputs.iter().map(|o| frame.tensor(o)).collect();
                json!({"name": name, "outputs": specs, "dtypes": vec!["float32"; outputs.len()]})
            })
            .collect();
        frame.header = json!({ "runs": runs });
        frame
    }

    const F32: [Option<ScalarType>; 1] = [Some(ScalarType::F32)];
    const TOL: [ScalarType; 1] = [ScalarType::F32];

    /// `a = atan2(p, p)`, `b` an adapter reshape of `a`, `c = asinh(b)`, and `d = exp(p)`
    /// beside them; outputs `c` and `d`.
    fn atan2_then_asinh() -> SurfaceTest {
        use crate::mutate::program::testing::call;
        use crate::mutate::program::VarType;
        let mut program = Program {
            params: vec!["p".into()],
            outputs: vec!["c".into(), "d".into()],
            ..Program::default()
        };
        for (var, template, arg) in [
            ("a", "torch.atan2({0}, {0})", "p"),
            ("b", "{0}.reshape([1])", "a"),
            ("c", "torch.asinh({0})", "b"),
            ("d", "torch.exp({0})", "p"),
        ] {
            let call = call(template, &[arg]);
            program.body.push(Stmt::Let {
                var: var.into(),
                call,
            });
        }
        for var in ["p", "a", "b", "c", "d"] {
            program
                .types
                .insert(var.into(), VarType::new(ScalarType::F32, vec![1]));
        }
        let producers = [("a", "atan2"), ("c", "Asinh"), ("d", "exp")];
        SurfaceTest {
            program,
            applied: Vec::new(),
            ops: vec!["atan2", "Asinh", "exp"],
            producers: producers.map(|(v, r)| (v.to_string(), r)).into(),
            component_of: BTreeMap::new(),
            weights: BTreeSet::new(),
        }
    }

    #[test]
    fn non_finite_outputs_are_dropped_and_the_finite_ones_kept() {
        let mut test = atan2_then_asinh();
        let profile = &mut test.program.profile;
        profile.insert("p".into(), t(&[1.0]));
        profile.insert("c".into(), t(&[0.5]));
        profile.insert("d".into(), t(&[f32::INFINITY]));
        let mut program = test.program.clone();
        assert!(drop_non_finite_outputs(&mut program).is_ok());
        assert_eq!(program.outputs, ["c"]);
        assert!(
            !program
                .body
                .iter()
                .any(|s| s.defs().contains(&"d".to_string())),
            "exp(p) only fed the dropped output"
        );
        test.program.profile.insert("c".into(), t(&[f32::NAN]));
        assert!(matches!(
            drop_non_finite_outputs(&mut test.program),
            Err(Verdict::Skipped(Skip::NonFinite))
        ));
    }

    #[test]
    fn a_wrong_output_is_named_by_the_first_row_on_its_path_that_goes_wrong() {
        let test = atan2_then_asinh();
        let (exposed, path) = test.exposing_path(0).expect("c reads a row's result");
        assert_eq!(
            path,
            vec!["a".to_string()],
            "the adapter and the output itself are not exposed"
        );
        assert_eq!(exposed.program.outputs, ["c", "d", "a"]);
        assert!(test.exposing_path(1).is_none(), "d reads only a parameter");
        let send = |wrong_atan2: bool| {
            move |exposed: &SurfaceTest, _: &str| {
                assert_eq!(exposed.program.outputs.len(), 3);
                let pi = std::f32::consts::PI;
                let a = if wrong_atan2 { -pi } else { pi };
                let c = if wrong_atan2 { -1.86 } else { 1.86 };
                let eager = vec![t(&[1.86]), t(&[2.0]), t(&[pi])];
                Some(response(&[
                    ("eager", eager),
                    ("ort", vec![t(&[c]), t(&[2.0]), t(&[a])]),
                ]))
            }
        };
        let found = locate_first_wrong(&test, 0, send(true), |run| run == "ort");
        assert_eq!(found, Some(("atan2", "a".to_string())));
        assert!(first_wrong_clause(&test, found.as_ref(), 0).contains("`a` (atan2 of f32)"));
        assert_eq!(
            first_wrong_clause(&test, None, 0),
            "; the wrong output: `c` (Asinh of f32)",
            "no wrong value on the way: the output's own row and the types it read"
        );
        assert_eq!(
            first_wrong_clause(&test, None, 5),
            "",
            "a gradient has no row"
        );
        // Right on the way: the output's own row stays the name.
        assert_eq!(
            locate_first_wrong(&test, 0, send(false), |run| run == "ort"),
            None
        );
    }

    #[test]
    fn a_float32_output_behind_a_float16_stage_is_judged_by_float16s_tolerance() {
        let no_conditioning = || -> Result<Frame, Verdict> { panic!("conditioning requested") };
        let (eager, got) = ([t(&[1.0])], [t(&[1.004])]);
        let judged = judge_against_eager(
            &eager,
            &F32,
            &[ScalarType::F16],
            &got,
            &F32,
            no_conditioning,
        );
        assert_eq!(judged, Ok(Judged::Agrees));
        let exact = response(&[("eager", eager.to_vec()), ("widened", eager.to_vec())]);
        let judged = judge_against_eager(&eager, &F32, &TOL, &got, &F32, || Ok(exact));
        assert!(
            matches!(judged, Ok(Judged::Wrong { what: "value", .. })),
            "{judged:?}"
        );
    }

    #[test]
    fn agreeing_runs_never_ask_for_conditioning() {
        let judged = judge_against_eager(&[t(&[1.0])], &F32, &TOL, &[t(&[1.0])], &F32, || {
            panic!("conditioning requested")
        });
        assert_eq!(judged, Ok(Judged::Agrees));
    }

    #[test]
    fn types_and_arity_are_always_wrong() {
        let no_conditioning = || -> Result<Frame, Verdict> { panic!("conditioning requested") };
        let other = [Some(ScalarType::F64)];
        let judged = judge_against_eager(
            &[t(&[1.0])],
            &F32,
            &TOL,
            &[t(&[1.0])],
            &other,
            no_conditioning,
        );
        assert!(
            matches!(
                judged,
                Ok(Judged::Wrong {
                    what: "dtype",
                    k: 0,
                    ..
                })
            ),
            "{judged:?}"
        );
        let judged = judge_against_eager(&[t(&[1.0])], &F32, &TOL, &[], &[], no_conditioning);
        assert!(
            matches!(judged, Ok(Judged::Wrong { what: "arity", .. })),
            "{judged:?}"
        );
    }

    #[test]
    fn a_difference_is_wrong_only_when_farther_from_the_exact_result_than_eager() {
        let eager = [t(&[1.0, 2.0])];
        let wrong = [t(&[1.0, 2.5])];
        let exact = response(&[("eager", eager.to_vec()), ("widened", eager.to_vec())]);
        let judged = judge_against_eager(&eager, &F32, &TOL, &wrong, &F32, || Ok(exact));
        assert!(
            matches!(
                judged,
                Ok(Judged::Wrong {
                    what: "value",
                    k: 0,
                    ..
                })
            ),
            "{judged:?}"
        );
        // Eager is the one off the exact result: the compiled value is more accurate.
        let closer = response(&[("eager", eager.to_vec()), ("widened", wrong.to_vec())]);
        let judged = judge_against_eager(&eager, &F32, &TOL, &wrong, &F32, || Ok(closer));
        assert!(matches!(judged, Ok(Judged::Explained(_))), "{judged:?}");
        // Eager moves under perturbation: fragile, never compared.
        let fragile = response(&[
            ("eager", eager.to_vec()),
            ("widened", eager.to_vec()),
            ("perturbed0", wrong.to_vec()),
        ]);
        let judged = judge_against_eager(&eager, &F32, &TOL, &wrong, &F32, || Ok(fragile));
        assert!(
            matches!(judged, Ok(Judged::Explained(ref r)) if r.contains("Fragile")),
            "{judged:?}"
        );
    }
}
