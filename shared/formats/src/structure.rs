//! Counting a book's structure (quotes, notes, verse line breaks, lists, tables, images,
//! headings) and its inline elements in its content documents, so tests can check a rendition
//! kept what the source had. A test helper: built for the crate's tests and with the
//! `test-support` feature (for the black-box suite).

use std::collections::BTreeMap;

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::archive::{Archive, Limits};
use crate::error::FormatError;

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

/// The text of every XHTML file of the EPUB `bytes` (whether in the spine or not), except the
/// navigation document, which is not the book's text.
fn content_documents(bytes: &[u8]) -> Result<Vec<String>, FormatError> {
    let mut zip = Archive::open(
        bytes,
        Limits::for_file(bytes.len(), crate::Budget::default()),
    )?;
    let mut documents = Vec::new();
    for name in zip.names() {
        let lower = name.to_ascii_lowercase();
        if !(lower.ends_with(".xhtml") || lower.ends_with(".html") || lower.ends_with(".htm")) {
            continue;
        }
        let Some(text) = zip.read_text(&name)? else {
            continue;
        };
        if !text.contains("<nav") {
            documents.push(text);
        }
    }
    Ok(documents)
}

/// Counts the structure of every content document of the EPUB `bytes` (see
/// [`content_documents`]).
pub fn count_epub(bytes: &[u8]) -> Result<StructureCounts, FormatError> {
    let mut total = StructureCounts::default();
    for text in content_documents(bytes)? {
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

/// Inline (phrasing) elements, as counted by [`count_inline_epub`].
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em",
    "font", "i", "ins", "kbd", "label", "mark", "q", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var",
];

/// How many inline elements of each (element, class) the content documents of the EPUB
/// `bytes` hold together, in their bodies. The class is as written with its words in order;
/// the words a renderer adds of its own (`booktr-…`) are left out.
pub fn count_inline_epub(bytes: &[u8]) -> Result<BTreeMap<(String, String), usize>, FormatError> {
    let mut total = BTreeMap::new();
    for text in content_documents(bytes)? {
        for (key, n) in count_inline_xhtml(&text) {
            *total.entry(key).or_default() += n;
        }
    }
    Ok(total)
}

/// [`count_inline_epub`] for one (X)HTML document.
pub fn count_inline_xhtml(source: &str) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    let mut reader = Reader::from_str(source);
    reader.config_mut().check_end_names = false;
    reader.config_mut().allow_unmatched_ends = true;
    let mut in_body = false;
    loop {
        let e = match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => e,
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        let name = String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase();
        in_body |= name == "body";
        if !in_body || !INLINE.contains(&name.as_str()) {
            continue;
        }
        let class = e
            .html_attributes()
            .flatten()
            .find(|a| a.key.as_ref().eq_ignore_ascii_case(b"class"))
            .map(|a| String::from_utf8_lossy(&a.value).into_owned())
            .unwrap_or_default();
        let class = class
            .split_whitespace()
            .filter(|c| !c.starts_with("booktr-"))
            .collect::<Vec<_>>()
            .join(" ");
        *counts.entry((name, class)).or_default() += 1;
    }
    counts
}
