//! Pausing, resuming and stopping a run. Each moves the book through its lifecycle; resume and
//! stop also move the run on, so the jobs queued for the run before are dropped.

use tracing::{info, instrument};

use super::error::TranslationError;
use super::model::unfinished_words;
use super::service::Translations;
use super::start::max_cost_micros;
use crate::books::lifecycle::BookEvent;
use crate::books::record::BookChange;
use crate::types::ChapterStatus;
use crate::usage::Spend;

impl Translations {
    /// TRANSLATING -> PAUSED. Jobs already queued are dropped as they come up (the status no
    /// longer lets them run); the chapter in progress finishes and is kept.
    #[instrument(skip(self))]
    pub async fn pause(&self, user_id: &str, book_id: &str) -> Result<(), TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        let paused = self
            .books
            .transition(book_id, BookEvent::Paused, BookChange::default())
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
        let update = BookChange::resume_run(engine, max_cost, self.ports.clock.now());
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
        let update = BookChange::stop_run();
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
}
