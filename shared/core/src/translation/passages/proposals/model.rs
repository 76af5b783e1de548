//! A proposal and what asking for one takes.

use std::collections::HashMap;

use booktr_formats::manuscript::Block;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::ladder::Ladder;
use booktr_translate::pipeline::{ChapterInput, PassUsage};
use booktr_translate::protocol::Pass;
use chrono::{DateTime, Utc};

use super::record::{ProposalRecord, ProposalStatus, ProposalTexts};

use crate::books::Book;
use crate::translation::passages::model::{Flag, PassageAt};

/// What a re-translation is asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    Passage(PassageAt),
    Chapter(u32),
}

/// What the owner asks of a re-translation.
#[derive(Debug, Clone, Default)]
pub struct RetranslateRequest {
    /// Said to the model in every prompt; at most [`MAX_INSTRUCTION_CHARS`] characters.
    pub instruction: Option<String>,
    /// One of the plan's models; the book's model by default.
    pub model: Option<String>,
    /// Translate the owner's passages (edited, accepted, kept) too.
    pub include_edited: bool,
}

/// A proposal as the owner sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub id: String,
    pub book_id: String,
    pub chapter: u32,
    /// The passage, or None for the chapter.
    pub index: Option<u32>,
    pub instruction: Option<String>,
    pub model: String,
    /// What answered; None until the job ran.
    pub engine: Option<String>,
    pub include_edited: bool,
    pub status: ProposalStatus,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Charged to the month's quota (given back when it failed).
    pub words: u64,
    pub usage: PassUsage,
    /// US dollars at the list price of what answered.
    pub cost: f64,
    /// The owner's passages it leaves alone.
    pub left_alone: Vec<u32>,
    /// How many passages it holds: those it translates while pending, then those whose text
    /// it changes (a passage asked for alone is always there).
    pub passage_count: u32,
    /// Its passages; empty in a list of proposals and while pending.
    pub passages: Vec<ProposedText>,
}

/// One passage of a proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedText {
    pub chapter: u32,
    pub index: u32,
    /// The passage's version when the proposal was asked for: accepting it needs the passage
    /// still at it.
    pub version: u64,
    /// The passage's text then.
    pub current: Option<String>,
    pub proposed: String,
    /// What the checks found wrong with the proposed text: accepting all leaves a flagged one
    /// out (it may be the source, untranslated).
    pub flags: Vec<Flag>,
    /// The pass that last changed the proposed text.
    pub pass: Pass,
    pub accepted: bool,
    /// Every answer the model gave failed a check: the proposed text is the last one, and
    /// `flags` say what it failed. Accepting it by name takes it knowingly (the passage's
    /// origin keeps the checks it failed).
    pub rejected: bool,
}

/// What a re-translation would use and cost, before anything is spent.
#[derive(Debug, Clone, PartialEq)]
pub struct RetranslationQuote {
    pub model: String,
    /// What would translate (see [`crate::translation::Quote::engine`]).
    pub engine: Option<String>,
    pub chapter: u32,
    /// The passages it would translate.
    pub passages: u32,
    pub left_alone: Vec<u32>,
    /// Charged to the month's quota.
    pub words: u64,
    /// Translate, review, polish.
    pub passes: [PassUsage; 3],
    pub total: PassUsage,
    /// US dollars at the list price of what would translate.
    pub estimated_cost: f64,
}

/// What a proposal's job works from ([`Translations::proposal_work`]).
pub struct ProposalWork {
    pub book: Book,
    pub(super) record: ProposalRecord,
    pub(super) texts: ProposalTexts,
    /// The sources of the passages to translate, in the order of `texts`.
    pub blocks: Vec<Block>,
    /// The glossary every pass enforces: the run's, then the book's terms.
    pub glossary: Vec<GlossaryEntry>,
}

impl ProposalWork {
    pub fn model(&self) -> &str {
        &self.record.model
    }

    pub fn instruction(&self) -> Option<&str> {
        self.record.instruction.as_deref()
    }

    /// The repair ladder's record for this proposal's passes.
    pub fn ladder(&self, engine: &str) -> std::sync::Arc<Ladder> {
        Ladder::for_run(
            engine,
            &format!("{}#proposal#{}", self.book.id, self.record.id),
        )
    }

    /// The pipeline's input over [`ProposalWork::blocks`].
    pub fn input<'a>(
        &'a self,
        ladder: &'a Ladder,
        ledger: &'a HashMap<String, String>,
    ) -> ChapterInput<'a> {
        ChapterInput {
            blocks: &self.blocks,
            source_lang: &self.book.original_lang,
            target_lang: &self.book.target_lang,
            glossary: &self.glossary,
            ledger,
            ladder,
            instruction: self.instruction(),
            memory: &booktr_translate::memory::NOTHING,
        }
    }
}
