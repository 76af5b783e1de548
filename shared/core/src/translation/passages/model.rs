//! The passages as the owner reviews them: each with its source, its text now, its flags and
//! where the text came from; pages of them, and where a passage is.

use std::collections::BTreeSet;

use booktr_translate::checks::Problem;
use booktr_translate::pipeline::Quality;
use booktr_translate::protocol::Pass;
use chrono::{DateTime, Utc};
use serde_json::Value;

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
    /// The owner's translation memory's: the same source was translated and accepted before
    /// (see `crate::memory`), so no model was asked for it.
    Memory,
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

/// `quality` with the flags of the `edited` blocks dropped: the owner's text is theirs, whatever
/// the model's text was found to be.
pub fn without_edited(quality: &Quality, edited: &BTreeSet<usize>) -> Quality {
    let mut quality = quality.clone();
    quality.flagged = std::mem::take(&mut quality.flagged)
        .into_iter()
        .map(|(problem, blocks)| {
            let kept: Vec<usize> = blocks.into_iter().filter(|b| !edited.contains(b)).collect();
            (problem, kept)
        })
        .filter(|(_, blocks)| !blocks.is_empty())
        .collect();
    quality
}

/// The quality record a chapter item holds: `quality` without the flags of the `edited` blocks,
/// and without the pass of each block (the stored translation keeps those: a long chapter's
/// would outgrow the item).
pub fn chapter_record(quality: &Quality, edited: &BTreeSet<usize>) -> Value {
    let mut quality = without_edited(quality, edited);
    quality.last_pass = None;
    serde_json::to_value(&quality).unwrap_or(Value::Null)
}

/// What the model's text of block `index` was found to be.
pub(super) fn flags_of(quality: &Quality, index: usize) -> Vec<Flag> {
    quality
        .flagged
        .iter()
        .filter(|(_, blocks)| blocks.contains(&index))
        .map(|(problem, _)| Flag {
            kind: problem.name(),
            reason: reason(*problem),
        })
        .collect()
}

/// For people: what a model's answer that failed `problem` was ("the answer was cut off").
pub fn answer_failed(problem: Problem) -> &'static str {
    match problem {
        Problem::Missing => "the answer left the passage out",
        Problem::BrokenMarks => "the answer broke the formatting marks",
        Problem::Untranslated => "the answer was not translated",
        Problem::WrongLanguage => "the answer was in another language",
        Problem::Length => "the answer was far longer or shorter than a translation can be",
        Problem::Refusal => "the model refused, or commented instead of translating",
        Problem::Merged => "the answer ran into the next passage",
        Problem::Repeated => "the answer said the same thing more than once",
        Problem::Truncated => "the answer was cut off",
        Problem::Duplicate => "the answer was the same as another passage's",
        Problem::Numbers => "the answer's numbers are not the original's",
        Problem::Names => "the answer's names are not the original's",
    }
}

pub(super) fn reason(problem: Problem) -> String {
    format!(
        "the model's text was {}; the passage keeps the best text the checks passed, or its source",
        problem.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_passage_leaves_the_quality_record_and_an_emptied_kind_goes() {
        let mut quality = Quality::default();
        quality.flagged.insert(Problem::Untranslated, vec![1, 4]);
        quality.flagged.insert(Problem::Refusal, vec![4]);
        let edited = BTreeSet::from([4]);
        let now = without_edited(&quality, &edited);
        assert_eq!(now.flagged.len(), 1);
        assert_eq!(now.flagged[&Problem::Untranslated], vec![1]);
        assert_eq!(flags_of(&quality, 4).len(), 2);
        assert_eq!(flags_of(&now, 4), Vec::new());
        assert_eq!(flags_of(&now, 1)[0].kind, "untranslated");
    }
}
