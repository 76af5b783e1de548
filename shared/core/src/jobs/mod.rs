//! Background jobs: how a worker processes what is queued (the vocabulary, [`Job`], is in the
//! base, `crate::job`, so that every domain can queue work). The same handler runs in the local
//! worker loop (`runner`) and in the SQS-triggered Lambdas.

mod chapter;
mod context;
mod cost;
pub mod digest;
mod error;
mod extract;
mod fallback;
mod generate;
mod handler;
mod observer;
mod retranslate;
mod run;
pub mod runner;
mod terms;
mod title;

pub use context::{JobHandler, JobParts};
pub use error::JobError;
pub use handler::Outcome;
pub use observer::RunObserver;
