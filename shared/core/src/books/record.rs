//! The book and chapter items: what each holds, and the one place their attributes are named.
//! Services read them as [`BookRecord`] / [`ChapterRecord`] and change them with the operations
//! of [`BookChange`] / [`ChapterChange`] under the conditions below; where the items live is
//! `super::store`.
//!
//! The book item (`BOOK#<id>` / `BOOK`):
//!
//! | attribute | holds | changed by |
//! |---|---|---|
//! | `id`, `userId`, `format`, `fileName`, `fileSize`, `createdAt` | the upload | creation |
//! | `title`, `titleFromUser`, `author` | what the book is called | creation, extraction, an edit |
//! | `originalLang`, `wordCount`, `chapterCount`, `warnings` | what extraction read | extraction (`warnings` again by generation) |
//! | `status`, `updatedAt`, `error` | the lifecycle ([`super::lifecycle`]) | every transition; a failure |
//! | `run`, `translationModel`, `fallbackModel`, `memory`, `engine`, `glossaryId`, `targetLang`, `translationKey`, `chargedPeriod`, `maxCostMicros` | the translation run | start, resume, stop |
//! | `progress`, `completedAt` | how far the run is | a finished chapter, the file made |
//! | `currentChapter`, `pauseReason` | what the run is at; why it paused | the chapter and term jobs, the cost cap |
//! | `pauseAtTerms` | the run stops once its term list is ready, for the owner to check it | start; the term job's pause |
//! | `pausedAtTerms` | the run is paused there, its list waiting for the owner | the term job's pause; start, resume |
//! | `runStartedAt`, `runWords` | the run's pace, for its time estimate | start, resume, a finished chapter |
//! | `costMicros`, `costCommittedMicros` | the run's model cost; that plus the passes in flight | each pass |
//! | `termsKey`, `termsFound`, `termsUsage` | the run's term list | the term job |
//! | `shareToken`, `shareExpiresAt` | the public share link | share, unshare |
//! | `gsi1pk`, `gsi1sk` | the owner's list of books, by creation | creation |
//! | `editVersions`, `editBytes` | the owner's changes its passages keep, and their texts' bytes ([`StoredEdits`]) | each change of a passage |
//!
//! A chapter item (`BOOK#<id>` / `CHAPTER#<number>`): `id`, `number`, `title`, `wordCount`
//! (extraction); `status`, `passesDone`, `error`, `storedKey`, `quality` (the run);
//! `attempts`, `attemptsRun`, `lastError` (failed tries of the chapter job, per run);
//! `passageEdits` (the owner's changes of its passages, counted).
//!
//! A share link's item (`SHARE#<token>` / `SHARE`): `bookId`, `expiresAt`, `createdAt`,
//! `public`, and for a public link `gsi1pk` / `gsi1sk` (`SHARES` / `<createdAt>#<token>`).
//!
//! A direct upload's offer (`USER#<userId>` / `UPLOAD#<id>`, see `super::direct`): `fileName`,
//! `size`, `createdAt`, `expiresAt`, `confirmBy`, `title`, `targetLang`, and `posts` (how
//! often its form was posted to this server).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::format::BookFormat;
use super::model::{Book, Chapter};
use crate::items::{opt_time, time, time_text, CorruptItem, Fields};
use crate::ports::{Condition, Item, Update};
use crate::types::{BookStatus, ChapterStatus, LanguageCode};

// The keys: a book's partition and its items, the owner's list of books, the share link, and
// the direct-upload offer in the owner's partition (`USER#<id>` / `UPLOAD#<upload id>`).

pub const BOOK_SK: &str = "BOOK";
pub const CHAPTER_PREFIX: &str = "CHAPTER#";
pub const PASSAGE_PREFIX: &str = "PASSAGE#";
pub const PROPOSAL_PREFIX: &str = "PROPOSAL#";

pub fn book_pk(book_id: &str) -> String {
    format!("BOOK#{book_id}")
}

pub fn user_books(user_id: &str) -> String {
    format!("USER#{user_id}#BOOKS")
}

pub fn chapter_sk(number: u32) -> String {
    format!("{CHAPTER_PREFIX}{number:05}")
}

/// The item of a passage the owner changed in the book's translation into `lang`
/// (`crate::translation::passages`): an edit belongs to the language it is written in.
pub fn passage_sk(lang: &str, chapter: u32, block: u32) -> String {
    format!("{}{block:05}", chapter_passages_prefix(lang, chapter))
}

/// The sort-key prefix of a chapter's passage items in the translation into `lang`.
pub fn chapter_passages_prefix(lang: &str, chapter: u32) -> String {
    format!("{PASSAGE_PREFIX}{lang}#{chapter:05}#")
}

/// The item of a re-translation's proposal (`crate::translation::passages::proposals`).
pub fn proposal_sk(proposal_id: &str) -> String {
    format!("{PROPOSAL_PREFIX}{proposal_id}")
}

