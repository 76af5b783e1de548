//! Renderers: a (translated) manuscript to a file readers accept.

#[cfg(any(test, feature = "test-support"))]
pub mod active;
mod edit;
pub mod epub;
pub mod epub_in_place;
mod inert;
pub mod markdown;
pub mod pdf;
mod translated;

pub use translated::translated_epub;

use crate::budget::Budget;
use crate::manuscript::{BlockKind, Chapter};
use crate::markup::{self, Piece, Tag};

/// A rendered file, and what the reader should know it lacks (images left out and why, what the
/// PDF writer reported wrong).
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
    pub budget: Budget,
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

/// The other side of a bilingual edition: the text each translated block is set beside.
///
/// `chapters[i]` is the source of translated chapter `i`, block for block: the same number of
/// blocks, of the same kinds, in the same order (what the translation was made from).
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// The language the book was written in (the originals are marked up in it).
    pub language: &'a str,
    pub chapters: &'a [Chapter],
}

impl Sources<'_> {
    /// [`FormatError::Mismatch`](crate::error::FormatError::Mismatch) unless every translated chapter
    /// has its source, with the same blocks of the same kinds.
    pub fn check(&self, translated: &[Chapter]) -> Result<(), crate::error::FormatError> {
        self.check_each(translated.iter().map(Some), translated.len())
    }

    /// As [`Sources::check`], for chapters of which some are left out (None), which need no
    /// source beyond their place.
    fn check_each<'c>(
        &self,
        translated: impl Iterator<Item = Option<&'c Chapter>>,
        count: usize,
    ) -> Result<(), crate::error::FormatError> {
        check_alignment(translated, count, self.chapters, "its source")
    }
}

/// [`FormatError::Mismatch`](crate::error::FormatError::Mismatch) unless the `count` translated
/// chapters are `originals`' (None: a chapter left out), with the same blocks of the same
/// kinds; `of` names the originals in the message ("its source", "the book").
pub(crate) fn check_alignment<'c>(
    translated: impl Iterator<Item = Option<&'c Chapter>>,
    count: usize,
    originals: &[Chapter],
    of: &str,
) -> Result<(), crate::error::FormatError> {
    use crate::error::FormatError::Mismatch;
    if count != originals.len() {
        return Err(Mismatch(format!(
            "the translation has {count} chapters, {of} {}",
            originals.len()
        )));
    }
    for (index, (translation, original)) in translated.zip(originals).enumerate() {
        let Some(translation) = translation else {
            continue;
        };
        if translation.blocks.len() != original.blocks.len() {
            return Err(Mismatch(format!(
                "chapter {} has {} blocks in the translation, {} in {of}",
                index + 1,
                translation.blocks.len(),
                original.blocks.len()
            )));
        }
        let differs = translation
            .blocks
            .iter()
            .zip(&original.blocks)
            .position(|(a, b)| std::mem::discriminant(&a.kind) != std::mem::discriminant(&b.kind));
        if let Some(block) = differs {
            return Err(Mismatch(format!(
                "block {} of chapter {} is not the same kind of block as in {of}",
                block + 1,
                index + 1
            )));
        }
    }
    Ok(())
}

/// A verse line's number: the `<num/>` mark that ends the block's markup, nothing but
/// whitespace after it (as a poem's line numbers sit at their line's end, `<span
/// class="lnum">10</span>`), with the markup before it. Renderers set it apart from the verse,
/// at the line's end, rather than glued to its last word.
pub(crate) fn line_number(text: &str) -> Option<(Vec<Piece>, String)> {
    let mut pieces = markup::parse(text).ok()?;
    let at = pieces.iter().rposition(|p| match p {
        Piece::Text(t) => !t.trim().is_empty(),
        Piece::Tag(_) => true,
    })?;
    let Piece::Tag(Tag::Num { text: number, .. }) = pieces.get(at)?.clone() else {
        return None;
    };
    pieces.truncate(at);
    Some((pieces, number))
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
