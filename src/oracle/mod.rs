//! oracle (filled in below).
