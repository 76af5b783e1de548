//! The hint the API adds to the domain's sentence of flagged blocks, wherever it shows it (a
//! book's warnings, the notification of a completed book).

use booktr_core::translation::QualitySummary;

/// Where the API shows the domain's sentence of flagged blocks (a book's warning, the
/// notification of its completion), it says where they are listed.
const FLAGGED_HINT: &str = "GET /api/translate/status lists them by chapter.";

/// `text` with [`FLAGGED_HINT`] after the sentence of flagged blocks it ends with, if it does.
pub fn with_flagged_hint(text: String) -> String {
    if QualitySummary::ends_with_sentence(&text) {
        format!("{text} {FLAGGED_HINT}")
    } else {
        text
    }
}
