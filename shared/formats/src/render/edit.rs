//! XML documents edited by byte range: the elements of a small document with where their tags
//! and content are, start tags rewritten, and edits applied so that every other byte stays as
//! the source wrote it. The EPUB translated in place and the inert pass both edit this way.

use std::ops::Range;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::markup::escape_attr;

/// A replacement of `range` of a document's source by `text` (an insertion when it is empty).
#[derive(Debug, Clone)]
pub(super) struct Edit {
    pub(super) range: Range<usize>,
    pub(super) text: String,
}

/// Applies non-overlapping edits (insertions at one place in the order they were made).
pub(super) fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(source.len() + source.len() / 4);
    let mut at = 0;
    for edit in edits {
        if edit.range.start < at {
            // Overlapping edits never come out of one walk; a second one is dropped rather
            // than corrupting the document.
            continue;
        }
        out.push_str(source.get(at..edit.range.start).unwrap_or_default());
        out.push_str(&edit.text);
        at = edit.range.end;
    }
    out.push_str(source.get(at..).unwrap_or_default());
    out
}

/// A decoded (non-UTF-8) document is written as UTF-8 and must say so.
pub(super) fn declare_utf8(text: &str) -> String {
    let Some(rest) = text.strip_prefix("<?xml") else {
        return text.to_string();
    };
    let Some(end) = rest.find("?>") else {
        return text.to_string();
    };
    let declaration = &rest[..end];
    let fixed = match declaration.find("encoding") {
        Some(at) => {
            let after = &declaration[at..];
            let quote_start = after.find(['"', '\'']);
            let value_end = quote_start.and_then(|q| {
                let quote = after.as_bytes()[q] as char;
                after[q + 1..].find(quote).map(|e| q + 1 + e + 1)
            });
            match value_end {
                Some(e) => format!(
                    "{}encoding=\"UTF-8\"{}",
                    &declaration[..at],
                    &declaration[at + e..]
                ),
                None => declaration.to_string(),
            }
        }
        None => declaration.to_string(),
    };
    format!("<?xml{fixed}{}", &rest[end..])
}

/// The attributes of a start tag as written: (name, raw value).
pub(super) fn tag_attrs(tag: &str) -> Vec<(String, String)> {
    let mut reader = Reader::from_str(tag);
    match reader.read_event() {
        Ok(Event::Start(e)) | Ok(Event::Empty(e)) => raw_attrs(&e),
        _ => Vec::new(),
    }
}

fn raw_attrs(e: &BytesStart<'_>) -> Vec<(String, String)> {
    e.html_attributes()
        .flatten()
        .map(|a| {
            (
                String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                String::from_utf8_lossy(&a.value).into_owned(),
            )
        })
        .collect()
}

/// A start (or empty) tag with attributes set (None removes one), a class added and, for a
/// copy, its id left out. Values are written as the source escaped them.
pub(super) fn rewrite_tag(
    tag: &str,
    set: &[(&str, Option<&str>)],
    add_class: Option<&str>,
    drop_id: bool,
) -> String {
    let mut reader = Reader::from_str(tag);
    let (e, empty) = match reader.read_event() {
        Ok(Event::Start(e)) => (e, false),
        Ok(Event::Empty(e)) => (e, true),
        _ => return tag.to_string(),
    };
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut out = format!("<{name}");
    let mut class_done = false;
    for (key, value) in raw_attrs(&e) {
        if set.iter().any(|(k, _)| *k == key) || (drop_id && key == "id") {
            continue;
        }
        let value = value.replace('"', "&quot;");
        if key == "class" {
            if let Some(class) = add_class {
                out.push_str(&format!(r#" class="{value} {class}""#));
                class_done = true;
                continue;
            }
        }
        out.push_str(&format!(r#" {key}="{value}""#));
    }
    if let (Some(class), false) = (add_class, class_done) {
        out.push_str(&format!(r#" class="{class}""#));
    }
    for (key, value) in set {
        if let Some(value) = value {
            out.push_str(&format!(r#" {key}="{}""#, escape_attr(value)));
        }
    }
    out.push_str(if empty { "/>" } else { ">" });
    out
}

/// One element of a small XML file, with where its content is.
pub(super) struct Found {
    pub(super) name: String,
    pub(super) attrs: Vec<(String, String)>,
    pub(super) tag: Range<usize>,
    pub(super) content: Range<usize>,
    /// Indices of the enclosing found elements, innermost last.
    pub(super) ancestors: Vec<usize>,
}

/// Every element of `source` with its start tag and content ranges, in document order.
pub(super) fn scan(source: &str) -> Vec<Found> {
    let mut reader = Reader::from_str(source);
    reader.config_mut().check_end_names = false;
    reader.config_mut().allow_unmatched_ends = true;
    let mut found: Vec<Found> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    loop {
        let before = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        let after = reader.buffer_position() as usize;
        match event {
            Event::Start(e) => {
                found.push(Found {
                    name: local(e.name().as_ref()),
                    attrs: raw_attrs(&e),
                    tag: before..after,
                    content: after..after,
                    ancestors: stack.clone(),
                });
                stack.push(found.len() - 1);
                if stack.len() > 256 {
                    break;
                }
            }
            Event::Empty(e) => found.push(Found {
                name: local(e.name().as_ref()),
                attrs: raw_attrs(&e),
                tag: before..after,
                content: after..after,
                ancestors: stack.clone(),
            }),
            Event::End(e) => {
                let name = local(e.name().as_ref());
                if let Some(pos) = stack.iter().rposition(|&i| found[i].name == name) {
                    let index = stack[pos];
                    found[index].content.end = before;
                    stack.truncate(pos);
                }
            }
            _ => {}
        }
    }
    found
}

fn local(raw: &[u8]) -> String {
    let name = String::from_utf8_lossy(raw).to_ascii_lowercase();
    name.rsplit(':').next().unwrap_or_default().to_string()
}

pub(super) fn attr_of<'a>(found: &'a Found, name: &str) -> Option<&'a str> {
    found
        .attrs
        .iter()
        .find(|(k, _)| k == name || k.rsplit(':').next() == Some(name))
        .map(|(_, v)| v.as_str())
}
