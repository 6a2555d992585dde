//! The `dlcfuzz` command line.
fn main() {}
