//! Inline markup: the text of a block with its marks (emphasis, links, footnote references) as a
//! handful of XML-like tags, so a translator sees and keeps them, and a checker can prove it did.
//!
//! | tag | meaning |
//! |---|---|
//! | `<i>…</i>` | emphasis (em, i, cite) |
//! | `<b>…</b>` | strong (strong, b) |
//! | `<sup>…</sup>`, `<sub>…</sub>` | super- and subscript |
//! | `<a href="…">…</a>` | a link; in-book targets are `#anchor` |
//! | `<br/>` | a line break inside the block |
//! | `<ref id="…"/>` | a footnote reference (the footnote is its own block) |
//! | `<code>…</code>` | code (code, kbd, samp, tt): kept as it is, never translated |
//! | `<keep>…</keep>` | text marked `translate="no"`, or in another language than the book's: kept as it is |
//! | `<span class="…">…</span>` | the book's own mark: an inline element with attributes (a class, `epub:type`, a language, an id) around words; `class` is the element's, when it has one |
//! | `<num class="…" text="…"/>` | the book's own mark around a number or a symbol alone (a line number, a note's call): its text is the tag's, never translated nor edited as text |
//!
//! The book's marks go back into the book as the source wrote them: a book translated in place
//! writes the source's element, with its class and every attribute, for each `span` and `num`
//! (matched in order), and a rebuilt book writes a `span` of the same class.
//!
//! Text escapes `&`, `<` and `>` (and `"` inside attribute values) as `&amp;`, `&lt;`, `&gt;`,
//! `&quot;`. Nothing else is allowed, so a block's markup is always well-formed.

use std::fmt::Write;

/// One tag of a block's markup, as the checker compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tag {
    Open {
        name: &'static str,
        attr: Option<String>,
    },
    Close(&'static str),
    Empty {
        name: &'static str,
        attr: Option<String>,
    },
    /// `<num class="…" text="…"/>`: a mark around a number or symbol alone, whose text is
    /// carried by the tag (see [`is_sign`]).
    Num {
        class: Option<String>,
        text: String,
    },
}

/// Markup that is not well-formed, with where it goes wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid markup at byte {at}: {reason}")]
pub struct MarkupError {
    pub at: usize,
    pub reason: String,
}

const PAIRED: &[&str] = &["i", "b", "sup", "sub", "a", "code", "keep", "span"];

/// The marks whose text is never translated: a translation carries their text over unchanged
/// ([`with_kept_text`] puts it back whatever a model did to it).
pub const KEPT: &[&str] = &["code", "keep"];
const EMPTY: &[&str] = &["br", "ref"];

/// The longest text a `<num/>` mark carries, in characters: a line number, a note's call, a
/// date; longer text is words.
const MAX_SIGN_CHARS: usize = 24;

/// Whether the text of one of the book's marks is a number or a symbol alone (a line number,
/// a note's call such as `*` or `12`): no letter of any script, at most [`MAX_SIGN_CHARS`]
/// characters. Such a mark is a [`Tag::Num`], not a `span` around words.
pub fn is_sign(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && text.chars().count() <= MAX_SIGN_CHARS
        && !text.chars().any(char::is_alphabetic)
}

pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn escape_attr(value: &str) -> String {
    escape_text(value).replace('"', "&quot;")
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// A piece of parsed markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Tag(Tag),
}

