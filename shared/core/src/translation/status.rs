//! `GET /api/translate/status`: what the run has done, measured, never guessed.

use serde_json::Value;

use super::error::TranslationError;
use super::model::progress_of;
use super::quality::QualitySummary;
use super::service::Translations;
use crate::books::record::{BookRecord, ChapterRecord, RunRecord};
use crate::books::{store, Book, Chapter};

use crate::fault::Fault;
use crate::ports::Query;
use crate::types::{BookStatus, ChapterStatus};

#[derive(Debug, Clone)]
pub struct TranslationStatus {
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
    /// The run paused itself with its term list ready, for the owner to check it before the
    /// chapters (a start with `pause_at_terms`), and has not gone on since.
    pub paused_at_terms: bool,
    /// Beyond the spec: while a book translated before is translated again, the earlier
    /// translation's files that downloads still serve until this run's are made (`epub`,
    /// `bilingual pdf` ...); empty otherwise.
    pub previous_files: Vec<String>,
}

/// The run's model cost so far, at the model's list price, and its `maxCost`.
#[derive(Debug, Clone)]
pub struct RunCost {
    pub spent: f64,
    pub max_cost: Option<f64>,
    pub currency: &'static str,
}

#[derive(Debug, Clone)]
pub struct ChapterErrorReport {
    pub chapter_id: String,
    pub error: String,
}

/// The term pass of the current run.
#[derive(Debug, Clone)]
pub struct TermStage {
    /// PENDING until the run's list is stored, then COMPLETED.
    pub status: &'static str,
    /// Names and terms on the list.
    pub found: Option<i64>,
    /// Tokens and requests the pass used (`inputTokens`, `outputTokens`, `requests`).
    pub usage: Option<Value>,
}

/// Chapters that have finished each pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassCounts {
    pub translate: u32,
    pub review: u32,
    pub polish: u32,
}

#[derive(Debug, Clone)]
pub struct ChapterProgress {
    pub chapter: Chapter,
    /// The quality record of the chapter's translation (glossary compliance, untranslated,
    /// missing or broken blocks, tokens per pass).
    pub quality: Option<Value>,
}

impl Translations {
    pub async fn status(
        &self,
        user_id: &str,
        book_id: &str,
    ) -> Result<TranslationStatus, TranslationError> {
        let (book, run, chapters) = self.read_run(user_id, book_id).await?;
        let plain: Vec<Chapter> = chapters.iter().map(|c| c.chapter.clone()).collect();
        let completed = plain
            .iter()
            .filter(|c| c.status == ChapterStatus::Completed)
            .count() as u32;
        let passes = pass_counts(&plain);
        let errors = chapter_errors(&plain);
        let estimated_time_remaining = if book.status == BookStatus::Translating {
            self.remaining_seconds(&run, &plain)
        } else {
            None
        };
        // Before any run the stored progress is 0; during and after one it is measured here.
        let progress = if book.run == 0 {
            0
        } else {
            progress_of(&plain)
        };
        let terms = term_stage(&book, &run);
        let quality = QualitySummary::of(chapters.iter().filter_map(|c| c.quality.as_ref()));
        let previous_files = self.previous_files(&book).await?;
        Ok(TranslationStatus {
            previous_files,
            quality,
            status: book.status,
            progress,
            chapters_total: plain.len() as u32,
            chapters_completed: completed,
            current_chapter: run.current_chapter,
            estimated_time_remaining,
            errors,
            model: book.translation_model,
            engine: book.engine,
            passes,
            terms,
            chapters,
            cost: RunCost {
                spent: run.cost_micros as f64 / 1e6,
                max_cost: book.max_cost_micros.map(|m| m as f64 / 1e6),
                currency: "USD",
            },
            paused_at_terms: book.status == BookStatus::Paused && run.paused_at_terms,
            pause_reason: (book.status == BookStatus::Paused)
                .then_some(run.pause_reason)
                .flatten(),
        })
    }