/// The public share link: `SHARE#<token>` / `SHARE`, read by token without credentials. Kept
/// outside the book's partition so a revoked token is gone at once (an index may lag).
pub fn share_pk(token: &str) -> String {
    format!("SHARE#{token}")
}

pub const SHARE_SK: &str = "SHARE";

/// The sort-key prefix of the owner's direct-upload offers.
pub(super) const UPLOAD_PREFIX: &str = "UPLOAD#";

/// The item of a direct-upload offer, in the owner's partition.
pub(super) fn upload_sk(upload_id: &str) -> String {
    format!("{UPLOAD_PREFIX}{upload_id}")
}

/// Everything a book item holds: the book as the API shows it, and its run's bookkeeping.
#[derive(Debug, Clone, PartialEq)]
pub struct BookRecord {
    pub book: Book,
    pub run: RunRecord,
}

impl BookRecord {
    pub fn from_item(item: &Item) -> Result<BookRecord, CorruptItem> {
        Ok(BookRecord {
            book: book_from(item)?,
            run: RunRecord::from_item(item)?,
        })
    }
}

/// What the book item records of its current run beyond [`Book`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRecord {
    /// What the run is at: a chapter's title, or the term pass.
    pub current_chapter: Option<String>,
    /// Why the run paused itself (its cost cap), while it is paused.
    pub pause_reason: Option<String>,
    /// What the run's model calls cost so far, in millionths of a US dollar.
    pub cost_micros: i64,
    pub started_at: Option<DateTime<Utc>>,
    /// Words of the chapters the run has finished since it started.
    pub words: i64,
    /// The term list of the last term job, whatever run it was made for.
    pub terms: Option<TermsRecord>,
    /// The run pauses once its term list is ready (and has not yet done so).
    pub pause_at_terms: bool,
    /// The run paused itself there, its term list waiting for the owner (until it goes on).
    pub paused_at_terms: bool,
}

/// What the term job recorded on the book.
#[derive(Debug, Clone, PartialEq)]
pub struct TermsRecord {
    /// The translation key the list was made under.
    pub key: String,
    pub found: Option<i64>,
    /// The term pass's model usage, as the pipeline reports it.
    pub usage: Option<Value>,
}

impl RunRecord {
    pub fn from_item(item: &Item) -> Result<RunRecord, CorruptItem> {
        let f = Fields::of(item);
        let terms = match f.opt_string("termsKey")? {
            None => None,
            Some(key) => Some(TermsRecord {
                key,
                found: f.opt_int("termsFound")?,
                usage: f.json("termsUsage").cloned(),
            }),
        };
        Ok(RunRecord {
            current_chapter: f.opt_string("currentChapter")?,
            pause_reason: f.opt_string("pauseReason")?,
            cost_micros: f.opt_int("costMicros")?.unwrap_or(0),
            started_at: f.opt_time("runStartedAt")?,
            words: f.opt_int("runWords")?.unwrap_or(0),
            terms,
            pause_at_terms: f.opt_bool("pauseAtTerms")?.unwrap_or(false),
            paused_at_terms: f.opt_bool("pausedAtTerms")?.unwrap_or(false),
        })
    }
}

/// A new book's item. Attributes a book gains later (its run's) are absent until then.
pub fn book_item(book: &Book) -> Item {
    Item::new(book_pk(&book.id), BOOK_SK)
        .with("id", book.id.clone())
        .with("userId", book.user_id.clone())
        .with("title", book.title.clone())
        .with("titleFromUser", book.title_from_user)
        .with("author", book.author.clone())
        .with("originalLang", book.original_lang.clone())
        .with("targetLang", book.target_lang.clone())
        .with("status", book.status.as_str())
        .with("progress", book.progress)
        .with("wordCount", book.word_count)
        .with("chapterCount", book.chapter_count)
        .with("translationModel", book.translation_model.clone())
        .with("format", book.format.as_str())
        .with("fileName", book.file_name.clone())
        .with("fileSize", book.file_size)
        .with("error", book.error.clone())
        .with("warnings", book.warnings.clone())
        .with("glossaryId", book.glossary_id.clone())
        .with("run", book.run)
        .with("translationKey", book.translation_key.clone())
        .with("createdAt", time(book.created_at))
        .with("updatedAt", time(book.updated_at))
        .with("completedAt", opt_time(book.completed_at))
        .with("gsi1pk", user_books(&book.user_id))
        .with(
            "gsi1sk",
            format!("{}#{}", time_text(book.created_at), book.id),
        )
}

