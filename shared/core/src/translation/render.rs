//! A translated book as a file: the manuscript's metadata and images with the stored chapter
//! translations, through the EPUB, PDF or (for a Markdown book) Markdown renderer.

use booktr_formats::manuscript::{Chapter as SourceChapter, Manuscript};
use booktr_formats::render::{self, Layout, RenderOptions, Rendition, Sources};

use tracing::instrument;

use super::error::{RenderError, TranslationError};
use super::service::Translations;
use crate::books::{store, Book, BookFormat, Chapter};
use crate::fault::{DataError, Fault};
use crate::job::{Edition, Job, OutputFormat};

use crate::types::BookStatus;

/// Which chapters a rendition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// Every chapter, translated under the book's key; missing ones are an error.
    Whole,
    /// Only the chapters translated so far (a partial download); None when there are none.
    FinishedSoFar,
}

impl Translations {
    /// Renders the book's `edition`; None when `FinishedSoFar` finds no translated chapter. The
    /// rendition's warnings say what the file leaves out (images past the PDF's pixel budgets).
    pub async fn render(
        &self,
        book: &Book,
        edition: Edition,
        completeness: Completeness,
    ) -> Result<Option<Rendition>, RenderError> {
        let mut manuscript: Manuscript =
            self.read_json(&store::manuscript_key(&book.id)?)
                .await?
                .ok_or_else(|| RenderError::Missing("the manuscript is missing".into()))?;
        let chapters = self.books.chapters(&book.id).await?;
        let translated = self.texts_to_render(book, &chapters, completeness).await?;
        if translated.iter().all(Option::is_none) {
            return Ok(None);
        }
        let sources = self.bilingual_sources(book, &chapters, edition).await?;
        let source_language = book.original_lang.clone();
        self.load_assets(book, &mut manuscript).await?;
        // An EPUB comes back as the same book, translated in place.
        let original = match (book.format, edition.format) {
            (BookFormat::Epub, OutputFormat::Epub) => {
                self.ports
                    .blobs
                    .get(&store::original_key(&book.id, book.format)?)
                    .await?
            }
            _ => None,
        };
        manuscript.language = Some(book.target_lang.clone());
        let options = self.options(book);
        let layout = match edition.layout {
            crate::job::Layout::Translated => Layout::Translated,
            crate::job::Layout::Bilingual => Layout::Bilingual,
        };
        // Rendering is CPU work (seconds for a long PDF): off the async threads.
        let rendered = tokio::task::spawn_blocking(move || {
            let sources = (layout == Layout::Bilingual).then_some(Sources {
                language: &source_language,
                chapters: &sources,
            });
            match (edition.format, sources) {
                (OutputFormat::Epub, sources) => render::translated_epub(
                    original.as_deref(),
                    &manuscript,
                    &translated,
                    sources,
                    &options,
                    layout,
                ),
                // Translated alone: `generate` and `download` refuse a bilingual Markdown file.
                (OutputFormat::Markdown, _) => {
                    manuscript.chapters = translated.into_iter().flatten().collect();
                    render::markdown::render(&manuscript, &options).map(|bytes| Rendition {
                        bytes,
                        warnings: Vec::new(),
                    })
                }
                (OutputFormat::Pdf, None) => {
                    manuscript.chapters = translated.into_iter().flatten().collect();
                    render::pdf::render(&manuscript, &options, &[])
                }
                (OutputFormat::Pdf, Some(sources)) => {
                    // The PDF holds the translated chapters only, each beside its source.
                    let (done, originals): (Vec<_>, Vec<_>) = translated
                        .into_iter()
                        .zip(sources.chapters.iter().cloned())
                        .filter_map(|(t, s)| Some((t?, s)))
                        .unzip();
                    manuscript.chapters = done;
                    let sources = Sources {
                        language: sources.language,
                        chapters: &originals,
                    };
                    render::pdf::render_bilingual(&manuscript, sources, &options, &[])
                }
            }
        })
        .await
        .map_err(|e| RenderError::Stopped(e.to_string()))?
        .map_err(|e| RenderError::Refused {
            edition: edition.label(),
            cause: e.to_string(),
        })?;
        Ok(Some(rendered))
    }

