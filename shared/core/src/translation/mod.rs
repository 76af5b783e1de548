//! Translation runs of a book: start, pause, resume, stop and status. The chapter work itself is
//! the chapter job (`crate::jobs`); this module decides what is queued and reports progress.
//! One file per operation: `start`, `control` (pause, resume, stop), `progress` (the run as its
//! chapters finish), `status`, `quote`, `term_list` (the owner's view and changes of the book's
//! terms), and the files (`render`, `download`).
//!
//! A run has a number (`run` on the book). Every start, resume and stop moves it on, and a
//! chapter job carries the run it was queued for: a job of an older run is dropped when it comes
//! up. A run also has a *translation key*, the fingerprint of what decides a chapter's text
//! (model, languages, glossary entries): a chapter translated under the same key is never
//! translated (or paid for) again, whatever happened to the run it was done in.

mod control;
mod download;
mod error;
pub mod passages;
mod progress;
mod quality;
mod quote;
mod render;
mod start;
mod status;
mod term_list;

use std::sync::Arc;

use booktr_formats::manuscript::Block;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::pipeline::Quality;
use booktr_translate::profile::Settings;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use download::{Download, SideBySide, LINK_LIFETIME};
pub use error::{RenderError, TranslationError};
pub use quality::{FallbackSummary, QualitySummary, MAIN_ORDER, WARNING_PREFIX};
pub use quote::{Quote, QuoteFallback, QuotePasses, QuoteRequest};
pub use render::Completeness;
pub use start::StartRequest;
pub use status::{
    ChapterErrorReport, ChapterProgress, PassCounts, RunCost, TermStage, TranslationStatus,
};
pub use term_list::{BookTermList, TermListChanges, MAX_CHANGES, MAX_TERMS, MAX_TERM_CHARS};

use crate::accounts::User;
use crate::books::{store, Book, Books, Chapter};
use crate::developer::Developer;
use crate::fault::{DataError, Fault};
use crate::glossaries::Glossaries;
use crate::ports::Ports;
use crate::preferences::Preferences;
use crate::types::{ChapterStatus, LanguageCode};
use crate::usage::Usage;

/// What a run needs of the accounts domain when the book's owner is not the caller (a resumed
/// window, a finished chapter starting the next): the owner as they are now. Translation owns
/// this one question rather than reading how accounts are stored; the wiring answers it with
/// the accounts service.
#[async_trait::async_trait]
pub trait Owners: Send + Sync {
    /// The account, None once it is closed.
    async fn owner(&self, user_id: &str) -> Result<Option<User>, DataError>;
}

/// One chapter's finished translation, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredChapter {
    /// The translation key it was made under.
    pub key: String,
    pub title: Option<String>,
    pub blocks: Vec<Block>,
    pub quality: Quality,
    /// Names and terms the review reported using.
    pub terms: Vec<(String, String)>,
}

/// The book's names and terms for one translation key (the term pass's result).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BookTerms {
    pub key: String,
    pub list: booktr_translate::terms::TermList,
}

/// Chapters of a book in flight at once, unless configured otherwise (the whole-book
/// benchmark's figures are in docs/translation.md).
pub const DEFAULT_WINDOW: usize = 128;
/// The widest window, priority included.
pub const MAX_WINDOW: usize = 256;

#[derive(Clone)]
pub struct Translations {
    ports: Ports,
    /// Chapters of a book in flight at once, without and with priority.
    window: usize,
    priority_window: usize,
    /// What reading an upload and rendering a book may cost in memory.
    file_budget: booktr_formats::Budget,
    /// How a chapter is cut into requests for each model, which the quote follows.
    pipeline: Settings,
    books: Books,
    glossaries: Glossaries,
    usage: Usage,
    owners: Arc<dyn Owners>,
    /// Which client translates a run (the user's own provider key, the server's, or the
    /// offline engine), for the engine a quote and a start name.
    developer: Developer,
}

impl Translations {
    pub fn new(
        ports: Ports,
        books: Books,
        glossaries: Glossaries,
        usage: Usage,
        owners: Arc<dyn Owners>,
        developer: Developer,
    ) -> Self {
        Translations {
            owners,
            developer,
            window: DEFAULT_WINDOW,
            priority_window: (DEFAULT_WINDOW * 2).min(MAX_WINDOW),
            file_budget: booktr_formats::Budget::default(),
            pipeline: Settings::default(),
            books,
            glossaries,
            usage,
            ports,
        }
    }

