//! A run as its chapters finish: the chapters job is queued with the owner's window, each
//! chapter's state is recorded, and the book moves on to TRANSLATED (its EPUB queued) once every
//! chapter is completed.

use tracing::info;

use super::service::Translations;
use crate::accounts::User;
use crate::books::lifecycle::BookEvent;
use crate::books::record::{self, BookChange, ChapterChange};
use crate::books::{store, Book, Chapter};
use crate::fault::DataError;
use crate::job::{Job, Layout, OutputFormat};
use crate::ports::Condition;
use crate::types::{BookStatus, ChapterStatus, Role};

impl Translations {
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
        let update = BookChange::all_chapters_translated();
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
            Ok(Some(item)) => record::RunRecord::from_item(&item)
                .ok()
                .and_then(|run| run.started_at),
            _ => None,
        };
        let took = started.and_then(|t| (self.ports.clock.now() - t).to_std().ok());
        crate::metrics::book_completed(took);
    }

    /// Queues the run: the term pass, then one chapters job with every pending chapter, both in
    /// the book's message group so the term list comes first. The chapters job keeps
    /// [`Translations::window_for`] the owner chapters in flight, each place given to the next
    /// chapter as soon as its own finishes (see `jobs::chapter`).
    /// The term list is made from the chapters numbered in `only` when the run translates only
    /// these, else from every chapter.
    pub(super) async fn queue_chapters(
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

    pub(super) async fn set_chapter(
        &self,
        book_id: &str,
        number: u32,
        status: ChapterStatus,
        passes: u8,
    ) -> Result<(), DataError> {
        self.update_chapter(book_id, number, ChapterChange::state(status, passes))
            .await
    }

    pub(crate) async fn update_chapter(
        &self,
        book_id: &str,
        number: u32,
        change: ChapterChange,
    ) -> Result<(), DataError> {
        self.ports
            .table
            .update(
                &store::book_pk(book_id),
                &store::chapter_sk(number),
                change.into_update(),
                Condition::Exists,
            )
            .await?;
        Ok(())
    }
}
