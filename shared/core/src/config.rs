//! Typed configuration from the environment (`BOOKTR_*`), read once at start. Every name is
//! documented in docs/operations.md's configuration table.

use std::net::SocketAddr;
use std::path::PathBuf;

use booktr_translate::pipeline::MAX_CHUNK_BLOCKS;
use booktr_translate::profile::{ByHand, Profile, Settings};

use crate::types::{Email, Plan};
use crate::usage::Quotas;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable, for a terminal.
    Pretty,
    /// One JSON object per line, for CloudWatch and log shippers.
    Json,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// `BOOKTR_ADDR`: where `booktr serve` listens.
    pub addr: SocketAddr,
    /// `BOOKTR_METRICS_ADDR`: where `booktr serve` answers Prometheus scrapes at `/metrics`, on
    /// an address of its own so it is never public by accident. Unset (default): no metrics.
    pub metrics_addr: Option<SocketAddr>,
    /// `BOOKTR_DATA_DIR`: the embedded database, queue and files.
    pub data_dir: PathBuf,
    /// `BOOKTR_PUBLIC_URL`: the address users reach the service at (links, secure cookies).
    pub public_url: String,
    /// `BOOKTR_LOG`: a tracing filter such as `info` or `booktr=debug,info`.
    pub log_filter: String,
    /// `BOOKTR_LOG_FORMAT`: `pretty` or `json`.
    pub log_format: LogFormat,
    /// `BOOKTR_WORKERS`: in-process job workers.
    pub workers: usize,
    /// `BOOKTR_CHAPTER_WINDOW`: chapters of a book in flight at once (plans with
    /// priority get twice as many).
    pub chapter_window: usize,
    /// `BOOKTR_FILE_MEMORY_MIB`: the ceiling every limit on reading an upload and rendering a
    /// book follows from (`booktr_formats::Budget`); 64 by default.
    pub file_budget: booktr_formats::Budget,
    /// The translation pipeline's settings: each model's profile chooses its unit of work;
    /// `BOOKTR_MODEL_PROFILE`, `BOOKTR_CHUNK_TOKENS` and `BOOKTR_CHUNK_BLOCKS` set it by hand
    /// (see [`pipeline_config`]).
    pub pipeline: Settings,
    /// `BOOKTR_ADMIN_EMAIL`: the email of the administrator created on first start.
    pub admin_email: Email,
    /// `BOOKTR_WEBHOOK_ALLOW_PRIVATE`: `true` lets webhooks reach plain-http, private and loopback
    /// addresses (local development and tests); `false` (default) keeps the SSRF guard on.
    pub webhook_allow_private: bool,
    /// `BOOKTR_TRUST_FORWARDED_FOR`: `true` when a proxy in front sets `X-Forwarded-For`; its
    /// last address is then the client's for the per-address rate limits.
    pub trust_forwarded_for: bool,
    /// `BOOKTR_QUOTA_<FREE|PRO|BUSINESS>_<BOOKS|WORDS>`: monthly quotas per plan, a number or
    /// `unlimited`; unset ones keep their defaults (docs/operations.md's table).
    pub quotas: Quotas,
    /// `BOOKTR_SMTP_URL` and `BOOKTR_MAIL_FROM`: where notification emails are sent; both or neither.
    /// Without them emails are not sent: written to the data directory's `outbox/` where there
    /// is one, else dropped (see `booktr_outbound::mail`).
    pub smtp: Option<SmtpConfig>,
}

/// An SMTP relay for notification emails.
#[derive(Clone)]
pub struct SmtpConfig {
    /// `smtps://user:pass@host:465` or `smtp://host:587` (STARTTLS is negotiated by the adapter).
    pub url: String,
    /// The sender address, `booktr <noreply@example.com>` or a bare address.
    pub from: String,
}

// By hand: the URL carries the relay's password, which must never reach a log.
impl std::fmt::Debug for SmtpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpConfig")
            .field("url", &"<redacted>")
            .field("from", &self.from)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {name}={value:?}: {reason}")]
pub struct ConfigError {
    pub name: &'static str,
    pub value: String,
    pub reason: String,
}

