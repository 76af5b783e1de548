//! Books: a book, its chapters, its format, and the offer of a direct upload.

use booktr_core::books as domain;
use booktr_core::translation::WARNING_PREFIX;
use booktr_core::types::{BookStatus, ChapterStatus};
use chrono::{DateTime, Utc};

use super::flagged::with_flagged_hint;
use super::{wire, wire_enum, Mirror};

wire! {
    /// A book as the API shows it (the spec's Book, plus `format`, `fileName`, `fileSize`,
    /// `error`, the reason when status is ERROR, and `warnings` from extraction).
    #[serde(rename_all = "camelCase")]
    pub struct Book from domain::Book, hiding user_id, title_from_user, run, translation_key,
        share_token, charged_period, max_cost_micros {
        pub id: String,
        pub title: String,
        pub author: Option<String>,
        pub original_lang: String,
        pub target_lang: String,
        #[schema(value_type = super::types::BookStatus)]
        pub status: BookStatus,
        pub progress: u8,
        pub word_count: Option<u64>,
        pub chapter_count: Option<u32>,
        pub translation_model: Option<String>,
        /// Beyond the spec: the run's second model, for the blocks the first leaves flagged or of
        /// low confidence (`fallbackModel` on a start); absent when the run names none.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub fallback_model: Option<String>,
        /// Beyond the spec: whether the book's runs take from and give to the owner's translation
        /// memory (`memory` on a start; true unless a start said false).
        pub memory: bool,
        /// Beyond the spec: what translates the run, as a start found it: the provider's model, or
        /// `offline-pseudo` when the offline engine stands in (no provider key for the model's
        /// family; its pseudo-translation is free). Null before a run.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub engine: Option<String>,
        pub format: BookFormat,
        pub file_name: String,
        pub file_size: u64,
        pub error: Option<String>,
        /// What extraction skipped although the book was read (e.g. a manifest entry of an EPUB
        /// that points outside the book), for the user; absent when there is nothing to say.
        #[serde(skip_serializing_if = "Warnings::is_empty")]
        #[schema(value_type = Vec<String>)]
        pub warnings: Warnings,
        /// The glossary the current or last translation run uses.
        pub glossary_id: Option<String>,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
        pub completed_at: Option<DateTime<Utc>>,
    }
}

/// A book's warnings as the API shows them: the run's report of flagged blocks says where they
/// are listed.
#[derive(serde::Serialize)]
#[serde(transparent)]
pub struct Warnings(Vec<String>);

impl Warnings {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Mirror<Vec<String>> for Warnings {
    fn mirror(from: Vec<String>) -> Self {
        let shown = |warning: String| {
            if warning.starts_with(WARNING_PREFIX) {
                with_flagged_hint(warning)
            } else {
                warning
            }
        };
        Warnings(from.into_iter().map(shown).collect())
    }
}

wire! {
    #[serde(rename_all = "camelCase")]
    pub struct Chapter from domain::Chapter, hiding stored_key, edits {
        pub id: String,
        pub number: u32,
        pub title: Option<String>,
        pub word_count: Option<u64>,
        #[schema(value_type = super::types::ChapterStatus)]
        pub status: ChapterStatus,
        /// Passes (of 3) finished in the current translation, for progress.
        pub passes_done: u8,
        /// Why the chapter is in ERROR.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub error: Option<String>,
    }
}

wire! {
    /// The spec's BookDetail: a book with its chapters in reading order.
    pub struct BookDetail from domain::BookDetail {
        #[serde(flatten)]
        pub book: Book,
        pub chapters: Vec<Chapter>,
    }
}

wire_enum! {
    #[serde(rename_all = "lowercase")]
    pub enum BookFormat from domain::BookFormat { Epub, Pdf, Txt, Docx, Html, Markdown, Fb2 }
}

wire! {
    /// Where and how to send the file, and what to confirm afterwards.
    #[serde(rename_all = "camelCase")]
    pub struct DirectUpload from domain::DirectUpload {
        pub upload_id: String,
        /// Post the form here as `multipart/form-data`.
        pub url: String,
        /// Always `POST`.
        pub method: String,
        /// The form's fields, sent in this order, before the file.
        pub fields: Vec<FormField>,
        /// The name of the file's part, sent last.
        pub file_field: String,
        /// The largest file the form takes: the size asked for.
        pub max_bytes: u64,
        /// The form is refused after this.
        pub expires_at: DateTime<Utc>,
        /// Once the file is sent: `POST` this path to create the book.
        pub confirm_path: String,
        /// The offer is over after this (an hour after `expiresAt`): not confirmed by then, its
        /// book goes back to the month's quota and its file is removed.
        pub confirm_by: DateTime<Utc>,
    }
}

wire! {
    pub struct FormField from domain::FormField {
        pub name: String,
        pub value: String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_report_of_flagged_blocks_says_where_they_are_listed_once() {
        let stored = vec![
            "PDF file: 2 images left out; they keep their source text.".to_string(),
            "Translation: 2 blocks flagged (2 untranslated); they keep their source text."
                .to_string(),
        ];
        let Warnings(shown) = Mirror::mirror(stored.clone());
        assert_eq!(shown[0], stored[0]);
        assert_eq!(
            shown[1],
            "Translation: 2 blocks flagged (2 untranslated); they keep their source text. \
             GET /api/translate/status lists them by chapter."
        );
        // A warning stored with the hint (by an earlier version) is shown as it is.
        let Warnings(again) = Mirror::mirror(shown.clone());
        assert_eq!(again, shown);
    }
}
