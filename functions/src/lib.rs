//! What the binaries share: which adapters a process uses (chosen once, in `wiring`), the one
//! assembly of the app over them (`app`), logging, the local runtime `booktr`, and the Lambda
//! glue the binaries in `lambdas/` (one per endpoint group and one per queue worker) call.

pub mod app;
pub mod cli;
#[cfg(feature = "aws")]
pub mod lambda;
#[cfg(feature = "serve")]
pub mod metrics;
#[cfg(feature = "serve")]
pub mod serve;
pub mod telemetry;
pub mod translate_cmd;
mod upkeep;
pub mod wiring;
