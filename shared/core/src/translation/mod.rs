//! Translation runs of a book: start, pause, resume, stop and status. The chapter work itself is
//! the chapter job (`crate::jobs`); this module decides what is queued and reports progress.
//!
//! A run has a number (`run` on the book). Every start, resume and stop moves it on, and a
//! chapter job carries the run it was queued for: a job of an older run is dropped when it comes
//! up. A run also has a *translation key*, the fingerprint of what decides a chapter's text
//! (model, languages, glossary entries): a chapter translated under the same key is never
//! translated (or paid for) again, whatever happened to the run it was done in.

mod download;
mod quality;
mod quote;
mod render;
mod status;

use std::sync::Arc;

use booktr_formats::manuscript::Block;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::pipeline::{PipelineConfig, Quality};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tracing::{info, instrument};

pub use download::{Download, SideBySide, LINK_LIFETIME};
pub use quality::{QualitySummary, WARNING_PREFIX};
pub use quote::{Quote, QuoteRequest};
pub use render::{Completeness, RenderError};
pub use status::{ChapterProgress, PassCounts, TranslationStatus};

use crate::accounts::User;
use crate::books::lifecycle::BookEvent;
use crate::books::{store, Book, Books, BooksError, Chapter};
use crate::developer::{Developer, DeveloperError};
use crate::fault::{DataError, Fault};
use crate::glossaries::{Glossaries, GlossaryError};
use crate::items::time;
use crate::job::{Edition, Job, Layout, OutputFormat};
use crate::ports::{blobs, Condition, Ports, StoreError, Update, WriteOp};
use crate::preferences::Preferences;
use crate::types::{BookStatus, ChapterStatus, LanguageCode, Role};
use crate::usage::{Spend, Usage, UsageError};

