//! A translation run: its status, its quote and the quality of what it translated.

use std::collections::BTreeMap;

use booktr_core::translation as domain;
use booktr_core::types::BookStatus;
use booktr_translate::pipeline;
use serde_json::Value;

use super::books::Chapter;
use super::wire;

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct TranslationStatus from domain::TranslationStatus, hiding paused_at_terms {
        #[schema(value_type = super::types::BookStatus)]
        pub status: BookStatus,
        pub progress: u8,
        pub chapters_total: u32,
        pub chapters_completed: u32,
        /// The title of the chapter being translated.
        pub current_chapter: Option<String>,
        /// Seconds, from the words per second this run has achieved; null until a chapter of this
        /// run has been translated, and when nothing is translating.
        pub estimated_time_remaining: Option<u64>,
        pub errors: Vec<ChapterErrorReport>,
        /// Beyond the spec: the model, and how many chapters are through each pass.
        pub model: Option<String>,
        /// Beyond the spec: what translates the run (the provider's model, or `offline-pseudo`
        /// when the offline engine stands in); null before a run.
        pub engine: Option<String>,
        pub passes: PassCounts,
        /// Beyond the spec: the book-wide term pass, the run's first stage; null before any run.
        pub terms: Option<TermStage>,
        /// Beyond the spec: every chapter with its passes and, once translated, its quality record.
        pub chapters: Vec<ChapterProgress>,
        /// Beyond the spec: the translated chapters' quality records summed (flagged blocks per
        /// kind: 0 for a clean book).
        pub quality: QualitySummary,
        /// Beyond the spec: what the run has cost so far, and its cap.
        pub cost: RunCost,
        /// Beyond the spec: why a run paused itself (its cost cap); null for a pause the user asked
        /// for.
        pub pause_reason: Option<String>,
        /// Beyond the spec: while a book translated before is translated again, the earlier
        /// translation's files that downloads still serve until this run's are made (`epub`,
        /// `bilingual pdf` ...); empty otherwise.
        pub previous_files: Vec<String>,
    }
}

wire! {
    /// The run's model cost so far, at the model's list price, and its `maxCost`.
    #[serde(rename_all = "camelCase")]
    pub struct RunCost from domain::RunCost {
        pub spent: f64,
        pub max_cost: Option<f64>,
        pub currency: &'static str,
    }
}

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct ChapterErrorReport from domain::ChapterErrorReport {
        pub chapter_id: String,
        pub error: String,
    }
}

wire! {
    /// The term pass of the current run.
    #[serde(rename_all = "camelCase")]
    pub struct TermStage from domain::TermStage {
        /// PENDING until the run's list is stored, then COMPLETED.
        pub status: &'static str,
        /// Names and terms on the list.
        pub found: Option<i64>,
        /// Tokens and requests the pass used (`inputTokens`, `outputTokens`, `requests`).
        pub usage: Option<Value>,
    }
}

wire! {
    /// Chapters that have finished each pass.
    pub struct PassCounts from domain::PassCounts {
        pub translate: u32,
        pub review: u32,
        pub polish: u32,
    }
}

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct ChapterProgress from domain::ChapterProgress {
        #[serde(flatten)]
        pub chapter: Chapter,
        /// The quality record of the chapter's translation (glossary compliance, untranslated,
        /// missing or broken blocks, tokens per pass).
        pub quality: Option<Value>,
    }
}

