//! What the books domain speaks: a book, its chapters, and the largest file it takes.

use chrono::{DateTime, Utc};

use super::format::BookFormat;
use crate::types::{BookStatus, ChapterStatus};

/// The largest file accepted by upload (the spec's 50 MB, read as MiB).
pub const MAX_UPLOAD_BYTES: u64 = 50 * 1024 * 1024;

/// A book: what its owner sees of it (the spec's Book, plus its format, file name and size,
/// the reason when status is ERROR, and the warnings of extraction and translation), and the
/// bookkeeping they do not (its owner, the run, the share token, the quota charged, the cap).
#[derive(Debug, Clone, PartialEq)]
pub struct Book {
    pub id: String,
    pub user_id: String,
    pub title: String,
    /// Whether the user named the book (then the file's own title does not replace it).
    pub title_from_user: bool,
    pub author: Option<String>,
    pub original_lang: String,
    pub target_lang: String,
    pub status: BookStatus,
    pub progress: u8,
    pub word_count: Option<u64>,
    pub chapter_count: Option<u32>,
    pub translation_model: Option<String>,
    /// Beyond the spec: the run's second model, for the blocks the first left flagged or of low
    /// confidence (`fallbackModel` on a start; see `booktr_translate::fallback`). Null when the
    /// run names none.
    pub fallback_model: Option<String>,
    /// Beyond the spec: whether the book's runs take from and give to its owner's translation
    /// memory (`memory` on a start; on unless the start said otherwise).
    pub memory: bool,
    /// Beyond the spec: what translates the run, as a start found it: the provider's model, or
    /// `offline-pseudo` when the offline engine stands in (no provider key for the model's
    /// family; its pseudo-translation is free). Null before a run.
    pub engine: Option<String>,
    pub format: BookFormat,
    pub file_name: String,
    pub file_size: u64,
    pub error: Option<String>,
    /// What extraction skipped although the book was read (e.g. a manifest entry of an EPUB
    /// that points outside the book), for the user; absent when there is nothing to say.
    pub warnings: Vec<String>,
    /// The glossary the current or last translation run uses.
    pub glossary_id: Option<String>,
    /// The translation run: moves on at every start, resume and stop, so chapter jobs queued
    /// for an earlier run are dropped (how stop "cleans the queue" on SQS too). 0: never started.
    pub run: u32,
    /// The fingerprint of the run's model, languages and glossary (see `crate::translation`).
    pub translation_key: Option<String>,
    /// The public share link's token, while the book is shared.
    pub share_token: Option<String>,
    /// The month (`yyyy-mm`) whose word quota the current run was charged to, if any.
    pub charged_period: Option<String>,
    /// The run's cost cap in millionths of a US dollar (`maxCost` on the start), if any.
    pub max_cost_micros: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chapter {
    pub id: String,
    pub number: u32,
    pub title: Option<String>,
    pub word_count: Option<u64>,
    pub status: ChapterStatus,
    /// Passes (of 3) finished in the current translation, for progress.
    pub passes_done: u8,
    /// Why the chapter is in ERROR.
    pub error: Option<String>,
    /// The translation key of its stored translation, recorded when it was completed (None on
    /// chapters completed before this was recorded, and on chapters never completed). While the
    /// chapter is COMPLETED the stored translation is the one recorded here: a run that would
    /// replace it sets the chapter PENDING first.
    pub stored_key: Option<String>,
    /// The owner's changes of its passages (edits, undos, resets), counted: a file rendered from
    /// the chapter is named for it, so that no file made before a change is served after it.
    pub edits: u64,
}

/// The spec's BookDetail: a book with its chapters in reading order.
#[derive(Debug, Clone, PartialEq)]
pub struct BookDetail {
    pub book: Book,
    pub chapters: Vec<Chapter>,
}
