//! A backend for reliability tests only. It wraps a real backend and, when the model holds a
//! trigger op, misbehaves at its first optimized level the way broken compilers do: it
//! segfaults (`Sin`), aborts (`Cos`), hangs (`Tan`) or allocates without bound (`Atan`).
//! Every other model runs on the wrapped backend unchanged.
//!
//! The trigger is a property of the model, so a fault replays from its saved bytes and a
//! reducer can shrink the model around it; one fault is state-dependent instead (a model
//! arms the process, a later one crashes it), which only a replay of the worker's earlier
//! inputs reproduces. It refuses to exist unless
//! `DLCFUZZ_ALLOW_FAULTS=1` is set, so it cannot be picked by accident.

use super::{Backend, BackendError};
use crate::emit::onnx::OnnxModel;
use crate::ir::Tensor;
use crate::ops::OpType;

/// The environment variable that must be `1` for [`Faulty::new`] to succeed.
pub const ALLOW_FAULTS: &str = "DLCFUZZ_ALLOW_FAULTS";

/// A way to fail that only a separate process survives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An invalid memory write (SIGSEGV).
    Segfault,
    /// `abort()` (SIGABRT).
    Abort,
    /// Sleeps forever.
    Hang,
    /// Allocates and touches memory until something stops it.
    Allocate,
}

impl Fault {
    /// The fault an op type triggers, if any.
    pub fn for_op(op_type: &str) -> Option<Fault> {
        match OpType::parse(op_type)? {
            OpType::Sin => Some(Fault::Segfault),
            OpType::Cos => Some(Fault::Abort),
            OpType::Tan => Some(Fault::Hang),
            OpType::Atan => Some(Fault::Allocate),
            _ => None,
        }
    }

    /// Commits the fault; never returns.
    fn commit(self) -> ! {
        eprintln!("faulty backend: {self:?} requested by the model");
        match self {
            Fault::Segfault => {
                // SAFETY: deliberately not safe: this write faults, which is the point.
                unsafe { std::ptr::write_volatile(8 as *mut u8, 1) };
                unreachable!("the write above faults")
            }
            Fault::Abort => std::process::abort(),
            Fault::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            },
            Fault::Allocate => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    // `vec![1; n]` writes every byte, so the pages become resident.
                    hoard.push(vec![1u8; 64 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
        }
    }
}

/// The first fault `model` triggers, in node order.
pub fn fault_in(model: &[u8]) -> Option<Fault> {
    first_fault(&crate::emit::read::node_op_types(model)?)
}

fn first_fault(op_types: &[String]) -> Option<Fault> {
    op_types.iter().find_map(|op| Fault::for_op(op))
}

/// The op type whose model leaves the process armed, as a heap corruption would: it runs
/// normally, and a later model with [`ARMED_TRIGGER`] in the same process segfaults.
pub const ARMING_OP: &str = OpType::Acos.name();
/// The op type that segfaults in a process an earlier [`ARMING_OP`] model armed (and runs
/// normally otherwise): a state-dependent fault that never replays from its own bytes.
pub const ARMED_TRIGGER: &str = OpType::Asin.name();

static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Commits the model's fault when `level` is the first optimized one; arms the process or
/// fires its armed fault (see [`ARMING_OP`]).
fn strike(model: &OnnxModel, level: usize) {
    if level != 1 {
        return;
    }
    let ops = crate::emit::read::node_op_types(&model.bytes).unwrap_or_default();
    if let Some(fault) = first_fault(&ops) {
        fault.commit();
    }
    let has = |op: &str| ops.iter().any(|o| o == op);
    use std::sync::atomic::Ordering::SeqCst;
    if has(ARMED_TRIGGER) && ARMED.load(SeqCst) {
        eprintln!("faulty backend: an earlier model armed this process");
        Fault::Segfault.commit();
    }
    if has(ARMING_OP) {
        ARMED.store(true, SeqCst);
    }
}

/// The wrapped backend plus injected faults.
pub struct Faulty {
    inner: Box<dyn Backend>,
}

impl Faulty {
    /// Wraps `inner`; fails unless [`ALLOW_FAULTS`] is `1`.
    pub fn new(inner: Box<dyn Backend>) -> Result<Faulty, String> {
        if std::env::var(ALLOW_FAULTS).as_deref() != Ok("1") {
            return Err(format!(
                "the `faulty` backend crashes on purpose and exists for reliability tests; set {ALLOW_FAULTS}=1 to use it"
            ));
        }
        Ok(Faulty { inner })
    }
}

impl Backend for Faulty {
    fn name(&self) -> &'static str {
        "faulty"
    }

    fn version(&self) -> String {
        format!("faulty over {}", self.inner.version())
    }

    fn levels(&self) -> &'static [&'static str] {
        self.inner.levels()
    }

    fn python_runner(&self) -> Option<&'static super::PythonRunner> {
        self.inner.python_runner()
    }

    fn run(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
    ) -> Result<Vec<Tensor>, BackendError> {
        strike(model, level);
        self.inner.run(model, inputs, level)
    }

    fn run_observed(
        &self,
        model: &OnnxModel,
        inputs: &[&Tensor],
        level: usize,
        fired: &mut Vec<String>,
    ) -> Result<Vec<Tensor>, BackendError> {
        strike(model, level);
        self.inner.run_observed(model, inputs, level, fired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_ops_map_to_faults_and_others_do_not() {
        assert_eq!(Fault::for_op("Sin"), Some(Fault::Segfault));
        assert_eq!(Fault::for_op("Cos"), Some(Fault::Abort));
        assert_eq!(Fault::for_op("Tan"), Some(Fault::Hang));
        assert_eq!(Fault::for_op("Atan"), Some(Fault::Allocate));
        assert_eq!(Fault::for_op("Relu"), None);
        assert_eq!(fault_in(b"not a model"), None);
    }
}
