//! Book formats: pure functions from a file's bytes to its chapters. No I/O, no async, so every
//! extractor can be fuzzed and tested on its own.
//!
//! Extractors: EPUB, HTML and TXT into a [`manuscript::Manuscript`]; PDF and DOCX follow.

mod archive;
pub mod docx;
mod dom;
pub mod epub;
pub mod gzipped;
#[cfg(any(test, feature = "hostile-corpus"))]
pub mod hostile;
pub mod html;
pub mod language;
pub mod manuscript;
pub mod markup;
pub mod pdf;
pub mod render;
pub mod txt;
pub mod xhtml;

#[cfg(test)]
mod corpus_tests;

pub use language::detect_language;

/// The kinds of file the extractors read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Epub,
    Pdf,
    Docx,
    Html,
    Txt,
}

/// Reads a file of the given kind into a manuscript.
pub fn extract(format: Format, bytes: &[u8]) -> Result<manuscript::Manuscript, FormatError> {
    match format {
        Format::Epub => epub::extract(bytes),
        Format::Pdf => pdf::extract(bytes),
        Format::Docx => docx::extract(bytes),
        Format::Html => html::extract(bytes),
        Format::Txt => txt::extract(bytes),
    }
}

/// Why a file could not be read. The text is shown to the user as the book's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("the file is empty")]
    Empty,
    #[error("the file contains no readable text")]
    NoText,
    /// The file is damaged or not what it claims to be; the text says where.
    #[error("the file is damaged or malformed: {0}")]
    Malformed(String),
    /// A PDF of page images: there is no text to translate.
    #[error(
        "this PDF has no text layer (it looks like a scan); run OCR on it and upload the result"
    )]
    NoTextLayer,
    /// DRM: the book's content is encrypted.
    #[error("the book is encrypted (DRM) and cannot be read; upload a DRM-free copy")]
    Encrypted,
    /// A limit that protects the service was exceeded (a zip bomb, too many entries ...).
    #[error("the file exceeds a safety limit: {0}")]
    TooLarge(String),
}

/// Words as `wc -w` counts them: runs of non-whitespace.
pub fn count_words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}
