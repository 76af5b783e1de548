//! What one caller may spend: request rate limits here, plan quotas in [`crate::usage`].

mod model;
pub(crate) mod record;
pub mod service;

pub use service::{RateLimiter, Subject, Verdict, Window};
