//! campaign (filled in below).
