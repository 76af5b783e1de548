//! What the books domain fails with.

use super::format::UnsupportedFile;
use super::model::MAX_UPLOAD_BYTES;
use crate::ports::StoreError;
use crate::usage::UsageError;

#[derive(Debug, thiserror::Error)]
pub enum BooksError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    UnsupportedFile(#[from] UnsupportedFile),
    #[error("the file is larger than the {} MB limit", MAX_UPLOAD_BYTES / (1024 * 1024))]
    TooLarge,
    #[error("book not found")]
    NotFound,
    /// A direct upload that is not the caller's, already confirmed, or long expired.
    #[error("upload not found")]
    UploadNotFound,
    /// A direct upload whose form expired without a file, or that was not confirmed in time:
    /// its offer is over.
    #[error("{0}")]
    UploadOver(&'static str),
    /// A direct upload's form posted again: it stores one file, for an open offer.
    #[error("{0}")]
    FormUsed(FormUse),
    /// The plan's monthly quota cannot cover it.
    #[error("{0}")]
    QuotaExceeded(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the domain found wrong with its data or its process: logged, answered 500, not
    /// retried.
    #[error(transparent)]
    Fault(#[from] crate::fault::Fault),
}

crate::fault::from_data_error!(BooksError);

/// Why a direct upload's form cannot be posted again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormUse {
    /// It stored its file already.
    PostedAlready,
    /// Its upload was confirmed, or its offer ended.
    Over,
}

impl std::fmt::Display for FormUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FormUse::PostedAlready => "this form has been posted already; a form stores one file",
            FormUse::Over => "this form's upload was confirmed or is over",
        })
    }
}

impl From<UsageError> for BooksError {
    fn from(e: UsageError) -> Self {
        match e {
            UsageError::Exceeded(m) => BooksError::QuotaExceeded(m),
            UsageError::Store(s) => BooksError::Store(s),
            UsageError::Fault(f) => BooksError::Fault(f),
        }
    }
}
