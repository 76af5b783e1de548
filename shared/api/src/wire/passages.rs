//! A book's passages as the owner reviews and edits them.

use booktr_core::translation::passages as domain;
use chrono::{DateTime, Utc};

use super::{wire, Mirror};

wire! {
    /// One passage (a block the book is translated in): its source, its text now, what the
    /// checks found in the model's text, and where the text came from. Text is inline markup
    /// (`<i>`, `<b>`, `<a href>`, `<ref id/>` ...; docs/api.md).
    #[serde(rename_all = "camelCase")]
    pub struct Passage from domain::Passage {
        pub chapter: u32,
        /// The passage's place in its chapter, from 0.
        pub index: u32,
        pub source: String,
        /// Null while the chapter is not translated.
        pub text: Option<String>,
        /// Why the model's text is not to be trusted; empty for the owner's text.
        pub flags: Vec<Flag>,
        /// Null while there is no text.
        pub origin: Option<Origin>,
        /// How far the model's text can be trusted, 0 to 100 (under 70 is low: the review lists
        /// it); null for the owner's text, and for a translation made before it was recorded.
        pub confidence: Option<u8>,
        /// The version a change of the passage names (`409` when it is not the passage's now).
        pub version: u64,
        /// Changes an undo can go back through.
        pub undoable: u32,
    }
}

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Flag from domain::Flag {
        /// `missing`, `brokenMarks`, `untranslated`, `wrongLanguage`, `length`, `refusal`,
        /// `merged`, `repeated`, `truncated`, `duplicate`, `numbers`, `names`.
        pub kind: &'static str,
        pub reason: String,
    }
}

/// Where a passage's text came from: `model` (with the pass that last changed it: `translate`,
/// `review` or `polish`; null for a translation made before that was recorded), or the owner's
/// text, with when and by whom: `edited` (written by them), `retranslated` (a re-translation's
/// text they accepted, with its model, pass, instruction and proposal) or `kept` (the model's
/// text they kept as it was, clearing its flags). The owner's text is kept through every later
/// run until it is reset. `memory`: the owner's translation memory supplied it (the same source
/// was translated and accepted before; no model was asked).
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    /// `model`, `memory`, `edited`, `retranslated` or `kept`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
    /// The user who made the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The model of an accepted re-translation (what answered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The instruction an accepted re-translation was asked with, as the owner gave it: text to
    /// show as it is, never markup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// The proposal an accepted re-translation came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// The checks an accepted re-translation's text had failed, when the owner accepted it
    /// knowingly (every answer had failed one); absent for a text the checks passed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_with: Vec<Flag>,
}

impl Mirror<domain::Origin> for Origin {
    fn mirror(from: domain::Origin) -> Self {
        let owners = |kind, at, by| Origin {
            kind,
            pass: None,
            at: Some(at),
            by: Some(by),
            model: None,
            instruction: None,
            proposal: None,
            accepted_with: Vec::new(),
        };
        match from {
            domain::Origin::Model { pass } => Origin {
                kind: "model",
                pass: pass.map(|p| p.task()),
                at: None,
                by: None,
                model: None,
                instruction: None,
                proposal: None,
                accepted_with: Vec::new(),
            },
            domain::Origin::Memory => Origin {
                kind: "memory",
                pass: None,
                at: None,
                by: None,
                model: None,
                instruction: None,
                proposal: None,
                accepted_with: Vec::new(),
            },
            domain::Origin::Edited { at, by } => owners("edited", at, by),
            domain::Origin::Kept { at, by } => owners("kept", at, by),
            domain::Origin::Retranslated {
                at,
                by,
                model,
                pass,
                instruction,
                proposal,
                accepted_with,
            } => Origin {
                pass: Some(pass.task()),
                model: Some(model),
                instruction,
                proposal: Some(proposal),
                accepted_with: Mirror::mirror(accepted_with),
                ..owners("retranslated", at, by)
            },
        }
    }
}

wire! {
    /// A page of a chapter's passages.
    #[serde(rename_all = "camelCase")]
    pub struct PassagePage from domain::PassagePage {
        pub chapter: u32,
        /// Passages in the chapter.
        pub total: u32,
        pub offset: u32,
        pub passages: Vec<Passage>,
    }
}

wire! {
    /// A page of the book's flagged passages, in reading order.
    #[serde(rename_all = "camelCase")]
    pub struct FlaggedPage from domain::FlaggedPage {
        /// Flagged passages in the book.
        pub total: u32,
        pub offset: u32,
        pub passages: Vec<Passage>,
    }
}
