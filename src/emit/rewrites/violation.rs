//! Constraint level 0: break exactly one constraint of an emitted model — a dtype mismatch
//! between operands, a shape mismatch, or an op on a dtype it may not support — by inserting
//! one adapter node in front of an operator.

use super::{nodes::cast, Rewriter};
use crate::emit::onnx::{attribute, pb, tensor_proto};
pub use crate::headers::{Violation, VIOLATION_BYTES};
use crate::ir::{Buffer, DType, Tensor};
use crate::ops::{AttrValue, OpType};

/// A dtype other than `not`, picked by `pick`.
fn other_dtype(not: DType, pick: u8) -> DType {
    let others: Vec<DType> = DType::ALL.iter().copied().filter(|d| *d != not).collect();
    others[usize::from(pick) % others.len()]
}

impl Rewriter {
    /// The data inputs of main-graph node `at` whose types are known: `(slot, dtype, rank)`.
    fn typed_slots(&mut self, at: usize) -> Vec<(usize, DType, usize)> {
        let inputs = self.graph().node[at].input.clone();
        inputs
            .iter()
            .enumerate()
            .filter_map(|(j, n)| self.types.get(n).map(|t| (j, t.dtype, t.rank())))
            .collect()
    }

    /// Feeds slot `slot` of node `at` through `adapter` (whose only output is minted here).
    fn adapt(&mut self, at: usize, slot: usize, mut adapter: pb::NodeProto) {
        let out = self.mint("violation");
        adapter.output = vec![out.clone()];
        self.graph().node[at].input[slot] = out;
        self.graph().node.insert(at, adapter);
    }

    /// Applies `v` to the main graph; `false` when the chosen node has no typed data input.
    pub(crate) fn violate(&mut self, v: Violation) -> bool {
        let n = self.graph().node.len();
        let (Violation::DtypeMismatch { node, pick }
        | Violation::ShapeMismatch { node, pick }
        | Violation::UnsupportedDtype { node, pick }) = v;
        if n == 0 {
            return false;
        }
        let at = usize::from(node) % n;
        let slots = self.typed_slots(at);
        if slots.is_empty() {
            return false;
        }
        let (slot, dtype, rank) = slots[usize::from(pick) % slots.len()];
        let x = self.graph().node[at].input[slot].clone();
        match v {
            Violation::DtypeMismatch { .. } => {
                self.adapt(at, slot, cast(&x, other_dtype(dtype, pick / 4), ""));
            }
            Violation::UnsupportedDtype { .. } => {
                let to = other_dtype(slots[0].1, pick);
                for (k, (slot, _, _)) in slots.iter().enumerate() {
                    let x = self.graph().node[at + k].input[*slot].clone();
                    self.adapt(at + k, *slot, cast(&x, to, ""));
                }
            }
            Violation::ShapeMismatch { .. } if rank == 0 => {
                let shape = self.mint("violation_shape");
                let two = Tensor {
                    shape: vec![1],
                    data: Buffer::I64(vec![2]),
                };
                self.graph().initializer.push(tensor_proto(&shape, &two));
                let expand = pb::NodeProto {
                    op_type: Some(OpType::Expand.into()),
                    input: vec![x, shape],
                    ..Default::default()
                };
                self.adapt(at, slot, expand);
            }
            Violation::ShapeMismatch { .. } => {
                let axis = i64::from(pick / 4) % rank as i64;
                let concat = pb::NodeProto {
                    op_type: Some(OpType::Concat.into()),
                    input: vec![x.clone(), x],
                    attribute: vec![attribute("axis", &AttrValue::Int(axis))],
                    ..Default::default()
                };
                self.adapt(at, slot, concat);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_triple_decodes_and_other_dtype_differs() {
        for kind in 0..=255u8 {
            let v = Violation::decode([kind, 7, kind]);
            assert!(!v.name().is_empty());
        }
        for d in DType::ALL {
            for pick in 0..=255u8 {
                assert_ne!(other_dtype(d, pick), d);
            }
        }
    }
}
