//! Renderers: a (translated) manuscript to a file readers accept.

pub mod epub;
pub mod epub_in_place;
pub mod pdf;

use crate::manuscript::{BlockKind, Chapter};

/// A rendered file, and what the reader should know it lacks (images left out, and why).
#[derive(Debug, Clone)]
pub struct Rendition {
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
}

/// What a renderer needs beyond the manuscript.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// The language of the text being rendered (the target language after translation).
    pub language: String,
    /// Overrides the manuscript's title (the user may have renamed the book).
    pub title: Option<String>,
    pub author: Option<String>,
    /// A stable unique identifier of the book, such as `urn:booktr:<id>`.
    pub identifier: String,
    /// When the file was made, `YYYY-MM-DDThh:mm:ssZ` (EPUB's `dcterms:modified`).
    pub modified: String,
    /// How many pixels of images a PDF may decode.
    pub budget: crate::Budget,
}

/// How a translation is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Layout {
    /// The translation alone.
    #[default]
    Translated,
    /// Each translated block right after its original, which is styled as secondary.
    Bilingual,
}

/// The translated book as EPUB: the source package translated in place when the source was an
/// EPUB (`original`), in `layout`, else the manuscript rebuilt with this crate's own
/// stylesheet (translated only: a rebuilt book has no bilingual layout yet). A source
/// whose walk no longer gives the blocks it was translated from (read by an older extractor)
/// is rebuilt too, as is one the in-place writer refuses (past a limit), saying so in the
/// warnings. `manuscript` holds the book's metadata and
/// images; `translated[i]` is chapter i's translation, or None to leave it out of a rebuilt
/// book (a partial download) and keep its source text in a book translated in place.
pub fn translated_epub(
    original: Option<&[u8]>,
    manuscript: &crate::manuscript::Manuscript,
    translated: &[Option<Chapter>],
    options: &RenderOptions,
    layout: Layout,
) -> Result<Rendition, crate::FormatError> {
    let mut warnings = Vec::new();
    if let Some(original) = original {
        match epub_in_place::render(original, translated, options, layout, options.budget) {
            // A bilingual book needs the source's own walk: it is not rebuilt in another layout.
            // A translated one is: the book is better rebuilt than refused.
            Err(e) if layout == Layout::Translated => warnings.push(match e {
                crate::FormatError::Mismatch(why) => format!(
                    "rebuilt with a plain style: the source EPUB no longer matches its chapters \
                     ({why})"
                ),
                other => format!(
                    "rebuilt with a plain style: the source EPUB could not be translated in \
                     place ({other})"
                ),
            }),
            done => return done,
        }
    }
    let mut rebuilt = manuscript.clone();
    rebuilt.chapters = translated.iter().flatten().cloned().collect();
    let bytes = epub::render(&rebuilt, options)?;
    Ok(Rendition { bytes, warnings })
}

/// Languages written right to left.
pub fn is_rtl(language: &str) -> bool {
    let primary = language
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    matches!(
        primary.as_str(),
        "ar" | "he" | "iw" | "fa" | "ur" | "yi" | "ps" | "sd" | "ug" | "dv" | "ckb" | "syr"
    )
}

/// The chapter's title, else its first heading, else "Chapter N".
pub fn chapter_title(chapter: &Chapter, index: usize) -> String {
    chapter
        .title
        .clone()
        .or_else(|| {
            chapter
                .blocks
                .iter()
                .find(|b| matches!(b.kind, BlockKind::Heading { .. }))
                .map(|b| b.plain_text())
        })
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| format!("Chapter {}", index + 1))
}

#[cfg(test)]
mod tests;
