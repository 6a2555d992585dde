//! Culprit-pass bisection for tract findings: which of tract's own optimizer passes a
//! decluttered or optimized finding needs.
//!
//! tract optimizes in process with two pass lists, `Optimizer::declutter()` (decluttered
//! level) and `Optimizer::codegen()` (applied after it at the optimized level); both lists are
//! public. The bisection re-runs the typed model through the same lists with passes left out
//! and keeps leaving a pass out while the finding stays (an error where the typed model runs,
//! or outputs that differ from the typed model's), until no single pass can go: a 1-minimal
//! set of passes that still triggers it, as [`super::bisect`] finds for ONNX Runtime's
//! transformers.

use super::bisect::Culprits;
use super::tract_model::{execute, typed, LEVELS};
use super::{panic, BackendError};
use crate::emit::onnx::OnnxModel;
use crate::ir::Tensor;
use tract_onnx::prelude::{TValue, TVec, TypedModel};
use tract_onnx::tract_core::optim::{Optimizer, TypedPass};

/// Largest relative difference from the typed model's output still taken as rounding (tract
/// may reassociate float arithmetic when it optimizes).
const TOLERANCE: f64 = 1e-3;

/// One pass of a list: the stage it belongs to and its position there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PassRef {
    codegen: bool,
    index: usize,
}

/// The pass lists of the level being bisected.
struct Lists {
    declutter: Vec<Box<dyn TypedPass>>,
    codegen: Vec<Box<dyn TypedPass>>,
}

impl Lists {
    fn of(level: usize) -> Lists {
        Lists {
            declutter: Optimizer::declutter().passes,
            codegen: if level >= 2 {
                Optimizer::codegen().passes
            } else {
                Vec::new()
            },
        }
    }

    fn all(&self) -> Vec<PassRef> {
        let declutter = (0..self.declutter.len()).map(|index| PassRef {
            codegen: false,
            index,
        });
        let codegen = (0..self.codegen.len()).map(|index| PassRef {
            codegen: true,
            index,
        });
        declutter.chain(codegen).collect()
    }

    fn name(&self, pass: PassRef) -> String {
        let list = if pass.codegen {
            &self.codegen
        } else {
            &self.declutter
        };
        format!(
            "{}:{}",
            if pass.codegen { "codegen" } else { "declutter" },
            pass_name(&format!("{:?}", list[pass.index]))
        )
    }

    /// `typed` optimized by the passes in `kept` only, in their lists' order.
    fn optimize(&self, typed: &TypedModel, kept: &[PassRef]) -> Result<TypedModel, String> {
        let subset = |codegen: bool, list: &[Box<dyn TypedPass>]| Optimizer {
            passes: kept
                .iter()
                .filter(|p| p.codegen == codegen)
                .map(|p| list[p.index].clone())
                .collect(),
            steps: None,
        };
        let mut model = typed.clone();
        subset(false, &self.declutter)
            .optimize(&mut model)
            .map_err(|e| format!("{e:?}"))?;
        if !self.codegen.is_empty() {
            subset(true, &self.codegen)
                .optimize(&mut model)
                .map_err(|e| format!("{e:?}"))?;
        }
        Ok(model)
    }
}

/// A pass's name from its `Debug` form: the type name (`PushSplitDown`, `PropConst { .. }`
/// → `PropConst`), or, for the rounds of per-op rewrites, which print only their stage in
/// lower case (`declutter`, `codegen`, `fuse`), `OpOptim(<stage>)`.
fn pass_name(debug: &str) -> String {
    let head = debug.split(['(', ' ', '{']).next().unwrap_or(debug);
    if head.starts_with(|c: char| c.is_ascii_lowercase()) {
        format!("OpOptim({head})")
    } else {
        head.to_string()
    }
}

/// What one run with a pass subset gave.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Outputs(Vec<Tensor>),
    Failed(String),
}

