//! The reference interpreter's engine, for ONNX (opset 19) on libtorch eager, through `tch`.
//!
//! Each operator evaluates itself ([`crate::ops::OpSpec::evaluate`], one node with ONNX
//! semantics: broadcasting, integer wrap-around, truncating integer division, half-to-even
//! rounding, ...); [`apply`] runs one node through it (re-exported from
//! [`crate::ops::apply`]). This module keeps the engine: [`graph`] and [`TorchReference`] run a
//! whole generated [`crate::ir::Graph`], [`precision`] and [`envelope`] bound what rounding
//! may do, [`fragile`] marks what no comparison may judge, [`compare`] compares,
//! [`int8_activations`] is a documented precision trade, and [`onnx_models`] checks the
//! reference against the models the `onnx` package ships. Float computations stay on
//! libtorch's autograd tape (no detaching, no round trips through host memory), so a value
//! search can differentiate through the reference.
//!
//! `float16` nodes are computed in `float32` and rounded once per node, as numpy (and so the
//! ONNX reference implementation) does.

pub mod compare;
pub mod envelope;
pub mod fragile;
pub mod graph;
pub mod int8_activations;
pub mod onnx_models;
pub mod precision;
pub mod torch_reference;

pub use crate::ops::apply::{apply, apply_typed};
pub use crate::ops::carrier as convert;
pub(crate) use crate::ops::eval::{float_values, Args};
pub use crate::ops::eval::{int_attr, RefError};
pub use convert::{from_tch, to_tch};
pub use graph::evaluate;
pub use torch_reference::TorchReference;

/// The libtorch version the reference is linked against (read from the libtorch install at
/// build time), with the `tch` binding version.
pub fn version() -> String {
    format!(
        "libtorch {} (tch 0.26)",
        option_env!("DLCFUZZ_LIBTORCH_VERSION").unwrap_or("unknown")
    )
}

/// Shared helpers for the op-family unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::ir::DType;

    /// A generated 5-node case whose values are all of `dtype`, varied by `seed`.
    pub fn case_of(seed: u8, dtype: DType) -> crate::gen::TestCase {
        use crate::gen::{Limits, Menu};
        let only: std::collections::BTreeSet<DType> = [dtype].into_iter().collect();
        let menu = Menu::everything().swarm(u128::MAX, &only);
        let bytes: Vec<u8> = (0..700u32)
            .map(|i| (i.wrapping_mul(97) ^ (u32::from(seed) * 6151)) as u8)
            .collect();
        crate::gen::TestCase::decode(&bytes, &menu, &Limits::exact(5))
    }

    /// Every value of `case` as the reference computes it (the declared precision).
    pub fn declared(case: &crate::gen::TestCase) -> precision::Values {
        let leaves = case
            .values
            .iter()
            .map(|(n, t)| (*n, convert::to_tch(t)))
            .collect();
        tch::no_grad(|| graph::evaluate(&case.graph, &leaves)).expect("the reference runs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_libtorch() {
        assert!(version().starts_with("libtorch 2."), "{}", version());
    }
}