/// Parses markup into text and tags, checking that every tag is known, attributes are the
/// expected ones and tags nest properly.
pub fn parse(markup: &str) -> Result<Vec<Piece>, MarkupError> {
    let mut pieces = Vec::new();
    let mut open: Vec<&'static str> = Vec::new();
    let mut rest = markup;
    let mut offset = 0;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            check_text(rest, offset)?;
            pieces.push(Piece::Text(unescape(rest)));
            break;
        };
        if lt > 0 {
            check_text(&rest[..lt], offset)?;
            pieces.push(Piece::Text(unescape(&rest[..lt])));
        }
        let err = |reason: &str| MarkupError {
            at: offset + lt,
            reason: reason.to_string(),
        };
        let gt = rest[lt..]
            .find('>')
            .ok_or_else(|| err("unterminated tag"))?
            + lt;
        let tag = parse_tag(&rest[lt + 1..gt]).ok_or_else(|| err("unknown or malformed tag"))?;
        match &tag {
            Tag::Open { name, .. } => open.push(name),
            Tag::Close(name) => {
                if open.pop() != Some(name) {
                    return Err(err("closing tag does not match the open one"));
                }
            }
            Tag::Empty { .. } | Tag::Num { .. } => {}
        }
        pieces.push(Piece::Tag(tag));
        offset += gt + 1;
        rest = &rest[gt + 1..];
    }
    if let Some(name) = open.pop() {
        return Err(MarkupError {
            at: markup.len(),
            reason: format!("<{name}> is never closed"),
        });
    }
    Ok(pieces)
}

fn check_text(text: &str, offset: usize) -> Result<(), MarkupError> {
    if text.contains('>') {
        return Err(MarkupError {
            at: offset,
            reason: "a bare '>' in text".into(),
        });
    }
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        let entity = &rest[amp..];
        if !["&amp;", "&lt;", "&gt;", "&quot;"]
            .iter()
            .any(|e| entity.starts_with(e))
        {
            return Err(MarkupError {
                at: offset,
                reason: "a bare '&' or unknown entity in text".into(),
            });
        }
        rest = &rest[amp + 1..];
    }
    Ok(())
}

fn parse_tag(inner: &str) -> Option<Tag> {
    if let Some(name) = inner.strip_prefix('/') {
        return PAIRED.iter().find(|n| **n == name).map(|n| Tag::Close(n));
    }
    let (inner, empty) = match inner.strip_suffix('/') {
        Some(i) => (i.trim_end(), true),
        None => (inner, false),
    };
    let (name, attrs) = inner
        .split_once(' ')
        .map_or((inner, ""), |(n, a)| (n, a.trim()));
    let mut attrs = parse_attrs(attrs)?;
    // The one attribute a tag may have, and whether it must.
    let mut take = |key: &str| {
        attrs
            .iter()
            .position(|(k, _)| k == key)
            .map(|i| attrs.swap_remove(i).1)
    };
    let known = |list: &[&'static str]| list.iter().copied().find(|n| *n == name);
    let tag = if empty && name == "num" {
        let class = take("class");
        let text = take("text")?;
        Tag::Num { class, text }
    } else if empty {
        let name = known(EMPTY)?;
        let attr = match name {
            "ref" => Some(take("id")?),
            _ => None,
        };
        Tag::Empty { name, attr }
    } else {
        let name = known(PAIRED)?;
        let attr = match name {
            "a" => Some(take("href")?),
            "span" => take("class"),
            _ => None,
        };
        Tag::Open { name, attr }
    };
    attrs.is_empty().then_some(tag)
}

/// `key="value"` pairs separated by spaces, values unescaped; None when malformed or when a
/// key comes twice.
fn parse_attrs(mut rest: &str) -> Option<Vec<(String, String)>> {
    let mut attrs: Vec<(String, String)> = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Some(attrs);
        }
        let (key, after) = rest.split_once("=\"")?;
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        let (value, after) = after.split_once('"')?;
        if attrs.iter().any(|(k, _)| k == key) {
            return None;
        }
        attrs.push((key.to_string(), unescape(value)));
        // Attributes are separated by spaces.
        if !after.is_empty() && !after.starts_with(' ') {
            return None;
        }
        rest = after;
    }
}