/// The book in a book item. Attributes older items lack read as their starting values.
pub fn book_from(item: &Item) -> Result<Book, CorruptItem> {
    let f = Fields::of(item);
    Ok(Book {
        id: f.string("id")?,
        user_id: f.string("userId")?,
        title: f.string("title")?,
        title_from_user: f.opt_bool("titleFromUser")?.unwrap_or(false),
        author: f.opt_string("author")?,
        original_lang: f.string("originalLang")?,
        target_lang: f.string("targetLang")?,
        status: f.parsed("status")?,
        progress: f.opt_int("progress")?.unwrap_or(0),
        word_count: f.opt_int("wordCount")?,
        chapter_count: f.opt_int("chapterCount")?,
        translation_model: f.opt_string("translationModel")?,
        fallback_model: f.opt_string("fallbackModel")?,
        memory: f.opt_bool("memory")?.unwrap_or(true),
        engine: f.opt_string("engine")?,
        format: BookFormat::parse(f.str("format")?).ok_or_else(|| f.corrupt("format"))?,
        file_name: f.string("fileName")?,
        file_size: f.opt_int("fileSize")?.unwrap_or(0),
        error: f.opt_string("error")?,
        warnings: f.strings("warnings")?,
        glossary_id: f.opt_string("glossaryId")?,
        run: f.opt_int("run")?.unwrap_or(0),
        translation_key: f.opt_string("translationKey")?,
        share_token: f.opt_string("shareToken")?,
        charged_period: f.opt_string("chargedPeriod")?,
        max_cost_micros: f.opt_int("maxCostMicros")?,
        created_at: f.time("createdAt")?,
        updated_at: f.time("updatedAt")?,
        completed_at: f.opt_time("completedAt")?,
    })
}

/// What a start decided for its run.
pub struct RunStart<'a> {
    pub model: &'a str,
    /// What answers the model (see `Translations::engine_for`); None when nothing can.
    pub engine: Option<String>,
    pub glossary_id: Option<String>,
    pub target_lang: &'a str,
    pub translation_key: &'a str,
    /// The month whose word quota the run was charged to.
    pub charged_period: &'a str,
    /// The cost cap, in millionths of a US dollar.
    pub max_cost_micros: Option<i64>,
    /// The book's progress with the chapters reused from earlier runs.
    pub progress: u8,
    /// Pause once the term list is ready, for the owner to check it.
    pub pause_at_terms: bool,
}

/// What extraction read of the book.
pub struct Extracted<'a> {
    pub word_count: u64,
    pub chapter_count: usize,
    pub original_lang: &'a LanguageCode,
    pub warnings: &'a [String],
    /// The file's title, when the user did not name the book.
    pub title: Option<String>,
    /// The file's author, when the book has none.
    pub author: Option<String>,
}

/// What the owner's changes of a book's passages keep stored (see
/// `crate::translation::passages`): counted on the book item as they come and go, so they go
/// with the book.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoredEdits {
    /// Changes kept (each an undo can go back through).
    pub versions: u64,
    /// The bytes of their texts.
    pub bytes: u64,
}

impl StoredEdits {
    /// The book item's count (none on a book never edited).
    pub fn of(item: &Item) -> Result<StoredEdits, CorruptItem> {
        let f = Fields::of(item);
        let count = |name| -> Result<u64, CorruptItem> {
            Ok(f.opt_int::<i64>(name)?.unwrap_or(0).max(0) as u64)
        };
        Ok(StoredEdits {
            versions: count("editVersions")?,
            bytes: count("editBytes")?,
        })
    }
}

/// A change to a book item, built from the operations below (several can be chained).
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct BookChange(Update);

impl BookChange {
    /// A new run of the book: the run number moves on, and the run's choices, cost and pace
    /// start afresh.
    pub fn begin_run(start: &RunStart<'_>, now: DateTime<Utc>) -> Self {
        let update = Update::default()
            .add("run", 1)
            .set("translationModel", start.model)
            .set("engine", start.engine.clone())
            .set("glossaryId", start.glossary_id.clone())
            .set("targetLang", start.target_lang)
            .set("translationKey", start.translation_key)
            .set("chargedPeriod", start.charged_period)
            .set("maxCostMicros", start.max_cost_micros)
            .set("costMicros", 0)
            .set("costCommittedMicros", 0)
            .set("completedAt", Value::Null)
            .set("error", Value::Null)
            .set("progress", start.progress);
        let update = if start.pause_at_terms {
            update.set("pauseAtTerms", true)
        } else {
            update.remove("pauseAtTerms")
        };
        BookChange(update).new_run(now)
    }

    /// The run's fallback model (see [`Book::fallback_model`]), or none: a start sets it with
    /// [`BookChange::begin_run`], so a run never keeps an earlier run's.
    pub fn fallback_model(self, model: Option<&str>) -> Self {
        BookChange(self.0.set("fallbackModel", model))
    }

    /// Whether the run uses the owner's translation memory (see [`Book::memory`]); a start
    /// sets it with [`BookChange::begin_run`].
    pub fn memory(self, on: bool) -> Self {
        BookChange(self.0.set("memory", on))
    }

