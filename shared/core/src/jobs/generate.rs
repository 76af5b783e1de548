//! The generate job: TRANSLATED (or COMPLETED, for another format) -> GENERATING -> COMPLETED,
//! the file stored for download, and `book.completed` told to the user.

use tracing::info;

use super::{JobHandler, OutputFormat};
use crate::books::lifecycle::BookEvent;
use crate::books::store;
use crate::events::{EventKind, Flagged, Occurrence};
use crate::items::time;
use crate::ports::{StoreError, Update};
use crate::translation::Completeness;

pub(super) async fn run(
    handler: &JobHandler,
    book_id: &str,
    format: OutputFormat,
    requested: i64,
) -> Result<(), StoreError> {
    let Some(book) = handler
        .books
        .transition(book_id, BookEvent::GenerationStarted, Update::default())
        .await?
    else {
        info!("book gone or not translated; nothing to generate");
        return Ok(());
    };
    let bytes = handler
        .translations
        .render(&book, format, Completeness::Whole)
        .await?
        .ok_or_else(|| StoreError::Unavailable("the book has no chapters to render".into()))?;
    let size = bytes.len();
    handler
        .ports
        .blobs
        .put(&store::output_key(book_id, format)?, bytes.into())
        .await?;
    // Share links' copies of the previous file are dropped; they are copied again on demand.
    let stale = store::shared_files_prefix(book_id);
    crate::ports::blobs::delete_prefix(handler.ports.blobs.as_ref(), &stale).await?;
    let now = handler.ports.clock.now();
    let quality = handler.translations.quality_summary(book_id).await?;
    let update = Update::default()
        .set("completedAt", time(now))
        .set("progress", 100)
        .set("warnings", quality.warnings(&book.warnings));
    let Some(done) = handler
        .books
        .transition(book_id, BookEvent::GenerationSucceeded, update)
        .await?
    else {
        return Ok(());
    };
    info!(format = format.as_str(), bytes = size, "file generated");
    let occurrence = Occurrence {
        // The job's identity: a redelivered job tells nobody twice; a later request does.
        key: format!("book.completed:{book_id}:{}:{requested}", format.as_str()),
        user_id: done.user_id.clone(),
        book_id: book_id.to_string(),
        title: done.title.clone(),
        status: done.status.as_str().to_string(),
        kind: EventKind::BookCompleted {
            download_path: format!("/api/download/{book_id}?format={}", format.as_str()),
            flagged: Flagged {
                flagged_blocks: quality.flagged_blocks,
                sentence: quality.sentence(),
                flagged: quality.flagged,
            },
        },
    };
    handler.events.emit(&occurrence).await
}