/// A tag as it is written: `<i>`, `</i>`, `<a href="#n1">`, `<br/>`,
/// `<num class="lnum" text="10"/>`.
pub fn tag_text(tag: &Tag) -> String {
    let attr = |name: &str, value: &Option<String>| match (name, value) {
        (_, None) => String::new(),
        ("ref", Some(v)) => format!(" id=\"{}\"", escape_attr(v)),
        ("span", Some(v)) => format!(" class=\"{}\"", escape_attr(v)),
        (_, Some(v)) => format!(" href=\"{}\"", escape_attr(v)),
    };
    match tag {
        Tag::Open { name, attr: value } => format!("<{name}{}>", attr(name, value)),
        Tag::Close(name) => format!("</{name}>"),
        Tag::Empty { name, attr: value } => format!("<{name}{}/>", attr(name, value)),
        Tag::Num { class, text } => {
            let class = class
                .as_deref()
                .map(|c| format!(" class=\"{}\"", escape_attr(c)))
                .unwrap_or_default();
            format!("<num{class} text=\"{}\"/>", escape_attr(text))
        }
    }
}

/// The tags of the markup in order: what a faithful translation must reproduce.
pub fn tags(markup: &str) -> Result<Vec<Tag>, MarkupError> {
    Ok(parse(markup)?
        .into_iter()
        .filter_map(|p| if let Piece::Tag(t) = p { Some(t) } else { None })
        .collect())
}

/// The text without marks, as a reader reads it: line breaks become newlines, and a `<num/>`
/// mark's text is text.
pub fn plain_text(markup: &str) -> String {
    match parse(markup) {
        Ok(pieces) => {
            let mut out = String::with_capacity(markup.len());
            for piece in pieces {
                match piece {
                    Piece::Text(t) => out.push_str(&t),
                    Piece::Tag(Tag::Empty { name: "br", .. }) => out.push('\n'),
                    Piece::Tag(Tag::Num { text, .. }) => out.push_str(&text),
                    Piece::Tag(_) => {}
                }
            }
            out
        }
        // Never stored (extractors only write valid markup), but never lose text either.
        Err(_) => markup.to_string(),
    }
}

/// The text a translation changes: the plain text without what kept marks ([`KEPT`]) hold and
/// without the text of `<num/>` marks.
pub fn translatable_text(markup: &str) -> String {
    let Ok(pieces) = parse(markup) else {
        return plain_text(markup);
    };
    let mut out = String::with_capacity(markup.len());
    let mut kept_depth = 0usize;
    for piece in pieces {
        match piece {
            Piece::Tag(Tag::Open { name, .. }) if KEPT.contains(&name) => kept_depth += 1,
            Piece::Tag(Tag::Close(name)) if KEPT.contains(&name) => {
                kept_depth = kept_depth.saturating_sub(1)
            }
            Piece::Text(t) if kept_depth == 0 => out.push_str(&t),
            Piece::Tag(Tag::Empty { name: "br", .. }) if kept_depth == 0 => out.push('\n'),
            _ => {}
        }
    }
    out
}

/// Whether `markup` has a kept mark: code, `translate="no"` text, or a `<num/>` mark.
pub fn has_kept(markup: &str) -> bool {
    markup.contains("<num ")
        || KEPT
            .iter()
            .any(|name| markup.contains(&format!("<{name}>")))
}

/// `answer` with the content of each of its kept marks replaced by the content of the source's
/// mark of the same rank, so that code and `translate="no"` text reach the book exactly as the
/// source has them, whatever a model did to them. An answer whose kept marks are not the
/// source's (in number or kind) is given back as it is: the tag check refuses it.
///
/// The source's `<num/>` marks are put back first ([`with_signs`]): one a model dropped, wrote
/// as text or changed is restored, when the answer's other tags are the source's.
pub fn with_kept_text(source: &str, answer: &str) -> String {
    if !has_kept(source) {
        return answer.to_string();
    }
    let (Ok(source_pieces), Ok(answer_pieces)) = (parse(source), parse(answer)) else {
        return answer.to_string();
    };
    let (answer_pieces, restored) = match with_signs(&source_pieces, &answer_pieces) {
        Some(pieces) => (pieces, true),
        None => (answer_pieces, false),
    };
    let (kept_source, kept_answer) = (kept_spans(&source_pieces), kept_spans(&answer_pieces));
    let same_kinds = kept_source.len() == kept_answer.len()
        && kept_source
            .iter()
            .zip(&kept_answer)
            .all(|(a, b)| source_pieces[a.start] == answer_pieces[b.start]);
    if !same_kinds {
        return if restored {
            serialize(&answer_pieces)
        } else {
            answer.to_string()
        };
    }
    if kept_source.is_empty() && !restored {
        return answer.to_string();
    }
    let mut out = Vec::with_capacity(answer_pieces.len());
    let mut next = 0;
    for (from, to) in kept_source.iter().zip(&kept_answer) {
        out.extend_from_slice(&answer_pieces[next..to.start]);
        out.extend_from_slice(&source_pieces[from.clone()]);
        next = to.end;
    }
    out.extend_from_slice(&answer_pieces[next..]);
    serialize(&out)
}

