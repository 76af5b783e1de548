//! The book's term list as its owner reads and changes it.

use booktr_core::translation as domain;
use booktr_translate::terms;
use serde::Deserialize;

use super::{wire, wire_enum};

wire_enum! {
    /// Where an entry came from: `model` (the run's term pass), `glossary` (the glossary the run
    /// was started with, which wins over the list), `owner` (set by the book's owner, which wins
    /// over the model).
    #[serde(rename_all = "lowercase")]
    pub enum TermOrigin from terms::TermOrigin { Model, Glossary, Owner }
}

wire! {
    /// A term the book's chapters keep to.
    #[serde(rename_all = "camelCase")]
    pub struct BookTerm from terms::TermEntry {
        /// The term as the book writes it.
        pub source: String,
        /// Its rendering in every chapter.
        pub target: String,
        pub origin: TermOrigin,
        /// How often the book has it, when the term pass counted it (null for the glossary's
        /// entries and the owner's own terms).
        pub occurrences: Option<u32>,
    }
}

wire! {
    /// The terms the book's chapters enforce.
    #[serde(rename_all = "camelCase")]
    pub struct BookTermList from domain::BookTermList {
        /// Whether the term pass of the book's run has stored its list: until then only the
        /// glossary's entries are listed, and the list cannot be changed.
        pub ready: bool,
        /// The glossary's entries, then the list's.
        pub terms: Vec<BookTerm>,
    }
}

/// A rendering the owner sets.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TermRendering {
    /// The term as the book writes it (1 to 200 characters); a term not on the list is added.
    pub source: String,
    /// Its rendering (1 to 200 characters); the term itself binds it unchanged.
    pub target: String,
}

/// The owner's changes to the list; the terms not named are left as they are.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TermListChange {
    /// Renderings to set: each becomes an `owner` entry.
    #[serde(default)]
    pub terms: Vec<TermRendering>,
    /// Terms to take off the list (their chapters translate them freely); one not on the list
    /// is no change.
    #[serde(default)]
    pub remove: Vec<String>,
}

impl From<TermListChange> for domain::TermListChanges {
    fn from(change: TermListChange) -> Self {
        domain::TermListChanges {
            set: change
                .terms
                .into_iter()
                .map(|t| (t.source, t.target))
                .collect(),
            remove: change.remove,
        }
    }
}
