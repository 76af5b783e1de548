//! Starting a run: what it translates with (each choice defaulting to the user's preferences,
//! checked against their plan), which chapters it must translate (those not already translated
//! under its key), the charge to the month's quota, and the writes that move the book to
//! TRANSLATING before its jobs are queued.

use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::pipeline::PipelineConfig;
use booktr_translate::profile::Profile;
use tracing::{info, instrument};

use super::error::TranslationError;
use super::model::{progress_of, translation_key, unfinished_words};
use super::service::Translations;
use crate::accounts::User;
use crate::books::lifecycle::BookEvent;
use crate::books::record::{BookChange, ChapterChange, RunStart};
use crate::books::{store, Book, Chapter};
use crate::fault::DataError;
use crate::glossaries::GlossaryError;
use crate::ports::{blobs, Condition, StoreError, WriteOp};
use crate::types::{BookStatus, ChapterStatus, LanguageCode, Role};
use crate::usage::Spend;

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
    /// A second model for the blocks the first leaves flagged or of low confidence (one of the
    /// six, not `model`); see `booktr_translate::fallback`.
    pub fallback_model: Option<String>,
    /// Pause once the book's term list is ready, so its owner can check it before the chapters.
    pub pause_at_terms: bool,
    /// Whether the run takes from and gives to the owner's translation memory; None keeps the
    /// book's choice (on for a book never started).
    pub memory: Option<bool>,
}

/// The largest `maxCost` accepted, in US dollars.
const MAX_COST_LIMIT: f64 = 100_000.0;

