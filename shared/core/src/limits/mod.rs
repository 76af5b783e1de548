//! What one caller may spend: request rate limits here, plan quotas in [`crate::usage`].

mod model;
pub mod service;
pub(crate) mod record;

pub use service::{RateLimiter, Subject, Verdict, Window};
