//! Logging: `tracing` to stderr, human-readable on a terminal, JSON for log shippers.

use booktr_core::config::LogFormat;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

/// Installs the global subscriber. Safe to call more than once (later calls do nothing).
///
/// The filter is a `Targets` list (`info`, `booktr_core=debug,info`): the syntax operators write,
/// without the regular-expression engine `EnvFilter` compiles in (about 15 s of a cold build).
/// A filter that does not parse logs at `info` and says so, and so does one that asks for more
/// than this build can record (the Lambda bootstraps compile `debug` and `trace` out).
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
    if installed.is_err() {
        return;
    }
    match parsed {
        Err(error) => {
            tracing::warn!(filter, %error, "BOOKTR_LOG is not a valid filter; logging at info")
        }
        Ok(targets) => {
            if let Some(asked) = finer_than(&targets, STATIC_MAX_LEVEL) {
                tracing::warn!(
                    filter,
                    %asked,
                    recorded = %STATIC_MAX_LEVEL,
                    "BOOKTR_LOG asks for finer events than this build records; those are compiled out"
                );
            }
        }
    }
}

/// The finest level `targets` enables when it is finer than `built`, the finest the build keeps.
fn finer_than(targets: &Targets, built: LevelFilter) -> Option<LevelFilter> {
    let finest = targets
        .iter()
        .map(|(_, level)| level)
        .chain(targets.default_level())
        .max()?;
    (finest > built).then_some(finest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(filter: &str) -> Targets {
        filter.parse().unwrap()
    }

    #[test]
    fn a_filter_within_what_the_build_records_is_not_flagged() {
        assert_eq!(finer_than(&targets("info"), LevelFilter::INFO), None);
        assert_eq!(
            finer_than(&targets("warn,booktr_core=info"), LevelFilter::INFO),
            None
        );
        assert_eq!(finer_than(&targets("trace"), LevelFilter::TRACE), None);
    }

    #[test]
    fn a_filter_finer_than_the_build_names_the_finest_level_it_asks_for() {
        assert_eq!(
            finer_than(&targets("info,booktr_core=debug"), LevelFilter::INFO),
            Some(LevelFilter::DEBUG)
        );
        assert_eq!(
            finer_than(&targets("trace"), LevelFilter::INFO),
            Some(LevelFilter::TRACE)
        );
    }
}
