//! What one caller may spend: request rate limits here, plan quotas in [`crate::usage`].

mod model;
pub mod rate;
pub(crate) mod record;

pub use rate::{RateLimiter, Subject, Verdict, Window};
