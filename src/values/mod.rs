//! Input and weight values: seeded sampling in safe ranges
//! ([`crate::gen::sample::sample_tensor`], done while decoding), then
//! NNSmith's gradient-guided search ([`search`]) on the libtorch reference so that no operator
//! produces NaN or Inf, and structural repair ([`repair`]) where no values can.

pub mod forward;
pub mod loss;
pub mod repair;
pub mod search;
