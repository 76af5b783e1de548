//! Why a file could not be read or a translation not rendered.

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
    /// are not the ones the book's walk gives (the book was read by another version of the
    /// extractor).
    /// The caller renders the manuscript afresh instead.
    #[error("the translation does not match the book's text: {0}")]
    Mismatch(String),
}
