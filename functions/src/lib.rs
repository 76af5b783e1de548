//! Wiring for the binaries: which adapters a process uses (chosen once, here), logging, and the
//! local runtime `booktr`, and the Lambda glue the binaries in `src/bin/` (one per endpoint group
//! and one per queue worker) call.

pub mod cli;
#[cfg(feature = "aws")]
pub mod lambda;
pub mod metrics;
pub mod serve;
pub mod telemetry;
pub mod translate_cmd;
pub mod wiring;
