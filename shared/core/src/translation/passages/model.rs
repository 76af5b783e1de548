//! The passages as the owner reviews them: each with its source, its text now, its flags and
//! where the text came from; pages of them, and where a passage is.

use booktr_translate::protocol::Pass;
use chrono::{DateTime, Utc};

/// Passages on one page unless the caller asks for fewer or more.
pub const DEFAULT_PAGE: usize = 50;
/// The most passages on one page.
pub const MAX_PAGE: usize = 200;

/// One passage of a chapter.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    pub chapter: u32,
    /// The block's place in its chapter, from 0.
    pub index: u32,
    /// The source text, in the inline markup every passage is written in.
    pub source: String,
    /// The text the book holds now; None while the chapter is not translated.
    pub text: Option<String>,
    /// Why the model's text is not to be trusted; none for the owner's text.
    pub flags: Vec<Flag>,
    /// Where `text` came from; None while there is none.
    pub origin: Option<Origin>,
    /// How far the model's text can be trusted, 0 to 100 (the quality record's); None for the
    /// owner's text, and for a translation made before confidence was recorded.
    pub confidence: Option<u8>,
    /// The version a change of the passage must name: 0 until its first change.
    pub version: u64,
    /// Changes an undo can go back through.
    pub undoable: u32,
}

/// A check the model's text failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// The check's name (`untranslated`, `wrongLanguage`, `brokenMarks` ...).
    pub kind: &'static str,
    /// For people.
    pub reason: String,
}

/// Where a passage's text came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// The model's, as the pass that last changed it left it (None on a translation made
    /// before passes were recorded per passage).
    Model { pass: Option<Pass> },
    /// The owner's edit.
    Edited { at: DateTime<Utc>, by: String },
    /// A re-translation the owner accepted: `model`'s text as `pass` left it, asked for with
    /// `instruction`, from proposal `proposal`. The owner's text from then on, like an edit.
    Retranslated {
        at: DateTime<Utc>,
        by: String,
        model: String,
        pass: Pass,
        instruction: Option<String>,
        proposal: String,
        /// The checks the text had failed when the owner accepted it knowingly; empty for a
        /// text the checks passed.
        accepted_with: Vec<Flag>,
    },
    /// The model's text, kept as it is by the owner (its flags cleared). The owner's text from
    /// then on, like an edit.
    Kept { at: DateTime<Utc>, by: String },
}

/// A page of a chapter's passages.
#[derive(Debug, Clone, PartialEq)]
pub struct PassagePage {
    pub chapter: u32,
    /// Passages in the chapter.
    pub total: u32,
    pub offset: u32,
    pub passages: Vec<Passage>,
}

/// A page of the book's flagged passages, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub struct FlaggedPage {
    /// Flagged passages in the book.
    pub total: u32,
    pub offset: u32,
    pub passages: Vec<Passage>,
}

/// Which passage: its chapter's number and its place in the chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageAt {
    pub chapter: u32,
    pub index: u32,
}