impl Config {
    pub fn from_env() -> Result<Config, ConfigError> {
        // Empty counts as unset: a deployment template cannot leave a variable out.
        Config::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// Reads configuration through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let get =
            |name: &'static str, default: &str| lookup(name).unwrap_or_else(|| default.to_string());

        let (addr, metrics_addr, public_url) = addresses(&lookup, &get)?;
        let log_format = log_format(&get)?;
        let workers = workers(&get)?;
        let chapter_window = chapter_window(&get)?;
        let file_budget = file_budget(&get)?;
        let pipeline = pipeline_config(&get)?;
        check_model_timeout(&get)?;
        let admin_raw = get("BOOKTR_ADMIN_EMAIL", "admin@localhost");
        let admin_email = Email::parse(&admin_raw)
            .map_err(|e| parse_err("BOOKTR_ADMIN_EMAIL", &admin_raw, e.0))?;
        let flag = |name: &'static str| match get(name, "false").as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(parse_err(name, other, "expected true or false".into())),
        };
        let webhook_allow_private = flag("BOOKTR_WEBHOOK_ALLOW_PRIVATE")?;
        let trust_forwarded_for = flag("BOOKTR_TRUST_FORWARDED_FOR")?;
        let quotas = quotas(&lookup)?;
        let smtp = smtp(&lookup)?;
        Ok(Config {
            addr,
            metrics_addr,
            data_dir: PathBuf::from(get("BOOKTR_DATA_DIR", "./data")),
            public_url: public_url.trim_end_matches('/').to_string(),
            log_filter: get("BOOKTR_LOG", "info"),
            log_format,
            workers,
            chapter_window,
            file_budget,
            pipeline,
            admin_email,
            webhook_allow_private,
            trust_forwarded_for,
            quotas,
            smtp,
        })
    }

    /// Whether users reach the service over TLS (cookies are then marked Secure).
    pub fn is_https(&self) -> bool {
        self.public_url.starts_with("https://")
    }
}

/// A variable whose value does not do.
fn parse_err(name: &'static str, value: &str, reason: String) -> ConfigError {
    ConfigError {
        name,
        value: value.to_string(),
        reason,
    }
}