/// The answer's pieces with the source's `<num/>` marks, when they differ from the source's
/// and its other tags are the source's (else None: nothing to restore, or the tag check
/// decides). Between two of the other tags, the answer's marks are replaced by the source's in
/// order when there are as many; otherwise they are left out and the source's put in: where
/// the answer wrote a mark's text alone as a word (and the source has no such word there), in
/// its place; else at the word's end nearest the same share of the text as in the source (at
/// the end when the source's mark ends it, as a line number does).
fn with_signs(source: &[Piece], answer: &[Piece]) -> Option<Vec<Piece>> {
    if !source
        .iter()
        .any(|p| matches!(p, Piece::Tag(Tag::Num { .. })))
    {
        return None;
    }
    let (source_slots, source_tags) = slots(source);
    let (answer_slots, answer_tags) = slots(answer);
    if source_tags != answer_tags {
        return None;
    }
    let mut changed = false;
    let mut out = Vec::with_capacity(answer.len() + 2);
    for (k, (theirs, ours)) in answer_slots.into_iter().zip(&source_slots).enumerate() {
        let signs = |pieces: &[Piece]| {
            pieces
                .iter()
                .filter(|p| matches!(p, Piece::Tag(Tag::Num { .. })))
                .cloned()
                .collect::<Vec<_>>()
        };
        let (wanted, found) = (signs(ours), signs(&theirs));
        if wanted == found {
            out.extend(theirs);
        } else if wanted.len() == found.len() {
            changed = true;
            let mut wanted = wanted.into_iter();
            for piece in theirs {
                match piece {
                    Piece::Tag(Tag::Num { .. }) => out.extend(wanted.next()),
                    other => out.push(other),
                }
            }
        } else {
            changed = true;
            out.extend(placed(ours, &theirs));
        }
        if let Some(tag) = answer_tags.get(k) {
            out.push(Piece::Tag(tag.clone()));
        }
    }
    changed.then_some(out)
}

/// The runs of text and `<num/>` marks between the other tags, and those tags.
fn slots(pieces: &[Piece]) -> (Vec<Vec<Piece>>, Vec<Tag>) {
    let mut slots = vec![Vec::new()];
    let mut tags = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Tag(tag @ (Tag::Open { .. } | Tag::Close(_) | Tag::Empty { .. })) => {
                tags.push(tag.clone());
                slots.push(Vec::new());
            }
            other => {
                if let Some(slot) = slots.last_mut() {
                    slot.push(other.clone());
                }
            }
        }
    }
    (slots, tags)
}

