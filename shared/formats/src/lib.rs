//! Book formats: pure functions from a file's bytes to its chapters. No I/O, no async, so every
//! extractor can be fuzzed and tested on its own.
//!
//! Today only plain text is read; EPUB, PDF, DOCX and HTML follow (see the README's roadmap).

mod language;
pub mod manuscript;
pub mod markup;
pub mod txt;
pub mod xhtml;

pub use language::detect_language;

/// One chapter as extracted: its heading (when the source has one) and its text, paragraphs
/// separated by blank lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedChapter {
    pub title: Option<String>,
    pub text: String,
    pub word_count: u64,
}

/// A whole extracted book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub chapters: Vec<ExtractedChapter>,
    /// ISO 639-1 code (or 639-3 where there is none) when the language could be told.
    pub language: Option<String>,
}

impl Extracted {
    pub fn word_count(&self) -> u64 {
        self.chapters.iter().map(|c| c.word_count).sum()
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
