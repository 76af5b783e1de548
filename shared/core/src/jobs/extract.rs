//! The extract job: UPLOADED -> EXTRACTING -> EXTRACTED (or ERROR with the reason).

use booktr_formats::manuscript::Manuscript;
use booktr_formats::FormatError;
use tracing::{info, warn};

use super::context::JobHandler;
use super::error::JobError;
use crate::books::lifecycle::BookEvent;
use crate::books::record::{self, BookChange, Extracted};
use crate::books::{store, Book, Chapter};
use crate::fault::Fault;
use crate::ports::Condition;
use crate::types::{ChapterStatus, LanguageCode};

/// The longest a book may take to parse.
const PARSE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

pub(super) async fn run(handler: &JobHandler, book_id: &str) -> Result<(), JobError> {
    let books = &handler.books;
    let Some(book) = books
        .transition(book_id, BookEvent::ExtractionStarted, BookChange::default())
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
        return Ok(fail(handler, book_id, Unreadable::Gone).await?);
    };
    let mut manuscript = match read(handler, &book, bytes).await {
        Ok(manuscript) => manuscript,
        Err(reason) => return Ok(fail(handler, book_id, reason).await?),
    };

    // Everything is written under fixed keys before the book moves on, so a retry after a crash
    // overwrites the same blobs and items rather than adding more.
    if let Err(reason) = store_parts(handler, book_id, &manuscript).await? {
        return Ok(fail(handler, book_id, reason).await?);
    }
    for warning in &manuscript.warnings {
        warn!(%warning, "extraction skipped part of the book");
    }
    let word_count = manuscript.word_count();
    let chapter_count = manuscript.chapters.len();
    let chapters = std::mem::take(&mut manuscript.chapters);
    handler
        .ports
        .blobs
        .put(
            &store::manuscript_key(book_id)?,
            to_json(&manuscript, "the manuscript")?.into(),
        )
        .await?;
    let update = extracted(&book, &manuscript, word_count, chapter_count);
    match books
        .transition(book_id, BookEvent::ExtractionSucceeded, update)
        .await?
    {
        Some(_) => info!(
            chapters = chapters.len(),
            words = word_count,
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

/// Reads the uploaded file into a manuscript, within the file budget and the time limit.
async fn read(
    handler: &JobHandler,
    book: &Book,
    bytes: bytes::Bytes,
) -> Result<Manuscript, Unreadable> {
    let format = book.format;
    let budget = handler.translations.file_budget();
    // Parsing is CPU work: off the async threads. A panic in a parser is a bug, reported as an
    // unreadable file rather than taking the worker down.
    // The readers bound their own work; this is the backstop for one that does not return (its
    // thread is then abandoned, and the book fails instead of the worker hanging).
    let reading = tokio::task::spawn_blocking(move || {
        booktr_formats::extract_within(format.reader(), &bytes, budget)
    });
    match tokio::time::timeout(PARSE_TIME_LIMIT, reading).await {
        Ok(Ok(read)) => read.map_err(Unreadable::Format),
        Ok(Err(_)) => Err(Unreadable::ReaderFailed),
        Err(_) => Err(Unreadable::TooSlow),
    }
}

/// Writes the book's assets, its chapters' texts and their items; the reason the book fails
/// when its chapters cannot be numbered.
async fn store_parts(
    handler: &JobHandler,
    book_id: &str,
    manuscript: &Manuscript,
) -> Result<Result<(), Unreadable>, JobError> {
    for asset in &manuscript.assets {
        let key = store::asset_key(book_id, &asset.file_name)?;
        handler
            .ports
            .blobs
            .put(&key, asset.bytes.clone().into())
            .await?;
    }
    for (index, chapter) in manuscript.chapters.iter().enumerate() {
        let Ok(number) = u32::try_from(index + 1) else {
            return Ok(Err(Unreadable::TooManyChapters));
        };
        handler
            .ports
            .blobs
            .put(
                &store::chapter_key(book_id, number)?,
                to_json(chapter, "a chapter's text")?.into(),
            )
            .await?;
        let item = Chapter {
            id: format!("{book_id}-{number}"),
            number,
            title: chapter.title.clone(),
            word_count: Some(chapter.word_count()),
            status: ChapterStatus::Pending,
            passes_done: 0,
            error: None,
            stored_key: None,
            edits: 0,
        };
        handler
            .ports
            .table
            .put(record::chapter_item(book_id, &item), Condition::Always)
            .await?;
    }
    Ok(Ok(()))
}

/// The book's change on extraction: its counts, its language, and the title and author the
/// file gives where the owner gave none.
fn extracted(
    book: &Book,
    manuscript: &Manuscript,
    word_count: u64,
    chapter_count: usize,
) -> BookChange {
    let language = manuscript
        .language
        .as_deref()
        .and_then(|l| LanguageCode::parse(l).ok())
        .unwrap_or_else(LanguageCode::undetermined);
    let title = match (book.title_from_user, manuscript.title.as_deref()) {
        (false, Some(title)) => Some(title.chars().take(500).collect()),
        _ => None,
    };
    let author = match (&book.author, manuscript.author.as_deref()) {
        (None, Some(author)) => Some(author.chars().take(500).collect()),
        _ => None,
    };
    BookChange::extracted(&Extracted {
        word_count,
        chapter_count,
        original_lang: &language,
        warnings: &manuscript.warnings,
        title,
        author,
    })
}

/// Why the uploaded file gives no book; the message is what the book shows.
#[derive(Debug, thiserror::Error)]
enum Unreadable {
    #[error("the uploaded file is missing from storage")]
    Gone,
    #[error("the file could not be read: {0}")]
    Format(FormatError),
    /// The reader panicked: a bug, reported as an unreadable file rather than taking the worker
    /// down.
    #[error("the file could not be read (the reader failed on it)")]
    ReaderFailed,
    #[error("the file takes too long to read")]
    TooSlow,
    #[error("the book has too many chapters")]
    TooManyChapters,
}

fn to_json<T: serde::Serialize>(value: &T, what: &'static str) -> Result<Vec<u8>, Fault> {
    serde_json::to_vec(value).map_err(Fault::encoding(what))
}

/// A failure no retry can fix: the book goes to ERROR with a message for the user, and costs
/// no book of the month's quota.
async fn fail(
    handler: &JobHandler,
    book_id: &str,
    reason: Unreadable,
) -> Result<(), crate::fault::DataError> {
    warn!(%reason, "extraction failed");
    handler
        .books
        .fail_extraction(book_id, reason.to_string())
        .await?;
    Ok(())
}
