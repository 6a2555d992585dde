//! backend (filled in below).