/// A `maxCost` in millionths of a dollar, or 400.
pub(super) fn max_cost_micros(max_cost: Option<f64>) -> Result<Option<i64>, TranslationError> {
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

impl Translations {
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
    /// ([`super::Completeness::FinishedSoFar`]), as `booktr translate --chapters` does.
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
            fallback,
            target,
            glossary_id,
            entries,
            key,
        } = self
            .choose_run(
                user,
                book,
                Models {
                    model: request.model,
                    fallback: request.fallback_model,
                },
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
            fallback: fallback.as_deref(),
            engine,
            target: &target,
            glossary_id,
            entries: &entries,
            key,
            chapters: &chapters,
            pending: &pending,
            period: &period,
            max_cost,
            pause_at_terms: request.pause_at_terms,
            memory: request.memory.unwrap_or(book.memory),
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
    pub(super) async fn choose_run(
        &self,
        user: &User,
        book: &Book,
        models: Models,
        glossary_id: Option<String>,
        target_lang: Option<String>,
    ) -> Result<RunChoice, TranslationError> {
        let preferences = crate::preferences::get(&self.ports, &user.id).await?;
        let model = models.model.unwrap_or(preferences.default_model);
        check_model(user, &model)?;
        let fallback = models
            .fallback
            .map(|fallback| check_fallback(user, &model, fallback))
            .transpose()?;
        let target = match target_lang {
            Some(t) => LanguageCode::parse(&t)
                .map_err(|e| TranslationError::Invalid(format!("targetLang: {e}")))?
                .to_string(),
            None => book.target_lang.clone(),
        };
        // Each glossary is read once: the one asked for (which must exist), else the book's
        // own (its last run's, or the one its owner's terms were applied to), else the default
        // one (a glossary deleted since it was chosen is no reason to refuse a start).
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
            (None, default) => {
                let mut found = None;
                for id in book.glossary_id.iter().chain(default.iter()) {
                    if let Ok(glossary) = self.glossaries.get(&user.id, id).await {
                        found = Some(glossary);
                        break;
                    }
                }
                found
            }
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
        let key = match &fallback {
            Some(fallback) => with_fallback(&key, fallback),
            None => key,
        };
        Ok(RunChoice {
            model,
            fallback,
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
            fallback,
            engine,
            target,
            glossary_id,
            entries,
            key,
            chapters,
            pending,
            period,
            max_cost,
            pause_at_terms,
            memory,
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
                        update: ChapterChange::state(status, passes).into_update(),
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
        let start = RunStart {
            model,
            engine,
            glossary_id,
            target_lang: target,
            translation_key: &key,
            charged_period: period,
            max_cost_micros: max_cost,
            progress: progress_of(&chapters_after(chapters, &pending)),
            pause_at_terms,
        };
        let update = BookChange::begin_run(&start, self.ports.clock.now())
            .fallback_model(fallback)
            .memory(memory);
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

    /// The name of what translates `model` for `user_id`: the provider's model, or the offline
    /// engine's name when no provider key stands behind it. None when the user's stored key no
    /// longer opens or the model is refused: the chapters then fail with that reason.
    /// The profile `model` would run with for `user_id`, and the pipeline's settings for it
    /// (the hosted profile's when nothing can answer: the estimate is then only indicative).
    pub(super) async fn pipeline_for(
        &self,
        user_id: &str,
        model: &str,
    ) -> Result<(Profile, PipelineConfig), TranslationError> {
        Ok(match self.developer.model_for(user_id, model).await? {
            Ok(client) => self.pipeline.for_model(client.as_ref()),
            Err(_) => (Profile::Hosted, self.pipeline.base),
        })
    }

    pub(super) async fn engine_for(
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

/// 400 unless the model is one of the six and the user's plan (or role DEV) allows it.
pub(super) fn check_model(user: &User, model: &str) -> Result<(), TranslationError> {
    check_field(user, "model", model)
}

/// [`check_model`] of the request's field `field`, which its message names.
fn check_field(user: &User, field: &str, model: &str) -> Result<(), TranslationError> {
    if booktr_translate::providers::lookup(model).is_none() {
        return Err(TranslationError::Invalid(format!(
            "{field}: '{model}' is not one of gpt-4o-mini, gpt-4o, claude-3-haiku, \
             claude-sonnet-4-20250514, gemini-2.0-flash, gemini-1.5-pro"
        )));
    }
    if user.role != Role::Dev && !user.plan.allowed_models().contains(&model) {
        return Err(TranslationError::Invalid(format!(
            "{field}: '{model}' is not included in the {} plan (it allows {})",
            user.plan.display_name(),
            user.plan.allowed_models().join(", ")
        )));
    }
    Ok(())
}

/// `fallbackModel` checked as a model is, and unlike the run's model: 400 otherwise.
fn check_fallback(user: &User, model: &str, fallback: String) -> Result<String, TranslationError> {
    check_field(user, "fallbackModel", &fallback)?;
    if fallback == model {
        return Err(TranslationError::Invalid(format!(
            "fallbackModel: '{fallback}' is the run's model; name another for what it cannot do"
        )));
    }
    Ok(fallback)
}

/// A run's key with its fallback model in it: the fallback decides the text of the blocks it
/// takes, so a run with one does not reuse chapters translated without it (and a run without
/// one has the plain key, and reuses the chapters stored under it).
fn with_fallback(key: &str, fallback: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for part in [key, fallback] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(hash.finalize())
}

/// The models a start or a quote asks for: each None for the default (the user's preferred
/// model; no fallback).
pub(super) struct Models {
    pub model: Option<String>,
    pub fallback: Option<String>,
}

/// What a run translates with.
pub(super) struct RunChoice {
    pub model: String,
    /// The run's fallback model, checked.
    pub fallback: Option<String>,
    pub target: String,
    pub glossary_id: Option<String>,
    pub entries: Vec<GlossaryEntry>,
    pub key: String,
}

/// What a start decided, for the writes that make it happen.
struct StartedRun<'a> {
    book: &'a Book,
    model: &'a str,
    fallback: Option<&'a str>,
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
    pause_at_terms: bool,
    /// Whether the run uses the owner's translation memory.
    memory: bool,
}

/// Chapter writes in one transaction of a start: a Moby-Dick of 135 chapters is 2 round trips.
const CHAPTER_WRITES_PER_BATCH: usize = crate::ports::table::MAX_TRANSACTION_OPS;

/// The chapters as they will be once `pending` are reset and the others reused.
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