/// The text of `theirs` (its marks left out) with the marks of `ours` put in (see
/// [`with_signs`]).
fn placed(ours: &[Piece], theirs: &[Piece]) -> Vec<Piece> {
    let mut text: Vec<char> = theirs
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t.chars()),
            _ => None,
        })
        .flatten()
        .collect();
    let our_text: String = ours
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let total = our_text.chars().count();
    // Each mark with its place in the answer's text, in order.
    let mut marks: Vec<(usize, Piece)> = Vec::new();
    let mut before = 0usize;
    for piece in ours {
        let Piece::Tag(Tag::Num { text: sign, .. }) = piece else {
            if let Piece::Text(t) = piece {
                before += t.chars().count();
            }
            continue;
        };
        let floor = marks.last().map_or(0, |(at, _)| *at);
        let written = (!has_word(&our_text, sign))
            .then(|| find_word(&text, sign, floor))
            .flatten();
        let at = match written {
            Some(at) => {
                text.drain(at..at + sign.chars().count());
                at
            }
            None => {
                let rest: String = our_text.chars().skip(before).collect();
                let head: String = our_text.chars().take(before).collect();
                if rest.trim().is_empty() {
                    text.len()
                } else if head.trim().is_empty() {
                    floor
                } else {
                    // The word's end nearest the same share of the text.
                    let share = (before * text.len()).checked_div(total).unwrap_or(0);
                    (floor.min(text.len())..=text.len())
                        .filter(|&i| i == text.len() || text[i].is_whitespace())
                        .min_by_key(|&i| i.abs_diff(share))
                        .unwrap_or(text.len())
                }
            }
        };
        marks.push((at.max(floor), piece.clone()));
    }
    let mut out = Vec::with_capacity(marks.len() * 2 + 1);
    let mut from = 0;
    for (at, mark) in marks {
        let at = at.min(text.len());
        if at > from {
            out.push(Piece::Text(text[from..at].iter().collect()));
        }
        out.push(mark);
        from = at;
    }
    if from < text.len() {
        out.push(Piece::Text(text[from..].iter().collect()));
    }
    out
}

/// Whether `word` stands alone in `text` (not inside a longer word or number).
fn has_word(text: &str, word: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    find_word(&chars, word, 0).is_some()
}

/// Where `word` first stands alone in `text` at or after `from`, in characters.
fn find_word(text: &[char], word: &str, from: usize) -> Option<usize> {
    let word: Vec<char> = word.chars().collect();
    if word.is_empty() || word.len() > text.len() {
        return None;
    }
    let alone = |c: Option<&char>| !c.is_some_and(|c| c.is_alphanumeric());
    (from..=text.len() - word.len()).find(|&i| {
        text[i..i + word.len()] == word[..]
            && alone(i.checked_sub(1).and_then(|j| text.get(j)))
            && alone(text.get(i + word.len()))
    })
}

/// The outermost kept marks of `pieces`, each as the range from its opening to its closing tag.
fn kept_spans(pieces: &[Piece]) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut start = None;
    let mut depth = 0usize;
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Tag(Tag::Open { name, .. }) if KEPT.contains(name) => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            Piece::Tag(Tag::Close(name)) if KEPT.contains(name) => {
                depth = depth.saturating_sub(1);
                if let (0, Some(s)) = (depth, start.take()) {
                    spans.push(s..i + 1);
                }
            }
            _ => {}
        }
    }
    spans
}

/// Markup from parsed pieces (the inverse of [`parse`]).
pub fn serialize(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&escape_text(t)),
            Piece::Tag(tag) => out.push_str(&tag_text(tag)),
        }
    }
    out
}

/// Whether a book may link to `href`: an anchor in the book, or a web or mail address.
pub fn safe_link(href: &str) -> bool {
    let href = href.trim_start();
    if href.starts_with('#') {
        return true;
    }
    let scheme = href.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https" | "mailto"))
}

/// Builds markup from pieces, escaping text and attributes.
#[derive(Debug, Default, Clone)]
pub struct MarkupBuilder {
    out: String,
    open: Vec<OpenMark>,
}

/// A tag the builder has open: its name, where it starts in the markup and where its content
/// starts, and a `span`'s class.
#[derive(Debug, Clone)]
struct OpenMark {
    name: &'static str,
    start: usize,
    content: usize,
    class: Option<String>,
}

/// What closing one of the book's marks ([`MarkupBuilder::close_span`]) made of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanEnd {
    /// A `span` around words.
    Words,
    /// A number or symbol alone: a `<num/>` mark.
    Sign,
    /// Nothing but whitespace: no mark (the element is not text).
    Blank,
    /// No `span` was open (it began in an earlier block).
    NotOpen,
}

