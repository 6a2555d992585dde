//! dlcfuzz: coverage-guided fuzzing of deep-learning compilers.
//!
//! Fuzzer bytes are decoded ([`gen::Recipe`]) into valid, typed computational graphs
//! ([`ir::Graph`]) built from operator specifications ([`ops`]) with incremental z3 solving
//! ([`gen::solve`]). Graphs are emitted as ONNX ([`emit::onnx`]), run on backends
//! ([`backend`]), and judged by oracles ([`oracle`]). [`campaign`] drives in-process fuzzing
//! loops and writes findings. [`mutate::patterns`] splices optimizer patterns (OATest) into
//! generated graphs. [`reference`] is a libtorch-eager interpreter of ONNX semantics.

pub mod backend;
pub mod bench;
pub mod campaign;
pub mod emit;
pub mod feedback;
pub mod gen;
pub mod headers;
pub mod ir;
pub mod mutate;
pub mod ops;
pub mod oracle;
pub mod paths;
pub mod pipeline;
pub mod reduce;
pub mod reference;
pub mod report;
pub mod sancov;
pub mod sym;
pub mod targets;
pub mod torch;
pub mod values;

pub use gen::{Config, Recipe, TestCase};
