//! What the run's jobs (terms, chapter, fallback) share: the run's translation key and model,
//! the book's share of its provider key, and a chapter's failed try or failure. They import it
//! from here, so that none of them reaches into another.

use std::sync::Arc;

use booktr_translate::budget;
use booktr_translate::model::ChatModel;
use booktr_translate::protocol::Pass;
use tracing::{info, warn};

use super::context::JobHandler;
use super::error::JobError;
use crate::books::lifecycle::BookEvent;
use crate::books::record::{self, BookChange, ChapterChange, ChapterRecord};
use crate::books::{store, Book};
use crate::developer::NoModel;
use crate::events::{EventKind, Occurrence};
use crate::fault::{DataError, Fault};
use crate::ports::{Condition, StoreError};
use crate::types::BookStatus;

/// The book's share of its provider key, weighted by its window: books waiting for the same key
/// get places in proportion to their windows (twice as many with priority), whatever the
/// number of chapters each has waiting.
pub(super) fn book_share(book_id: &str, width: usize) -> budget::Share {
    budget::Share::new(book_id, width as f64)
}

/// The translation key of run `run` while the book still translates it; None (logged) when the
/// run has moved on (paused, stopped, failed or restarted since the job was queued).
pub(super) fn run_key(book: &Book, run: u32) -> Result<Option<String>, JobError> {
    if book.run != run || book.status != BookStatus::Translating {
        info!(book_run = book.run, status = %book.status, "the run has moved on; dropping the job");
        return Ok(None);
    }
    book.translation_key
        .clone()
        .map(Some)
        .ok_or_else(|| JobError::Missing("a translating book has no translation key".into()))
}

/// The model the book's run translates with (see [`crate::developer::Developer::model_for`]).
pub(super) async fn model_for(
    handler: &JobHandler,
    book: &Book,
) -> Result<Result<Arc<dyn ChatModel>, NoModel>, JobError> {
    let model = book.translation_model.as_deref().unwrap_or_default();
    Ok(handler.developer.model_for(&book.user_id, model).await?)
}

/// Tries of a chapter that may really fail (the model still failing after the pipeline's own
/// retries) before it ends in ERROR. Tries a crash or a deploy cut short are not counted: they
/// never get to count themselves.
pub const MAX_ATTEMPTS: i64 = 4;

/// Counts a failed try on the chapter (per run), with its cause; the [`MAX_ATTEMPTS`]th fails
/// the chapter for good with that cause, the others leave the job to be retried.
pub(super) async fn failed_attempt(
    handler: &JobHandler,
    book: &Book,
    number: u32,
    pass: Pass,
    cause: &str,
) -> Result<(), JobError> {
    let pk = store::book_pk(&book.id);
    let sk = store::chapter_sk(number);
    let table = &handler.ports.table;
    let counted = table
        .update(
            &pk,
            &sk,
            ChapterChange::attempt_failed(cause).into_update(),
            record::attempts_counted_in(book.run),
        )
        .await;
    let attempts = match counted {
        Ok(item) => ChapterRecord::from_item(&item)
            .map_err(Fault::from)?
            .attempts
            .unwrap_or(1),
        // The first failed try of this run.
        Err(StoreError::Conflict) => {
            let first = ChapterChange::first_attempt_failed(book.run, cause).into_update();
            table.update(&pk, &sk, first, Condition::Exists).await?;
            1
        }
        Err(e) => return Err(e.into()),
    };
    warn!(
        number,
        attempts,
        pass = pass.task(),
        cause,
        "chapter try failed"
    );
    if attempts >= MAX_ATTEMPTS {
        let reason = format!("translation failed after {attempts} attempts: {cause}");
        return Ok(fail_chapter(handler, book, number, &reason).await?);
    }
    Err(JobError::ModelFailed(cause.to_string()))
}

/// A failure no retry fixes (or the last one): the chapter and the book go to ERROR and the
/// user is told (notification, webhook, email).
pub(super) async fn fail_chapter(
    handler: &JobHandler,
    book: &Book,
    number: u32,
    reason: &str,
) -> Result<(), DataError> {
    warn!(number, reason, "chapter failed");
    handler
        .translations
        .update_chapter(&book.id, number, ChapterChange::failed(reason))
        .await?;
    let message = format!("chapter {number} could not be translated: {reason}");
    let update = BookChange::chapter_failed(&message);
    let failed = handler
        .books
        .transition(&book.id, BookEvent::TranslationFailed, update)
        .await?;
    if let Some(failed) = failed {
        crate::metrics::book_failed();
        let occurrence = Occurrence {
            key: format!("translation.error:{}:{}:{number}", book.id, failed.run),
            user_id: book.user_id.clone(),
            book_id: book.id.clone(),
            title: failed.title.clone(),
            status: failed.status.as_str().to_string(),
            kind: EventKind::TranslationError {
                error: message,
                chapter_index: number,
            },
        };
        handler.events.emit(&occurrence).await?;
    }
    Ok(())
}