wire! {
    /// Beyond the spec: what the checks found in the book's answers.
    #[serde(rename_all = "camelCase")]
    pub struct QualitySummary from domain::QualitySummary, hiding main_flags {
        /// Blocks whose translation could not be trusted (they keep their source text): 0 for a
        /// clean book.
        pub flagged_blocks: u32,
        /// Flagged blocks per kind (`untranslated`, `wrongLanguage`, `length`, `refusal`, `merged`,
        /// `repeated`, `truncated`, `missing`, `brokenMarks`, `duplicate` (the same translation as
        /// another block's), `numbers`, `names`); a block may count under two.
        pub flagged: BTreeMap<String, u32>,
        /// Chapters with at least one flagged block.
        pub chapters_flagged: u32,
        /// Blocks whose first answer failed a check and that a second request repaired.
        pub repaired_blocks: u32,
        /// Lines of the models' answers removed around the blocks (preambles, sign-offs,
        /// reasoning, fences).
        pub removed_lines: u32,
        /// Blocks the review pass and the polish pass changed (each answers with its changes).
        pub changed: Changed,
        /// Changes of the review or the polish that failed a check and were not kept (the block
        /// kept the previous pass's checked text).
        pub changes_not_kept: u32,
        /// Blocks whose confidence is under 50 (of 100, from what the run saw of each: repairs,
        /// flags, terms missed, length, language): the first a reviewer should read.
        pub low_confidence_blocks: u32,
        /// The model profile the chapters ran with: `hosted` or `small` (see the quote's
        /// `profile`); null before any chapter ran.
        pub profile: Option<String>,
        /// What the run's fallback model did: blocks sent to it and blocks whose text is now its;
        /// null when no chapter sent it anything.
        pub fallback: Option<FallbackSummary>,
        /// Blocks whose text the owner's translation memory supplied: the same source was
        /// translated and accepted before, so no model was asked for them.
        pub from_memory: u32,
    }
}

wire! {
    /// Blocks sent to the run's fallback model, and those it translated better (taken).
    pub struct FallbackSummary from domain::FallbackSummary {
        pub model: String,
        pub sent: u32,
        pub taken: u32,
    }
}

wire! {
    /// Blocks each later pass changed.
    #[derive(Default)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Changed from pipeline::Changed {
        pub review: u32,
        pub polish: u32,
    }
}

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Quote from domain::Quote {
        pub book_id: String,
        pub model: String,
        /// What would translate: the provider's model, or `offline-pseudo` when the offline engine
        /// stands in (no provider key for the model's family), which costs nothing. Null when the
        /// user's stored key for the model no longer opens (a start would fail its chapters).
        pub engine: Option<String>,
        /// How the model would be asked: `hosted` (a known model on its provider's server:
        /// 2,000 tokens of many blocks a request, every block reviewed and polished) or `small`
        /// (a model on another server, such as a local one: one block a request). Set for every
        /// model by `BOOKTR_MODEL_PROFILE`.
        pub profile: &'static str,
        pub target_lang: String,
        /// Chapters a start would translate; the others are already translated with these choices
        /// and cost nothing.
        pub chapters: u32,
        pub reused_chapters: u32,
        pub words: u64,
        /// What the owner's translation memory would supply: its passages cost nothing and are in
        /// none of the figures below.
        pub memory: QuoteMemory,
        pub passes: QuotePasses,
        /// The fallback model's share when `fallbackModel` is named: its passes over one block in
        /// ten (the share a quote expects the first model to leave to it); in `total` and
        /// `estimatedCost`.
        pub fallback: Option<QuoteFallback>,
        pub total: PassUsage,
        /// US dollars at the list price of what would translate (0 for the offline engine), the
        /// fallback's included.
        pub estimated_cost: f64,
        pub currency: &'static str,
        /// From the run's shape (term pass, then the chapters in the book's window, each taking the
        /// first place free) at a typical hosted model's pace.
        pub estimated_seconds: u64,
    }
}

wire! {
    /// What the fallback model would use and cost.
    #[serde(rename_all = "camelCase")]
    pub struct QuoteFallback from domain::QuoteFallback {
        pub model: String,
        /// What would answer it (see the quote's `engine`).
        pub engine: Option<String>,
        pub usage: PassUsage,
        /// US dollars at its list price.
        pub estimated_cost: f64,
    }
}

wire! {
    /// What the owner's translation memory would supply to a start with the same choices.
    pub struct QuoteMemory from domain::QuoteMemory {
        /// Whether the run would use the memory (`memory` on the request, else the book's choice).
        pub enabled: bool,
        /// Passages of the chapters to translate that the memory holds exactly (source text and
        /// marks): no model is asked for them.
        pub passages: u32,
        /// Their words.
        pub words: u64,
    }
}

wire! {
    pub struct QuotePasses from domain::QuotePasses {
        pub terms: PassUsage,
        pub translate: PassUsage,
        pub review: PassUsage,
        pub polish: PassUsage,
    }
}

wire! {
    /// Tokens one pass used.
    #[serde(rename_all = "camelCase")]
    pub struct PassUsage from pipeline::PassUsage {
        pub input_tokens: u64,
        pub output_tokens: u64,
        pub requests: u32,
    }
}
