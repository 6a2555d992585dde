//! The typed intermediate representation: element types, tensor types, tensor values and the
//! computational graph.

pub mod attrs;
pub mod dtype;
pub mod graph;
pub mod scalar;
pub mod tensor;

pub use dtype::DType;
pub use graph::{Graph, Node, NodeKind, ValueRef};
pub use scalar::ScalarType;
pub use tensor::{Buffer, Tensor, TensorType};
