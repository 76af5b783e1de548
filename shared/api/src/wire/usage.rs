//! This month's usage against the plan's limits, and what the caller's edits keep stored.

use booktr_core::books::record as books;
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

wire! {
    /// What the owner's edits of their books' passages keep stored: each passage keeps its last
    /// 20 changes (for undo), each at most 4 times its source's length.
    pub struct StoredEdits from books::StoredEdits {
        /// Changes kept, across the caller's books.
        pub versions: u64,
        /// The bytes of their texts (UTF-8).
        pub bytes: u64,
    }
}

/// `GET /api/usage`'s answer: the spec's Usage, and what the caller's edits keep stored.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageAnswer {
    #[serde(flatten)]
    pub report: UsageReport,
    pub stored_edits: StoredEdits,
}
