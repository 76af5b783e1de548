//! What the service measures, recorded through the `metrics` facade. The domain only records;
//! the process chooses where the figures go, once, at start: CloudWatch embedded-metric-format
//! log lines on Lambda (the dashboard and alarms in `template.yaml` read them), a Prometheus
//! scrape endpoint in `booktr serve` (`BOOKTR_METRICS_ADDR`), nowhere when no recorder is set.
//!
//! Names are snake_case without a unit suffix, the unit is declared in [`describe`]; labels
//! are few and bounded (a model's name, a pass, a class), since each value is a new series.

use std::time::Duration;

use booktr_translate::protocol::Pass;
use metrics::{
    counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram, Unit,
};

pub use booktr_translate::budget::{BUDGET_IN_FLIGHT, BUDGET_LIMIT};
pub use booktr_translate::providers::{MODEL_ERRORS, MODEL_REQUESTS};

pub const BOOKS_STARTED: &str = "books_started";
pub const BOOKS_COMPLETED: &str = "books_completed";
pub const BOOKS_FAILED: &str = "books_failed";
/// From a run's start to its last chapter translated.
pub const BOOK_SECONDS: &str = "book_translation_seconds";
pub const CHAPTERS_TRANSLATED: &str = "chapters_translated";
/// One chapter's passes, in one try.
pub const CHAPTER_SECONDS: &str = "chapter_seconds";
pub const PASS_SECONDS: &str = "pass_seconds";
pub const TOKENS_IN: &str = "model_tokens_in";
pub const TOKENS_OUT: &str = "model_tokens_out";
/// Counted in millionths of a dollar: counters are whole numbers.
pub const COST_MICROS: &str = "model_cost_micro_usd";
pub const QUEUE_DEPTH: &str = "queue_depth";
pub const QUEUE_OLDEST_AGE: &str = "queue_oldest_age_seconds";
pub const WEBHOOK_DELIVERIES: &str = "webhook_deliveries";
pub const RATE_LIMIT_REFUSALS: &str = "rate_limit_refusals";

/// Every metric the service records.
pub const ALL: [&str; 18] = [
    BOOKS_STARTED,
    BOOKS_COMPLETED,
    BOOKS_FAILED,
    BOOK_SECONDS,
    CHAPTERS_TRANSLATED,
    CHAPTER_SECONDS,
    PASS_SECONDS,
    TOKENS_IN,
    TOKENS_OUT,
    COST_MICROS,
    MODEL_REQUESTS,
    MODEL_ERRORS,
    BUDGET_LIMIT,
    BUDGET_IN_FLIGHT,
    QUEUE_DEPTH,
    QUEUE_OLDEST_AGE,
    WEBHOOK_DELIVERIES,
    RATE_LIMIT_REFUSALS,
];

/// Units and descriptions, for exporters that show them; call once after installing one.
pub fn describe() {
    describe_counter!(BOOKS_STARTED, Unit::Count, "translation runs started");
    describe_counter!(
        BOOKS_COMPLETED,
        Unit::Count,
        "books with every chapter translated"
    );
    describe_counter!(BOOKS_FAILED, Unit::Count, "translation runs ended in ERROR");
    describe_histogram!(
        BOOK_SECONDS,
        Unit::Seconds,
        "run start to last chapter translated"
    );
    describe_counter!(CHAPTERS_TRANSLATED, Unit::Count, "chapters translated");
    describe_histogram!(
        CHAPTER_SECONDS,
        Unit::Seconds,
        "one chapter's passes in one try"
    );
    describe_histogram!(
        PASS_SECONDS,
        Unit::Seconds,
        "one pass of one chapter, by pass"
    );
    describe_counter!(TOKENS_IN, Unit::Count, "prompt tokens, by model");
    describe_counter!(TOKENS_OUT, Unit::Count, "completion tokens, by model");
    describe_counter!(
        COST_MICROS,
        Unit::Count,
        "cost in millionths of a dollar, by model"
    );
    describe_counter!(MODEL_REQUESTS, Unit::Count, "requests to model providers");
    describe_counter!(MODEL_ERRORS, Unit::Count, "failed model requests, by class");
    describe_gauge!(
        BUDGET_LIMIT,
        Unit::Count,
        "requests a provider key's budget lets in flight, by host"
    );
    describe_gauge!(
        BUDGET_IN_FLIGHT,
        Unit::Count,
        "requests in flight on a provider key, by host"
    );
    describe_gauge!(QUEUE_DEPTH, Unit::Count, "jobs waiting, by queue");
    describe_gauge!(
        QUEUE_OLDEST_AGE,
        Unit::Seconds,
        "age of the oldest waiting job, by queue"
    );
    describe_counter!(
        WEBHOOK_DELIVERIES,
        Unit::Count,
        "webhook delivery tries, by outcome"
    );
    describe_counter!(
        RATE_LIMIT_REFUSALS,
        Unit::Count,
        "requests refused with 429, by limit"
    );
}

pub fn book_started() {
    counter!(BOOKS_STARTED).increment(1);
}

/// `took`: from the run's start, when known.
pub fn book_completed(took: Option<Duration>) {
    counter!(BOOKS_COMPLETED).increment(1);
    if let Some(took) = took {
        histogram!(BOOK_SECONDS).record(took.as_secs_f64());
    }
}

pub fn book_failed() {
    counter!(BOOKS_FAILED).increment(1);
}

pub fn chapter_translated(took: Duration) {
    counter!(CHAPTERS_TRANSLATED).increment(1);
    histogram!(CHAPTER_SECONDS).record(took.as_secs_f64());
}

pub fn pass_finished(pass: Pass, took: Duration) {
    histogram!(PASS_SECONDS, "pass" => pass.task()).record(took.as_secs_f64());
}

/// What one pass (or the term pass) used of a model.
pub fn model_used(model: &str, input_tokens: u64, output_tokens: u64, cost_micros: u64) {
    let model = model.to_string();
    counter!(TOKENS_IN, "model" => model.clone()).increment(input_tokens);
    counter!(TOKENS_OUT, "model" => model.clone()).increment(output_tokens);
    counter!(COST_MICROS, "model" => model).increment(cost_micros);
}

pub fn queue_sampled(queue: &'static str, depth: u64, oldest: Option<Duration>) {
    gauge!(QUEUE_DEPTH, "queue" => queue).set(depth as f64);
    let age = oldest.map_or(0.0, |d| d.as_secs_f64());
    gauge!(QUEUE_OLDEST_AGE, "queue" => queue).set(age);
}

/// `outcome`: `delivered`, `retrying` or `failed`.
pub fn webhook_delivery(outcome: &'static str) {
    counter!(WEBHOOK_DELIVERIES, "outcome" => outcome).increment(1);
}

/// `limit`: `requests` (per caller), `password` (password attempts from one address) or
/// `sign_in` (attempts at one account).
pub fn rate_limit_refused(limit: &'static str) {
    counter!(RATE_LIMIT_REFUSALS, "limit" => limit).increment(1);
}