    /// With `window` chapters of a book in flight at once (`BOOKTR_CHAPTER_WINDOW`).
    pub fn with_window(mut self, window: usize) -> Self {
        self.window = window.max(1);
        self.priority_window = (self.window * 2).min(MAX_WINDOW);
        self
    }

    /// With `window` chapters of a book in flight at once whatever the owner's plan: for
    /// `booktr translate --parallel`, whose one user is there only to own the one book.
    pub fn with_window_for_every_plan(mut self, window: usize) -> Self {
        self.window = window.max(1);
        self.priority_window = self.window;
        self
    }

    /// With uploads read and books rendered within `budget` (`BOOKTR_FILE_MEMORY_MIB`).
    pub fn with_file_budget(mut self, budget: booktr_formats::Budget) -> Self {
        self.file_budget = budget;
        self
    }

    /// With chapters cut into requests as `pipeline` says for each model (its profile, or
    /// `BOOKTR_CHUNK_TOKENS` and the like).
    pub fn with_pipeline(mut self, pipeline: Settings) -> Self {
        self.pipeline = pipeline;
        self
    }

    pub fn file_budget(&self) -> booktr_formats::Budget {
        self.file_budget
    }

    /// The user's translation preferences (defaults for what they never set).
    pub async fn preferences(&self, user_id: &str) -> Result<Preferences, TranslationError> {
        Ok(crate::preferences::get(&self.ports, user_id).await?)
    }

    /// Validates and stores the preferences: a known model, a language code, and a glossary
    /// of the user's own (or none).
    pub async fn set_preferences(
        &self,
        user_id: &str,
        mut preferences: Preferences,
    ) -> Result<Preferences, TranslationError> {
        if booktr_translate::providers::lookup(&preferences.default_model).is_none() {
            return Err(TranslationError::Invalid(format!(
                "defaultModel: '{}' is not one of the six models",
                preferences.default_model
            )));
        }
        preferences.default_target_language =
            LanguageCode::parse(&preferences.default_target_language)
                .map_err(|e| TranslationError::Invalid(format!("defaultTargetLanguage: {e}")))?
                .to_string();
        if let Some(id) = &preferences.default_glossary_id {
            if self.glossaries.get(user_id, id).await.is_err() {
                return Err(TranslationError::Invalid(format!(
                    "defaultGlossaryId: there is no glossary '{id}'"
                )));
            }
        }
        crate::preferences::put(&self.ports, user_id, &preferences).await?;
        Ok(preferences)
    }

    /// Chapter `number`'s text as extracted, if the book has it.
    pub async fn source_chapter(
        &self,
        book_id: &str,
        number: u32,
    ) -> Result<Option<booktr_formats::manuscript::Chapter>, DataError> {
        self.read_json(&store::chapter_key(book_id, number)?).await
    }

    /// The book's names and terms as its run's term job listed them (under the run's
    /// translation key), if it did.
    pub async fn book_terms(
        &self,
        book: &Book,
    ) -> Result<Option<booktr_translate::terms::TermList>, DataError> {
        match &book.translation_key {
            Some(key) => self.terms_under(&book.id, key).await,
            None => Ok(None),
        }
    }

    /// The book's term list under the translation key `key`, if its term job listed one.
    pub async fn terms_under(
        &self,
        book_id: &str,
        key: &str,
    ) -> Result<Option<booktr_translate::terms::TermList>, DataError> {
        Ok(self
            .read_json::<BookTerms>(&store::terms_key(book_id, key)?)
            .await?
            .filter(|terms| terms.key == key)
            .map(|terms| terms.list))
    }

    /// The glossary every pass of a chapter enforces: the run's glossary with `terms` (the
    /// book's term list) joined, the glossary winning where both name a term, so chapters
    /// translated at the same time agree.
    pub async fn enforced_glossary(
        &self,
        book_id: &str,
        terms: &booktr_translate::terms::TermList,
    ) -> Result<Vec<GlossaryEntry>, DataError> {
        let glossary: Vec<GlossaryEntry> = self
            .read_json(&store::glossary_snapshot_key(book_id)?)
            .await?
            .unwrap_or_default();
        Ok(terms.with_glossary(&glossary))
    }

