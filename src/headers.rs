//! The fixed-size headers at the head of a fuzz input, as data: how a header is read
//! ([`padded_head`]), and the mutation header of `ort_cpu_mutated` ([`Mutations`]: the
//! HirFuzz constraint level, the constraint a level-0 case breaks, the ONNX rewrites). A
//! test case carries its decoded header ([`crate::gen::TestCase::mutations`]);
//! [`crate::mutate`] applies it. Below `gen` and `mutate`, so neither depends on the other
//! for these types.

use serde::{Deserialize, Serialize};

/// The first `N` bytes of `bytes` (missing ones read as zero) and the rest: how every
/// fixed-size header of an input (swarm config, pattern, mutation and program plans) is read.
pub fn padded_head<const N: usize>(bytes: &[u8]) -> ([u8; N], &[u8]) {
    let n = N.min(bytes.len());
    let mut head = [0u8; N];
    head[..n].copy_from_slice(&bytes[..n]);
    (head, &bytes[n..])
}

/// Level-byte values below this mean level 0: ⌈0.6 · 256⌉.
pub const LEVEL0_BYTES: u8 = 154;
/// Bytes the [`Mutations`] header occupies: level byte, violation, rewrite plan.
pub const HEADER_BYTES: usize = 1 + VIOLATION_BYTES + PLAN_BYTES;

/// A constraint level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// One constraint deliberately broken: exception handling is under test.
    Zero,
    /// Every constraint holds: functional correctness is under test.
    One,
}

impl Level {
    /// The level a level byte selects.
    pub fn of_byte(b: u8) -> Level {
        if b < LEVEL0_BYTES {
            Level::Zero
        } else {
            Level::One
        }
    }
}

/// The mutation header of an `ort_cpu_mutated` input: the constraint level, the constraint a
/// level-0 case breaks, and the function rewrites applied at either level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutations {
    /// The constraint level.
    pub level: Level,
    /// The broken constraint (only at level 0).
    pub violation: Option<Violation>,
    /// The function and control-flow rewrites.
    pub plan: RewritePlan,
}

impl Mutations {
    /// Decodes the header at the start of `bytes` (missing bytes read as zero) and returns
    /// it with the rest of the input (the graph recipe).
    pub fn split(bytes: &[u8]) -> (Mutations, &[u8]) {
        let ([level_byte], rest) = padded_head::<1>(bytes);
        let level = Level::of_byte(level_byte);
        let (head, rest) = padded_head::<VIOLATION_BYTES>(rest);
        let (plan, rest) = RewritePlan::split(rest);
        let violation = (level == Level::Zero).then(|| Violation::decode(head));
        (
            Mutations {
                level,
                violation,
                plan,
            },
            rest,
        )
    }
}

/// Bytes a [`Violation`] reads.
pub const VIOLATION_BYTES: usize = 3;

/// The one constraint a level-0 case breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Violation {
    /// One data input of node `node` is cast to another dtype, so its operands disagree.
    DtypeMismatch {
        /// Node index (modulo the node count).
        node: u8,
        /// Picks the input and the dtype.
        pick: u8,
    },
    /// One data input of node `node` gets a doubled dimension (`Concat(x, x)`), or a scalar
    /// input becomes a vector.
    ShapeMismatch {
        /// Node index (modulo the node count).
        node: u8,
        /// Picks the input and the axis.
        pick: u8,
    },
    /// Every data input of node `node` is cast to one other dtype, so the operands agree but
    /// the op may not accept that dtype.
    UnsupportedDtype {
        /// Node index (modulo the node count).
        node: u8,
        /// Picks the dtype.
        pick: u8,
    },
}

impl Violation {
    /// Decodes three bytes.
    pub fn decode([kind, node, pick]: [u8; VIOLATION_BYTES]) -> Violation {
        match kind % 3 {
            0 => Violation::DtypeMismatch { node, pick },
            1 => Violation::ShapeMismatch { node, pick },
            _ => Violation::UnsupportedDtype { node, pick },
        }
    }

    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Violation::DtypeMismatch { .. } => "dtype-mismatch",
            Violation::ShapeMismatch { .. } => "shape-mismatch",
            Violation::UnsupportedDtype { .. } => "unsupported-dtype",
        }
    }
}

/// Bytes each rewrite reads.
pub const REWRITE_BYTES: usize = 4;
/// Most rewrites in one plan.
pub const MAX_REWRITES: usize = 4;
/// Bytes a [`RewritePlan`] occupies at the head of an input.
pub const PLAN_BYTES: usize = REWRITE_BYTES * MAX_REWRITES;

/// One semantics-preserving rewrite of an ONNX model. Positions are taken modulo the current
/// node or function count when applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rewrite {
    /// Moves `len` nodes from `start` of the main graph into a new function and calls it.
    Outline {
        /// First node.
        start: u8,
        /// Nodes to move, minus one.
        len: u8,
    },
    /// Wraps function number `function` in a new function and calls the wrapper instead.
    Wrap {
        /// Function index.
        function: u8,
    },
    /// Replaces call node number `call` of the main graph with its function's body.
    Inline {
        /// Call-node index.
        call: u8,
    },
    /// Moves nodes into the then-branch of an always-taken `If`.
    If {
        /// First node.
        start: u8,
        /// Nodes to move, minus one.
        len: u8,
        /// An input-derived (EMI) condition instead of a constant one.
        emi: bool,
    },
    /// Moves nodes into the body of a `Loop` that runs once.
    Loop {
        /// First node.
        start: u8,
        /// Nodes to move, minus one.
        len: u8,
    },
}

impl Rewrite {
    /// Decodes one 4-byte chunk; `None` for a chunk that asks for no rewrite.
    pub fn decode(chunk: [u8; REWRITE_BYTES]) -> Option<Rewrite> {
        let [kind, a, b, c] = chunk;
        Some(match kind % 6 {
            0 => return None,
            1 => Rewrite::Outline { start: a, len: b },
            2 => Rewrite::Wrap { function: a },
            3 => Rewrite::Inline { call: a },
            4 => Rewrite::If {
                start: a,
                len: b,
                emi: c % 2 == 1,
            },
            _ => Rewrite::Loop { start: a, len: b },
        })
    }

    /// Short name (feature signals, reports).
    pub fn name(&self) -> &'static str {
        match self {
            Rewrite::Outline { .. } => "outline",
            Rewrite::Wrap { .. } => "wrap",
            Rewrite::Inline { .. } => "inline",
            Rewrite::If { emi: false, .. } => "if-const",
            Rewrite::If { emi: true, .. } => "if-emi",
            Rewrite::Loop { .. } => "loop",
        }
    }
}

/// The rewrites of one test case, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewritePlan {
    /// Rewrites to apply.
    pub rewrites: Vec<Rewrite>,
}

impl RewritePlan {
    /// Decodes the first [`PLAN_BYTES`] of `bytes` (missing bytes read as zero: no rewrite)
    /// and returns the plan and the rest of the input.
    pub fn split(bytes: &[u8]) -> (RewritePlan, &[u8]) {
        let (head, rest) = padded_head::<PLAN_BYTES>(bytes);
        let rewrites = head
            .chunks_exact(REWRITE_BYTES)
            .filter_map(|c| Rewrite::decode(c.try_into().expect("exact chunks")))
            .collect();
        (RewritePlan { rewrites }, rest)
    }
}