    /// The run goes on as a new run with the same choices; `max_cost_micros` replaces the cap.
    pub fn resume_run(
        engine: Option<String>,
        max_cost_micros: Option<i64>,
        now: DateTime<Utc>,
    ) -> Self {
        let mut update = Update::default()
            .add("run", 1)
            .set("error", Value::Null)
            .set("engine", engine);
        if let Some(max_cost) = max_cost_micros {
            update = update.set("maxCostMicros", max_cost);
        }
        BookChange(update).new_run(now)
    }

    /// The fields every new run (start and resume) resets.
    fn new_run(self, now: DateTime<Utc>) -> Self {
        BookChange(
            self.0
                .set("runStartedAt", time(now))
                .set("runWords", 0)
                .set("currentChapter", Value::Null)
                .remove("pauseReason")
                .remove("pausedAtTerms"),
        )
    }

    /// The run is cancelled: its jobs are dropped (the run moves on) and its charge is settled.
    pub fn stop_run() -> Self {
        BookChange(
            Update::default()
                .add("run", 1)
                .set("currentChapter", Value::Null)
                .set("chargedPeriod", Value::Null)
                .set("error", Value::Null),
        )
    }

    pub fn all_chapters_translated() -> Self {
        BookChange(
            Update::default()
                .set("progress", 100)
                .set("currentChapter", Value::Null)
                .remove("pauseReason"),
        )
    }

    /// What the run is at now (a chapter's title, a step's name).
    pub fn current_chapter(title: &str) -> Self {
        BookChange(Update::default().set("currentChapter", title))
    }

    /// A chapter finished: the book was changed, and the run translated `words` more.
    pub fn chapter_completed(words: u64, now: DateTime<Utc>) -> Self {
        let mut update = Update::default().set("updatedAt", time(now));
        if words > 0 {
            update = update.add("runWords", words as i64);
        }
        BookChange(update)
    }

    pub fn progress(progress: u8) -> Self {
        BookChange(Update::default().set("progress", progress))
    }

    /// A chapter failed for good: the run stops at `message`.
    pub fn chapter_failed(message: &str) -> Self {
        BookChange(
            Update::default()
                .set("error", message)
                .set("currentChapter", Value::Null),
        )
    }

    /// The run paused itself before going past its cost cap, saying so.
    pub fn paused_at_cost_cap(reason: &str) -> Self {
        BookChange(
            Update::default()
                .set("pauseReason", reason)
                .set("currentChapter", Value::Null),
        )
    }

    /// The run paused with its term list ready for the owner to check; it does so once.
    pub fn paused_at_terms(reason: &str) -> Self {
        BookChange(
            Update::default()
                .set("pauseReason", reason)
                .set("currentChapter", Value::Null)
                .remove("pauseAtTerms")
                .set("pausedAtTerms", true),
        )
    }

    /// Reserves `micros` of the cap for a pass to come (see [`cost_room`]).
    pub fn reserve_cost(micros: i64) -> Self {
        BookChange(Update::default().add("costCommittedMicros", micros))
    }

    /// A pass cost `spent`: counted, and what was reserved for it beyond that given back.
    pub fn settle_cost(spent: i64, reserved: i64) -> Self {
        BookChange(
            Update::default()
                .add("costMicros", spent)
                .add("costCommittedMicros", spent - reserved),
        )
    }

    /// The glossary the book's runs use from now on (one made for the book between runs).
    pub fn glossary(glossary_id: &str) -> Self {
        BookChange(Update::default().set("glossaryId", glossary_id))
    }

    /// The term job's list for the run under `key`.
    pub fn terms_listed(key: &str, found: usize, usage: Value) -> Self {
        BookChange(
            Update::default()
                .set("termsKey", key)
                .set("termsFound", found as i64)
                .set("termsUsage", usage)
                .set("currentChapter", Value::Null),
        )
    }

    pub fn extracted(extracted: &Extracted<'_>) -> Self {
        let mut update = Update::default()
            .set("wordCount", extracted.word_count)
            .set("chapterCount", extracted.chapter_count)
            .set("originalLang", extracted.original_lang.as_str())
            .set("error", Value::Null)
            // Set even when empty: a retry replaces what an earlier attempt wrote.
            .set("warnings", extracted.warnings.to_vec());
        if let Some(title) = &extracted.title {
            update = update.set("title", title.as_str());
        }
        if let Some(author) = &extracted.author {
            update = update.set("author", author.as_str());
        }
        BookChange(update)
    }

    /// The book's file was made, with what its reader should know.
    pub fn generated(warnings: Vec<String>, now: DateTime<Utc>) -> Self {
        BookChange(
            Update::default()
                .set("completedAt", time(now))
                .set("progress", 100)
                .set("warnings", warnings),
        )
    }

