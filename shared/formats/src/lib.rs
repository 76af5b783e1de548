//! Book formats: pure functions from a file's bytes to its chapters and back. No I/O, no async,
//! so every extractor can be fuzzed and tested on its own.
//!
//! Extractors: EPUB, PDF, DOCX, HTML, TXT, Markdown and FictionBook 2 into a
//! [`manuscript::Manuscript`]; renderers ([`render`]): EPUB, PDF, and Markdown for a book that
//! was Markdown. The root declares the modules, re-exports the types they share
//! ([`FormatError`], [`Budget`]) and chooses the extractor for a [`Format`]. Beside them, a
//! book's passages as XLIFF 1.2 for translation tools, and back ([`xliff`]).

mod archive;
mod budget;
pub mod docx;
mod dom;
pub mod epub;
mod error;
pub mod fb2;
pub mod gzipped;
pub mod html;
pub mod language;
pub mod limits;
pub mod manuscript;
pub mod markdown;
pub mod markup;
mod media;
pub mod pdf;
pub mod render;
#[cfg(any(test, feature = "test-support"))]
pub mod structure;
pub mod txt;
pub mod xhtml;
pub mod xliff;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod test_images;

pub use budget::Budget;
pub use error::FormatError;
pub use language::detect_language;
pub use manuscript::count_words;

/// The kinds of file the extractors read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Epub,
    Pdf,
    Docx,
    Html,
    Txt,
    Markdown,
    /// FictionBook 2: its XML, or a zip archive of it (`.fb2.zip`).
    Fb2,
}

/// Reads a file of the given kind into a manuscript, within the default [`Budget`].
pub fn extract(format: Format, bytes: &[u8]) -> Result<manuscript::Manuscript, FormatError> {
    extract_within(format, bytes, Budget::default())
}

/// Reads a file of the given kind into a manuscript, within `budget` and the [`limits`] on what
/// it may hold.
pub fn extract_within(
    format: Format,
    bytes: &[u8],
    budget: Budget,
) -> Result<manuscript::Manuscript, FormatError> {
    let manuscript = match format {
        Format::Epub => epub::extract_within(bytes, budget),
        Format::Pdf => pdf::extract_within(bytes, budget),
        Format::Docx => docx::extract_within(bytes, budget),
        Format::Html => html::extract(bytes),
        Format::Txt => txt::extract(bytes),
        Format::Markdown => markdown::extract(bytes),
        Format::Fb2 => fb2::extract_within(bytes, budget),
    }?;
    limits::check(&manuscript)?;
    Ok(manuscript)
}
