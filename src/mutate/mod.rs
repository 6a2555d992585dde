//! Test-case synthesis beyond plain generation: splicing optimizer patterns (OATest) into
//! generated graphs.

pub mod patterns;
