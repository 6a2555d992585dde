//! The program side of the torch.compile targets on the torch surface: bytes → program
//! plan + generated torch program ([`crate::torch::gen`]) → an eager *profile* run in the
//! Python host (every value computed once: the types the generator predicted are checked,
//! and the values feed the EMI conditions) → TorchProbe mutations.

use crate::backend::python::frame::Frame;
use crate::backend::python::{runs, PythonHost, Run};
use crate::ir::{ScalarType, Tensor};
use crate::mutate::program::render::{render, Dialect, ENTRY};
use crate::mutate::program::{Program, ProgramPlan, Stmt, Var};
use crate::oracle::{Skip, Verdict};
use crate::torch::gen::generate_packed;
use serde_json::{json, Value};
use std::collections::BTreeMap;
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
}

impl SurfaceTest {
    /// The parameters' values (carrier types) with their torch types, in call order.
    pub fn inputs(&self) -> Vec<(&Tensor, ScalarType)> {
        self.program
            .params
            .iter()
            .map(|p| (&self.program.profile[p], self.program.types[p].scalar))
            .collect()
    }

    /// How many independent programs the test packs.
    pub fn components(&self) -> usize {
        self.component_of.values().max().map_or(1, |c| c + 1)
    }

    /// The row that produced output `k` (`grad` beyond the outputs: a gradient).
    pub fn producer(&self, k: usize) -> &str {
        match self.program.outputs.get(k) {
            Some(v) => self.producers.get(v).copied().unwrap_or("input"),
            None => "grad",
        }
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
}

impl SurfaceSource {
    /// Decodes `bytes` (program plan, then the generator's bytes) without running anything.
    pub fn decode(&self, bytes: &[u8]) -> (ProgramPlan, crate::torch::gen::TorchProgram) {
        let (plan, rest) = ProgramPlan::split(bytes);
        (plan, generate_packed(rest, self.max_ops, self.components))
    }

    /// The mutated program of `bytes`, after an eager profile run in `host` on `device`; a
    /// skip when eager fails, computes a non-finite output, or a value's type differs from
    /// the generator's prediction (a generator bug, reported as invalid).
    pub fn program(
        &self,
        host: &Mutex<PythonHost>,
        backend: &str,
        device: &str,
        bytes: &[u8],
    ) -> Result<SurfaceTest, Verdict> {
        let (plan, generated) = self.decode(bytes);
        let mut test = SurfaceTest {
            program: generated.program,
            applied: Vec::new(),
            ops: generated.ops,
            producers: generated.producers,
            component_of: generated.component_of,
        };
        let mut everything = test.program.clone();
        everything.outputs = test.program.body.iter().flat_map(Stmt::defs).collect();
        if everything.outputs.is_empty() {
            return Err(Verdict::Skipped(Skip::Invalid("no operator instantiated".into())));
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
                let statement = test.program.body.iter().find_map(|s| match s {
                    Stmt::Let { var: v, call } if v == var => Some(call.template.clone()),
                    _ => None,
                });
                let args: Vec<String> = test
                    .program
                    .body
                    .iter()
                    .find_map(|s| match s {
                        Stmt::Let { var: v, call } if v == var => Some(call.args.clone()),
                        _ => None,
                    })
                    .unwrap_or_default()
                    .iter()
                    .map(|a| test.program.types[a].to_string())
                    .collect();
                return Err(invalid(format!(
                    "type prediction: {var} is {:?}{:?}, predicted {want}, in {} over {}",
                    dtypes.get(k).copied().flatten(),
                    value.shape,
                    statement.unwrap_or_default(),
                    args.join(", ")
                )));
            }
            test.program.profile.insert(var.clone(), value);
        }
        if test
            .program
            .outputs
            .iter()
            .any(|v| !test.program.profile[v].is_finite())
        {
            return Err(Verdict::Skipped(Skip::NonFinite));
        }
        test.applied = plan.apply(&mut test.program);
        Ok(test)
    }
}
