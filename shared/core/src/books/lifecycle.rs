//! The book state machine: every status change the service makes goes through [`BookEvent`],
//! so the allowed transitions are written in one place (and tabled in docs/api.md).

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
    /// `POST /api/translate`: a new run starts (chapters already translated with the same model,
    /// glossary and languages are kept).
    TranslationStarted,
    /// `POST /api/translate/pause`: queued chapter jobs are dropped as they come up; the chapter
    /// in hand finishes and is kept.
    Paused,
    /// `POST /api/translate/resume`: a new run re-queues the chapters not yet completed.
    Resumed,
    /// `POST /api/translate/stop`: the run is cancelled, the book is ready to start again.
    Stopped,
    /// A chapter failed for good (fatal model error, or its job reached the dead-letter queue).
    TranslationFailed,
    /// The last chapter was completed.
    AllChaptersTranslated,
    /// A generate job started rendering a file.
    GenerationStarted,
    /// The file is stored and can be downloaded.
    GenerationSucceeded,
    /// Rendering failed on every retry; the translation is kept.
    GenerationFailed,
}

impl BookEvent {
    /// The statuses the event may happen in.
    pub fn allowed_from(self) -> &'static [BookStatus] {
        match self {
            BookEvent::ExtractionStarted => &[Uploaded, Extracting],
            BookEvent::ExtractionSucceeded => &[Extracting],
            BookEvent::ExtractionFailed => &[Uploaded, Extracting],
            // A finished or failed book may be translated again (another model, glossary or
            // language); the translation service also asks a failed one to have chapters.
            BookEvent::TranslationStarted => &[Extracted, Completed, Error],
            BookEvent::Paused => &[Translating],
            BookEvent::Resumed => &[Error, Paused, Translating],
            BookEvent::Stopped => &[Translating, Paused, Error],
            BookEvent::TranslationFailed => &[Translating, Paused],
            // A pause lets the chapters in hand finish: when they were the last, the book is
            // translated, not paused at 100%.
            BookEvent::AllChaptersTranslated => &[Translating, Paused],
            BookEvent::GenerationStarted => &[Translated, Generating, Completed],
            BookEvent::GenerationSucceeded => &[Generating],
            BookEvent::GenerationFailed => &[Generating],
        }
    }

    /// The status after the event.
    pub fn target(self) -> BookStatus {
        match self {
            BookEvent::ExtractionStarted => Extracting,
            BookEvent::ExtractionSucceeded => Extracted,
            BookEvent::ExtractionFailed => Error,
            BookEvent::TranslationStarted => Translating,
            BookEvent::Paused => Paused,
            BookEvent::Resumed => Translating,
            BookEvent::Stopped => Extracted,
            BookEvent::TranslationFailed => Error,
            BookEvent::AllChaptersTranslated => Translated,
            BookEvent::GenerationStarted => Generating,
            BookEvent::GenerationSucceeded => Completed,
            BookEvent::GenerationFailed => Error,
        }
    }

    pub fn applies_to(self, status: BookStatus) -> bool {
        self.allowed_from().contains(&status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_or_finished_book_may_start_again_and_a_failed_one_resume_or_stop() {
        // From ERROR these are further guarded by the translation service: only a book that
        // has started a run (run > 0) may take them, not one whose file was unreadable.
        assert!(BookEvent::Resumed.applies_to(Error));
        assert!(BookEvent::Stopped.applies_to(Error));
        assert!(BookEvent::TranslationStarted.applies_to(Error));
        assert!(BookEvent::TranslationStarted.applies_to(Completed));
        assert!(!BookEvent::TranslationStarted.applies_to(Translating));
        assert!(!BookEvent::TranslationStarted.applies_to(Generating));
        assert_eq!(BookEvent::Stopped.target(), Extracted);
    }

    #[test]
    fn every_status_but_uploaded_is_reached_by_some_event() {
        let all = [
            Uploaded,
            Extracting,
            Extracted,
            Translating,
            Paused,
            Translated,
            Generating,
            Completed,
            Error,
        ];
        let events = [
            BookEvent::ExtractionStarted,
            BookEvent::ExtractionSucceeded,
            BookEvent::ExtractionFailed,
            BookEvent::TranslationStarted,
            BookEvent::Paused,
            BookEvent::Resumed,
            BookEvent::Stopped,
            BookEvent::TranslationFailed,
            BookEvent::AllChaptersTranslated,
            BookEvent::GenerationStarted,
            BookEvent::GenerationSucceeded,
            BookEvent::GenerationFailed,
        ];
        for status in all.into_iter().filter(|s| *s != Uploaded) {
            assert!(
                events.iter().any(|e| e.target() == status),
                "{status} is unreachable"
            );
        }
        for event in events {
            assert!(!event.allowed_from().is_empty());
        }
    }
}
