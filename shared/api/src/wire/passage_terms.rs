//! Terms from edits: the term changes an edit suggests, a preview of a new rendering across the
//! book, and what applying it did.

use booktr_core::translation::passages as domain;
use serde::{Deserialize, Serialize};

use super::passages::Passage;
use super::{wire, Mirror};

wire! {
    /// A term of the book whose rendering an edit changed.
    #[serde(rename_all = "camelCase")]
    pub struct TermChange from domain::TermChange {
        /// The term in the source language.
        pub source: String,
        /// The rendering the passage had.
        pub from: String,
        /// The rendering the edit uses.
        pub to: String,
    }
}

/// The passage after an edit, with the term changes the edit suggests applying everywhere.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditedPassage {
    #[serde(flatten)]
    pub passage: Passage,
    /// The book's terms (its glossary's and its term list's) whose source is in the passage's
    /// source and whose rendering the edit replaced; empty when there are none.
    pub term_changes: Vec<TermChange>,
}

wire! {
    /// A passage: its chapter's number and its place in the chapter.
    #[serde(rename_all = "camelCase")]
    pub struct PassageRef from domain::PassageAt {
        pub chapter: u32,
        pub index: u32,
    }
}

wire! {
    /// A passage a new rendering would change.
    #[serde(rename_all = "camelCase")]
    pub struct TermPassage from domain::TermPassage {
        pub chapter: u32,
        pub index: u32,
        /// The version an apply names for it.
        pub version: u64,
        /// Its text now (inline markup).
        pub text: String,
        /// Its text with the new rendering.
        pub after: String,
    }
}

wire! {
    /// A page of a new rendering's preview.
    #[serde(rename_all = "camelCase")]
    pub struct TermPreview from domain::TermPreview {
        /// Passages holding the model's text that would change.
        pub passages: Vec<TermPassage>,
        /// Passages holding the owner's text that hold the term: changed only when an apply
        /// names them.
        pub edited: Vec<TermPassage>,
        /// Where the next page starts (`start` of the next request); null once the whole book
        /// is read.
        pub next: Option<PassageRef>,
    }
}

wire! {
    /// The book's glossary, which holds the term now.
    #[serde(rename_all = "camelCase")]
    pub struct TermsGlossary from domain::TermsGlossary {
        pub id: String,
        pub name: String,
        /// Whether the apply made it (the book had none); later runs of the book use it.
        pub created: bool,
    }
}

/// A passage an apply left as it was, and why.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TermSkipped {
    pub chapter: u32,
    pub index: u32,
    /// `version_conflict` (changed since the version named; `passage` is it now), `not_found`,
    /// `term_absent` (its source has not the term, or its text not the rendering), `bad_request`,
    /// `marks_mismatch`, `text_too_long` or `invalid_character` (its text with the new rendering
    /// is not one a passage can take, as an edit's answer would say).
    pub error: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passage: Option<Passage>,
}

impl Mirror<domain::TermSkipped> for TermSkipped {
    fn mirror(from: domain::TermSkipped) -> Self {
        let domain::TermSkipped {
            chapter,
            index,
            reason,
        } = from;
        let (error, message, passage) = match reason {
            domain::Skip::Changed(now) => (
                "version_conflict",
                format!("the passage changed since; it is at version {}", now.version),
                Some(Passage::from(*now)),
            ),
            domain::Skip::NotFound => ("not_found", "no such passage".to_string(), None),
            domain::Skip::NotHeld => (
                "term_absent",
                "the passage does not hold the term: its source has not the term, or its text not the rendering".to_string(),
                None,
            ),
            domain::Skip::Refused(e @ domain::PassageError::Marks(_)) => {
                ("marks_mismatch", e.to_string(), None)
            }
            domain::Skip::Refused(e @ domain::PassageError::TooLong(_)) => {
                ("text_too_long", e.to_string(), None)
            }
            domain::Skip::Refused(e @ domain::PassageError::Characters(_)) => {
                ("invalid_character", e.to_string(), None)
            }
            domain::Skip::Refused(e) => ("bad_request", e.to_string(), None),
        };
        TermSkipped {
            chapter,
            index,
            error,
            message,
            passage,
        }
    }
}

wire! {
    /// What an apply did.
    #[serde(rename_all = "camelCase")]
    pub struct TermApplied from domain::TermApplied {
        /// The passages changed, as they are now (each an edit of the owner's).
        pub applied: Vec<Passage>,
        /// The passages left as they were.
        pub skipped: Vec<TermSkipped>,
        /// The book's glossary, which holds the term now; null when no passage took the new
        /// rendering, and the glossary was not written.
        pub glossary: Option<TermsGlossary>,
    }
}

/// A passage an apply names, with the version its preview showed.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedPassage {
    pub chapter: u32,
    pub index: u32,
    pub version: u64,
}
