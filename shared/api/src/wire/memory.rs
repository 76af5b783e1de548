//! The translation memory: its pairs, their entries, and what an import did.

use booktr_core::memory as domain;
use chrono::{DateTime, Utc};

use super::{wire, Mirror};

wire! {
    /// A language pair: what the passages were translated from and into.
    pub struct Pair from domain::Pair {
        pub source: String,
        pub target: String,
    }
}

wire! {
    /// A pair of the caller's memory, counted.
    pub struct PairSummary from domain::PairSummary {
        #[serde(flatten)]
        pub pair: Pair,
        /// Passages the pair holds.
        pub entries: u64,
        /// The most it holds: once full, passages new to it are not remembered (a passage it
        /// holds is still replaced by a later acceptance) until entries are deleted.
        pub limit: u64,
        /// Passages new to the pair that were not remembered because it was full.
        pub refused: u64,
    }
}

wire! {
    /// One remembered passage.
    #[serde(rename_all = "camelCase")]
    pub struct Entry from domain::Entry {
        /// Its key: the SHA-256 of its source exactly as written (text and marks), 32 hex digits.
        pub id: String,
        /// The source and its accepted translation, in the book's inline markup.
        pub source: String,
        pub target: String,
        /// Where the text came from: `model` (a translation as a run stored it), `edit` (the
        /// owner's own text, or the model's they kept), `proposal` (a re-translation they
        /// accepted) or `import` (a TMX file).
        #[schema(value_type = String)]
        pub origin: Origin,
        /// The book it was accepted in; null for an imported one.
        pub book_id: Option<String>,
        pub updated_at: DateTime<Utc>,
    }
}

/// Where an entry's text came from, by name.
#[derive(serde::Serialize)]
#[serde(transparent)]
pub struct Origin(&'static str);

impl Mirror<domain::Origin> for Origin {
    fn mirror(from: domain::Origin) -> Self {
        Origin(from.name())
    }
}

wire! {
    /// A page of a pair's entries, newest first.
    pub struct EntryPage from domain::EntryPage {
        pub pair: PairSummary,
        pub offset: u32,
        pub entries: Vec<Entry>,
    }
}

wire! {
    /// A pair with every entry of it (the account export).
    pub struct PairMemory from domain::PairMemory {
        pub pair: PairSummary,
        pub entries: Vec<Entry>,
    }
}

wire! {
    /// What an import did with the file's units.
    pub struct Imported from domain::Imported {
        #[serde(flatten)]
        pub recorded: Recorded,
        /// Units without a segment in each of the pair's languages.
        pub skipped: u32,
    }
}

wire! {
    /// Passages remembered and refused.
    pub struct Recorded from domain::Recorded {
        /// New entries and entries replaced.
        pub remembered: u32,
        /// Passages not remembered: the pair full, a text longer than 10,000 characters, empty,
        /// with characters a book cannot hold, or without its source's marks.
        pub refused: u32,
    }
}
