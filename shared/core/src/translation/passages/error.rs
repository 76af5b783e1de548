//! What a change of a passage fails with.

use super::model::Passage;
use crate::books::BooksError;
use crate::fault::Fault;
use crate::ports::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum PassageError {
    /// The book (not the caller's, or none), the chapter or the passage: 404.
    #[error("{0} not found")]
    NotFound(String),
    /// A request the passage cannot take (an empty text, a page out of range): 400.
    #[error("{0}")]
    Invalid(String),
    /// A text longer than its passage may hold (`checked::max_edit_chars`): 400
    /// `text_too_long`, naming the bound.
    #[error("{0}")]
    TooLong(String),
    /// A text with a character the book cannot hold (one XML 1.0 forbids, a bidirectional
    /// control its source has not): 400 `invalid_character`, naming its place and code point.
    #[error("{0}")]
    Characters(String),
    /// The text's inline marks are not the source's: 400, naming the mark.
    #[error("the text's marks must be the source's: {0}")]
    Marks(String),
    /// The passage changed since the version the client read: 409, with the passage now.
    #[error("the passage changed since version {read}; it is at version {}", current.version)]
    Stale { read: u64, current: Box<Passage> },
    /// Undo on a passage with no change left to undo: 409, with the passage now.
    #[error("the passage has no change to undo")]
    NothingToUndo(Box<Passage>),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Fault(#[from] Fault),
}

crate::fault::from_data_error!(PassageError);

impl From<BooksError> for PassageError {
    fn from(e: BooksError) -> Self {
        match e {
            BooksError::Store(s) => PassageError::Store(s),
            BooksError::Fault(f) => PassageError::Fault(f),
            _ => PassageError::NotFound("book".into()),
        }
    }
}
