//! What a chapter's translation starts from and ends with.

use std::collections::{BTreeMap, HashMap};

use booktr_formats::manuscript::Block;

use crate::checks::Problem;
use crate::glossary::GlossaryEntry;
use crate::ladder::Ladder;
use crate::memory::Remembered;

use super::quality::*;

pub struct ChapterInput<'a> {
    pub blocks: &'a [Block],
    pub source_lang: &'a str,
    pub target_lang: &'a str,
    pub glossary: &'a [GlossaryEntry],
    /// Names and terms chosen in earlier chapters: source -> translation.
    pub ledger: &'a HashMap<String, String>,
    /// How the repair ladder's rungs have done in this run (shared by its chapters).
    pub ladder: &'a Ladder,
    /// The book's owner's wish for this translation, said to every request of every pass
    /// (`protocol::PromptContext::instruction`); None for a book's run.
    pub instruction: Option<&'a str>,
    /// What the owner's translation memory holds for the blocks: the blocks it supplies are
    /// taken as they are, without a model call (`memory::NOTHING` for none).
    pub memory: &'a Remembered,
}

pub struct ChapterOutput {
    pub blocks: Vec<Block>,
    pub quality: Quality,
    /// Terms the review reported, for the book's ledger.
    pub terms: Vec<(String, String)>,
    /// For each block the first pass could not get a passing answer for (it holds its source),
    /// the last answer the model gave for it and the checks that answer failed: what an owner
    /// may look at, and take knowingly. A block whose every answer was empty (left out,
    /// refused) has none.
    pub rejected: BTreeMap<usize, Rejected>,
}

/// The last answer a block was given and refused for (see [`ChapterOutput::rejected`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The block's text with that answer where it failed (a block sent in parts keeps the
    /// parts that passed).
    pub text: String,
    /// The checks it failed.
    pub problems: Vec<Problem>,
}
