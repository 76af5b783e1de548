//! Download links: the generated file when there is one, else a file of the chapters finished so
//! far, rendered on the first request for that progress and kept, so no finished work is ever
//! out of reach and no request renders what an earlier one did.

use std::time::Duration;

use tracing::info;

use super::error::TranslationError;
use super::render::Completeness;
use super::service::Translations;
use crate::books::{store, Book};
use crate::fault::{DataError, Fault};
use crate::job::Edition;
use crate::types::{BookStatus, ChapterStatus};

/// How long a download link works (the spec's hour).
pub const LINK_LIFETIME: Duration = Duration::from_secs(3600);

/// Renders for downloads, one at a time in this process: each holds a whole book (and its
/// decoded images) in memory for seconds.
static RENDER_TURNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// What a progress file holds, as 16 hex digits: the translation's key, the names on its cover
/// and language, and the chapters finished with the owner's changes of their passages counted
/// (what [`Translations::render`] reads).
fn progress_fingerprint(book: &Book, chapters: &[crate::books::Chapter]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for part in [
        book.translation_key.as_deref().unwrap_or_default(),
        &book.title,
        book.author.as_deref().unwrap_or_default(),
        &book.target_lang,
    ] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    for chapter in chapters
        .iter()
        .filter(|c| c.status == ChapterStatus::Completed)
    {
        hash.update(chapter.number.to_be_bytes());
        hash.update(chapter.edits.to_be_bytes());
    }
    hex::encode(&hash.finalize()[..8])
}

/// A download link and what it holds.
#[derive(Debug, Clone)]
pub struct Download {
    pub url: String,
    /// False for a file of the chapters finished so far.
    pub complete: bool,
}