/// `BOOKTR_ADDR`, `BOOKTR_METRICS_ADDR` and `BOOKTR_PUBLIC_URL` (untrimmed).
fn addresses(
    lookup: &impl Fn(&str) -> Option<String>,
    get: &impl Fn(&'static str, &str) -> String,
) -> Result<(SocketAddr, Option<SocketAddr>, String), ConfigError> {
    let addr_raw = get("BOOKTR_ADDR", "127.0.0.1:8080");
    let addr: SocketAddr = addr_raw
        .parse()
        .map_err(|e| parse_err("BOOKTR_ADDR", &addr_raw, format!("{e}")))?;
    let metrics_addr = match lookup("BOOKTR_METRICS_ADDR").filter(|v| !v.is_empty()) {
        None => None,
        Some(raw) => Some(
            raw.parse::<SocketAddr>()
                .map_err(|e| parse_err("BOOKTR_METRICS_ADDR", &raw, format!("{e}")))?,
        ),
    };
    let public_url = lookup("BOOKTR_PUBLIC_URL").unwrap_or_else(|| format!("http://{addr}"));
    if !(public_url.starts_with("http://") || public_url.starts_with("https://")) {
        return Err(parse_err(
            "BOOKTR_PUBLIC_URL",
            &public_url,
            "must start with http:// or https://".into(),
        ));
    }
    Ok((addr, metrics_addr, public_url))
}

/// `BOOKTR_LOG_FORMAT`.
fn log_format(get: &impl Fn(&'static str, &str) -> String) -> Result<LogFormat, ConfigError> {
    let log_format = match get("BOOKTR_LOG_FORMAT", "pretty").as_str() {
        "pretty" => LogFormat::Pretty,
        "json" => LogFormat::Json,
        other => {
            return Err(parse_err(
                "BOOKTR_LOG_FORMAT",
                other,
                "expected pretty or json".into(),
            ))
        }
    };
    Ok(log_format)
}

/// `BOOKTR_WORKERS`.
fn workers(get: &impl Fn(&'static str, &str) -> String) -> Result<usize, ConfigError> {
    let workers_raw = get("BOOKTR_WORKERS", "2");
    let workers = match workers_raw.parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => n,
        _ => {
            return Err(parse_err(
                "BOOKTR_WORKERS",
                &workers_raw,
                "expected a number from 1 to 64".into(),
            ))
        }
    };
    Ok(workers)
}

/// `BOOKTR_CHAPTER_WINDOW`.
fn chapter_window(get: &impl Fn(&'static str, &str) -> String) -> Result<usize, ConfigError> {
    let window_raw = get(
        "BOOKTR_CHAPTER_WINDOW",
        &crate::translation::DEFAULT_WINDOW.to_string(),
    );
    let chapter_window = match window_raw.parse::<usize>() {
        Ok(n) if (1..=crate::translation::MAX_WINDOW).contains(&n) => n,
        _ => {
            return Err(parse_err(
                "BOOKTR_CHAPTER_WINDOW",
                &window_raw,
                format!(
                    "expected a number from 1 to {}",
                    crate::translation::MAX_WINDOW
                ),
            ))
        }
    };
    Ok(chapter_window)
}

/// `BOOKTR_FILE_MEMORY_MIB`.
fn file_budget(
    get: &impl Fn(&'static str, &str) -> String,
) -> Result<booktr_formats::Budget, ConfigError> {
    let budget_raw = get(
        "BOOKTR_FILE_MEMORY_MIB",
        &booktr_formats::Budget::DEFAULT_MIB.to_string(),
    );
    let file_budget = budget_raw
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(booktr_formats::Budget::of_mib)
        .ok_or_else(|| {
            parse_err(
                "BOOKTR_FILE_MEMORY_MIB",
                &budget_raw,
                format!(
                    "expected a number of MiB from {} to {}",
                    booktr_formats::Budget::MIN_MIB,
                    booktr_formats::Budget::MAX_MIB
                ),
            )
        })?;
    Ok(file_budget)
}

/// `BOOKTR_MODEL_TIMEOUT_SECS`.
fn check_model_timeout(get: &impl Fn(&'static str, &str) -> String) -> Result<(), ConfigError> {
    // Read where the model clients are made (`booktr_translate::providers::choose_model`);
    // checked here so that a bad value stops the start like any other.
    let timeout_raw = get("BOOKTR_MODEL_TIMEOUT_SECS", "180");
    if !timeout_raw
        .trim()
        .parse::<u64>()
        .is_ok_and(|s| (1..=3600).contains(&s))
    {
        return Err(parse_err(
            "BOOKTR_MODEL_TIMEOUT_SECS",
            &timeout_raw,
            "expected a number of seconds from 1 to 3600".to_string(),
        ));
    }
    Ok(())
}

/// `BOOKTR_QUOTA_<FREE|PRO|BUSINESS>_<BOOKS|WORDS>` over the default quotas.
fn quotas(lookup: &impl Fn(&str) -> Option<String>) -> Result<Quotas, ConfigError> {
    let mut quotas = Quotas::default();
    for plan in Plan::ALL {
        let quota = quotas.plan_mut(*plan);
        for (what, slot) in [("BOOKS", &mut quota.books), ("WORDS", &mut quota.words)] {
            let name: &'static str = match (plan, what) {
                (Plan::Free, "BOOKS") => "BOOKTR_QUOTA_FREE_BOOKS",
                (Plan::Free, _) => "BOOKTR_QUOTA_FREE_WORDS",
                (Plan::Pro, "BOOKS") => "BOOKTR_QUOTA_PRO_BOOKS",
                (Plan::Pro, _) => "BOOKTR_QUOTA_PRO_WORDS",
                (Plan::Business, "BOOKS") => "BOOKTR_QUOTA_BUSINESS_BOOKS",
                (Plan::Business, _) => "BOOKTR_QUOTA_BUSINESS_WORDS",
            };
            if let Some(raw) = lookup(name) {
                *slot = match raw.trim() {
                    "unlimited" => None,
                    n => Some(n.parse::<u64>().map_err(|_| {
                        parse_err(name, &raw, "expected a whole number or 'unlimited'".into())
                    })?),
                };
            }
        }
    }
    Ok(quotas)
}

/// `BOOKTR_SMTP_URL` and `BOOKTR_MAIL_FROM`: both or neither.
fn smtp(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<SmtpConfig>, ConfigError> {
    let smtp = match (lookup("BOOKTR_SMTP_URL"), lookup("BOOKTR_MAIL_FROM")) {
        (None, None) => None,
        (Some(url), Some(from)) => {
            if !(url.starts_with("smtp://") || url.starts_with("smtps://")) {
                // Not echoing the value: it may hold the relay's password.
                return Err(parse_err(
                    "BOOKTR_SMTP_URL",
                    "<redacted>",
                    "must start with smtp:// or smtps://".into(),
                ));
            }
            Some(SmtpConfig { url, from })
        }
        (Some(_), None) => {
            return Err(parse_err(
                "BOOKTR_MAIL_FROM",
                "",
                "required when BOOKTR_SMTP_URL is set".into(),
            ))
        }
        (None, Some(from)) => {
            return Err(parse_err(
                "BOOKTR_SMTP_URL",
                &from,
                "required when BOOKTR_MAIL_FROM is set".into(),
            ))
        }
    };
    Ok(smtp)
}

/// The pipeline's settings from the environment. Each model runs with the profile its server
/// calls for (`booktr_translate::profile`: a known model on its provider's server is `hosted`,
/// 2,000 tokens of up to 100 blocks a request; any other server is `small`, one block of at
/// most 400 tokens, which a small local model answers best). Set by hand, over every model:
/// `BOOKTR_MODEL_PROFILE` (`hosted` or `small`), `BOOKTR_CHUNK_TOKENS` (200 to 8,000), the
/// estimated source tokens one request carries, and `BOOKTR_CHUNK_BLOCKS` (1 to 100), the most
/// blocks it carries. `get` answers a variable's value, or the default given it when unset.
pub fn pipeline_config(
    get: &impl Fn(&'static str, &str) -> String,
) -> Result<Settings, ConfigError> {
    let set = |name: &'static str| Some(get(name, "")).filter(|v| !v.trim().is_empty());
    let number = |name: &'static str, range: std::ops::RangeInclusive<u64>, what: &str| {
        let Some(raw) = set(name) else {
            return Ok(None);
        };
        match raw.trim().parse::<u64>() {
            Ok(n) if range.contains(&n) => Ok(Some(n)),
            _ => Err(ConfigError {
                name,
                value: raw,
                reason: format!(
                    "expected a number of {what} from {} to {}",
                    range.start(),
                    range.end()
                ),
            }),
        }
    };
    let profile = match set("BOOKTR_MODEL_PROFILE") {
        None => None,
        Some(raw) => Some(Profile::from_name(&raw).ok_or_else(|| ConfigError {
            name: "BOOKTR_MODEL_PROFILE",
            value: raw,
            reason: "expected hosted or small".into(),
        })?),
    };
    Ok(Settings {
        by_hand: ByHand {
            profile,
            chunk_tokens: number("BOOKTR_CHUNK_TOKENS", 200..=8000, "tokens")?,
            chunk_blocks: number("BOOKTR_CHUNK_BLOCKS", 1..=MAX_CHUNK_BLOCKS as u64, "blocks")?
                .map(|n| n as usize),
        },
        ..Settings::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_serve_on_localhost_with_a_local_data_dir() {
        let config = Config::from_lookup(|_| None).unwrap();
        assert_eq!(config.addr.to_string(), "127.0.0.1:8080");
        assert_eq!(config.public_url, "http://127.0.0.1:8080");
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert!(!config.is_https());
    }

    #[test]
    fn a_requests_tokens_are_the_profiles_unless_set_within_their_range() {
        let chunk = |v: Option<&'static str>| {
            Config::from_lookup(|n| (n == "BOOKTR_CHUNK_TOKENS").then_some(v?.into()))
                .map(|c| c.pipeline.by_hand.chunk_tokens)
        };
        assert_eq!(chunk(None).unwrap(), None);
        assert_eq!(chunk(Some("400")).unwrap(), Some(400));
        for wrong in ["50", "9000", "lots"] {
            let err = chunk(Some(wrong)).unwrap_err();
            assert_eq!(err.name, "BOOKTR_CHUNK_TOKENS");
        }
    }

    #[test]
    fn a_requests_blocks_are_the_profiles_unless_set_within_their_range() {
        let blocks = |v: Option<&'static str>| {
            Config::from_lookup(|n| (n == "BOOKTR_CHUNK_BLOCKS").then_some(v?.into()))
                .map(|c| c.pipeline.by_hand.chunk_blocks)
        };
        assert_eq!(blocks(None).unwrap(), None);
        assert_eq!(blocks(Some("1")).unwrap(), Some(1));
        for wrong in ["0", "101", "one"] {
            let err = blocks(Some(wrong)).unwrap_err();
            assert_eq!(err.name, "BOOKTR_CHUNK_BLOCKS");
        }
    }

    #[test]
    fn a_profile_is_named_for_every_model_or_left_to_each_models_server() {
        let profile = |v: Option<&'static str>| {
            Config::from_lookup(|n| (n == "BOOKTR_MODEL_PROFILE").then_some(v?.into()))
                .map(|c| c.pipeline.by_hand.profile)
        };
        assert_eq!(profile(None).unwrap(), None);
        assert_eq!(profile(Some("small")).unwrap(), Some(Profile::Small));
        assert_eq!(profile(Some("Hosted")).unwrap(), Some(Profile::Hosted));
        assert_eq!(
            profile(Some("large")).unwrap_err().name,
            "BOOKTR_MODEL_PROFILE"
        );
    }

    #[test]
    fn the_file_memory_ceiling_is_64_mib_unless_set_within_its_range() {
        let budget = |v: Option<&'static str>| {
            Config::from_lookup(|n| (n == "BOOKTR_FILE_MEMORY_MIB").then_some(v?.into()))
                .map(|c| c.file_budget)
        };
        assert_eq!(budget(None).unwrap(), booktr_formats::Budget::default());
        assert_eq!(
            budget(Some("256")).unwrap(),
            booktr_formats::Budget::of_mib(256).unwrap()
        );
        for wrong in ["8", "5000", "lots"] {
            assert_eq!(
                budget(Some(wrong)).unwrap_err().name,
                "BOOKTR_FILE_MEMORY_MIB"
            );
        }
    }

    #[test]
    fn invalid_values_name_the_variable() {
        let err =
            Config::from_lookup(|n| (n == "BOOKTR_WORKERS").then(|| "zero".into())).unwrap_err();
        assert_eq!(err.name, "BOOKTR_WORKERS");
        assert!(Config::from_lookup(|n| (n == "BOOKTR_ADDR").then(|| "nope".into())).is_err());
    }

    #[test]
    fn the_webhook_guard_is_on_unless_explicitly_turned_off() {
        assert!(!Config::from_lookup(|_| None).unwrap().webhook_allow_private);
        let on = |v: &'static str| {
            Config::from_lookup(move |n| (n == "BOOKTR_WEBHOOK_ALLOW_PRIVATE").then(|| v.into()))
        };
        assert!(on("true").unwrap().webhook_allow_private);
        assert!(!on("false").unwrap().webhook_allow_private);
        assert_eq!(on("yes").unwrap_err().name, "BOOKTR_WEBHOOK_ALLOW_PRIVATE");
    }

    #[test]
    fn quotas_take_numbers_or_unlimited_per_plan() {
        let config = Config::from_lookup(|n| match n {
            "BOOKTR_QUOTA_FREE_BOOKS" => Some("7".into()),
            "BOOKTR_QUOTA_BUSINESS_WORDS" => Some("unlimited".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(config.quotas.free.books, Some(7));
        assert_eq!(config.quotas.free.words, Quotas::default().free.words);
        assert_eq!(config.quotas.business.words, None);
        let err = Config::from_lookup(|n| (n == "BOOKTR_QUOTA_PRO_WORDS").then(|| "lots".into()))
            .unwrap_err();
        assert_eq!(err.name, "BOOKTR_QUOTA_PRO_WORDS");
    }

    #[test]
    fn smtp_needs_both_the_url_and_the_sender() {
        assert!(Config::from_lookup(|_| None).unwrap().smtp.is_none());
        let both = Config::from_lookup(|n| match n {
            "BOOKTR_SMTP_URL" => Some("smtps://u:secret@mail.example.com:465".into()),
            "BOOKTR_MAIL_FROM" => Some("noreply@example.com".into()),
            _ => None,
        })
        .unwrap();
        let smtp = both.smtp.unwrap();
        assert_eq!(smtp.from, "noreply@example.com");
        assert!(!format!("{smtp:?}").contains("secret"));
        let err = Config::from_lookup(|n| {
            (n == "BOOKTR_SMTP_URL").then(|| "smtps://mail.example.com".into())
        })
        .unwrap_err();
        assert_eq!(err.name, "BOOKTR_MAIL_FROM");
    }
}