    /// The book's warnings as its quality now stands (the owner changed a flagged passage).
    pub fn flag_warnings(warnings: Vec<String>) -> Self {
        BookChange(Update::default().set("warnings", warnings))
    }

    /// Why the book failed (or a job's latest failure, its status unchanged).
    pub fn error(message: &str) -> Self {
        BookChange(Update::default().set("error", message))
    }

    /// The owner said what language the book is written in.
    pub fn source_language(language: &LanguageCode, now: DateTime<Utc>) -> Self {
        BookChange(
            Update::default()
                .set("originalLang", language.as_str())
                .set("updatedAt", time(now)),
        )
    }

    /// The book's passages keep `versions` more changes of the owner's (fewer when negative),
    /// holding `bytes` more bytes of text.
    pub fn edits_stored(versions: i64, bytes: i64) -> Self {
        BookChange(
            Update::default()
                .add("editVersions", versions)
                .add("editBytes", bytes),
        )
    }

    /// The owner changed the book's details.
    pub fn edited(now: DateTime<Utc>) -> Self {
        BookChange(Update::default().set("updatedAt", time(now)))
    }

    /// Named by the user: the file's own title no longer replaces it.
    pub fn titled(self, title: &str) -> Self {
        BookChange(self.0.set("title", title).set("titleFromUser", true))
    }

    pub fn author(self, author: Option<&str>) -> Self {
        BookChange(self.0.set("author", author))
    }

    pub fn shared(token: &str, expires_at: Option<DateTime<Utc>>) -> Self {
        BookChange(
            Update::default()
                .set("shareToken", token)
                .set("shareExpiresAt", opt_time(expires_at)),
        )
    }

    pub fn unshared() -> Self {
        BookChange(
            Update::default()
                .set("shareToken", Value::Null)
                .set("shareExpiresAt", Value::Null),
        )
    }

    /// The change with the book moved to `status` (see `Books::transition`).
    pub(crate) fn moved_to(self, status: BookStatus, now: DateTime<Utc>) -> Self {
        BookChange(
            self.0
                .set("status", status.as_str())
                .set("updatedAt", time(now)),
        )
    }

    pub fn into_update(self) -> Update {
        self.0
    }
}

/// The book is the user's.
pub fn owned_by(user_id: &str) -> Condition {
    Condition::equals("userId", user_id)
}

/// The book is in one of these statuses.
pub fn status_in(statuses: &[BookStatus]) -> Condition {
    let allowed = statuses.iter().map(|s| Value::from(s.as_str())).collect();
    Condition::In("status".into(), allowed)
}

/// The book still translates under `key` (no other run has begun since).
pub fn translating_under(key: &str) -> Condition {
    Condition::equals("translationKey", key)
}

/// The book translates in run `run`, which was started to pause once its term list is ready.
pub fn pausing_at_terms(run: u32) -> Condition {
    Condition::All(vec![
        status_in(&[BookStatus::Translating]),
        Condition::equals("run", run),
        Condition::equals("pauseAtTerms", true),
    ])
}

/// The book is in run `run`, whose cost spent and reserved leaves room for `micros` more under
/// its cap `cap`.
pub fn cost_room(run: u32, cap: i64, micros: i64) -> Condition {
    Condition::All(vec![
        Condition::AtMost("costCommittedMicros".into(), cap - micros),
        Condition::equals("run", run),
    ])
}

/// Everything a chapter item holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ChapterRecord {
    pub chapter: Chapter,
    /// The quality record of its translation (the pipeline's `Quality`), while it has one.
    pub quality: Option<Value>,
    /// Failed tries of the chapter job in the run last counted.
    pub attempts: Option<i64>,
}

impl ChapterRecord {
    pub fn from_item(item: &Item) -> Result<ChapterRecord, CorruptItem> {
        Ok(ChapterRecord {
            chapter: chapter_from(item)?,
            quality: quality_of(item).cloned(),
            attempts: Fields::of(item).opt_int("attempts")?,
        })
    }
}

/// A chapter item's quality record, read without the rest (summaries over many chapters).
pub fn quality_of(item: &Item) -> Option<&Value> {
    Fields::of(item).json("quality")
}

pub fn chapter_item(book_id: &str, chapter: &Chapter) -> Item {
    Item::new(book_pk(book_id), chapter_sk(chapter.number))
        .with("id", chapter.id.clone())
        .with("number", chapter.number)
        .with("title", chapter.title.clone())
        .with("wordCount", chapter.word_count)
        .with("status", chapter.status.as_str())
        .with("passesDone", chapter.passes_done)
        .with("error", chapter.error.clone())
}

pub fn chapter_from(item: &Item) -> Result<Chapter, CorruptItem> {
    let f = Fields::of(item);
    Ok(Chapter {
        id: f.string("id")?,
        number: f.int("number")?,
        title: f.opt_string("title")?,
        word_count: f.opt_int("wordCount")?,
        status: f.parsed("status")?,
        passes_done: f.opt_int("passesDone")?.unwrap_or(0),
        error: f.opt_string("error")?,
        stored_key: f.opt_string("storedKey")?,
        edits: f.opt_int("passageEdits")?.unwrap_or(0),
    })
}

