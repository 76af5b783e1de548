//! The translation service and what it asks of the accounts domain; its use cases are in
//! `start.rs`, `control.rs`, `progress.rs`, `status.rs`, `quote.rs`, `term_list.rs`,
//! `render.rs` and `download.rs`.

use std::sync::Arc;

use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::profile::Settings;
use serde::Serialize;

use super::error::TranslationError;
use super::model::{BookTerms, StoredChapter, DEFAULT_WINDOW, MAX_WINDOW};
use crate::accounts::User;
use crate::books::{store, Book, Books};
use crate::developer::Developer;
use crate::fault::{DataError, Fault};
use crate::glossaries::Glossaries;
use crate::memory::Memory;
use crate::ports::Ports;
use crate::preferences::Preferences;
use crate::types::LanguageCode;
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

#[derive(Clone)]
pub struct Translations {
    pub(super) ports: Ports,
    /// Chapters of a book in flight at once, without and with priority.
    pub(super) window: usize,
    pub(super) priority_window: usize,
    /// What reading an upload and rendering a book may cost in memory.
    pub(super) file_budget: booktr_formats::Budget,
    /// How a chapter is cut into requests for each model, which the quote follows.
    pub(super) pipeline: Settings,
    pub(super) books: Books,
    pub(super) glossaries: Glossaries,
    /// The owners' translation memories: what a chapter takes and gives back, what a quote and
    /// a start count as free, what an owner's accepted text adds.
    pub(crate) memory: Memory,
    pub(super) usage: Usage,
    pub(super) owners: Arc<dyn Owners>,
    /// Which client translates a run (the user's own provider key, the server's, or the
    /// offline engine), for the engine a quote and a start name.
    pub(super) developer: Developer,
}

impl Translations {
    pub fn new(
        ports: Ports,
        books: Books,
        glossaries: Glossaries,
        memory: Memory,
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
            memory,
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
        Ok(terms.with_glossary(&self.run_glossary(book_id).await?))
    }

    /// The glossary of the book's run, as its start copied it.
    pub async fn run_glossary(&self, book_id: &str) -> Result<Vec<GlossaryEntry>, DataError> {
        Ok(self
            .read_json(&store::glossary_snapshot_key(book_id)?)
            .await?
            .unwrap_or_default())
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
