//! Placeholder family file, filled in by a later commit.

use super::OpSpec;

/// The specs of this family.
pub fn specs() -> Vec<Box<dyn OpSpec>> {
    Vec::new()
}
