//! Pattern-synthesis test cases decoded from fuzzer bytes: a fixed-size header chooses up to
//! [`MAX_SPLICES`] patterns and gives each splice its own byte chunk (where it goes, what it
//! reuses, which bridges); the rest is the seed graph's [`Recipe`]. Several splices in one case
//! are OATest's high-order synthesis.

use super::splice::{splice, SpliceReport};
use super::Library;
use crate::gen::insert::Generator;
use crate::gen::{padded_head, Limits, Menu, Recipe, Spliced, TestCase};

/// Most patterns spliced into one case.
pub const MAX_SPLICES: usize = 3;
/// Bytes each splice reads.
pub const SPLICE_BYTES: usize = 40;
/// Bytes of the header: a count, then a pattern index and a chunk per splice.
pub const HEADER_BYTES: usize = 1 + MAX_SPLICES * (2 + SPLICE_BYTES);

/// One decoded splice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpliceStep {
    /// Index into the library (taken modulo its size).
    pub pattern: u16,
    /// The splice's own bytes.
    pub bytes: Vec<u8>,
}

/// A decoded pattern-synthesis input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternRecipe {
    /// The splices, in order.
    pub splices: Vec<SpliceStep>,
    /// The seed graph.
    pub base: Recipe,
}

impl PatternRecipe {
    /// Decodes any byte string (never fails; missing bytes read as zeros).
    pub fn from_bytes(bytes: &[u8]) -> PatternRecipe {
        let (header, rest) = padded_head::<HEADER_BYTES>(bytes);
        let count = 1 + usize::from(header[0]) % MAX_SPLICES;
        let splices = header[1..]
            .chunks(2 + SPLICE_BYTES)
            .take(count)
            .map(|c| SpliceStep {
                pattern: u16::from_le_bytes([c[0], c[1]]),
                bytes: c[2..].to_vec(),
            })
            .collect();
        PatternRecipe {
            splices,
            base: Recipe::from_bytes(rest),
        }
    }
}

/// A decoded case plus what each splice did.
pub struct Synthesized {
    /// The test case (its `spliced` lists the patterns that went in).
    pub case: TestCase,
    /// Per successful splice, what it reused and bridged.
    pub reports: Vec<SpliceReport>,
    /// Splices attempted.
    pub attempted: usize,
}

/// Decodes `bytes` into a seed graph from `menu`'s swarm subset, then splices the chosen
/// patterns of `library` into it, instantiated with any choice of `menu`.
pub fn synthesize(bytes: &[u8], library: &Library, menu: &Menu, limits: &Limits) -> Synthesized {
    let recipe = PatternRecipe::from_bytes(bytes);
    let config = &recipe.base.config;
    let swarm = menu.swarm(config.op_mask, &config.dtypes());
    let mut gen = Generator::grow(&recipe.base, &swarm, config.target_nodes(limits));
    let mut spliced = Vec::new();
    let mut reports = Vec::new();
    if !library.patterns.is_empty() {
        for step in &recipe.splices {
            let pattern = &library.patterns[usize::from(step.pattern) % library.patterns.len()];
            if let Some(report) = splice(&mut gen, menu, pattern, &step.bytes) {
                reports.push(report);
                spliced.push(Spliced {
                    pattern: pattern.name.clone(),
                    pass: pattern.pass.clone(),
                    transformer: pattern.transformer.clone(),
                });
            }
        }
    }
    let mut case = TestCase::from_generated(&recipe.base, gen.finish());
    case.spliced = spliced;
    Synthesized {
        case,
        reports,
        attempted: recipe.splices.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_seed_split() {
        let bytes: Vec<u8> = (0..(HEADER_BYTES + 100) as u32).map(|i| i as u8).collect();
        let r = PatternRecipe::from_bytes(&bytes);
        assert_eq!(r.splices.len(), 1 + 0 % MAX_SPLICES);
        assert_eq!(r.splices[0].pattern, u16::from_le_bytes([1, 2]));
        assert_eq!(r.splices[0].bytes.len(), SPLICE_BYTES);
        assert_eq!(r.base, Recipe::from_bytes(&bytes[HEADER_BYTES..]));
        assert_eq!(PatternRecipe::from_bytes(&[]).splices.len(), 1);
    }
}
