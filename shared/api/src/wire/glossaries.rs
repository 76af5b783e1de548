//! Glossaries and their entries.

use booktr_core::glossaries as domain;
use chrono::{DateTime, Utc};

use super::wire;

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Glossary from domain::Glossary {
        pub id: String,
        pub name: String,
        pub description: Option<String>,
        pub entry_count: usize,
        pub entries: Vec<Entry>,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
    }
}

wire! {
    pub struct Entry from domain::Entry {
        pub id: String,
        pub source: String,
        pub target: String,
        pub context: Option<String>,
    }
}

wire! {
    /// An entry as a request gives it: on update, `id` names an existing entry and omitted fields
    /// keep their values.
    #[serde(deny_unknown_fields)]
    pub struct EntryInput into domain::EntryInput {
        pub id: Option<String>,
        pub source: Option<String>,
        pub target: Option<String>,
        pub context: Option<String>,
    }
}
