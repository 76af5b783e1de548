//! Which kind of book a file is: decided from its content and checked against its name, so a
//! renamed file is refused at upload instead of failing later in extraction.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BookFormat {
    Epub,
    Pdf,
    Txt,
    Docx,
    Html,
    Markdown,
    /// FictionBook 2, its XML or a zip archive of it.
    Fb2,
}

impl BookFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            BookFormat::Epub => "epub",
            BookFormat::Pdf => "pdf",
            BookFormat::Txt => "txt",
            BookFormat::Docx => "docx",
            BookFormat::Html => "html",
            BookFormat::Markdown => "md",
            BookFormat::Fb2 => "fb2",
        }
    }

    /// The extractor that reads this kind of book.
    pub fn reader(self) -> booktr_formats::Format {
        match self {
            BookFormat::Epub => booktr_formats::Format::Epub,
            BookFormat::Pdf => booktr_formats::Format::Pdf,
            BookFormat::Txt => booktr_formats::Format::Txt,
            BookFormat::Docx => booktr_formats::Format::Docx,
            BookFormat::Html => booktr_formats::Format::Html,
            BookFormat::Markdown => booktr_formats::Format::Markdown,
            BookFormat::Fb2 => booktr_formats::Format::Fb2,
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "epub" => Some(BookFormat::Epub),
            "pdf" => Some(BookFormat::Pdf),
            "txt" => Some(BookFormat::Txt),
            "docx" => Some(BookFormat::Docx),
            "html" => Some(BookFormat::Html),
            "md" => Some(BookFormat::Markdown),
            "fb2" => Some(BookFormat::Fb2),
            _ => None,
        }
    }

    /// For people: `EPUB`, `Markdown`, `FB2`.
    pub fn label(self) -> &'static str {
        match self {
            BookFormat::Epub => "EPUB",
            BookFormat::Pdf => "PDF",
            BookFormat::Txt => "TXT",
            BookFormat::Docx => "DOCX",
            BookFormat::Html => "HTML",
            BookFormat::Markdown => "Markdown",
            BookFormat::Fb2 => "FB2",
        }
    }

    fn from_extension(file_name: &str) -> Option<Self> {
        let lower = file_name.to_ascii_lowercase();
        if lower.ends_with(".fb2.zip") {
            return Some(BookFormat::Fb2);
        }
        let ext = lower.rsplit_once('.')?.1;
        match ext {
            "epub" => Some(BookFormat::Epub),
            "pdf" => Some(BookFormat::Pdf),
            "txt" | "text" => Some(BookFormat::Txt),
            "docx" => Some(BookFormat::Docx),
            "html" | "htm" | "xhtml" => Some(BookFormat::Html),
            "md" | "markdown" => Some(BookFormat::Markdown),
            "fb2" => Some(BookFormat::Fb2),
            _ => None,
        }
    }
}

const ACCEPTED: &str = "EPUB (.epub), PDF (.pdf), TXT (.txt), DOCX (.docx), HTML (.html, .htm), \
     Markdown (.md, .markdown) or FictionBook (.fb2, .fb2.zip)";

/// Why a file is not a book the service reads; the text is shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsupportedFile {
    #[error("'{0}' is not a supported book file: upload {ACCEPTED}")]
    Name(String),
    #[error("the content of '{0}' is not a readable {ACCEPTED} file")]
    Content(String),
    #[error("'{file}' is named as {named} but its content is {content}")]
    Mismatch {
        file: String,
        named: String,
        content: String,
    },
    #[error("'{file}' is a zip archive, not a {named}")]
    Zip { file: String, named: String },
}

/// The format the file's name promises (its content decides later, in `sniff`).
pub(super) fn format_by_name(file_name: &str) -> Result<BookFormat, UnsupportedFile> {
    BookFormat::from_extension(file_name).ok_or_else(|| UnsupportedFile::Name(file_name.into()))
}

/// Decides the format from the first bytes of the file (`head`, at least 8 KiB when the file is
/// that long) and its name. The two must agree; Markdown is text, so text named as Markdown is
/// Markdown (and Markdown named as text is read as text).
pub fn sniff(file_name: &str, head: &[u8]) -> Result<BookFormat, UnsupportedFile> {
    let by_name = format_by_name(file_name)?;
    let by_content =
        content_format(head).ok_or_else(|| UnsupportedFile::Content(file_name.into()))?;
    // A DOCX or EPUB whose zip directory lies beyond the sniffed head looks like an unnamed zip;
    // the extension decides between the two zip-based formats then.
    let zip_ok = by_content == ZipUnknown
        && matches!(
            by_name,
            BookFormat::Epub | BookFormat::Docx | BookFormat::Fb2
        );
    match by_content {
        Known(f) if f == by_name => Ok(f),
        Known(BookFormat::Txt) if by_name == BookFormat::Markdown => Ok(by_name),
        _ if zip_ok => Ok(by_name),
        Known(f) => Err(UnsupportedFile::Mismatch {
            file: file_name.into(),
            named: by_name.label().into(),
            content: f.label().into(),
        }),
        ZipUnknown => Err(UnsupportedFile::Zip {
            file: file_name.into(),
            named: by_name.label().into(),
        }),
    }
}

#[derive(Debug, PartialEq)]
enum Sniffed {
    Known(BookFormat),
    ZipUnknown,
}
use Sniffed::{Known, ZipUnknown};