impl MarkupBuilder {
    /// The markup's length in bytes so far.
    pub fn markup_len(&self) -> usize {
        self.out.len()
    }

    pub fn text(&mut self, text: &str) {
        self.out.push_str(&escape_text(text));
    }

    /// Opens an inline mark. A link goes only to a place in the book (`#anchor`) or to an
    /// `http`, `https` or `mailto` address: any other (`javascript:`, `data:`, `file:`) is
    /// dropped with its text kept, since the book is opened in readers that would follow it.
    /// A `span`'s attribute is its class.
    pub fn open(&mut self, name: &'static str, attr: Option<&str>) {
        let start = self.out.len();
        match (name, attr) {
            ("a", Some(href)) if !safe_link(href) => return,
            ("a", Some(href)) => {
                let _ = write!(self.out, "<a href=\"{}\">", escape_attr(href));
            }
            ("span", Some(class)) => {
                let _ = write!(self.out, "<span class=\"{}\">", escape_attr(class));
            }
            _ => {
                let _ = write!(self.out, "<{name}>");
            }
        }
        self.open.push(OpenMark {
            name,
            start,
            content: self.out.len(),
            class: attr.filter(|_| name == "span").map(str::to_string),
        });
    }

    /// Closes the innermost open tag if it is `name` (unbalanced source markup is repaired by
    /// closing only what is open).
    pub fn close(&mut self, name: &'static str) {
        if let Some(pos) = self.open.iter().rposition(|o| o.name == name) {
            while self.open.len() > pos {
                if let Some(o) = self.open.pop() {
                    let _ = write!(self.out, "</{}>", o.name);
                }
            }
        }
    }

    /// Closes the innermost `span`, judging what it holds: words stay a `span`; a number or
    /// symbol alone (with at most emphasis, super- or subscript around it) becomes a `<num/>`
    /// mark, the whitespace around it kept outside; whitespace alone is no mark at all.
    pub fn close_span(&mut self) -> SpanEnd {
        let Some(pos) = self.open.iter().rposition(|o| o.name == "span") else {
            return SpanEnd::NotOpen;
        };
        if pos + 1 != self.open.len() {
            self.close("span");
            return SpanEnd::Words;
        }
        let Some(open) = self.open.pop() else {
            return SpanEnd::NotOpen;
        };
        let content = self.out[open.content..].to_string();
        let Ok(pieces) = parse(&content) else {
            let _ = write!(self.out, "</span>");
            return SpanEnd::Words;
        };
        let formatting = pieces.iter().all(|p| match p {
            Piece::Text(_) => true,
            Piece::Tag(Tag::Open { name, .. } | Tag::Close(name)) => {
                matches!(*name, "i" | "b" | "sup" | "sub")
            }
            Piece::Tag(_) => false,
        });
        let text = plain_text(&content);
        if pieces.iter().all(|p| matches!(p, Piece::Text(_))) && text.trim().is_empty() {
            self.out.truncate(open.start);
            self.out.push_str(&content);
            return SpanEnd::Blank;
        }
        if formatting && is_sign(&text) {
            let lead = &text[..text.len() - text.trim_start().len()];
            let trail = &text[text.trim_end().len()..];
            let num = tag_text(&Tag::Num {
                class: open.class,
                text: text.trim().to_string(),
            });
            let written = format!("{}{num}{}", escape_text(lead), escape_text(trail));
            self.out.truncate(open.start);
            self.out.push_str(&written);
            return SpanEnd::Sign;
        }
        let _ = write!(self.out, "</span>");
        SpanEnd::Words
    }

    /// Appends markup that is already well-formed (made by another builder).
    pub fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    pub fn line_break(&mut self) {
        self.out.push_str("<br/>");
    }

    pub fn note_ref(&mut self, id: &str) {
        let _ = write!(self.out, "<ref id=\"{}\"/>", escape_attr(id));
    }

