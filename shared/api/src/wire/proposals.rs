//! Re-translations of a passage or a chapter, as proposals the owner accepts or discards.

use booktr_core::translation::passages::proposals as domain;
use chrono::{DateTime, Utc};

use super::passages::Flag;
use super::translation::PassUsage;
use super::{wire, Mirror};

/// Where a proposal stands: `pending` (its job has not finished), `ready` (to accept),
/// `failed` (`error` says why; its words were given back) or `discarded`.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProposalStatus {
    Pending,
    Ready,
    Failed,
    Discarded,
}

impl Mirror<domain::ProposalStatus> for ProposalStatus {
    fn mirror(from: domain::ProposalStatus) -> Self {
        match from {
            domain::ProposalStatus::Pending => ProposalStatus::Pending,
            domain::ProposalStatus::Ready => ProposalStatus::Ready,
            domain::ProposalStatus::Failed => ProposalStatus::Failed,
            domain::ProposalStatus::Discarded => ProposalStatus::Discarded,
        }
    }
}

wire! {
    /// A re-translation of a passage or a chapter: what was asked, where it stands, what it
    /// used, and (once ready, from `GET /api/books/{id}/proposals/{proposalId}`) its passages.
    #[serde(rename_all = "camelCase")]
    pub struct Proposal from domain::Proposal {
        pub id: String,
        pub book_id: String,
        pub chapter: u32,
        /// The passage asked for; null for the whole chapter.
        pub index: Option<u32>,
        /// The owner's instruction, as they gave it: text to show as it is, never markup.
        pub instruction: Option<String>,
        pub model: String,
        /// What answered (`offline-pseudo` when no provider key stands behind the model); null
        /// until its job ran.
        pub engine: Option<String>,
        pub include_edited: bool,
        pub status: ProposalStatus,
        /// Why it failed.
        pub error: Option<String>,
        pub created_at: DateTime<Utc>,
        pub finished_at: Option<DateTime<Utc>>,
        /// Words charged to the month's quota (given back when it failed).
        pub words: u64,
        /// Tokens its passes used.
        pub usage: PassUsage,
        /// US dollars at the list price of what answered (0 for the offline engine).
        pub cost: f64,
        /// The owner's passages (edited, accepted or kept) it left alone.
        pub left_alone: Vec<u32>,
        /// Passages it holds: those it translates while pending, then those whose text it
        /// changes (a passage asked for alone is always there).
        pub passage_count: u32,
        /// Its passages while it is ready; empty in a list and otherwise.
        pub passages: Vec<ProposedPassage>,
    }
}

wire! {
    /// One passage of a proposal: its text when the proposal was asked for and the text
    /// proposed, with what the checks found wrong with the latter.
    #[serde(rename_all = "camelCase")]
    pub struct ProposedPassage from domain::ProposedText {
        pub chapter: u32,
        pub index: u32,
        /// The passage's version when the proposal was asked for: accepting it answers `409`
        /// once the passage has changed since.
        pub version: u64,
        /// The passage's text then (null when it had none).
        pub current: Option<String>,
        pub proposed: String,
        /// What the checks found wrong with the proposed text; accepting the whole proposal
        /// leaves a flagged passage out.
        pub flags: Vec<Flag>,
        /// The pass that last changed the proposed text: `translate`, `review` or `polish`.
        pub pass: &'static str,
        pub accepted: bool,
        /// Every answer the model gave failed a check: `proposed` is the last one, `flags` say
        /// what it failed, and accepting the passage by name takes it knowingly (its origin
        /// then lists them in `acceptedWith`). A flagged passage that is not `rejected` proposes
        /// its source (the model gave no answer the book can hold).
        pub rejected: bool,
    }
}

impl Mirror<booktr_translate::protocol::Pass> for &'static str {
    fn mirror(from: booktr_translate::protocol::Pass) -> Self {
        from.task()
    }
}

/// The book's proposals, newest first.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ProposalList {
    pub proposals: Vec<Proposal>,
}

/// What a re-translation would use and cost, before anything is spent.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetranslationQuote {
    pub model: String,
    /// What would translate: the provider's model, or `offline-pseudo` (free) when no provider
    /// key stands behind it; null when the owner's stored key no longer opens.
    pub engine: Option<String>,
    pub chapter: u32,
    /// Passages it would translate.
    pub passages: u32,
    /// The owner's passages it would leave alone.
    pub left_alone: Vec<u32>,
    /// Words it would charge to the month's quota.
    pub words: u64,
    pub passes: RetranslationPasses,
    pub total: PassUsage,
    /// US dollars at the list price of what would translate.
    pub estimated_cost: f64,
    pub currency: &'static str,
}

/// Tokens each pass would use.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct RetranslationPasses {
    pub translate: PassUsage,
    pub review: PassUsage,
    pub polish: PassUsage,
}

impl From<domain::RetranslationQuote> for RetranslationQuote {
    fn from(q: domain::RetranslationQuote) -> Self {
        let [translate, review, polish] = q.passes.map(PassUsage::from);
        RetranslationQuote {
            model: q.model,
            engine: q.engine,
            chapter: q.chapter,
            passages: q.passages,
            left_alone: q.left_alone,
            words: q.words,
            passes: RetranslationPasses {
                translate,
                review,
                polish,
            },
            total: q.total.into(),
            estimated_cost: q.estimated_cost,
            currency: "USD",
        }
    }
}
