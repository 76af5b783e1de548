//! The book state machine: every status change the service makes goes through [`BookEvent`],
//! so the allowed transitions are written in one place (and tabled in the README).

use crate::types::BookStatus::{self, *};

/// Something that happens to a book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BookEvent {
    /// The extract job picked the book up (again, after a crash or retry).
    ExtractionStarted,
    /// Chapters were written.
    ExtractionSucceeded,
    /// The file cannot be read, or extraction failed on every retry.
    ExtractionFailed,
}

impl BookEvent {
    /// The statuses the event may happen in.
    pub fn allowed_from(self) -> &'static [BookStatus] {
        match self {
            BookEvent::ExtractionStarted => &[Uploaded, Extracting],
            BookEvent::ExtractionSucceeded => &[Extracting],
            BookEvent::ExtractionFailed => &[Uploaded, Extracting],
        }
    }

    /// The status after the event.
    pub fn target(self) -> BookStatus {
        match self {
            BookEvent::ExtractionStarted => Extracting,
            BookEvent::ExtractionSucceeded => Extracted,
            BookEvent::ExtractionFailed => Error,
        }
    }

    pub fn applies_to(self, status: BookStatus) -> bool {
        self.allowed_from().contains(&status)
    }
}
