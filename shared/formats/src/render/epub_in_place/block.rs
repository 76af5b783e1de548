//! One block's translation as XHTML, with what the source had around and inside its text put
//! back.

use std::iter::Peekable;
use std::ops::Range;
use std::vec::IntoIter;

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::markup::{self, escape_text, Piece, Tag};
use crate::render::edit::rewrite_tag;
use crate::xhtml::Origin;

/// The block's translated markup as XHTML, with the source's own inline elements (their
/// classes, ids and link targets), note references and everything that was not text (page
/// markers, math, anchors) put back. A `<num/>` mark is the source's whole element again (a
/// line number as the source wrote it, whatever its text became). In a `copy` (the bilingual
/// translation beside its original) ids are left out, and so is what was not text, which the
/// original still shows.
pub(super) fn to_xhtml(markup: &str, origin: &Origin, source: &str, copy: bool) -> String {
    let Ok(pieces) = markup::parse(markup) else {
        return escape_text(&markup::plain_text(markup));
    };
    let translated_chars: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) | Piece::Tag(Tag::Num { text: t, .. }) => t.chars().count(),
            Piece::Tag(_) => 0,
        })
        .sum();
    let kept = if copy {
        Vec::new()
    } else {
        kept_in_place(origin, source, translated_chars)
    };
    let mut writer = Writer {
        origin,
        source,
        copy,
        kept: kept.into_iter().peekable(),
        used_inline: vec![false; origin.inlines.len()],
        used_note: vec![false; origin.notes.len()],
        out: String::with_capacity(markup.len() * 2),
        open: Vec::new(),
        written: 0,
    };
    for piece in pieces {
        match piece {
            Piece::Text(text) => writer.text(&text),
            Piece::Tag(Tag::Open { name, attr }) => writer.open_tag(name, attr),
            Piece::Tag(Tag::Close(_)) => {
                if let Some(Some(element)) = writer.open.pop() {
                    writer.out.push_str(&format!("</{element}>"));
                }
            }
            Piece::Tag(Tag::Num { text, .. }) => writer.num(&text),
            Piece::Tag(Tag::Empty { name: "br", .. }) => writer.out.push_str("<br/>"),
            Piece::Tag(Tag::Empty { attr: Some(id), .. }) => writer.note(&id),
            Piece::Tag(Tag::Empty { .. }) => {}
        }
    }
    let mut out = writer.out;
    for (_, text) in writer.kept {
        out.push_str(&text);
    }
    out
}

/// What was not text in the source block, each at the place in the translation's characters
/// that answers to its place in the source's, in order.
fn kept_in_place(origin: &Origin, source: &str, translated_chars: usize) -> Vec<(usize, String)> {
    let mut kept: Vec<(usize, String)> = origin
        .kept
        .iter()
        .filter_map(|k| {
            let text = source.get(k.source.clone())?;
            let text = match &k.close {
                Some(name) => format!("{text}</{name}>"),
                None => text.to_string(),
            };
            let at = (k.at_char * translated_chars)
                .checked_div(origin.chars)
                .unwrap_or(0);
            Some((at, text))
        })
        .collect();
    kept.sort_by_key(|(at, _)| *at);
    kept
}

/// A block's XHTML being written.
struct Writer<'a> {
    origin: &'a Origin,
    source: &'a str,
    copy: bool,
    /// What was not text, still to be put back, by the character it comes before.
    kept: Peekable<IntoIter<(usize, String)>>,
    used_inline: Vec<bool>,
    used_note: Vec<bool>,
    out: String,
    /// What each open markup tag was written as: Some(element) or None (left out).
    open: Vec<Option<String>>,
    /// Characters of the translation written so far.
    written: usize,
}

impl Writer<'_> {
    /// The source's text of `range` (a tag, an element), without ids in a copy.
    fn tag_text(&self, range: &Range<usize>) -> String {
        let text = self.source.get(range.clone()).unwrap_or_default();
        if self.copy {
            strip_ids(text)
        } else {
            text.to_string()
        }
    }

    fn in_link(&self) -> bool {
        self.open.iter().flatten().any(|e| e == "a")
    }

    /// Text, with what was not text put back where it falls (outside links).
    fn text(&mut self, text: &str) {
        let mut rest = text;
        loop {
            let due = self
                .kept
                .peek()
                .map(|(at, _)| *at)
                .filter(|_| !self.in_link());
            let Some(due) = due else { break };
            let len = rest.chars().count();
            if due > self.written + len {
                break;
            }
            // At the first space at or after the place, not inside a word.
            let offset = due.saturating_sub(self.written);
            let split = rest
                .char_indices()
                .skip(offset)
                .find(|(_, c)| c.is_whitespace())
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
            self.out.push_str(&escape_text(&rest[..split]));
            self.written += rest[..split].chars().count();
            rest = &rest[split..];
            if let Some((_, text)) = self.kept.next() {
                self.out.push_str(&text);
            }
        }
        self.out.push_str(&escape_text(rest));
        self.written += rest.chars().count();
    }

    /// An opening mark: the source's element it came from, else the mark's own element (or
    /// nothing, for a link, a kept phrase or one of the book's marks).
    fn open_tag(&mut self, name: &str, attr: Option<String>) {
        let found = self.origin.inlines.iter().enumerate().position(|(i, t)| {
            !self.used_inline[i] && t.name == name && (name != "a" || t.href == attr)
        });
        match found {
            Some(i) => {
                self.used_inline[i] = true;
                let text = self.tag_text(&self.origin.inlines[i].tag);
                self.out.push_str(&text);
                self.open.push(Some(self.origin.inlines[i].element.clone()));
            }
            // A link the source did not have is not made up; its text is kept. Nor is
            // an element for kept text that a block marked `translate="no"` holds, nor
            // one of the book's marks.
            None if name == "a" || name == "span" || markup::KEPT.contains(&name) => {
                self.open.push(None)
            }
            None => {
                self.out.push_str(&format!("<{name}>"));
                self.open.push(Some(name.to_string()));
            }
        }
    }

    /// A number mark: the source's whole element, else the number.
    fn num(&mut self, text: &str) {
        let found = self
            .origin
            .inlines
            .iter()
            .enumerate()
            .position(|(i, t)| !self.used_inline[i] && t.name == "num");
        match found.and_then(|i| Some((i, self.origin.inlines[i].whole.clone()?))) {
            Some((i, whole)) => {
                self.used_inline[i] = true;
                let text = self.tag_text(&whole);
                self.out.push_str(&text);
            }
            None => self.out.push_str(&escape_text(text)),
        }
        self.written += text.chars().count();
    }

    /// A note reference: the source's reference to note `id`.
    fn note(&mut self, id: &str) {
        let found = self
            .origin
            .notes
            .iter()
            .enumerate()
            .position(|(i, (note, _))| !self.used_note[i] && *note == id);
        if let Some(i) = found {
            self.used_note[i] = true;
            let text = self.tag_text(&self.origin.notes[i].1);
            self.out.push_str(&text);
        }
    }
}

/// A fragment of XHTML with every `id` left out (a copy must not repeat them).
fn strip_ids(fragment: &str) -> String {
    let mut reader = Reader::from_str(fragment);
    let mut out = String::with_capacity(fragment.len());
    loop {
        let before = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        let raw = fragment
            .get(before..reader.buffer_position() as usize)
            .unwrap_or_default();
        match event {
            Event::Start(_) | Event::Empty(_) => out.push_str(&rewrite_tag(raw, &[], None, true)),
            _ => out.push_str(raw),
        }
    }
    out
}
