//! What an export or an import fails with as a whole (a unit's own trouble is in its report).

use booktr_formats::xliff::ReadError;

use super::super::error::PassageError;
use crate::fault::DataError;

#[derive(Debug, thiserror::Error)]
pub enum XliffError {
    /// The book or the chapter (404), a chapter not translated yet (400), the backend.
    #[error(transparent)]
    Passages(#[from] PassageError),
    /// The file is not one an import reads (400 `invalid_xliff`).
    #[error(transparent)]
    File(#[from] ReadError),
}

impl From<DataError> for XliffError {
    fn from(e: DataError) -> Self {
        XliffError::Passages(e.into())
    }
}