/// A change to a chapter item.
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct ChapterChange(Update);

impl ChapterChange {
    /// The chapter's state in a run (its error cleared); with no pass done, the quality record
    /// of a translation it no longer has goes too.
    pub fn state(status: ChapterStatus, passes: u8) -> Self {
        let update = Update::default()
            .set("status", status.as_str())
            .set("passesDone", passes)
            .set("error", Value::Null);
        if passes == 0 {
            ChapterChange(update.remove("quality"))
        } else {
            ChapterChange(update)
        }
    }

    pub fn translating() -> Self {
        ChapterChange(Update::default().set("status", ChapterStatus::Translating.as_str()))
    }

    /// Translated and stored under `key`, with its quality record when it was made now.
    pub fn completed(key: &str, quality: Option<Value>) -> Self {
        let mut update = Update::default()
            .set("status", ChapterStatus::Completed.as_str())
            .set("passesDone", 3)
            .set("storedKey", key)
            .set("error", Value::Null);
        if let Some(quality) = quality {
            update = update.set("quality", quality);
        }
        ChapterChange(update)
    }

    pub fn failed(reason: &str) -> Self {
        ChapterChange(
            Update::default()
                .set("status", ChapterStatus::Error.as_str())
                .set("error", reason),
        )
    }

    /// The owner changed one of its passages: one more change counted, and the quality record
    /// as the passages now stand, when there is one to replace (see [`stored_under`]).
    pub fn passage_changed(quality: Option<Value>) -> Self {
        let update = Update::default().add("passageEdits", 1);
        match quality {
            Some(quality) => ChapterChange(update.set("quality", quality)),
            None => ChapterChange(update),
        }
    }

    /// See [`passes_below`].
    pub fn passes_done(done: u8) -> Self {
        ChapterChange(Update::default().set("passesDone", done))
    }

    /// One more failed try in the run already counting (see [`attempts_counted_in`]).
    pub fn attempt_failed(cause: &str) -> Self {
        ChapterChange(Update::default().add("attempts", 1).set("lastError", cause))
    }

    /// The first failed try of run `run`: the count starts again.
    pub fn first_attempt_failed(run: u32, cause: &str) -> Self {
        ChapterChange(
            Update::default()
                .set("attempts", 1)
                .set("attemptsRun", run)
                .set("lastError", cause),
        )
    }

    pub fn into_update(self) -> Update {
        self.0
    }
}

/// The chapter still holds the translation made under `key` (its quality record is that
/// translation's).
pub fn stored_under(key: &str) -> Condition {
    Condition::All(vec![
        Condition::equals("storedKey", key),
        Condition::equals("status", ChapterStatus::Completed.as_str()),
    ])
}

/// The chapter has fewer than `done` passes recorded, so a pass count only ever grows.
pub fn passes_below(done: u8) -> Condition {
    let smaller = (0..done).map(Value::from).collect();
    Condition::In("passesDone".into(), smaller)
}

/// The chapter's failed tries are being counted for run `run`.
pub fn attempts_counted_in(run: u32) -> Condition {
    Condition::equals("attemptsRun", run)
}

/// The `gsi1` partition listing public share links, newest first.
pub const PUBLIC_SHARES: &str = "SHARES";

/// A share link as its item holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRecord {
    pub token: String,
    /// The book shared (every link has one; None reads as a link to nothing).
    pub book_id: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    /// Listed in the sitemap (links made before the choice existed are not).
    pub public: bool,
    /// When it was made (links made before this was recorded, all unlisted, lack it).
    pub created_at: Option<DateTime<Utc>>,
}

impl ShareRecord {
    pub fn item(&self) -> Item {
        let mut item = Item::new(share_pk(&self.token), SHARE_SK)
            .with("bookId", self.book_id.clone())
            .with("expiresAt", opt_time(self.expires_at))
            .with("createdAt", opt_time(self.created_at))
            .with("public", self.public);
        if let (true, Some(created_at)) = (self.public, self.created_at) {
            // Indexed by creation, for the sitemap.
            item = item.with("gsi1pk", PUBLIC_SHARES).with(
                "gsi1sk",
                format!("{}#{}", time_text(created_at), self.token),
            );
        }
        item
    }

    pub fn from_item(item: &Item) -> Result<ShareRecord, CorruptItem> {
        let f = Fields::of(item);
        Ok(ShareRecord {
            token: item.pk.trim_start_matches(&share_pk("")).to_string(),
            book_id: f.opt_string("bookId")?,
            expires_at: f.opt_time("expiresAt")?,
            public: f.opt_bool("public")? == Some(true),
            created_at: f.opt_time("createdAt")?,
        })
    }