    /// The book (the caller's), its run's fields and its chapters with their quality records,
    /// from one read of the book's partition.
    async fn read_run(
        &self,
        user_id: &str,
        book_id: &str,
    ) -> Result<(Book, RunRecord, Vec<ChapterProgress>), TranslationError> {
        // One read of the book's partition: the book item (with the run fields the Book type
        // does not carry) sorts first ("BOOK" before "CHAPTER#"), its chapters after it, all from
        // one consistent snapshot.
        let mut items = self
            .ports
            .table
            .query(Query::partition(store::book_pk(book_id)))
            .await?
            .into_iter();
        let book_item = items
            .next()
            .filter(|item| item.sk == store::BOOK_SK)
            .ok_or(TranslationError::NotFound)?;
        let BookRecord { book, run } = BookRecord::from_item(&book_item).map_err(Fault::from)?;
        if book.user_id != user_id {
            return Err(TranslationError::NotFound);
        }
        let items: Vec<_> = items
            .filter(|item| item.sk.starts_with(store::CHAPTER_PREFIX))
            .collect();
        let mut chapters = Vec::with_capacity(items.len());
        for item in &items {
            let record = ChapterRecord::from_item(item).map_err(Fault::from)?;
            chapters.push(ChapterProgress {
                chapter: record.chapter,
                quality: record.quality,
            });
        }
        Ok((book, run, chapters))
    }

    /// While a book translated before is translated again, the earlier translation's files
    /// downloads still serve.
    async fn previous_files(&self, book: &Book) -> Result<Vec<String>, TranslationError> {
        let mut previous_files = Vec::new();
        if book.status != BookStatus::Completed {
            let kept = self
                .ports
                .blobs
                .list(&store::previous_outputs_prefix(&book.id))
                .await?;
            for edition in store::editions() {
                if kept.contains(&store::previous_output_key(&book.id, edition)?) {
                    previous_files.push(edition.label());
                }
            }
        }
        Ok(previous_files)
    }

    /// Words still to translate over the words per second achieved since the run started.
    fn remaining_seconds(&self, run: &RunRecord, chapters: &[Chapter]) -> Option<u64> {
        let done_words = run.words;
        let started = run.started_at?;
        let elapsed = (self.ports.clock.now() - started).num_milliseconds();
        if done_words <= 0 || elapsed <= 0 {
            return None;
        }
        let remaining_words: u64 = chapters
            .iter()
            .filter(|c| c.status != ChapterStatus::Completed)
            .map(|c| c.word_count.unwrap_or(0) * u64::from(3 - c.passes_done.min(3)) / 3)
            .sum();
        let seconds = remaining_words as f64 * elapsed as f64 / done_words as f64 / 1000.0;
        Some(seconds.ceil() as u64)
    }
}

/// Chapters that have finished each pass (a completed one has finished all three).
fn pass_counts(chapters: &[Chapter]) -> PassCounts {
    let mut passes = PassCounts::default();
    for chapter in chapters {
        let done = if chapter.status == ChapterStatus::Completed {
            3
        } else {
            chapter.passes_done
        };
        passes.translate += u32::from(done >= 1);
        passes.review += u32::from(done >= 2);
        passes.polish += u32::from(done >= 3);
    }
    passes
}

/// The chapters in ERROR, with why.
fn chapter_errors(chapters: &[Chapter]) -> Vec<ChapterErrorReport> {
    chapters
        .iter()
        .filter(|c| c.status == ChapterStatus::Error)
        .map(|c| ChapterErrorReport {
            chapter_id: c.id.clone(),
            error: c
                .error
                .clone()
                .unwrap_or_else(|| "translation failed".into()),
        })
        .collect()
}

/// The run's term pass; None before any run.
fn term_stage(book: &Book, run: &RunRecord) -> Option<TermStage> {
    // The list of this run's key, not a list an earlier run left.
    let listed = run
        .terms
        .as_ref()
        .filter(|t| Some(t.key.as_str()) == book.translation_key.as_deref());
    (book.run > 0).then(|| TermStage {
        status: if listed.is_some() {
            "COMPLETED"
        } else {
            "PENDING"
        },
        found: listed.and_then(|t| t.found),
        usage: listed.and_then(|t| t.usage.clone()),
    })
}