#[derive(Debug, thiserror::Error)]
pub enum TranslationError {
    /// The request cannot be done in the book's state, or names a model, glossary or language
    /// that is not allowed: 400.
    #[error("{0}")]
    Invalid(String),
    #[error("book not found")]
    NotFound,
    /// A translation cannot start on the book in its state (not EXTRACTED or COMPLETED).
    #[error("the book is {status}")]
    CannotStart { book_id: String, status: BookStatus },
    /// A download of a book none of whose chapters is translated yet (the book's status).
    #[error("no chapter of the book is translated yet (it is {0})")]
    NothingTranslated(BookStatus),
    /// The plan's monthly word quota cannot cover the chapters to translate.
    #[error("{0}")]
    QuotaExceeded(String),
    /// The book's file could not be made for a download.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A chapter's source text is not stored although the book lists the chapter: the book's
    /// data is incomplete, and asking again finds it so again.
    #[error("the text of chapter {0} is missing")]
    MissingText(u32),
    /// The owner's developer settings answered with their own error.
    #[error(transparent)]
    Developer(#[from] DeveloperError),
    /// The books domain refused what the request asked of it (see the `From` below).
    #[error(transparent)]
    Books(BooksError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(TranslationError);

/// What a run needs of the accounts domain when the book's owner is not the caller (a resumed
/// window, a finished chapter starting the next): the owner as they are now. Translation owns
/// this one question rather than reading how accounts are stored; the wiring answers it with
/// the accounts service.
#[async_trait::async_trait]
pub trait Owners: Send + Sync {
    /// The account, None once it is closed.
    async fn owner(&self, user_id: &str) -> Result<Option<User>, DataError>;
}

/// What translation shares with the books domain keeps its own variant; the rest passes on as
/// the books domain said it, so the caller gets its code (`unsupported_file`, `file_too_large`,
/// `form_used`, ...).
impl From<BooksError> for TranslationError {
    fn from(e: BooksError) -> Self {
        match e {
            BooksError::NotFound => TranslationError::NotFound,
            BooksError::Store(s) => TranslationError::Store(s),
            BooksError::Fault(f) => TranslationError::Fault(f),
            BooksError::QuotaExceeded(m) => TranslationError::QuotaExceeded(m),
            other => TranslationError::Books(other),
        }
    }
}

impl From<UsageError> for TranslationError {
    fn from(e: UsageError) -> Self {
        match e {
            UsageError::Exceeded(m) => TranslationError::QuotaExceeded(m),
            UsageError::Store(s) => TranslationError::Store(s),
            UsageError::Fault(f) => TranslationError::Fault(f),
        }
    }
}

/// `POST /api/translate`.
#[derive(Debug, Clone, Default)]
pub struct StartRequest {
    pub book_id: String,
    pub model: Option<String>,
    pub glossary_id: Option<String>,
    pub target_lang: Option<String>,
    /// A cap on the run's model cost, in US dollars: the run pauses itself before a pass would
    /// go past it.
    pub max_cost: Option<f64>,
}

/// The largest `maxCost` accepted, in US dollars.
const MAX_COST_LIMIT: f64 = 100_000.0;

/// A `maxCost` in millionths of a dollar, or 400.
fn max_cost_micros(max_cost: Option<f64>) -> Result<Option<i64>, TranslationError> {
    match max_cost {
        None => Ok(None),
        Some(usd) if usd.is_finite() && usd > 0.0 && usd <= MAX_COST_LIMIT => {
            Ok(Some((usd * 1_000_000.0).round() as i64))
        }
        Some(_) => Err(TranslationError::Invalid(format!(
            "maxCost: a number of US dollars above 0 and at most {MAX_COST_LIMIT}"
        ))),
    }
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
    /// How a chapter is cut into requests, which the quote follows.
    pipeline: PipelineConfig,
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
            pipeline: PipelineConfig::default(),
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

    /// With chapters cut into requests as `pipeline` says (`BOOKTR_CHUNK_TOKENS`).
    pub fn with_pipeline(mut self, pipeline: PipelineConfig) -> Self {
        self.pipeline = pipeline;
        self
    }

    pub fn file_budget(&self) -> booktr_formats::Budget {
        self.file_budget
    }

    /// Starts a run: EXTRACTED -> TRANSLATING, one job per chapter not already translated under
    /// the same key. Returns how many jobs were queued.
    ///
    /// The words of the chapters it queues are charged to the month's quota first (400
    /// `quota_exceeded` and nothing queued when they do not fit). A book deleted while this
    /// runs is reported as not found, and whatever this wrote for it is removed.
    #[instrument(skip(self, user, request), fields(user_id = %user.id, book_id = %request.book_id))]
    pub async fn start(&self, user: &User, request: StartRequest) -> Result<u32, TranslationError> {
        self.start_chapters(user, request, None).await
    }

    /// [`Translations::start`] of only the chapters numbered in `only` (all when None), its
    /// term list made from their text; the others are left as they are, untranslated, so the
    /// run does not end by itself: the
    /// caller follows the chapters and takes the file of those finished so far
    /// ([`Completeness::FinishedSoFar`]), as `booktr translate --chapters` does.
    pub async fn start_chapters(
        &self,
        user: &User,
        request: StartRequest,
        only: Option<&[u32]>,
    ) -> Result<u32, TranslationError> {
        // The caller's own book, or 404: only an id proven to be a book of theirs may lead to
        // the clean-up below (it deletes files by the id).
        let book = self.books.get(&user.id, &request.book_id).await?;
        let result = self.start_run(user, request, &book, only).await;
        if result.is_ok() {
            crate::metrics::book_started();
        }
        match &result {
            Err(TranslationError::NotFound)
            | Err(TranslationError::Invalid(_))
            | Err(TranslationError::CannotStart { .. })
            | Err(TranslationError::Store(_)) => {
                if self.books.find(&book.id).await?.is_none() {
                    // Deleted under us: its blobs may have been written after the deletion
                    // removed the others.
                    blobs::delete_prefix(self.ports.blobs.as_ref(), &store::blob_prefix(&book.id))
                        .await?;
                    return Err(TranslationError::NotFound);
                }
                result
            }
            _ => result,
        }
    }

    async fn start_run(
        &self,
        user: &User,
        request: StartRequest,
        book: &Book,
        only: Option<&[u32]>,
    ) -> Result<u32, TranslationError> {
        let startable = match book.status {
            BookStatus::Extracted | BookStatus::Completed => true,
            // Failed during a translation (not a file that could not be read).
            BookStatus::Error => book.run > 0 && book.chapter_count.is_some(),
            _ => false,
        };
        if !startable {
            return Err(TranslationError::CannotStart {
                book_id: book.id.clone(),
                status: book.status,
            });
        }
        let max_cost = max_cost_micros(request.max_cost)?;
        let RunChoice {
            model,
            target,
            glossary_id,
            entries,
            key,
        } = self
            .choose_run(
                user,
                book,
                request.model,
                request.glossary_id,
                request.target_lang,
            )
            .await?;
        let engine = self.engine_for(&book.user_id, &model).await?;
        let mut chapters = self.books.chapters(&book.id).await?;
        if let Some(only) = only {
            chapters.retain(|c| only.contains(&c.number));
        }
        let pending = self.chapters_to_translate(book, &chapters, &key).await?;
        let words = Spend {
            books: 0,
            words: unfinished_words(&chapters, &pending),
        };
        let period = self.usage.spend(user, words).await?;
        let run = StartedRun {
            book,
            model: &model,
            engine,
            target: &target,
            glossary_id,
            entries: &entries,
            key,
            chapters: &chapters,
            pending: &pending,
            period: &period,
            max_cost,
        };
        let book = match self.begin_run(run).await {
            Ok(book) => book,
            Err(e) => {
                self.usage.refund(&user.id, &period, words).await?;
                return Err(e);
            }
        };
        // From here the run is on the book with its charge: a failure below leaves it
        // TRANSLATING, and a resume (which queues what is missing, free) or a stop (which gives
        // back the words it leaves untranslated) settles it. Refunding here too would pay twice.
        self.set_aside_finished_files(&book.id).await?;
        let queued = self.queue_chapters(&book, &pending, only).await?;
        info!(
            run = book.run,
            model,
            target,
            queued,
            reused = chapters.len() - pending.len(),
            "translation started"
        );
        Ok(queued)
    }

    /// Sets the finished files of the book's earlier translation aside (under
    /// `output/previous/`), where downloads find them until this run's files are made (the
    /// generate job then removes them); every other file of it (progress renders) no longer
    /// matches the text and goes.
    async fn set_aside_finished_files(&self, book_id: &str) -> Result<(), DataError> {
        let blobs = self.ports.blobs.as_ref();
        let files = blobs.list(&store::outputs_prefix(book_id)).await?;
        let previous = store::previous_outputs_prefix(book_id);
        let mut finished = Vec::new();
        for edition in store::editions() {
            let key = store::output_key(book_id, edition)?;
            if files.contains(&key) {
                finished.push((edition, key));
            }
        }
        // A run stopped before its files were made leaves the earlier ones set aside as they
        // are; a finished run's files replace them.
        if !finished.is_empty() {
            for key in files.iter().filter(|k| k.as_str().starts_with(&previous)) {
                blobs.delete(key).await?;
            }
            for (edition, key) in finished {
                if let Some(bytes) = blobs.get(&key).await? {
                    blobs
                        .put(&store::previous_output_key(book_id, edition)?, bytes)
                        .await?;
                }
            }
        }
        for key in files.iter().filter(|k| !k.as_str().starts_with(&previous)) {
            blobs.delete(key).await?;
        }
        Ok(())
    }

    /// The chapters a run under `key` must translate: every one on a book's first run (nothing
    /// is stored yet); later, those whose stored translation is under another key. A completed
    /// chapter's item records its stored translation's key, so only the other chapters (and
    /// ones completed before that was recorded) have their stored translation read.
    async fn chapters_to_translate(
        &self,
        book: &Book,
        chapters: &[Chapter],
        key: &str,
    ) -> Result<Vec<u32>, DataError> {
        if book.run == 0 {
            return Ok(chapters.iter().map(|c| c.number).collect());
        }
        let mut pending = Vec::new();
        for chapter in chapters {
            let reusable = match (&chapter.status, &chapter.stored_key) {
                (ChapterStatus::Completed, Some(stored)) => stored == key,
                _ => self
                    .stored_chapter(&book.id, chapter.number)
                    .await?
                    .is_some_and(|stored| stored.key == key),
            };
            if !reusable {
                pending.push(chapter.number);
            }
        }
        Ok(pending)
    }

    /// What a run of `book` with these choices translates with (each defaulting to the user's
    /// preferences), checked against the user's plan and glossaries.
    async fn choose_run(
        &self,
        user: &User,
        book: &Book,
        model: Option<String>,
        glossary_id: Option<String>,
        target_lang: Option<String>,
    ) -> Result<RunChoice, TranslationError> {
        let preferences = crate::preferences::get(&self.ports, &user.id).await?;
        let model = model.unwrap_or(preferences.default_model);
        check_model(user, &model)?;
        let target = match target_lang {
            Some(t) => LanguageCode::parse(&t)
                .map_err(|e| TranslationError::Invalid(format!("targetLang: {e}")))?
                .to_string(),
            None => book.target_lang.clone(),
        };
        // Each glossary is read once: the one asked for (which must exist), else the default
        // one (a default deleted since it was chosen is no reason to refuse a start).
        let glossary = match (glossary_id, preferences.default_glossary_id) {
            (Some(id), _) => match self.glossaries.get(&user.id, &id).await {
                Ok(glossary) => Some(glossary),
                Err(GlossaryError::NotFound) => {
                    return Err(TranslationError::Invalid(format!(
                        "glossaryId: there is no glossary '{id}'"
                    )))
                }
                Err(GlossaryError::Store(e)) => return Err(e.into()),
                Err(GlossaryError::Fault(f)) => return Err(f.into()),
                Err(GlossaryError::Invalid(m)) => return Err(TranslationError::Invalid(m)),
            },
            (None, Some(id)) => self.glossaries.get(&user.id, &id).await.ok(),
            (None, None) => None,
        };
        let glossary_id = glossary.as_ref().map(|g| g.id.clone());
        let entries: Vec<GlossaryEntry> = glossary
            .map(|g| {
                g.entries
                    .into_iter()
                    .map(|e| GlossaryEntry {
                        source: e.source,
                        target: e.target,
                        context: e.context,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let key = translation_key(&model, &book.original_lang, &target, &entries);
        Ok(RunChoice {
            model,
            target,
            glossary_id,
            entries,
            key,
        })
    }

    /// The writes of a start up to the book's move to TRANSLATING, once its words are charged;
    /// returns the book after the move.
    async fn begin_run(&self, run: StartedRun<'_>) -> Result<Book, TranslationError> {
        let StartedRun {
            book,
            model,
            engine,
            target,
            glossary_id,
            entries,
            key,
            chapters,
            pending,
            period,
            max_cost,
        } = run;
        self.put_json(&store::glossary_snapshot_key(&book.id)?, entries)
            .await?;
        // Chapters first, then the book: a crash in between leaves an EXTRACTED book whose
        // chapters say what is already translated, and a retried start finds the same. The
        // chapters are written in batches, each all or nothing; a chapter gone (the book
        // deleted meanwhile) fails its batch's condition.
        let pending: std::collections::HashSet<u32> = pending.iter().copied().collect();
        for batch in chapters.chunks(CHAPTER_WRITES_PER_BATCH) {
            let writes = batch
                .iter()
                .map(|chapter| {
                    let (status, passes) = if pending.contains(&chapter.number) {
                        (ChapterStatus::Pending, 0)
                    } else {
                        (ChapterStatus::Completed, 3)
                    };
                    WriteOp::Update {
                        pk: store::book_pk(&book.id),
                        sk: store::chapter_sk(chapter.number),
                        update: chapter_state(status, passes),
                        condition: Condition::Exists,
                    }
                })
                .collect();
            match self.ports.table.transact(writes).await {
                Err(StoreError::Conflict | StoreError::NotFound) => {
                    return Err(TranslationError::NotFound)
                }
                other => other?,
            }
        }
        let update = Update::default()
            .add("run", 1)
            .set("translationModel", model)
            .set("engine", engine)
            .set("glossaryId", glossary_id.clone())
            .set("targetLang", target)
            .set("translationKey", key)
            .set("chargedPeriod", period)
            .set("maxCostMicros", max_cost)
            .set("costMicros", 0)
            .set("costCommittedMicros", 0)
            .set("completedAt", Value::Null)
            .set("error", Value::Null)
            .set("progress", progress_of(&chapters_after(chapters, &pending)));
        let update = self.new_run(update);
        let Some(book) = self
            .books
            .transition(&book.id, BookEvent::TranslationStarted, update)
            .await?
        else {
            return Err(TranslationError::Invalid(
                "the book changed meanwhile; look at its status and try again".into(),
            ));
        };
        Ok(book)
    }

    /// TRANSLATING -> PAUSED. Jobs already queued are dropped as they come up (the status no
    /// longer lets them run); the chapter in progress finishes and is kept.
    #[instrument(skip(self))]
    pub async fn pause(&self, user_id: &str, book_id: &str) -> Result<(), TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        let paused = self
            .books
            .transition(book_id, BookEvent::Paused, Update::default())
            .await?;
        if paused.is_none() {
            return Err(TranslationError::Invalid(format!(
                "the book is {}; only a TRANSLATING book can be paused",
                book.status
            )));
        }
        info!("translation paused");
        Ok(())
    }

    /// ERROR, PAUSED or TRANSLATING -> TRANSLATING in a new run that re-queues only the chapters
    /// not completed. `max_cost` (US dollars) replaces the run's cost cap: a run paused at its
    /// cap goes on with a higher one. Returns (re-queued, total chapters).
    #[instrument(skip(self))]
    pub async fn resume(
        &self,
        user_id: &str,
        book_id: &str,
        max_cost: Option<f64>,
    ) -> Result<(u32, u32), TranslationError> {
        let max_cost = max_cost_micros(max_cost)?;
        let book = self.books.get(user_id, book_id).await?;
        // A book in ERROR because its file could not be read has no run to resume.
        if !BookEvent::Resumed.applies_to(book.status) || book.run == 0 {
            return Err(TranslationError::Invalid(format!(
                "the book is {}; only a book that is translating, paused or failed during \
                 translation can be resumed",
                book.status
            )));
        }
        let chapters = self.books.chapters(book_id).await?;
        let mut pending = Vec::new();
        for chapter in chapters
            .iter()
            .filter(|c| c.status != ChapterStatus::Completed)
        {
            if chapter.status == ChapterStatus::Error {
                self.set_chapter(
                    book_id,
                    chapter.number,
                    ChapterStatus::Pending,
                    chapter.passes_done,
                )
                .await?;
            }
            pending.push(chapter.number);
        }
        // A key set or removed since the start changes what answers from here on.
        let model = book.translation_model.as_deref().unwrap_or_default();
        let engine = self.engine_for(user_id, model).await?;
        let mut update = self.new_run(
            Update::default()
                .add("run", 1)
                .set("error", Value::Null)
                .set("engine", engine),
        );
        if let Some(max_cost) = max_cost {
            update = update.set("maxCostMicros", max_cost);
        }
        let Some(book) = self
            .books
            .transition(book_id, BookEvent::Resumed, update)
            .await?
        else {
            return Err(TranslationError::Invalid(
                "the book changed meanwhile; look at its status and try again".into(),
            ));
        };
        let queued = self.queue_chapters(&book, &pending, None).await?;
        info!(run = book.run, queued, "translation resumed");
        Ok((queued, chapters.len() as u32))
    }

    /// Cancels the run: TRANSLATING, PAUSED or ERROR -> EXTRACTED, and the run moves on so its
    /// queued jobs are dropped. Completed chapters are kept for a later start with the same key.
    /// The words of the chapters left untranslated go back to the quota they were charged to
    /// (the chapter in hand, which finishes, is kept and not given back).
    #[instrument(skip(self))]
    pub async fn stop(&self, user_id: &str, book_id: &str) -> Result<(), TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        if !BookEvent::Stopped.applies_to(book.status) || book.run == 0 {
            return Err(TranslationError::Invalid(format!(
                "the book is {}; there is no translation to stop",
                book.status
            )));
        }
        let update = Update::default()
            .add("run", 1)
            .set("currentChapter", Value::Null)
            .set("chargedPeriod", Value::Null)
            .set("error", Value::Null);
        if self
            .books
            .transition(book_id, BookEvent::Stopped, update)
            .await?
            .is_none()
        {
            return Err(TranslationError::Invalid(
                "the book changed meanwhile; look at its status and try again".into(),
            ));
        }
        if let Some(period) = &book.charged_period {
            let chapters = self.books.chapters(book_id).await?;
            let untranslated: Vec<u32> = chapters
                .iter()
                .filter(|c| matches!(c.status, ChapterStatus::Pending | ChapterStatus::Error))
                .map(|c| c.number)
                .collect();
            let words = Spend {
                books: 0,
                words: unfinished_words(&chapters, &untranslated),
            };
            self.usage.refund(user_id, period, words).await?;
        }
        info!("translation stopped");
        Ok(())
    }

    /// Queues generation of the file: TRANSLATED or COMPLETED books only.
    #[instrument(skip(self))]
    pub async fn generate(
        &self,
        user_id: &str,
        book_id: &str,
        edition: Edition,
    ) -> Result<(), TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        if !matches!(
            book.status,
            BookStatus::Translated | BookStatus::Completed | BookStatus::Generating
        ) {
            return Err(TranslationError::Invalid(format!(
                "the book is {}; a file can be generated once it is translated",
                book.status
            )));
        }
        let job = Job::Generate {
            book_id: book_id.to_string(),
            format: edition.format,
            layout: edition.layout,
            requested: self.ports.clock.now().timestamp_millis(),
        };
        job.enqueue(self.ports.queue.as_ref()).await?;
        Ok(())
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
        let Some(key) = &book.translation_key else {
            return Ok(None);
        };
        Ok(self
            .read_json::<BookTerms>(&store::terms_key(&book.id, key)?)
            .await?
            .filter(|terms| &terms.key == key)
            .map(|terms| terms.list))
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

    /// Moves a TRANSLATING (or PAUSED, its last chapters finishing after the pause) book whose
    /// chapters are all completed on to TRANSLATED and queues its EPUB. Safe to call from any number of jobs: only the first transition queues.
    pub(crate) async fn finish_if_translated(&self, book_id: &str) -> Result<(), DataError> {
        let chapters = self.books.chapters(book_id).await?;
        self.finish_if_all_completed(book_id, &chapters).await
    }

    /// [`Translations::finish_if_translated`] with the chapters already read.
    pub(crate) async fn finish_if_all_completed(
        &self,
        book_id: &str,
        chapters: &[Chapter],
    ) -> Result<(), DataError> {
        if chapters
            .iter()
            .any(|c| c.status != ChapterStatus::Completed)
        {
            return Ok(());
        }
        let update = Update::default()
            .set("progress", 100)
            .set("currentChapter", Value::Null)
            .remove("pauseReason");
        let book = match self
            .books
            .transition(book_id, BookEvent::AllChaptersTranslated, update)
            .await?
        {
            Some(book) => {
                self.record_completed(book_id).await;
                book
            }
            // Translated by an earlier try of this job that died before queuing the file: queue
            // it now (the queue's deduplication drops a second copy).
            None => match self.books.find(book_id).await? {
                Some(book) if book.status == BookStatus::Translated => book,
                _ => return Ok(()),
            },
        };
        info!(book_id, "every chapter translated; generating the EPUB");
        let job = Job::Generate {
            book_id: book.id,
            format: OutputFormat::Epub,
            layout: Layout::Translated,
            requested: i64::from(book.run),
        };
        job.enqueue(self.ports.queue.as_ref()).await?;
        Ok(())
    }

    /// Counts the book translated, with the time since its run started when that is known.
    async fn record_completed(&self, book_id: &str) {
        let started = match self
            .ports
            .table
            .get(&store::book_pk(book_id), store::BOOK_SK)
            .await
        {
            Ok(Some(item)) => crate::items::parse_time(&item, "runStartedAt")
                .ok()
                .flatten(),
            _ => None,
        };
        let took = started.and_then(|t| (self.ports.clock.now() - t).to_std().ok());
        crate::metrics::book_completed(took);
    }

    /// Sets the run-start fields every new run (start and resume) resets.
    fn new_run(&self, update: Update) -> Update {
        update
            .set("runStartedAt", time(self.ports.clock.now()))
            .set("runWords", 0)
            .set("currentChapter", Value::Null)
            .remove("pauseReason")
    }

    /// Queues the run: the term pass, then one chapters job with every pending chapter, both in
    /// the book's message group so the term list comes first. The chapters job keeps
    /// [`Translations::window_for`] the owner chapters in flight, each place given to the next
    /// chapter as soon as its own finishes (see `jobs::chapter`).
    /// The term list is made from the chapters numbered in `only` when the run translates only
    /// these, else from every chapter.
    async fn queue_chapters(
        &self,
        book: &Book,
        pending: &[u32],
        only: Option<&[u32]>,
    ) -> Result<u32, DataError> {
        if pending.is_empty() {
            // Every chapter was already translated under this key.
            self.finish_if_translated(&book.id).await?;
            return Ok(0);
        }
        let terms = Job::Terms {
            book_id: book.id.clone(),
            run: book.run,
            chapters: only.map(<[u32]>::to_vec),
        };
        terms.enqueue(self.ports.queue.as_ref()).await?;
        let job = Job::Chapters {
            book_id: book.id.clone(),
            numbers: pending.to_vec(),
            run: book.run,
            // Counted from nothing: a resumed chapter's earlier passes make the job's first
            // redelivery look like progress, which costs one extra message at most.
            passes: 0,
        };
        job.enqueue(self.ports.queue.as_ref()).await?;
        Ok(pending.len() as u32)
    }

    /// Chapters of one of the user's books in flight at once: plans with priority get wider
    /// windows. A worker waiting on the network costs the same for one request or a hundred,
    /// and the per-key budget (`booktr_translate::budget`) keeps the provider's limits.
    fn window_of(&self, user: &User) -> usize {
        if user.plan.has_priority() || user.role == Role::Dev {
            self.priority_window
        } else {
            self.window
        }
    }

    /// [`Translations::window_of`] the user with this id (the plain window if they are gone).
    pub(crate) async fn window_for(&self, user_id: &str) -> Result<usize, DataError> {
        Ok(self
            .owners
            .owner(user_id)
            .await?
            .map_or(self.window, |user| self.window_of(&user)))
    }

    async fn set_chapter(
        &self,
        book_id: &str,
        number: u32,
        status: ChapterStatus,
        passes: u8,
    ) -> Result<(), DataError> {
        self.update_chapter(book_id, number, chapter_state(status, passes))
            .await
    }

    pub(crate) async fn update_chapter(
        &self,
        book_id: &str,
        number: u32,
        update: Update,
    ) -> Result<(), DataError> {
        self.ports
            .table
            .update(
                &store::book_pk(book_id),
                &store::chapter_sk(number),
                update,
                Condition::Exists,
            )
            .await?;
        Ok(())
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

/// 400 unless the model is one of the six and the user's plan (or role DEV) allows it.
fn check_model(user: &User, model: &str) -> Result<(), TranslationError> {
    if booktr_translate::providers::lookup(model).is_none() {
        return Err(TranslationError::Invalid(format!(
            "model: '{model}' is not one of gpt-4o-mini, gpt-4o, claude-3-haiku, \
             claude-sonnet-4-20250514, gemini-2.0-flash, gemini-1.5-pro"
        )));
    }
    if user.role != Role::Dev && !user.plan.allowed_models().contains(&model) {
        return Err(TranslationError::Invalid(format!(
            "model: '{model}' is not included in the {} plan (it allows {})",
            user.plan.display_name(),
            user.plan.allowed_models().join(", ")
        )));
    }
    Ok(())
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

/// What a run translates with.
struct RunChoice {
    model: String,
    target: String,
    glossary_id: Option<String>,
    entries: Vec<GlossaryEntry>,
    key: String,
}

impl Translations {
    /// The name of what translates `model` for `user_id`: the provider's model, or the offline
    /// engine's name when no provider key stands behind it. None when the user's stored key no
    /// longer opens or the model is refused: the chapters then fail with that reason.
    async fn engine_for(
        &self,
        user_id: &str,
        model: &str,
    ) -> Result<Option<String>, TranslationError> {
        match self.developer.model_for(user_id, model).await {
            Ok(Ok(client)) => {
                let engine = client.name().to_string();
                if engine == booktr_translate::offline::NAME {
                    info!(
                        model,
                        "no provider key for this model: the offline engine translates (a \
                         pseudo-translation, free)"
                    );
                }
                Ok(Some(engine))
            }
            Ok(Err(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// What a start decided, for the writes that make it happen.
struct StartedRun<'a> {
    book: &'a Book,
    model: &'a str,
    /// What will answer (see [`Translations::engine_for`]).
    engine: Option<String>,
    target: &'a str,
    glossary_id: Option<String>,
    entries: &'a [GlossaryEntry],
    key: String,
    chapters: &'a [Chapter],
    pending: &'a [u32],
    period: &'a str,
    /// Micro-dollars.
    max_cost: Option<i64>,
}

/// The words of the chapters numbered in `numbers`.
fn unfinished_words(chapters: &[Chapter], numbers: &[u32]) -> u64 {
    chapters
        .iter()
        .filter(|c| numbers.contains(&c.number))
        .map(|c| c.word_count.unwrap_or(0))
        .sum()
}

/// The chapters as they will be once `pending` are reset and the others reused.
/// Chapter writes in one transaction of a start: a Moby-Dick of 135 chapters is 2 round trips.
const CHAPTER_WRITES_PER_BATCH: usize = crate::ports::table::MAX_TRANSACTION_OPS;

/// The update that sets a chapter's state (and clears its error).
fn chapter_state(status: ChapterStatus, passes: u8) -> Update {
    let update = Update::default()
        .set("status", status.as_str())
        .set("passesDone", passes)
        .set("error", Value::Null);
    if passes == 0 {
        // The quality record describes a translation this chapter no longer has.
        update.remove("quality")
    } else {
        update
    }
}

fn chapters_after(chapters: &[Chapter], pending: &std::collections::HashSet<u32>) -> Vec<Chapter> {
    chapters
        .iter()
        .map(|c| {
            let done = !pending.contains(&c.number);
            Chapter {
                status: if done {
                    ChapterStatus::Completed
                } else {
                    ChapterStatus::Pending
                },
                passes_done: if done { 3 } else { 0 },
                ..c.clone()
            }
        })
        .collect()
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

    #[test]
    fn a_books_error_keeps_its_kind_through_translation() {
        let unsupported = crate::books::sniff("book.mobi", b"hello").unwrap_err();
        assert!(matches!(
            TranslationError::from(BooksError::UnsupportedFile(unsupported)),
            TranslationError::Books(BooksError::UnsupportedFile(_))
        ));
        assert!(matches!(
            TranslationError::from(BooksError::TooLarge),
            TranslationError::Books(BooksError::TooLarge)
        ));
        assert!(matches!(
            TranslationError::from(BooksError::NotFound),
            TranslationError::NotFound
        ));
        let corrupt = Fault::Internal("a closed semaphore".into());
        assert!(matches!(
            TranslationError::from(BooksError::Fault(corrupt)),
            TranslationError::Fault(Fault::Internal(_))
        ));
        assert!(matches!(
            TranslationError::from(DataError::Store(StoreError::Unavailable("down".into()))),
            TranslationError::Store(StoreError::Unavailable(_))
        ));
    }

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