    /// A finished chapter's stored translation, if any.
    pub async fn stored_chapter(
        &self,
        book_id: &str,
        number: u32,
    ) -> Result<Option<StoredChapter>, DataError> {
        self.read_json(&store::translation_key(book_id, number)?)
            .await
    }

    pub(crate) async fn put_json<T: Serialize + ?Sized>(
        &self,
        key: &crate::ports::BlobKey,
        value: &T,
    ) -> Result<(), DataError> {
        let bytes = serde_json::to_vec(value).map_err(Fault::encoding("a stored document"))?;
        self.ports
            .blobs
            .put(key, bytes.into())
            .await
            .map_err(DataError::from)
    }
}

/// The fingerprint of everything that decides a chapter's translated text.
pub fn translation_key(
    model: &str,
    source: &str,
    target: &str,
    glossary: &[GlossaryEntry],
) -> String {
    let mut hash = Sha256::new();
    for part in [model, source, target] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    for entry in glossary {
        for part in [
            &entry.source,
            &entry.target,
            entry.context.as_deref().unwrap_or(""),
        ] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part.as_bytes());
        }
    }
    hex::encode(hash.finalize())
}

/// The words of the chapters numbered in `numbers`.
fn unfinished_words(chapters: &[Chapter], numbers: &[u32]) -> u64 {
    chapters
        .iter()
        .filter(|c| numbers.contains(&c.number))
        .map(|c| c.word_count.unwrap_or(0))
        .sum()
}

/// Progress 0-100 from finished work: each chapter weighs its words, and counts a third for each
/// pass done (a completed chapter counts whole).
pub fn progress_of(chapters: &[Chapter]) -> u8 {
    let weight = |c: &Chapter| c.word_count.unwrap_or(0).max(1);
    let total: u64 = chapters.iter().map(weight).sum();
    if total == 0 {
        return 0;
    }
    let done: u64 = chapters
        .iter()
        .map(|c| {
            let passes = if c.status == ChapterStatus::Completed {
                3
            } else {
                u64::from(c.passes_done.min(3))
            };
            weight(c) * passes
        })
        .sum();
    // Rounded down, so 100 means every chapter is done.
    u8::try_from(done * 100 / (total * 3)).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(number: u32, words: u64, status: ChapterStatus, passes: u8) -> Chapter {
        Chapter {
            id: format!("b-{number}"),
            number,
            title: None,
            word_count: Some(words),
            status,
            passes_done: passes,
            error: None,
            stored_key: None,
            edits: 0,
        }
    }

    #[test]
    fn progress_weighs_chapters_by_words_and_passes() {
        let chapters = [
            chapter(1, 300, ChapterStatus::Completed, 3),
            chapter(2, 600, ChapterStatus::Translating, 1),
            chapter(3, 100, ChapterStatus::Pending, 0),
        ];
        // (300*3 + 600*1) / (1000*3) = 50%
        assert_eq!(progress_of(&chapters), 50);
        assert_eq!(progress_of(&[]), 0);
        assert_eq!(
            progress_of(&[chapter(1, 0, ChapterStatus::Completed, 3)]),
            100
        );
    }

    #[test]
    fn the_translation_key_changes_with_model_languages_and_glossary() {
        let entry = |t: &str| GlossaryEntry {
            source: "whale".into(),
            target: t.into(),
            context: None,
        };
        let base = translation_key("gpt-4o-mini", "en", "es", &[entry("ballena")]);
        assert_eq!(
            base,
            translation_key("gpt-4o-mini", "en", "es", &[entry("ballena")])
        );
        assert_ne!(
            base,
            translation_key("gpt-4o", "en", "es", &[entry("ballena")])
        );
        assert_ne!(
            base,
            translation_key("gpt-4o-mini", "en", "fr", &[entry("ballena")])
        );
        assert_ne!(
            base,
            translation_key("gpt-4o-mini", "en", "es", &[entry("cachalote")])
        );
        assert_ne!(base, translation_key("gpt-4o-mini", "en", "es", &[]));
    }
}