    /// A public link's item from the index, which is written with its creation time.
    pub fn listed(item: &Item) -> Result<(ShareRecord, DateTime<Utc>), CorruptItem> {
        let record = ShareRecord::from_item(item)?;
        let created_at = Fields::of(item).time("createdAt")?;
        Ok((record, created_at))
    }
}

/// A direct upload's offer: what the form was made for.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadOffer {
    pub file_name: String,
    /// The bytes the form allows.
    pub size: i64,
    pub created_at: DateTime<Utc>,
    /// When its form expires.
    pub expires_at: DateTime<Utc>,
    /// When the offer is over; offers stored before this was recorded lack it.
    pub confirm_by: Option<DateTime<Utc>>,
    pub title: Option<String>,
    pub target_lang: Option<String>,
}

impl UploadOffer {
    pub fn item(&self, pk: String, sk: String) -> Item {
        let mut item = Item::new(pk, sk)
            .with("fileName", self.file_name.as_str())
            .with("size", self.size)
            .with("createdAt", time(self.created_at))
            .with("expiresAt", time(self.expires_at))
            .with("confirmBy", opt_time(self.confirm_by));
        if let Some(title) = &self.title {
            item = item.with("title", title.as_str());
        }
        if let Some(lang) = &self.target_lang {
            item = item.with("targetLang", lang.as_str());
        }
        item
    }

    pub fn from_item(item: &Item) -> Result<UploadOffer, CorruptItem> {
        let f = Fields::of(item);
        Ok(UploadOffer {
            file_name: f.string("fileName")?,
            size: f.int("size")?,
            created_at: f.time("createdAt")?,
            expires_at: f.time("expiresAt")?,
            confirm_by: f.opt_time("confirmBy")?,
            title: f.opt_string("title")?,
            target_lang: f.opt_string("targetLang")?,
        })
    }

    /// The offer's form was posted once more (or, with -1, given back).
    pub fn form_posted(times: i64) -> Update {
        Update::default().add("posts", times)
    }

