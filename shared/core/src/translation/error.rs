//! What translation fails with: [`TranslationError`] for its use cases, [`RenderError`] for a
//! book's file.

use crate::books::BooksError;
use crate::developer::DeveloperError;
use crate::ports::StoreError;
use crate::types::BookStatus;
use crate::usage::UsageError;

#[derive(Debug, thiserror::Error)]
pub enum TranslationError {
    /// The request cannot be done in the book's state, or names a model, glossary or language
    /// that is not allowed: 400.
    #[error("{0}")]
    Invalid(String),
    #[error("book not found")]
    NotFound,
    /// A translation cannot start on the book in its state (not EXTRACTED or COMPLETED).
    #[error("the book is {status}")]
    CannotStart { book_id: String, status: BookStatus },
    /// A download of a book none of whose chapters is translated yet (the book's status).
    #[error("no chapter of the book is translated yet (it is {0})")]
    NothingTranslated(BookStatus),
    /// The plan's monthly word quota cannot cover the chapters to translate.
    #[error("{0}")]
    QuotaExceeded(String),
    /// The book's file could not be made for a download.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A chapter's source text is not stored although the book lists the chapter: the book's
    /// data is incomplete, and asking again finds it so again.
    #[error("the text of chapter {0} is missing")]
    MissingText(u32),
    /// The owner's developer settings answered with their own error.
    #[error(transparent)]
    Developer(#[from] DeveloperError),
    /// The books domain refused what the request asked of it (see the `From` below).
    #[error(transparent)]
    Books(BooksError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(TranslationError);

/// What translation shares with the books domain keeps its own variant; the rest passes on as
/// the books domain said it, so the caller gets its code (`unsupported_file`, `file_too_large`,
/// `form_used`, ...).
impl From<BooksError> for TranslationError {
    fn from(e: BooksError) -> Self {
        match e {
            BooksError::NotFound => TranslationError::NotFound,
            BooksError::Store(s) => TranslationError::Store(s),
            BooksError::Fault(f) => TranslationError::Fault(f),
            BooksError::QuotaExceeded(m) => TranslationError::QuotaExceeded(m),
            other => TranslationError::Books(other),
        }
    }
}

impl From<UsageError> for TranslationError {
    fn from(e: UsageError) -> Self {
        match e {
            UsageError::Exceeded(m) => TranslationError::QuotaExceeded(m),
            UsageError::Store(s) => TranslationError::Store(s),
            UsageError::Fault(f) => TranslationError::Fault(f),
        }
    }
}

/// Why a book could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
    /// What the file is made of is not (or no longer) there: the manuscript, or a chapter's
    /// translation under the book's key (a new run started meanwhile).
    #[error("{0}")]
    Missing(String),
    /// The renderer refused the book (a limit of the file budget, a malformed image): the same
    /// book fails the same way every time.
    #[error("rendering the {edition} failed: {cause}")]
    Refused { edition: String, cause: String },
    /// The rendering task ended without an answer (it panicked or was cancelled).
    #[error("the renderer stopped: {0}")]
    Stopped(String),
}

crate::fault::from_data_error!(RenderError);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::{DataError, Fault};

    #[test]
    fn a_books_error_keeps_its_kind_through_translation() {
        let unsupported = crate::books::sniff("book.mobi", b"hello").unwrap_err();
        assert!(matches!(
            TranslationError::from(BooksError::UnsupportedFile(unsupported)),
            TranslationError::Books(BooksError::UnsupportedFile(_))
        ));
        assert!(matches!(
            TranslationError::from(BooksError::TooLarge),
            TranslationError::Books(BooksError::TooLarge)
        ));
        assert!(matches!(
            TranslationError::from(BooksError::NotFound),
            TranslationError::NotFound
        ));
        let corrupt = Fault::Internal("a closed semaphore".into());
        assert!(matches!(
            TranslationError::from(BooksError::Fault(corrupt)),
            TranslationError::Fault(Fault::Internal(_))
        ));
        assert!(matches!(
            TranslationError::from(DataError::Store(StoreError::Unavailable("down".into()))),
            TranslationError::Store(StoreError::Unavailable(_))
        ));
    }
}
