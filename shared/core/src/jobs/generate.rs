//! The generate job: TRANSLATED (or COMPLETED, for another format) -> GENERATING -> COMPLETED,
//! the file stored for download, and `book.completed` told to the user.

use tracing::info;

use super::context::JobHandler;
use super::error::JobError;
use crate::books::lifecycle::BookEvent;
use crate::books::record::BookChange;
use crate::books::store;
use crate::events::{EventKind, Flagged, Occurrence};
use crate::job::Edition;
use crate::translation::Completeness;

pub(super) async fn run(
    handler: &JobHandler,
    book_id: &str,
    edition: Edition,
    requested: i64,
) -> Result<(), JobError> {
    let Some(book) = handler
        .books
        .transition(book_id, BookEvent::GenerationStarted, BookChange::default())
        .await?
    else {
        info!("book gone or not translated; nothing to generate");
        return Ok(());
    };
    let rendition = handler
        .translations
        .render(&book, edition, Completeness::Whole)
        .await?
        .ok_or_else(|| JobError::Missing("the book has no chapters to render".into()))?;
    let size = rendition.bytes.len();
    handler
        .ports
        .blobs
        .put(
            &store::output_key(book_id, edition)?,
            rendition.bytes.into(),
        )
        .await?;
    // Share links' copies of the previous file are dropped; they are copied again on demand.
    // So are an earlier translation's files, kept for downloads while this run translated.
    for stale in [
        store::shared_files_prefix(book_id),
        store::previous_outputs_prefix(book_id),
    ] {
        crate::ports::blobs::delete_prefix(handler.ports.blobs.as_ref(), &stale).await?;
    }
    let now = handler.ports.clock.now();
    let quality = handler.translations.quality_summary(book_id).await?;
    let update = BookChange::generated(
        quality.warnings(&file_warnings(&book.warnings, edition, &rendition.warnings)),
        now,
    );
    let Some(done) = handler
        .books
        .transition(book_id, BookEvent::GenerationSucceeded, update)
        .await?
    else {
        return Ok(());
    };
    info!(edition = edition.label(), bytes = size, "file generated");
    let occurrence = Occurrence {
        // The job's identity: a redelivered job tells nobody twice; a later request does.
        key: format!("book.completed:{book_id}:{}:{requested}", edition.suffix()),
        user_id: done.user_id.clone(),
        book_id: book_id.to_string(),
        title: done.title.clone(),
        status: done.status.as_str().to_string(),
        kind: EventKind::BookCompleted {
            download_path: format!("/api/download/{book_id}?{}", edition.query()),
            flagged: Flagged {
                flagged_blocks: quality.flagged_blocks,
                sentence: quality.sentence(),
                flagged: quality.flagged,
            },
        },
    };
    Ok(handler.events.emit(&occurrence).await?)
}

/// The book's warnings with the file's own replaced: `PDF file: 2 images left out, ...`,
/// `bilingual EPUB file: ...`. A warning about another file stays (that file is still there).
fn file_warnings(current: &[String], edition: Edition, file: &[String]) -> Vec<String> {
    let prefix = format!("{} file: ", edition.label());
    current
        .iter()
        .filter(|w| !w.starts_with(&prefix))
        .cloned()
        .chain(file.iter().map(|w| format!("{prefix}{w}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Layout, OutputFormat};

    #[test]
    fn a_files_warnings_replace_its_earlier_ones_and_keep_the_rest() {
        let current = [
            "Chapter 3 is short".to_string(),
            "PDF file: 1 image left out, not readable as images: a.png".to_string(),
            "EPUB file: something".to_string(),
        ];
        let now = file_warnings(
            &current,
            Edition::new(OutputFormat::Pdf, Layout::Translated),
            &["2 images left out, each past the limit: b.png, c.png".to_string()],
        );
        assert_eq!(
            now,
            [
                "Chapter 3 is short",
                "EPUB file: something",
                "PDF file: 2 images left out, each past the limit: b.png, c.png"
            ]
        );
    }
}
