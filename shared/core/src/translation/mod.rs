//! Translation runs of a book: start, pause, resume, stop and status. The chapter work itself is
//! the chapter job (`crate::jobs`); this module decides what is queued and reports progress.
//! The service is `service` (with the `Owners` it asks), the values a run keeps and reports
//! `model`, its errors `error`; one file per operation: `start`, `control` (pause, resume,
//! stop), `progress` (the run as its chapters finish), `status`, `quote`, `term_list` (the
//! owner's view and changes of the book's terms), `remembered` (the owner's translation memory
//! in a run), and the files (`render`, `download`).
//!
//! A run has a number (`run` on the book). Every start, resume and stop moves it on, and a
//! chapter job carries the run it was queued for: a job of an older run is dropped when it comes
//! up. A run also has a *translation key*, the fingerprint of what decides a chapter's text
//! (model, languages, glossary entries): a chapter translated under the same key is never
//! translated (or paid for) again, whatever happened to the run it was done in.

mod control;
mod download;
mod error;
mod model;
pub mod passages;
mod progress;
mod quality;
mod quote;
mod remembered;
mod render;
mod service;
mod start;
mod status;
mod term_list;

pub use download::{Download, SideBySide, LINK_LIFETIME};
pub use error::{RenderError, TranslationError};
pub use model::{
    progress_of, translation_key, BookTerms, StoredChapter, DEFAULT_WINDOW, MAX_WINDOW,
};
pub use quality::{FallbackSummary, QualitySummary, MAIN_ORDER, WARNING_PREFIX};
pub use quote::{Quote, QuoteFallback, QuoteMemory, QuotePasses, QuoteRequest};
pub use render::Completeness;
pub use service::{Owners, Translations};
pub use start::StartRequest;
pub use status::{
    ChapterErrorReport, ChapterProgress, PassCounts, RunCost, TermStage, TranslationStatus,
};
pub use term_list::{BookTermList, TermListChanges, MAX_CHANGES, MAX_TERMS, MAX_TERM_CHARS};
