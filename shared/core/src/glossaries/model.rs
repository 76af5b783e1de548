//! What the glossaries speak: a glossary, its entries, an entry as given, and their bounds.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub const MAX_ENTRIES: usize = 2000;
pub(super) const MAX_NAME: usize = 200;
pub(super) const MAX_TERM: usize = 500;
pub(super) const MAX_CONTEXT: usize = 1000;

#[derive(Debug, Clone, PartialEq)]
pub struct Glossary {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub entry_count: usize,
    pub entries: Vec<Entry>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub source: String,
    pub target: String,
    pub context: Option<String>,
}

/// An entry as a request gives it: on update, `id` names an existing entry and omitted fields
/// keep their values.
#[derive(Debug, Clone, Default)]
pub struct EntryInput {
    pub id: Option<String>,
    pub source: Option<String>,
    pub target: Option<String>,
    pub context: Option<String>,
}
