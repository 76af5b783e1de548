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
pub mod limits;
pub mod manuscript;
pub mod markup;
mod media;
pub mod pdf;
pub mod render;
#[cfg(any(test, feature = "hostile-corpus"))]
pub mod structure;
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
    }?;
    limits::check(&manuscript)?;
    Ok(manuscript)
}

/// The memory one file may cost its reader and renderer. Each limit grows with the file where
/// that makes sense, under an absolute ceiling (`BOOKTR_FILE_MEMORY_MIB` in the service, 64 MiB
/// by default) from which every other limit follows:
///
/// - a PDF stream decompresses to 64 times the file, at least 16 MiB, at most the ceiling;
/// - a zip entry (EPUB, DOCX) inflates to at most the ceiling, and all of them together to 20
///   times the file, at least 16 MiB, at most 16 times the ceiling;
/// - a PDF rendition decodes images of at most a quarter-million pixels per MiB of ceiling each
///   (16 megapixels at 64 MiB), and half a million per MiB in all (32 megapixels).
///
/// HTML and TXT are read as text, within the upload's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    ceiling_mib: usize,
}

impl Budget {
    pub const DEFAULT_MIB: usize = 64;
    /// Below this the limits would refuse ordinary books (a PDF's embedded fonts, say).
    pub const MIN_MIB: usize = 16;
    pub const MAX_MIB: usize = 4096;

    /// A budget with a ceiling of `mib` MiB; None outside `MIN_MIB..=MAX_MIB`.
    pub fn of_mib(mib: usize) -> Option<Budget> {
        (Self::MIN_MIB..=Self::MAX_MIB)
            .contains(&mib)
            .then_some(Budget { ceiling_mib: mib })
    }

    fn ceiling(&self) -> usize {
        self.ceiling_mib << 20
    }

    /// The most bytes one PDF stream of a file of `file_len` bytes may decompress to.
    pub fn pdf_stream_bytes(&self, file_len: usize) -> usize {
        file_len.saturating_mul(64).clamp(16 << 20, self.ceiling())
    }

    /// The most bytes one zip entry may inflate to, and all of a file's entries together.
    pub fn archive_bytes(&self, file_len: usize) -> (u64, u64) {
        let ceiling = self.ceiling() as u64;
        let total = (file_len as u64)
            .saturating_mul(20)
            .clamp(16 << 20, ceiling.saturating_mul(16));
        (ceiling, total)
    }

    /// The most pixels one image may have to be decoded for a PDF rendition.
    pub fn image_pixels(&self) -> u64 {
        self.ceiling_mib as u64 * 250_000
    }

    /// The most pixels of all a PDF rendition's images together.
    pub fn book_pixels(&self) -> u64 {
        self.ceiling_mib as u64 * 500_000
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            ceiling_mib: Self::DEFAULT_MIB,
        }
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
    /// A translation does not fit the book it is to be put back into: its chapters or blocks
    /// are not the ones the book gives today (the extractor changed since the book was read).
    /// The caller renders the manuscript afresh instead.
    #[error("the translation does not match the book's text: {0}")]
    Mismatch(String),
}

/// Words as `wc -w` counts them: runs of non-whitespace.
pub fn count_words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_budget_gives_the_documented_limits_and_every_limit_follows_the_ceiling() {
        let default = Budget::default();
        assert_eq!(default.pdf_stream_bytes(1_000), 16 << 20);
        assert_eq!(default.pdf_stream_bytes(500_000), 500_000 * 64);
        assert_eq!(default.pdf_stream_bytes(50 << 20), 64 << 20);
        assert_eq!(default.archive_bytes(100 << 20), (64 << 20, 1 << 30));
        assert_eq!(default.image_pixels(), 16_000_000);
        assert_eq!(default.book_pixels(), 32_000_000);

        let larger = Budget::of_mib(256).unwrap();
        assert_eq!(larger.pdf_stream_bytes(50 << 20), 256 << 20);
        assert_eq!(larger.image_pixels(), 64_000_000);
        assert_eq!(Budget::of_mib(8), None);
        assert_eq!(Budget::of_mib(5000), None);
    }
}
