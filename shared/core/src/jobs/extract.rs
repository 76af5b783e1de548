//! The extract job: UPLOADED -> EXTRACTING -> EXTRACTED (or ERROR with the reason).

use tracing::{info, warn};

use super::JobHandler;
use crate::books::lifecycle::BookEvent;
use crate::books::{store, BookFormat, Chapter};
use crate::ports::{Condition, StoreError, Update};
use crate::types::ChapterStatus;

pub(super) async fn run(handler: &JobHandler, book_id: &str) -> Result<(), StoreError> {
    let books = &handler.books;
    let Some(book) = books
        .transition(book_id, BookEvent::ExtractionStarted, Update::default())
        .await?
    else {
        info!("book gone or already extracted; nothing to do");
        return Ok(());
    };
    let Some(bytes) = handler
        .ports
        .blobs
        .get(&store::original_key(book_id, book.format)?)
        .await?
    else {
        return fail(
            handler,
            book_id,
            "the uploaded file is missing from storage".into(),
        )
        .await;
    };
    let extracted = match book.format {
        BookFormat::Txt => booktr_formats::txt::extract(&bytes),
        other => {
            let message = format!(
                "{} books cannot be read by this server yet; only TXT is supported for now",
                other.as_str().to_uppercase()
            );
            return fail(handler, book_id, message).await;
        }
    };
    let extracted = match extracted {
        Ok(e) => e,
        Err(e) => return fail(handler, book_id, format!("the file could not be read: {e}")).await,
    };

    // Chapters are written before the book moves on, with fixed keys, so a retry after a crash
    // overwrites the same chapters rather than adding more.
    for (index, extracted_chapter) in extracted.chapters.iter().enumerate() {
        let number = u32::try_from(index + 1)
            .map_err(|_| StoreError::Invalid("too many chapters".into()))?;
        let key = store::chapter_text_key(book_id, number)?;
        handler
            .ports
            .blobs
            .put(&key, extracted_chapter.text.clone().into())
            .await?;
        let chapter = Chapter {
            id: format!("{book_id}-{number}"),
            number,
            title: extracted_chapter.title.clone(),
            word_count: Some(extracted_chapter.word_count),
            status: ChapterStatus::Pending,
        };
        handler
            .ports
            .table
            .put(store::chapter_item(book_id, &chapter), Condition::Always)
            .await?;
    }

    let mut update = Update::default()
        .set("wordCount", extracted.word_count())
        .set("chapterCount", extracted.chapters.len())
        .set("error", serde_json::Value::Null);
    if let Some(lang) = &extracted.language {
        update = update.set("originalLang", lang.clone());
    }
    match books
        .transition(book_id, BookEvent::ExtractionSucceeded, update)
        .await?
    {
        Some(_) => info!(
            chapters = extracted.chapters.len(),
            words = extracted.word_count(),
            "book extracted"
        ),
        None => {
            // Deleted while we worked: take back what we wrote so nothing is left behind.
            warn!("book deleted during extraction; removing its chapters");
            books.remove_everything(book_id).await?;
        }
    }
    Ok(())
}

/// A failure no retry can fix: the book goes to ERROR with a message for the user.
async fn fail(handler: &JobHandler, book_id: &str, message: String) -> Result<(), StoreError> {
    warn!(%message, "extraction failed");
    let update = Update::default().set("error", message);
    handler
        .books
        .transition(book_id, BookEvent::ExtractionFailed, update)
        .await?;
    Ok(())
}
