//! Counting a book's structure (quotes, notes, verse line breaks, lists, tables, images,
//! headings) in its content documents, so tests can check a rendition kept what the source
//! had. A test helper: built for the crate's tests and with the `hostile-corpus` feature (the
//! black-box suite's helpers).

use std::collections::BTreeMap;

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::archive::{Archive, Limits};
use crate::FormatError;

/// How many of each kind of element the spine's content documents hold together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StructureCounts {
    pub block_quotes: usize,
    /// `aside`s and elements typed as notes (`epub:type` footnote, endnote, rearnote, or the
    /// matching ARIA roles).
    pub notes: usize,
    /// `br` elements: the line breaks of verse, addresses, preformatted text.
    pub line_breaks: usize,
    /// `ul`, `ol` and `dl`.
    pub lists: usize,
    pub tables: usize,
    /// `img` and SVG `image`.
    pub images: usize,
    pub headings: usize,
}

/// Counts the structure of every XHTML file of the EPUB `bytes` (whether in the spine or not,
/// except the navigation document, which is not the book's text).
pub fn count_epub(bytes: &[u8]) -> Result<StructureCounts, FormatError> {
    let mut zip = Archive::open(
        bytes,
        Limits::for_file(bytes.len(), crate::Budget::default()),
    )?;
    let mut total = StructureCounts::default();
    for name in zip.names() {
        let lower = name.to_ascii_lowercase();
        if !(lower.ends_with(".xhtml") || lower.ends_with(".html") || lower.ends_with(".htm")) {
            continue;
        }
        let Some(text) = zip.read_text(&name)? else {
            continue;
        };
        if text.contains("<nav") {
            continue;
        }
        let counts = count_xhtml(&text);
        total.block_quotes += counts.block_quotes;
        total.notes += counts.notes;
        total.line_breaks += counts.line_breaks;
        total.lists += counts.lists;
        total.tables += counts.tables;
        total.images += counts.images;
        total.headings += counts.headings;
    }
    Ok(total)
}

/// Counts the structure of one (X)HTML document.
pub fn count_xhtml(source: &str) -> StructureCounts {
    let mut counts = StructureCounts::default();
    let mut reader = Reader::from_str(source);
    reader.config_mut().check_end_names = false;
    reader.config_mut().allow_unmatched_ends = true;
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    loop {
        let e = match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => e,
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        let name = String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase();
        let typed_note = e.html_attributes().flatten().any(|a| {
            let key = a.key.as_ref();
            let is_type = key.ends_with(b":type") || key == b"role";
            let value = String::from_utf8_lossy(&a.value).to_ascii_lowercase();
            is_type
                && value.split_whitespace().any(|v| {
                    matches!(
                        v,
                        "footnote" | "endnote" | "rearnote" | "doc-footnote" | "doc-endnote"
                    )
                })
        });
        if name == "aside" || typed_note {
            counts.notes += 1;
        }
        *names.entry(name).or_default() += 1;
    }
    let n = |name: &str| names.get(name).copied().unwrap_or_default();
    counts.block_quotes = n("blockquote");
    counts.line_breaks = n("br");
    counts.lists = n("ul") + n("ol") + n("dl");
    counts.tables = n("table");
    counts.images = n("img") + n("image");
    counts.headings = ["h1", "h2", "h3", "h4", "h5", "h6"]
        .iter()
        .map(|h| n(h))
        .sum();
    counts
}