fn differs(a: &[Tensor], b: &[Tensor]) -> bool {
    a.len() != b.len()
        || a.iter().zip(b).any(|(x, y)| {
            let (xs, ys) = (x.data.to_f64_vec(), y.data.to_f64_vec());
            x.shape != y.shape
                || xs.iter().zip(&ys).any(|(p, q)| {
                    if p.is_nan() || q.is_nan() {
                        p.is_nan() != q.is_nan()
                    } else {
                        (p - q).abs() > TOLERANCE * q.abs().max(1.0)
                    }
                })
        })
}

/// The culprit passes of a finding of `model` on `inputs` at tract level `level` (1:
/// decluttered, 2: optimized), or why there are none to name.
pub fn culprits(model: &OnnxModel, inputs: &[&Tensor], level: usize) -> Result<Culprits, String> {
    if level == 0 || level >= LEVELS.len() {
        return Err(format!(
            "tract optimizes nothing at level {level}: only {} and {} are bisected",
            LEVELS[1], LEVELS[2]
        ));
    }
    let (typed, feeds) = typed(model, inputs).map_err(|e| e.message)?;
    let run = |typed: TypedModel, feeds: TVec<TValue>| -> Outcome {
        match panic::catch(|| execute(model, typed, feeds)) {
            Ok(Ok(outputs)) => Outcome::Outputs(outputs),
            Ok(Err(BackendError { message, .. })) | Err(message) => Outcome::Failed(message),
        }
    };
    let reference = match run(typed.clone(), feeds.clone()) {
        Outcome::Outputs(outputs) => outputs,
        Outcome::Failed(e) => {
            return Err(format!(
                "the typed model fails itself, so there is nothing to bisect: {e}"
            ))
        }
    };
    let lists = Lists::of(level);
    let mut runs = 0u64;
    // The failure kind with passes `kept`, if it fails.
    let mut fails = |kept: &[PassRef]| -> Option<&'static str> {
        runs += 1;
        let outcome = match panic::catch(|| lists.optimize(&typed, kept)) {
            Ok(Ok(model)) => run(model, feeds.clone()),
            Ok(Err(message)) | Err(message) => Outcome::Failed(message),
        };
        match outcome {
            Outcome::Failed(_) => Some("error"),
            Outcome::Outputs(outputs) if differs(&outputs, &reference) => Some("mismatch"),
            Outcome::Outputs(_) => None,
        }
    };
    let mut kept = lists.all();
    let Some(mut kind) = fails(&kept) else {
        return Err(format!(
            "no failure at {} with tract's own pass lists on these inputs",
            LEVELS[level]
        ));
    };
    // Drop one pass at a time while the failure stays, until none can go (1-minimal).
    loop {
        let before = kept.len();
        let mut i = 0;
        while i < kept.len() {
            let mut without = kept.clone();
            without.remove(i);
            match fails(&without) {
                Some(k) => {
                    kept = without;
                    kind = k;
                }
                None => i += 1,
            }
        }
        if kept.len() == before {
            break;
        }
    }
    let note = kept
        .is_empty()
        .then(|| "fails with every pass left out: tract's plain typed-to-runnable path, not an optimizer pass".to_string());
    Ok(Culprits {
        level: LEVELS[level].to_string(),
        kind: kind.to_string(),
        culprits: kept.iter().map(|p| lists.name(*p)).collect(),
        runs,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_names_drop_function_pointers_and_fields() {
        assert_eq!(pass_name("PushSplitDown"), "PushSplitDown");
        assert_eq!(pass_name("fuse"), "OpOptim(fuse)");
        assert_eq!(pass_name("PropConst { cache: {} }"), "PropConst");
    }

    #[test]
    fn the_declutter_list_is_tracts_own() {
        let lists = Lists::of(1);
        let names: Vec<String> = lists.all().into_iter().map(|p| lists.name(p)).collect();
        assert!(
            names.contains(&"declutter:PushSplitDown".to_string()),
            "{names:?}"
        );
        assert!(names.iter().all(|n| n.starts_with("declutter:")));
        assert!(Lists::of(2).codegen.len() > 1);
    }
}
