//! Download links: the generated file when there is one, else a file of the chapters finished so
//! far rendered on request, so no finished work is ever out of reach.

use std::time::Duration;

use tracing::info;

use super::{Completeness, TranslationError, Translations};
use crate::books::{store, Book};
use crate::jobs::OutputFormat;
use crate::ports::StoreError;
use crate::types::{BookStatus, ChapterStatus};

/// How long a download link works (the spec's hour).
pub const LINK_LIFETIME: Duration = Duration::from_secs(3600);

/// A download link and what it holds.
#[derive(Debug, Clone)]
pub struct Download {
    pub url: String,
    /// False for a file of the chapters finished so far.
    pub complete: bool,
}

impl Translations {
    /// A link valid for an hour to the book as `format`; 404 (`NotFound`) when nothing of it is
    /// translated yet.
    pub async fn download(
        &self,
        user_id: &str,
        book_id: &str,
        format: OutputFormat,
    ) -> Result<Download, TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        self.download_of(&book, format).await
    }

    /// As [`Translations::download`], for a book already authorised (its share link).
    pub async fn download_of(
        &self,
        book: &Book,
        format: OutputFormat,
    ) -> Result<Download, TranslationError> {
        let whole = store::output_key(&book.id, format)?;
        let has_whole = !self.ports.blobs.list(whole.as_str()).await?.is_empty();
        if has_whole && book.status == BookStatus::Completed {
            return self.link(book, &whole, format, true).await;
        }
        let chapters = self.books.chapters(&book.id).await?;
        let all_done = !chapters.is_empty()
            && chapters
                .iter()
                .all(|c| c.status == ChapterStatus::Completed)
            && matches!(
                book.status,
                BookStatus::Translated | BookStatus::Generating | BookStatus::Completed
            );
        let completeness = if all_done {
            Completeness::Whole
        } else {
            Completeness::FinishedSoFar
        };
        let Some(bytes) = self.render(book, format, completeness).await? else {
            return Err(TranslationError::NotFound);
        };
        let key = if all_done {
            whole
        } else {
            store::partial_key(&book.id, format)?
        };
        self.ports.blobs.put(&key, bytes.into()).await?;
        info!(book_id = %book.id, format = format.as_str(), complete = all_done, "file rendered for download");
        self.link(book, &key, format, all_done).await
    }

    /// A link to a file the owner's book already has, for visitors of its share page (`token`):
    /// the public never makes the service render anything. The link points at the share's own
    /// copy of the file, made on its first download, so that revoking the share ends it.
    /// NotFound when the file was not made.
    pub async fn shared_download(
        &self,
        book: &Book,
        token: &str,
        format: OutputFormat,
    ) -> Result<Download, TranslationError> {
        if !self.has_file(book, format).await? {
            return Err(TranslationError::NotFound);
        }
        let copy = store::share_file_key(&book.id, token, format)?;
        if self.ports.blobs.list(copy.as_str()).await?.is_empty() {
            let whole = store::output_key(&book.id, format)?;
            let bytes = self
                .ports
                .blobs
                .get(&whole)
                .await?
                .ok_or(TranslationError::NotFound)?;
            self.ports.blobs.put(&copy, bytes).await?;
        }
        self.link(book, &copy, format, true).await
    }

    /// Whether the finished book's file in `format` exists.
    pub async fn has_file(&self, book: &Book, format: OutputFormat) -> Result<bool, StoreError> {
        if book.status != BookStatus::Completed {
            return Ok(false);
        }
        let whole = store::output_key(&book.id, format)?;
        Ok(!self.ports.blobs.list(whole.as_str()).await?.is_empty())
    }

    /// Checks a link of this service (see [`crate::ports::Links::verify`]).
    pub fn verify_link(
        &self,
        key: &str,
        name: &str,
        expires: i64,
        signature: &str,
    ) -> crate::ports::LinkCheck {
        self.ports.links.verify(key, name, expires, signature)
    }

    /// A stored file, for a link that checked out.
    pub async fn file(
        &self,
        key: &crate::ports::BlobKey,
    ) -> Result<Option<bytes::Bytes>, crate::ports::StoreError> {
        self.ports.blobs.get(key).await
    }

    async fn link(
        &self,
        book: &Book,
        key: &crate::ports::BlobKey,
        format: OutputFormat,
        complete: bool,
    ) -> Result<Download, TranslationError> {
        let name = file_name(&book.title, &book.target_lang, format, complete);
        let url = self
            .ports
            .links
            .download_url(key, &name, LINK_LIFETIME)
            .await?;
        Ok(Download { url, complete })
    }
}

/// `Moby-Dick.es.epub`, or `Moby-Dick.es.partial.epub`: the title's letters, digits and dashes.
fn file_name(title: &str, lang: &str, format: OutputFormat, complete: bool) -> String {
    let mut stem: String = title
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    stem = stem.chars().take(80).collect();
    if stem.is_empty() {
        stem = "book".into();
    }
    let partial = if complete { "" } else { ".partial" };
    format!("{stem}.{lang}{partial}.{}", format.as_str())
}

/// One chapter of a shared book: the original blocks, and the translation when there is one.
pub struct SideBySide {
    pub source: booktr_formats::manuscript::Chapter,
    pub translation: Option<super::StoredChapter>,
}

impl Translations {
    /// The chapter `number` of the book for the public reader; None when it has no such chapter.
    pub async fn side_by_side(
        &self,
        book: &Book,
        number: u32,
    ) -> Result<Option<SideBySide>, crate::ports::StoreError> {
        let Some(source) = self
            .read_json::<booktr_formats::manuscript::Chapter>(&store::chapter_key(
                &book.id, number,
            )?)
            .await?
        else {
            return Ok(None);
        };
        let key = book.translation_key.clone().unwrap_or_default();
        let translation = self
            .stored_chapter(&book.id, number)
            .await?
            .filter(|t| t.key == key);
        Ok(Some(SideBySide {
            source,
            translation,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_the_title_readable_and_mark_partial_files() {
        assert_eq!(
            file_name("Moby Dick; or, The Whale", "es", OutputFormat::Epub, true),
            "Moby-Dick-or-The-Whale.es.epub"
        );
        assert_eq!(
            file_name("???", "fr", OutputFormat::Pdf, false),
            "book.fr.partial.pdf"
        );
    }
}