    /// The offer's form has not been posted yet.
    pub fn form_unposted() -> Condition {
        Condition::AtMost("posts".into(), 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book() -> Book {
        let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc);
        Book {
            id: "b1".into(),
            user_id: "u1".into(),
            title: "Moby-Dick".into(),
            title_from_user: false,
            author: Some("Herman Melville".into()),
            original_lang: "en".into(),
            target_lang: "es".into(),
            status: BookStatus::Uploaded,
            progress: 0,
            word_count: None,
            chapter_count: None,
            translation_model: None,
            fallback_model: None,
            memory: true,
            engine: None,
            format: BookFormat::Epub,
            file_name: "moby.epub".into(),
            file_size: 1234,
            error: None,
            warnings: vec!["a skipped image".into()],
            glossary_id: None,
            run: 0,
            translation_key: None,
            share_token: None,
            charged_period: None,
            max_cost_micros: None,
            created_at: at,
            updated_at: at,
            completed_at: None,
        }
    }

    #[test]
    fn a_book_reads_back_as_it_was_written() {
        let book = book();
        assert_eq!(book_from(&book_item(&book)), Ok(book));
    }

    #[test]
    fn a_corrupt_book_item_is_an_error_naming_the_item_and_the_field() {
        let item = book_item(&book()).with("progress", "half");
        assert_eq!(
            book_from(&item),
            Err(CorruptItem {
                pk: book_pk("b1"),
                sk: BOOK_SK.into(),
                attribute: "progress".into(),
            })
        );
        let item = book_item(&book()).with("warnings", vec![Value::from(3)]);
        assert_eq!(book_from(&item).unwrap_err().attribute, "warnings");
        let mut item = book_item(&book());
        item.attrs.remove("userId");
        assert_eq!(book_from(&item).unwrap_err().attribute, "userId");
    }

    #[test]
    fn attributes_an_older_book_item_lacks_read_as_their_starting_values() {
        let mut item = book_item(&book());
        for name in ["titleFromUser", "progress", "fileSize", "run", "warnings"] {
            item.attrs.remove(name);
        }
        let read = BookRecord::from_item(&item).unwrap();
        assert_eq!(read.book.run, 0);
        assert!(read.book.warnings.is_empty());
        assert_eq!(read.run, RunRecord::default());
    }

    #[test]
    fn a_started_run_reads_back_from_the_book_item() {
        let mut item = book_item(&book());
        let now = Utc::now();
        let start = RunStart {
            model: "gpt-4o-mini",
            engine: Some("gpt-4o-mini".into()),
            glossary_id: None,
            target_lang: "fr",
            translation_key: "k1",
            charged_period: "2026-01",
            max_cost_micros: Some(5_000_000),
            progress: 40,
            pause_at_terms: false,
        };
        BookChange::begin_run(&start, now)
            .into_update()
            .apply_to(&mut item.attrs);
        BookChange::current_chapter("Loomings")
            .into_update()
            .apply_to(&mut item.attrs);
        BookChange::reserve_cost(2000)
            .into_update()
            .apply_to(&mut item.attrs);
        BookChange::settle_cost(1200, 2000)
            .into_update()
            .apply_to(&mut item.attrs);
        let read = BookRecord::from_item(&item).unwrap();
        assert_eq!(read.book.run, 1);
        assert_eq!(read.book.target_lang, "fr");
        assert_eq!(read.book.translation_key.as_deref(), Some("k1"));
        assert_eq!(read.book.max_cost_micros, Some(5_000_000));
        assert_eq!(read.book.progress, 40);
        assert_eq!(read.run.current_chapter.as_deref(), Some("Loomings"));
        assert_eq!(read.run.cost_micros, 1200);
        assert_eq!(read.run.started_at.map(time_text), Some(time_text(now)));
        // 1200 spent, nothing in flight: room for the rest of the cap, not a millionth more.
        assert!(cost_room(1, 5_000_000, 5_000_000 - 1200).holds_for(Some(&item.attrs)));
        assert!(!cost_room(1, 5_000_000, 5_000_000 - 1199).holds_for(Some(&item.attrs)));
        assert!(!cost_room(2, 5_000_000, 0).holds_for(Some(&item.attrs)));
    }

    #[test]
    fn a_run_started_to_pause_at_its_terms_pauses_there_once() {
        let mut item = book_item(&book());
        let now = Utc::now();
        let start = RunStart {
            model: "gpt-4o-mini",
            engine: None,
            glossary_id: None,
            target_lang: "fr",
            translation_key: "k1",
            charged_period: "2026-01",
            max_cost_micros: None,
            progress: 0,
            pause_at_terms: true,
        };
        BookChange::begin_run(&start, now)
            .moved_to(BookStatus::Translating, now)
            .into_update()
            .apply_to(&mut item.attrs);
        assert!(BookRecord::from_item(&item).unwrap().run.pause_at_terms);
        assert!(pausing_at_terms(1).holds_for(Some(&item.attrs)));
        assert!(!pausing_at_terms(2).holds_for(Some(&item.attrs)));
        BookChange::paused_at_terms("ready")
            .moved_to(BookStatus::Paused, now)
            .into_update()
            .apply_to(&mut item.attrs);
        let read = BookRecord::from_item(&item).unwrap();
        assert!(!read.run.pause_at_terms);
        assert!(read.run.paused_at_terms);
        assert_eq!(read.run.pause_reason.as_deref(), Some("ready"));
        // Going on (a resume is a new run) is no longer paused there.
        let mut resumed = item.clone();
        BookChange::resume_run(None, None, now)
            .moved_to(BookStatus::Translating, now)
            .into_update()
            .apply_to(&mut resumed.attrs);
        assert!(!BookRecord::from_item(&resumed).unwrap().run.paused_at_terms);
        // A start without the pause clears what an earlier start asked.
        let start = RunStart {
            pause_at_terms: false,
            ..start
        };
        BookChange::begin_run(&start, now)
            .moved_to(BookStatus::Translating, now)
            .into_update()
            .apply_to(&mut item.attrs);
        assert!(!pausing_at_terms(2).holds_for(Some(&item.attrs)));
    }

    #[test]
    fn a_chapter_reads_back_with_its_quality_and_tries() {
        let chapter = Chapter {
            id: "b1-1".into(),
            number: 1,
            title: Some("Loomings".into()),
            word_count: Some(2200),
            status: ChapterStatus::Pending,
            passes_done: 0,
            error: None,
            stored_key: None,
            edits: 0,
        };
        let mut item = chapter_item("b1", &chapter);
        assert_eq!(chapter_from(&item), Ok(chapter));
        let quality = serde_json::json!({"flagged": {}});
        ChapterChange::completed("k1", Some(quality.clone()))
            .into_update()
            .apply_to(&mut item.attrs);
        ChapterChange::first_attempt_failed(2, "down")
            .into_update()
            .apply_to(&mut item.attrs);
        let read = ChapterRecord::from_item(&item).unwrap();
        assert_eq!(read.chapter.status, ChapterStatus::Completed);
        assert_eq!(read.chapter.stored_key.as_deref(), Some("k1"));
        assert_eq!(read.quality, Some(quality));
        assert_eq!(read.attempts, Some(1));
        assert!(attempts_counted_in(2).holds_for(Some(&item.attrs)));
        ChapterChange::state(ChapterStatus::Pending, 0)
            .into_update()
            .apply_to(&mut item.attrs);
        assert_eq!(quality_of(&item), None);
        let item = item.with("number", "one");
        assert_eq!(chapter_from(&item).unwrap_err().attribute, "number");
    }
}