impl Translations {
    /// A link valid for an hour to the book's `edition`; `NothingTranslated` when no chapter is
    /// translated yet.
    pub async fn download(
        &self,
        user_id: &str,
        book_id: &str,
        edition: Edition,
    ) -> Result<Download, TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        store::edition_fits(book.format, edition).map_err(TranslationError::Invalid)?;
        self.download_of(&book, edition).await
    }

    /// As [`Translations::download`], for a book already authorised (its share link).
    ///
    /// An unfinished book's file is rendered once per state of its progress: the file is named
    /// for the chapters it holds, and a download of the same progress is served from it. Renders
    /// take turns ([`RENDER_TURNS`]), so a burst of download requests costs one render, not one
    /// each.
    pub async fn download_of(
        &self,
        book: &Book,
        edition: Edition,
    ) -> Result<Download, TranslationError> {
        let whole = store::output_key(&book.id, edition)?;
        if book.status == BookStatus::Completed && self.exists(&whole).await? {
            return self.link(book, &whole, edition, true).await;
        }
        // A book translated again: its earlier translation's file until this run's is made.
        if book.status != BookStatus::Completed {
            let previous = store::previous_output_key(&book.id, edition)?;
            if self.exists(&previous).await? {
                return self.link(book, &previous, edition, true).await;
            }
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
        let key =
            store::progress_file_key(&book.id, &progress_fingerprint(book, &chapters), edition)?;
        if !self.exists(&key).await? {
            let _turn = RENDER_TURNS
                .acquire()
                .await
                .map_err(|e| Fault::Internal(format!("the render turns closed: {e}")))?;
            // Rendered by the request this one waited behind.
            if !self.exists(&key).await? {
                let Some(rendition) = self.render(book, edition, completeness).await? else {
                    return Err(TranslationError::NothingTranslated(book.status));
                };
                self.ports.blobs.put(&key, rendition.bytes.into()).await?;
                self.drop_older_progress_files(&book.id, &key, edition)
                    .await?;
                info!(book_id = %book.id, edition = edition.label(), complete = all_done, "file rendered for download");
            }
        }
        self.link(book, &key, edition, all_done).await
    }

    async fn exists(&self, key: &crate::ports::BlobKey) -> Result<bool, DataError> {
        Ok(!self.ports.blobs.list(key.as_str()).await?.is_empty())
    }

    /// Removes the book's earlier progress files of `edition`: a link to one, handed out before,
    /// stops working once the book has moved on (the new link holds more).
    async fn drop_older_progress_files(
        &self,
        book_id: &str,
        current: &crate::ports::BlobKey,
        edition: Edition,
    ) -> Result<(), DataError> {
        for key in self
            .ports
            .blobs
            .list(&store::progress_files_prefix(book_id))
            .await?
        {
            if &key != current && store::is_progress_file_of(&key, book_id, edition) {
                self.ports.blobs.delete(&key).await?;
            }
        }
        Ok(())
    }

    /// A link to a file the owner's book already has, for visitors of its share page (`token`):
    /// the public never makes the service render anything. The link points at the share's own
    /// copy of the file, made on its first download, so that revoking the share ends it.
    /// NotFound when the file was not made.
    pub async fn shared_download(
        &self,
        book: &Book,
        token: &str,
        edition: Edition,
    ) -> Result<Download, TranslationError> {
        if !self.has_file(book, edition).await? {
            return Err(TranslationError::NotFound);
        }
        let copy = store::share_file_key(&book.id, token, edition)?;
        if self.ports.blobs.list(copy.as_str()).await?.is_empty() {
            let whole = store::output_key(&book.id, edition)?;
            let bytes = self
                .ports
                .blobs
                .get(&whole)
                .await?
                .ok_or(TranslationError::NotFound)?;
            self.ports.blobs.put(&copy, bytes).await?;
        }
        self.link(book, &copy, edition, true).await
    }

    /// Whether the finished book's file of `edition` exists.
    pub async fn has_file(&self, book: &Book, edition: Edition) -> Result<bool, DataError> {
        if book.status != BookStatus::Completed {
            return Ok(false);
        }
        self.exists(&store::output_key(&book.id, edition)?).await
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

    /// The file of `edition` the generate job stored for the book, if there is one.
    pub async fn output(
        &self,
        book: &Book,
        edition: Edition,
    ) -> Result<Option<bytes::Bytes>, DataError> {
        Ok(self
            .ports
            .blobs
            .get(&store::output_key(&book.id, edition)?)
            .await?)
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
        edition: Edition,
        complete: bool,
    ) -> Result<Download, TranslationError> {
        let name = file_name(&book.title, &book.target_lang, edition, complete);
        let url = self
            .ports
            .links
            .download_url(key, &name, LINK_LIFETIME)
            .await?;
        Ok(Download { url, complete })
    }
}

/// `Moby-Dick.es.epub`, `Moby-Dick.es.partial.epub` or `Moby-Dick.es.bilingual.pdf`: the
/// title's letters, digits and dashes.
fn file_name(title: &str, lang: &str, edition: Edition, complete: bool) -> String {
    let partial = if complete { "" } else { ".partial" };
    format!("{}.{lang}{partial}.{}", file_stem(title), edition.suffix())
}

/// The start of a file's name made from the book's `title`: its letters and digits, words
/// joined by dashes, at most 80 characters (`book` when none is left).
pub(crate) fn file_stem(title: &str) -> String {
    let stem: String = title
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .take(80)
        .collect();
    if stem.is_empty() {
        "book".into()
    } else {
        stem
    }
}

/// One chapter of a shared book: the original blocks, and the translation when there is one.
pub struct SideBySide {
    pub source: booktr_formats::manuscript::Chapter,
    pub translation: Option<super::model::StoredChapter>,
}

impl Translations {
    /// The chapter `number` of the book for the public reader; None when it has no such chapter.
    pub async fn side_by_side(
        &self,
        book: &Book,
        number: u32,
    ) -> Result<Option<SideBySide>, DataError> {
        let Some(source) = self
            .read_json::<booktr_formats::manuscript::Chapter>(&store::chapter_key(
                &book.id, number,
            )?)
            .await?
        else {
            return Ok(None);
        };
        let translation = self.current_chapter(book, number).await?;
        Ok(Some(SideBySide {
            source,
            translation,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Layout, OutputFormat};

    #[test]
    fn file_names_keep_the_title_readable_and_mark_partial_files() {
        assert_eq!(
            file_name(
                "Moby Dick; or, The Whale",
                "es",
                Edition::new(OutputFormat::Epub, Layout::Translated),
                true
            ),
            "Moby-Dick-or-The-Whale.es.epub"
        );
        assert_eq!(
            file_name(
                "???",
                "fr",
                Edition::new(OutputFormat::Pdf, Layout::Translated),
                false
            ),
            "book.fr.partial.pdf"
        );
        assert_eq!(
            file_name(
                "Waste Land",
                "ar",
                Edition::new(OutputFormat::Epub, Layout::Bilingual),
                true
            ),
            "Waste-Land.ar.bilingual.epub"
        );
    }
}