fn content_format(head: &[u8]) -> Option<Sniffed> {
    if head.starts_with(b"PK\x03\x04") {
        if contains(head, b"mimetypeapplication/epub+zip")
            || contains(head, b"META-INF/container.xml")
        {
            return Some(Known(BookFormat::Epub));
        }
        if contains(head, b"word/") {
            return Some(Known(BookFormat::Docx));
        }
        // A zipped FictionBook: its one entry is named `….fb2`.
        if contains(&head[..head.len().min(512)], b".fb2") {
            return Some(Known(BookFormat::Fb2));
        }
        return Some(ZipUnknown);
    }
    // PDF readers accept the header anywhere in the first kilobyte.
    if contains(&head[..head.len().min(1024)], b"%PDF-") {
        return Some(Known(BookFormat::Pdf));
    }
    let text = decode_head(head)?;
    let lower = text
        .trim_start()
        .chars()
        .take(2048)
        .collect::<String>()
        .to_lowercase();
    let looks_html = lower.starts_with("<!doctype html")
        || lower.starts_with("<html")
        || (lower.starts_with("<?xml") && lower.contains("<html"))
        || (lower.starts_with("<!--") && lower.contains("<html"));
    let looks_fb2 = (lower.starts_with("<?xml") || lower.starts_with("<fictionbook"))
        && lower.contains("<fictionbook");
    Some(Known(if looks_fb2 {
        BookFormat::Fb2
    } else if looks_html {
        BookFormat::Html
    } else {
        BookFormat::Txt
    }))
}

/// The head as text when it is text: UTF-16 with a byte-order mark, or bytes without NULs and
/// with few control characters (any 8-bit encoding passes; extraction decodes it properly).
fn decode_head(head: &[u8]) -> Option<String> {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        let le = head[0] == 0xFF;
        let units: Vec<u16> = head[2..]
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        return Some(String::from_utf16_lossy(&units));
    }
    if head.is_empty() || head.contains(&0) {
        return None;
    }
    let controls = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C))
        .count();
    (controls * 100 <= head.len()).then(|| String::from_utf8_lossy(head).into_owned())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_html_are_told_apart_by_content() {
        assert_eq!(
            sniff("a.txt", b"Chapter 1\n\nCall me Ishmael."),
            Ok(BookFormat::Txt)
        );
        assert_eq!(
            sniff("a.HTML", b"\n <!DOCTYPE html><html></html>"),
            Ok(BookFormat::Html)
        );
        assert!(sniff("a.txt", b"<!doctype html><html>").is_err());
    }

    #[test]
    fn binary_content_named_as_text_is_refused() {
        let err = sniff("book.txt", b"\x00\x01\x02\x03binary").unwrap_err();
        assert!(err.to_string().contains("not a readable"), "{err}");
        let err = sniff("book.txt", b"%PDF-1.7\n").unwrap_err();
        assert!(err.to_string().contains("content is PDF"), "{err}");
    }

    #[test]
    fn unknown_extensions_are_refused() {
        assert!(sniff("book.mobi", b"hello")
            .unwrap_err()
            .to_string()
            .contains("not a supported"));
        assert!(sniff("book", b"hello").is_err());
    }

    #[test]
    fn zip_based_formats_follow_their_markers() {
        let epub = b"PK\x03\x04xxxxxxxxxxxxxxxxxxxxxxxxxxmimetypeapplication/epub+zip";
        assert_eq!(sniff("b.epub", epub), Ok(BookFormat::Epub));
        assert!(sniff("b.docx", epub).is_err());
        assert_eq!(
            sniff(
                "b.docx",
                b"PK\x03\x04....[Content_Types].xml....word/document.xml"
            ),
            Ok(BookFormat::Docx)
        );
        assert!(sniff("b.epub", b"PK\x03\x04 just some zip").is_ok());
        assert!(sniff("b.pdf", b"PK\x03\x04 just some zip").is_err());
    }

    #[test]
    fn markdown_is_text_named_as_markdown_and_fictionbook_is_told_by_its_root() {
        let md = b"# Chapter 1\n\nCall me *Ishmael*.";
        assert_eq!(sniff("a.md", md), Ok(BookFormat::Markdown));
        assert_eq!(sniff("a.markdown", md), Ok(BookFormat::Markdown));
        assert_eq!(sniff("a.txt", md), Ok(BookFormat::Txt));
        assert!(sniff("a.md", b"%PDF-1.7\n").is_err());
        assert!(sniff("a.md", b"<!DOCTYPE html><html>").is_err());
        let fb2 = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<FictionBook xmlns=\"http://www.gribuser.ru/xml/fictionbook/2.0\">";
        assert_eq!(sniff("a.fb2", fb2), Ok(BookFormat::Fb2));
        let err = sniff("a.txt", fb2).unwrap_err();
        assert!(err.to_string().contains("content is FB2"), "{err}");
        assert!(sniff("a.fb2", b"<?xml version=\"1.0\"?><html>").is_err());
        assert!(sniff("a.fb2", b"just text").is_err());
        let zipped = b"PK\x03\x04\x14\x00\x00\x00\x08\x00xxxxxxxxxxxxxxxxbook.fb2";
        assert_eq!(sniff("a.fb2.zip", zipped), Ok(BookFormat::Fb2));
        assert_eq!(sniff("a.FB2.ZIP", b"PK\x03\x04 a zip"), Ok(BookFormat::Fb2));
        assert!(sniff("a.epub", zipped).is_err());
        assert!(sniff("a.zip", zipped).is_err());
    }

    #[test]
    fn utf16_text_with_a_bom_is_text() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "Chapter 1".encode_utf16() {
            bytes.extend(u.to_le_bytes());
        }
        assert_eq!(sniff("a.txt", &bytes), Ok(BookFormat::Txt));
    }
}