    /// Each chapter's text to render, the owner's edits in it; None for a chapter not
    /// translated yet when `FinishedSoFar` allows it.
    async fn texts_to_render(
        &self,
        book: &Book,
        chapters: &[Chapter],
        completeness: Completeness,
    ) -> Result<Vec<Option<SourceChapter>>, RenderError> {
        let mut translated = Vec::with_capacity(chapters.len());
        for chapter in chapters {
            // The owner's edits are the book's text.
            match self.current_chapter(book, chapter.number).await? {
                Some(stored) => translated.push(Some(SourceChapter {
                    title: stored.title,
                    blocks: stored.blocks,
                })),
                _ if completeness == Completeness::FinishedSoFar => translated.push(None),
                _ => {
                    return Err(RenderError::Missing(format!(
                        "chapter {} has no translation to render",
                        chapter.number
                    )))
                }
            }
        }
        Ok(translated)
    }

    /// A bilingual edition sets each translated block with its original: the chapters' sources
    /// (none for a translated edition).
    async fn bilingual_sources(
        &self,
        book: &Book,
        chapters: &[Chapter],
        edition: Edition,
    ) -> Result<Vec<SourceChapter>, RenderError> {
        let mut sources = Vec::new();
        if edition.layout == crate::job::Layout::Bilingual {
            for chapter in chapters {
                let source: SourceChapter = self
                    .read_json(&store::chapter_key(&book.id, chapter.number)?)
                    .await?
                    .ok_or_else(|| {
                        RenderError::Missing(format!("chapter {} text is missing", chapter.number))
                    })?;
                sources.push(source);
            }
        }
        Ok(sources)
    }

    /// The manuscript's images and other files, read from where extraction stored them.
    async fn load_assets(
        &self,
        book: &Book,
        manuscript: &mut Manuscript,
    ) -> Result<(), RenderError> {
        for asset in &mut manuscript.assets {
            if let Some(bytes) = self
                .ports
                .blobs
                .get(&store::asset_key(&book.id, &asset.file_name)?)
                .await?
            {
                asset.bytes = bytes.to_vec();
            }
        }
        Ok(())
    }

    /// The rendition's metadata: the book's, in its target language, modified now.
    fn options(&self, book: &Book) -> RenderOptions {
        RenderOptions {
            language: book.target_lang.clone(),
            title: Some(book.title.clone()),
            author: book.author.clone(),
            identifier: format!("urn:booktr:{}", book.id),
            modified: self
                .ports
                .clock
                .now()
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
            budget: self.file_budget,
        }
    }

    pub(crate) async fn read_json<T: serde::de::DeserializeOwned>(
        &self,
        key: &crate::ports::BlobKey,
    ) -> Result<Option<T>, DataError> {
        match self.ports.blobs.get(key).await? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Fault::Corrupt {
                    what: key.to_string(),
                    detail: e.to_string(),
                }
                .into()
            }),
        }
    }
}

impl Translations {
    /// Queues generation of the file: TRANSLATED or COMPLETED books only.
    #[instrument(skip(self))]
    pub async fn generate(
        &self,
        user_id: &str,
        book_id: &str,
        edition: Edition,
    ) -> Result<(), TranslationError> {
        let book = self.books.get(user_id, book_id).await?;
        store::edition_fits(book.format, edition).map_err(TranslationError::Invalid)?;
        if !matches!(
            book.status,
            BookStatus::Translated | BookStatus::Completed | BookStatus::Generating
        ) {
            return Err(TranslationError::Invalid(format!(
                "the book is {}; a file can be generated once it is translated",
                book.status
            )));
        }
        let job = Job::Generate {
            book_id: book_id.to_string(),
            format: edition.format,
            layout: edition.layout,
            requested: self.ports.clock.now().timestamp_millis(),
        };
        job.enqueue(self.ports.queue.as_ref()).await?;
        Ok(())
    }
}