    pub fn is_blank(&self) -> bool {
        // Judged with the open tags closed: unclosed markup does not parse.
        let mut closed = self.out.clone();
        for o in self.open.iter().rev() {
            let _ = write!(closed, "</{}>", o.name);
        }
        plain_text(&closed).trim().is_empty() && !self.out.contains("<ref ")
    }

    /// The markup so far with every open tag closed, whitespace runs folded and the ends trimmed;
    /// the builder starts again empty (tags open now are reopened in the next block).
    pub fn take(&mut self) -> String {
        let reopen = self.open.clone();
        for o in reopen.iter().rev() {
            let _ = write!(self.out, "</{}>", o.name);
        }
        let done = fold_whitespace(&std::mem::take(&mut self.out));
        self.open.clear();
        done
    }
}

/// Folds runs of whitespace to one space and trims, keeping `<br/>` as the only line break.
/// No-break spaces are content (French typography needs them) and are kept.
pub fn fold_whitespace(markup: &str) -> String {
    let mut out = String::with_capacity(markup.len());
    let mut space = false;
    for c in markup.chars() {
        if c.is_whitespace() && c != '\u{a0}' {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out.replace(" <br/>", "<br/>").replace("<br/> ", "<br/>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_and_must_nest() {
        let m = r##"Call me <i>Ishmael</i>, <a href="#n1">see <b>this</b></a><ref id="n1"/>.<br/>Next &amp; last"##;
        assert_eq!(tags(m).unwrap().len(), 8);
        assert_eq!(plain_text(m), "Call me Ishmael, see this.\nNext & last");
        assert!(parse("<i>open").is_err());
        assert!(parse("<i><b>x</i></b>").is_err());
        assert!(parse("<script>x</script>").is_err());
        assert!(parse("a & b").is_err());
        assert!(parse("<a>no href</a>").is_err());
    }

    #[test]
    fn the_builder_escapes_and_balances() {
        let mut b = MarkupBuilder::default();
        b.text("  1 < 2 &\n ");
        b.open("a", Some("https://x.org/?a=1&b=\"2\""));
        b.open("i", None);
        b.text("link");
        b.close("a");
        b.text(" end ");
        let m = b.take();
        assert_eq!(
            m,
            r#"1 &lt; 2 &amp; <a href="https://x.org/?a=1&amp;b=&quot;2&quot;"><i>link</i></a> end"#
        );
        assert!(parse(&m).is_ok());
        assert_eq!(plain_text(&m), "1 < 2 & link end");
    }

    #[test]
    fn only_anchors_web_and_mail_links_are_kept_and_others_keep_their_text() {
        for href in ["#n1", "https://x.org", "HTTP://x.org", "mailto:a@b.org"] {
            let mut b = MarkupBuilder::default();
            b.open("a", Some(href));
            b.text("x");
            b.close("a");
            assert!(b.take().starts_with("<a href="), "{href}");
        }
        for href in [
            "javascript:alert(1)",
            " JavaScript://%0aalert(1)",
            "data:text/html,<script>",
            "file:///etc/passwd",
            "vbscript:x",
        ] {
            let mut b = MarkupBuilder::default();
            b.open("a", Some(href));
            b.open("i", None);
            b.text("x");
            b.close("i");
            b.close("a");
            assert_eq!(b.take(), "<i>x</i>", "{href}");
        }
    }

    #[test]
    fn kept_text_is_not_translatable_and_comes_back_as_the_source_has_it() {
        let source = "Type <code>ls -l</code> to see <keep>Pequod</keep> &amp; <i>more</i>.";
        assert!(parse(source).is_ok());
        assert_eq!(translatable_text(source), "Type  to see  & more.");
        let answer = "Tapez <code>ls -L</code> pour voir <keep>Péquod</keep> &amp; <i>plus</i>.";
        assert_eq!(
            with_kept_text(source, answer),
            "Tapez <code>ls -l</code> pour voir <keep>Pequod</keep> &amp; <i>plus</i>."
        );
        // Kept marks that are not the source's are left for the tag check to refuse.
        let swapped = "Voir <keep>Pequod</keep> puis <code>ls</code>.";
        assert_eq!(with_kept_text(source, swapped), swapped);
        let nested = "<code>a <b>b</b></code> x";
        assert_eq!(
            with_kept_text(nested, "<code>z</code> y"),
            "<code>a <b>b</b></code> y"
        );
        assert_eq!(with_kept_text("plain", "simple"), "simple");
    }

    #[test]
    fn the_books_marks_parse_with_their_class_and_a_num_carries_its_text() {
        let m = r#"Hofgarten,<num class="lnum" text="10"/> a <span class="smcap">Goose</span><span>x</span>"#;
        assert_eq!(
            tags(m).unwrap(),
            [
                Tag::Num {
                    class: Some("lnum".into()),
                    text: "10".into()
                },
                Tag::Open {
                    name: "span",
                    attr: Some("smcap".into())
                },
                Tag::Close("span"),
                Tag::Open {
                    name: "span",
                    attr: None
                },
                Tag::Close("span"),
            ]
        );
        // Attributes in any order; none unknown, none twice, none missing.
        assert_eq!(
            tags(r#"<num text="&lt;1&gt;" class="c"/>"#).unwrap(),
            [Tag::Num {
                class: Some("c".into()),
                text: "<1>".into()
            }]
        );
        assert_eq!(
            tag_text(&tags(r#"<num text="*"/>"#).unwrap()[0]),
            r#"<num text="*"/>"#
        );
        for bad in [
            r#"<num class="lnum"/>"#,
            r#"<num text="1" text="2"/>"#,
            r#"<num text="1" id="x"/>"#,
            r#"<num text="1">"#,
            r#"<span href="x">y</span>"#,
            r#"<span class="a"class="b">y</span>"#,
            r#"<i class="x">y</i>"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(plain_text(m), "Hofgarten,10 a Goosex");
        assert_eq!(translatable_text(m), "Hofgarten, a Goosex");
        assert!(has_kept(m));
        assert!(is_sign(" 10 ") && is_sign("*") && is_sign("١٠") && is_sign("1914–1918"));
        assert!(!is_sign("") && !is_sign("10a") && !is_sign("iv") && !is_sign(&"1".repeat(25)));
    }

    #[test]
    fn a_num_mark_a_model_dropped_wrote_as_text_or_changed_is_put_back() {
        let source = r#"Into the <i>Hofgarten</i>,<num class="lnum" text="10"/>"#;
        let back = r#"Dans le <i>Hofgarten</i>,<num class="lnum" text="10"/>"#;
        for answer in [
            "Dans le <i>Hofgarten</i>,",
            "Dans le <i>Hofgarten</i>, 10",
            "Dans le <i>Hofgarten</i>,10",
            r#"Dans le <i>Hofgarten</i>,<num text="11"/>"#,
            r#"Dans le <i>Hofgarten</i>,<num class="lnum" text="10"/>"#,
        ] {
            let restored = with_kept_text(source, answer);
            assert_eq!(tags(&restored), tags(back), "{answer}: {restored}");
            assert_eq!(
                translatable_text(&restored).trim(),
                "Dans le Hofgarten,",
                "{answer}"
            );
        }
        // Dropped from the middle: put back at a word's end, at about the same place.
        let source = r#"One<num text="*"/> two three four"#;
        assert_eq!(
            with_kept_text(source, "Un deux trois quatre"),
            r#"Un<num text="*"/> deux trois quatre"#
        );
        // Moved into another mark: taken out of it.
        let source = r#"<b>Word</b> and more<num text="3"/>"#;
        assert_eq!(
            with_kept_text(source, r#"<b>Mot<num text="3"/></b> et plus"#),
            r#"<b>Mot</b> et plus<num text="3"/>"#
        );
        // Other tags unlike the source's: left for the tag check.
        let answer = "<i>Mot</i> et plus";
        assert_eq!(with_kept_text(source, answer), answer);
    }
}
