//! Logging: `tracing` to stderr, human-readable on a terminal, JSON for log shippers.

use booktr_core::config::LogFormat;
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

/// Installs the global subscriber. Safe to call more than once (later calls do nothing).
///
/// The filter is a `Targets` list (`info`, `booktr_core=debug,info`): the syntax operators write,
/// without the regular-expression engine `EnvFilter` compiles in (about 15 s of a cold build).
/// A filter that does not parse logs at `info` and says so.
pub fn init(filter: &str, format: LogFormat) {
    let parsed = filter.parse::<Targets>();
    let targets = match &parsed {
        Ok(targets) => targets.clone(),
        Err(_) => Targets::new().with_default(Level::INFO),
    };
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(targets);
    let installed = match format {
        LogFormat::Pretty => registry.with(layer).try_init(),
        LogFormat::Json => registry
            .with(layer.json().flatten_event(true).with_current_span(true))
            .try_init(),
    };
    if let (Ok(()), Err(error)) = (installed, parsed) {
        tracing::warn!(filter, %error, "BOOKTR_LOG is not a valid filter; logging at info");
    }
}
