//! What a file in a book is: the one answer the EPUB extractor (which files are chapters) and
//! the output cleaner (which files could run in a reader) both take, so that nothing one reads
//! as a document escapes the other.
//!
//! A manifest's media type is parsed as RFC 2045 says (`type/subtype`, case-insensitive, with
//! white space and `;` parameters around it), then the file's name is looked at, and, where
//! neither says what a file is, its first bytes: a reading system that is told nothing trusted
//! sniffs, and so does the cleaner.

/// What a file is, as far as reading it and cleaning it go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An XHTML or HTML document: a chapter to read, markup to clean.
    Html,
    /// An SVG image: markup to clean, not a chapter.
    Svg,
    /// A style sheet, which can fetch from the network.
    Css,
    /// A script: never passed on.
    Script,
    /// A raster image, a font, audio or video: bytes a reader decodes, never runs.
    Inert,
    /// Anything else (XML of other kinds, text, unknown types): sniffed before it is trusted.
    Unknown,
}

impl Kind {
    /// Whether the cleaner reads it as markup.
    pub(crate) fn is_markup(self) -> bool {
        matches!(self, Kind::Html | Kind::Svg)
    }
}

/// What the file `name` declared as `media_type` (as written in the manifest; empty when it has
/// none) is, before its bytes are looked at: the type decides when it names one, else the name.
pub(crate) fn kind(media_type: &str, name: &str) -> Kind {
    match by_type(&essence(media_type)) {
        Kind::Unknown => by_name(name),
        known => known,
    }
}

/// `media_type` without its parameters, trimmed and in lower case: ` Text/HTML ; charset=x`
/// is `text/html`.
pub(crate) fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn by_type(essence: &str) -> Kind {
    match essence {
        "application/xhtml+xml" | "text/html" | "application/html" => Kind::Html,
        "image/svg+xml" => Kind::Svg,
        "text/css" => Kind::Css,
        "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "text/javascript"
        | "text/ecmascript"
        | "text/x-javascript"
        | "application/x-ecmascript" => Kind::Script,
        // Raster images only: `image/svg+xml` is markup, and so could be an unknown `image/x-…`.
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/bmp" | "image/avif"
        | "image/jxl" => Kind::Inert,
        "application/vnd.ms-opentype"
        | "application/font-woff"
        | "application/x-font-ttf"
        | "application/x-font-truetype"
        | "application/x-font-opentype" => Kind::Inert,
        media
            if media.starts_with("font/")
                || media.starts_with("audio/")
                || media.starts_with("video/") =>
        {
            Kind::Inert
        }
        _ => Kind::Unknown,
    }
}

fn by_name(name: &str) -> Kind {
    let lower = name.to_ascii_lowercase();
    let extension = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match extension {
        "xhtml" | "xht" | "html" | "htm" | "shtml" => Kind::Html,
        "svg" => Kind::Svg,
        "css" => Kind::Css,
        "js" | "mjs" => Kind::Script,
        _ => Kind::Unknown,
    }
}

/// How many leading bytes [`sniff`] looks at.
pub(crate) const SNIFFED_BYTES: usize = 1024;

/// What the first bytes of a file of [`Kind::Unknown`] say it is: markup when it opens with a
/// tag, an XML declaration, a comment or a doctype (after a byte order mark and white space),
/// SVG when its opening names `<svg`; Unknown otherwise.
pub(crate) fn sniff(bytes: &[u8]) -> Kind {
    let head = &bytes[..bytes.len().min(SNIFFED_BYTES)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    if head.get(start) != Some(&b'<') {
        return Kind::Unknown;
    }
    let lower = head.to_ascii_lowercase();
    let names = |tag: &[u8]| lower.windows(tag.len()).any(|w| w == tag);
    if names(b"<svg") && !names(b"<html") {
        Kind::Svg
    } else {
        Kind::Html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_type_is_read_whatever_its_case_parameters_and_spaces() {
        for declared in [
            "application/xhtml+xml",
            "application/xhtml+xml;charset=utf-8",
            " Application/XHTML+XML ; x=y",
            "text/html; charset=utf-8",
            "TEXT/HTML",
        ] {
            assert_eq!(kind(declared, "OEBPS/c.bin"), Kind::Html, "{declared:?}");
        }
        assert_eq!(kind("image/SVG+xml; a=b", "x"), Kind::Svg);
        assert_eq!(kind("text/css;charset=utf-8", "x"), Kind::Css);
        assert_eq!(kind(" Text/JavaScript ", "x.png"), Kind::Script);
    }

    #[test]
    fn the_name_decides_only_when_the_type_says_nothing_known() {
        assert_eq!(kind("", "OEBPS/c3.htm"), Kind::Html);
        assert_eq!(kind("application/octet-stream", "a/B.XHTML"), Kind::Html);
        assert_eq!(kind("", "a/app.mjs"), Kind::Script);
        // A declared raster image is decoded as one, whatever it is called.
        assert_eq!(kind("image/png", "c.xhtml"), Kind::Inert);
        assert_eq!(kind("application/xml", "c2.xml"), Kind::Unknown);
        assert_eq!(kind("text/html5", "c3.htm5"), Kind::Unknown);
    }

    #[test]
    fn markup_is_sniffed_from_its_opening_bytes() {
        assert_eq!(
            sniff(b"\xEF\xBB\xBF  \n<?xml version=\"1.0\"?><html/>"),
            Kind::Html
        );
        assert_eq!(sniff(b"<!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(sniff(b"<script>alert(1)</script>"), Kind::Html);
        assert_eq!(
            sniff(b"<?xml version=\"1.0\"?>\n<svg xmlns=\"x\"/>"),
            Kind::Svg
        );
        assert_eq!(sniff(b"\x89PNG\r\n"), Kind::Unknown);
        assert_eq!(sniff(b"plain words < more"), Kind::Unknown);
        assert_eq!(sniff(b""), Kind::Unknown);
    }
}
