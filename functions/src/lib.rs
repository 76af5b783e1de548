//! Wiring for the binaries: which adapters a process uses (chosen once, here), logging, and the
//! local runtime `booktr`. Lambda binaries (one per endpoint group) will sit beside it.

pub mod cli;
pub mod serve;
pub mod telemetry;
pub mod translate_cmd;
pub mod wiring;
