//! This month's usage against the plan's limits.

use booktr_core::types::Plan;
use booktr_core::usage as domain;
use chrono::{DateTime, Utc};

use super::wire;

wire! {
    /// One counter of the report.
    pub struct Meter from domain::Meter {
        pub used: u64,
        pub limit: Option<u64>,
        pub remaining: Option<u64>,
        /// Of the limit, 0-100 (0 when unlimited).
        pub percentage: f64,
    }
}

wire! {
    /// The spec's Usage.
    #[serde(rename_all = "camelCase")]
    pub struct UsageReport from domain::UsageReport {
        #[schema(value_type = super::types::Plan)]
        pub plan: Plan,
        pub plan_name: String,
        pub books: Meter,
        pub words: Meter,
        pub allowed_models: Vec<String>,
        pub priority: bool,
        pub reset_date: DateTime<Utc>,
    }
}
