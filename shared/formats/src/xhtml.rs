//! (X)HTML content to blocks: the shared walker behind the EPUB and HTML extractors.
//!
//! Any element that directly holds text becomes a block, whatever its name, so `<div>`-only
//! sections are kept as well as `<p>`s. Inline elements become markup tags, footnote references
//! become `<ref id>`, and every element id is remembered as an anchor of the next block so that
//! in-book links and navigation can find their target. An inline element the markup has no
//! name for (a `span`, `small`, `q` ...) that carries attributes (a class, `epub:type`, a
//! language, an id) is the book's own mark: a `span` around words, or a `<num/>` around a
//! number or symbol alone (a line number, a note's call); one around nothing but whitespace is
//! no mark, and a book translated in place keeps it as written.
//!
//! The parser is lenient enough for real-world HTML (void elements without a slash, unmatched end
//! tags, HTML named entities) and never expands entities declared in a DTD.

use std::ops::Range;

use quick_xml::escape::{resolve_html5_entity, unescape_with};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::error::FormatError;
use crate::manuscript::{Block, BlockKind, Group, GroupKind};
use crate::markup::{MarkupBuilder, SpanEnd};

/// Deeper nesting than this is hostile or broken, not a book.
const MAX_DEPTH: usize = 256;

/// A parsed document.
#[derive(Debug, Default)]
pub struct Document {
    pub blocks: Vec<Block>,
    /// `<title>` of the document.
    pub title: Option<String>,
    /// `lang` / `xml:lang` of the root element.
    pub language: Option<String>,
}

/// How to resolve the references a document makes.
pub struct Context<'a> {
    /// The document's own path (in an EPUB, inside the archive), for relative links and images.
    pub path: &'a str,
    /// The most blocks the document may give: what is left of the book's
    /// [`crate::limits::MAX_BLOCKS`]. The walk stops at the next one.
    pub max_blocks: usize,
}

impl<'a> Context<'a> {
    /// A document at `path` that may give a whole book's blocks.
    pub fn new(path: &'a str) -> Context<'a> {
        Context {
            path,
            max_blocks: crate::limits::MAX_BLOCKS,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Starts and ends a block; text directly inside it is block text.
    Block,
    /// A mark: i, b, sup, sub, a.
    Inline(&'static str),
    /// A footnote reference: its text is the marker, replaced by `<ref id>`.
    NoteRef,
    /// A link back from a note to its reference: dropped (renderers make their own).
    BackLink,
    /// Not content at all (head, script, style, nav ...): skipped with everything inside.
    Skip,
    /// Transparent (span, font, ...).
    Plain,
}

struct Open {
    name: String,
    role: Role,
    /// Where the element started in the source (located walks only).
    at: usize,
    /// Its index among the located containers, for a block element.
    container: Option<usize>,
    /// For list items: ordered; for notes: the id; for tables: position.
    class: String,
    id: Option<String>,
    epub_type: String,
    /// The group its blocks belong to (a block quote, a poem, a sidebar, a figure).
    group: Option<Group>,
    /// Marked `translate="no"`, or inside an element that is: its text is kept as it is.
    keep: bool,
}

struct Walker<'a> {
    ctx: &'a Context<'a>,
    stack: Vec<Open>,
    text: MarkupBuilder,
    anchors: Vec<String>,
    doc: Document,
    skip_depth: usize,
    tables: u32,
    row: u32,
    col: u32,
    in_title: bool,
    title: String,
    /// Groups opened so far, to number the next.
    groups: u32,
    /// Where each block came from, when the caller asked (the in-place renderer).
    locator: Option<Locator>,
    /// The source range of the event being walked.
    event: Range<usize>,
    /// Set when the document passes one of the [`crate::limits`] (a block past the context's
    /// `max_blocks`, a block too long); the walk stops with it.
    refusal: Option<FormatError>,
}

/// Where a document's blocks came from in its source, so a renderer can put a translation back
/// in place. Ranges are byte ranges of the source text the walker read.
#[derive(Debug, Default)]
pub(crate) struct Located {
    /// One per block of the document, in the same order.
    pub origins: Vec<Origin>,
    /// The block elements (p, h1, li, td ...) the blocks sit in.
    pub containers: Vec<Container>,
    /// The root `html` element's start tag.
    pub html_tag: Option<Range<usize>>,
    /// Where `</head>` starts.
    pub head_end: Option<usize>,
}

/// Where one block came from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    /// From the first to the last event that made the block's text (or the `img` tag of an
    /// image): what a translation replaces.
    pub range: Range<usize>,
    /// Whether the range is well-nested XML, so replacing it keeps the document well-formed.
    pub balanced: bool,
    /// The innermost block element the block sits in.
    pub container: Option<usize>,
    /// The start tags of the range's inline elements, as the markup names them, in order.
    pub inlines: Vec<InlineTag>,
    /// Footnote references in the range: the markup's note id and the element's whole source.
    pub notes: Vec<(String, Range<usize>)>,
    /// What the range holds that the text does not (page markers, elements with ids, math,
    /// back links ...): kept as written, at about the same place in the translation.
    pub kept: Vec<Kept>,
    /// Characters of text in the range, to place the kept pieces proportionally.
    pub chars: usize,
}

#[derive(Debug, Clone)]
pub(crate) struct InlineTag {
    /// `i`, `b`, `sup`, `sub`, `a`, `code`, `keep`, `span`, or `num` for the book's mark
    /// around a number or symbol alone.
    pub name: &'static str,
    /// A link's target as the markup writes it.
    pub href: Option<String>,
    /// The element's name as written (`em`, `cite` ...).
    pub element: String,
    /// The start tag.
    pub tag: Range<usize>,
    /// The whole element, start to end tag, for a `num`: what a translation writes back.
    pub whole: Option<Range<usize>>,
}

#[derive(Debug, Clone)]
pub(crate) struct Kept {
    /// After this many characters of the range's text.
    pub at_char: usize,
    /// The source kept: a whole element, or only its start tag when `close` names the element
    /// whose text was translated (a `span id` around words).
    pub source: Range<usize>,
    pub close: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Container {
    pub name: String,
    pub start_tag: Range<usize>,
    pub end_tag: Option<Range<usize>>,
    /// Blocks whose innermost block element this is.
    pub blocks: usize,
    /// Block elements inside it.
    pub nested: usize,
}

impl Container {
    /// Whether the element holds exactly one block and nothing else that is a block.
    pub fn holds_one_block(&self) -> bool {
        self.blocks == 1 && self.nested == 0 && self.end_tag.is_some()
    }
}

/// What the walker collects between two blocks.
#[derive(Debug, Default)]
struct Locator {
    located: Located,
    first: Option<usize>,
    last_end: usize,
    /// (the tag's range, +1 for a start tag, -1 for an end tag).
    depth: Vec<(Range<usize>, i32)>,
    inlines: Vec<InlineTag>,
    notes: Vec<(String, Range<usize>)>,
    kept: Vec<Kept>,
    chars: usize,
    skip_start: usize,
    /// The id of the footnote reference being read.
    pending_note: Option<String>,
}

impl Locator {
    fn touch(&mut self, event: &Range<usize>) {
        if self.first.is_none() {
            self.first = Some(event.start);
        }
        self.last_end = event.end;
    }

    fn clear(&mut self) {
        self.first = None;
        self.depth.clear();
        self.inlines.clear();
        self.notes.clear();
        self.kept.clear();
        self.chars = 0;
    }

    fn finish(&mut self, container: Option<usize>) {
        let Some(first) = self.first else {
            self.located.origins.push(Origin::default());
            self.clear();
            return;
        };
        // Elements that start before the text and end inside it (a `span id` around the first
        // sentence), or the other way round, are taken in whole.
        let mut pairs = Vec::new();
        let mut open = Vec::new();
        for (tag, delta) in &self.depth {
            if *delta > 0 {
                open.push(tag.start);
            } else if let Some(start) = open.pop() {
                pairs.push(start..tag.end);
            }
        }
        let mut range = first..self.last_end;
        loop {
            let mut widened = false;
            for pair in &pairs {
                let starts_inside = pair.start >= range.start && pair.start < range.end;
                let ends_inside = pair.end > range.start && pair.end <= range.end;
                if starts_inside != ends_inside {
                    range = range.start.min(pair.start)..range.end.max(pair.end);
                    widened = true;
                }
            }
            if !widened {
                break;
            }
        }
        let inside = |r: &Range<usize>| r.start >= range.start && r.end <= range.end;
        let mut level = 0i32;
        let mut balanced = true;
        for (tag, delta) in &self.depth {
            if range.contains(&tag.start) {
                level += delta;
                balanced &= level >= 0;
            }
        }
        balanced &= level == 0;
        let origin = Origin {
            balanced,
            container,
            inlines: self.inlines.drain(..).filter(|t| inside(&t.tag)).collect(),
            notes: self.notes.drain(..).filter(|(_, r)| inside(r)).collect(),
            kept: self.kept.drain(..).filter(|k| inside(&k.source)).collect(),
            chars: self.chars,
            range,
        };
        if let Some(c) = container.and_then(|c| self.located.containers.get_mut(c)) {
            c.blocks += 1;
        }
        self.located.origins.push(origin);
        self.clear();
    }
}

pub fn parse(source: &str, ctx: &Context<'_>) -> Result<Document, FormatError> {
    walk(source, ctx, false).map(|(doc, _)| doc)
}

/// Parses like [`parse`] and also says where each block came from in `source`.
pub(crate) fn parse_located(
    source: &str,
    ctx: &Context<'_>,
) -> Result<(Document, Located), FormatError> {
    walk(source, ctx, true).map(|(doc, located)| (doc, located.unwrap_or_default()))
}

fn walk(
    source: &str,
    ctx: &Context<'_>,
    locate: bool,
) -> Result<(Document, Option<Located>), FormatError> {
    let mut reader = Reader::from_str(source);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.expand_empty_elements = false;
    let mut walker = Walker {
        ctx,
        stack: Vec::new(),
        text: MarkupBuilder::default(),
        anchors: Vec::new(),
        doc: Document::default(),
        skip_depth: 0,
        tables: 0,
        row: 0,
        col: 0,
        in_title: false,
        title: String::new(),
        groups: 0,
        locator: locate.then(Locator::default),
        event: 0..0,
        refusal: None,
    };
    loop {
        let before = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| {
            FormatError::Malformed(format!(
                "{}: {e} at byte {}",
                ctx.path,
                reader.buffer_position()
            ))
        })?;
        walker.event = before..reader.buffer_position() as usize;
        match event {
            Event::Start(e) => walker.start(&e, false)?,
            Event::Empty(e) => walker.start(&e, true)?,
            Event::End(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase();
                walker.end(&name);
            }
            Event::Text(e) => {
                let raw = String::from_utf8_lossy(e.as_ref());
                walker.text(&unescape_lenient(&raw));
            }
            Event::CData(e) => walker.text(&String::from_utf8_lossy(e.as_ref())),
            Event::Eof => break,
            // Comments, processing instructions and the DOCTYPE (with any entity declarations,
            // which are never expanded) carry no content.
            _ => {}
        }
        if let Some(refusal) = walker.refusal.take() {
            return Err(refusal);
        }
    }
    walker.flush();
    if let Some(refusal) = walker.refusal.take() {
        return Err(refusal);
    }
    let title = walker
        .title
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    walker.doc.title = (!title.is_empty()).then_some(title);
    Ok((walker.doc, walker.locator.map(|l| l.located)))
}

/// Unescapes XML and HTML named entities; an unknown entity is kept as written.
pub(crate) fn unescape_lenient(raw: &str) -> String {
    match unescape_with(raw, resolve_html5_entity) {
        Ok(text) => text.into_owned(),
        Err(_) => raw
            .split('&')
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    return part.to_string();
                }
                match part.split_once(';') {
                    Some((entity, rest)) => {
                        match unescape_with(&format!("&{entity};"), resolve_html5_entity) {
                            Ok(resolved) => format!("{resolved}{rest}"),
                            Err(_) => format!("&{part}"),
                        }
                    }
                    None => format!("&{part}"),
                }
            })
            .collect(),
    }
}

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// Phrasing elements the markup has no name of its own for: with attributes, each is one of the
/// book's marks (`span` or `num` in the markup); without, it is transparent.
const PHRASING: &[&str] = &[
    "span", "a", "abbr", "acronym", "bdi", "bdo", "big", "data", "del", "font", "ins", "label",
    "mark", "q", "s", "small", "strike", "time", "u",
];

/// Whether an element carries an attribute that makes it a mark: anything but namespace
/// declarations and `translate`.
fn has_marking_attrs(e: &BytesStart<'_>) -> bool {
    e.html_attributes().flatten().any(|a| {
        let key = a.key.as_ref().to_ascii_lowercase();
        !(key.starts_with(b"xmlns") || key == b"translate")
    })
}

const BLOCKS: &[&str] = &[
    "p",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "dt",
    "dd",
    "blockquote",
    "pre",
    "td",
    "th",
    "tr",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "caption",
    "ul",
    "ol",
    "dl",
    "section",
    "article",
    "aside",
    "header",
    "footer",
    "main",
    "figure",
    "figcaption",
    "address",
    "body",
    "hr",
    "center",
    "details",
    "summary",
];

fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.html_attributes().flatten().find_map(|a| {
        let key = a.key.as_ref();
        let local = key.rsplit(|b| *b == b':').next().unwrap_or(key);
        let matches = key.eq_ignore_ascii_case(name.as_bytes())
            || (name == "epub:type" && key.ends_with(b":type"))
            || (name == "lang" && local.eq_ignore_ascii_case(b"lang"));
        matches.then(|| unescape_lenient(&String::from_utf8_lossy(&a.value)))
    })
}

fn translate_no(e: &BytesStart<'_>) -> bool {
    attr(e, "translate").is_some_and(|t| t.trim().eq_ignore_ascii_case("no"))
}

fn role_of(name: &str, e: &BytesStart<'_>) -> Role {
    let epub_type = attr(e, "epub:type").unwrap_or_default();
    let aria = attr(e, "role").unwrap_or_default();
    let class = attr(e, "class").unwrap_or_default();
    // Print page numbers are position markers, not text (their ids still become anchors).
    if epub_type.split_whitespace().any(|t| t == "pagebreak") || aria == "doc-pagebreak" {
        return Role::Skip;
    }
    match name {
        "head" | "script" | "style" | "nav" | "svg" | "math" | "noscript" | "template"
        | "iframe" | "object" => Role::Skip,
        "a" if epub_type.contains("noteref")
            || aria == "doc-noteref"
            || class.contains("footnote-ref")
            || class.contains("noteref") =>
        {
            Role::NoteRef
        }
        "a" if aria == "doc-backlink" || class.contains("footnote-back") => Role::BackLink,
        "a" if attr(e, "href").is_some() => Role::Inline("a"),
        // Code and text marked not to be translated are carried over as they are.
        "code" | "kbd" | "samp" | "tt" => Role::Inline("code"),
        _ if !BLOCKS.contains(&name) && translate_no(e) => Role::Inline("keep"),
        "em" | "i" | "cite" | "dfn" | "var" => Role::Inline("i"),
        "strong" | "b" => Role::Inline("b"),
        "sup" => Role::Inline("sup"),
        "sub" => Role::Inline("sub"),
        _ if BLOCKS.contains(&name) => Role::Block,
        _ => Role::Plain,
    }
}

impl Walker<'_> {
    /// Whether `e` declares a language other than the document's (by primary subtag: `en-GB`
    /// in an `en` book is not another language).
    fn in_another_language(&self, e: &BytesStart<'_>) -> bool {
        let primary = |tag: &str| {
            tag.split(['-', '_'])
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        };
        match (attr(e, "lang"), &self.doc.language) {
            (Some(own), Some(document)) => {
                !own.trim().is_empty() && primary(&own) != primary(document)
            }
            _ => false,
        }
    }

    fn start(&mut self, e: &BytesStart<'_>, empty: bool) -> Result<(), FormatError> {
        let name = String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase();
        if self.skip_depth > 0 {
            if !empty && !VOID.contains(&name.as_str()) {
                self.skip_depth += 1;
            }
            return Ok(());
        }
        self.note_start(&name, e, empty);
        let role = self.role(&name, e);
        if self.content_element(&name, e) {
            return Ok(());
        }
        if empty || VOID.contains(&name.as_str()) {
            if role == Role::Block {
                self.flush();
            } else if let Some(l) = &mut self.locator {
                // An empty element inside text (a page marker, an anchor): kept as written.
                l.kept.push(Kept {
                    at_char: l.chars,
                    source: self.event.clone(),
                    close: None,
                });
            }
            return Ok(());
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(FormatError::Malformed(format!(
                "{}: markup nested deeper than {MAX_DEPTH} levels",
                self.ctx.path
            )));
        }
        if role == Role::Skip {
            self.skip(name, e);
            return Ok(());
        }
        self.begin(&name, role, e);
        let mut open = self.open(name, role, e);
        // A block marked `translate="no"` (or inside one) holds kept text.
        if role == Role::Block && open.keep {
            self.text.open("keep", None);
        }
        if role == Role::Block {
            open.group = self.group_of(&open).map(|kind| {
                self.groups += 1;
                Group {
                    kind,
                    n: self.groups,
                }
            });
        }
        self.locate_start(&mut open, e);
        self.stack.push(open);
        Ok(())
    }

    /// What a start tag says of the document: its `html` element (and language), its title,
    /// an anchor.
    fn note_start(&mut self, name: &str, e: &BytesStart<'_>, empty: bool) {
        if name == "html" {
            if let Some(l) = &mut self.locator {
                l.located.html_tag = Some(self.event.clone());
            }
        }
        if name == "title" && self.stack.iter().any(|o| o.name == "head") {
            self.in_title = !empty;
        }
        if name == "html" {
            self.doc.language = attr(e, "lang").filter(|l| !l.trim().is_empty());
        }
        if let Some(id) = attr(e, "id").or_else(|| if name == "a" { attr(e, "name") } else { None })
        {
            self.anchors.push(id);
        }
    }

    /// The role an element plays here: its own, or a line of verse, a phrase kept in another
    /// language, or one of the book's own marks.
    fn role(&self, name: &str, e: &BytesStart<'_>) -> Role {
        let mut role = role_of(name, e);
        if role == Role::Plain && name == "span" && self.starts_verse_line(e) {
            role = Role::Block;
        }
        // A phrase the book marks as in another language (a Latin motto, a French line in an
        // English poem) is left as the author wrote it, as translators do.
        if matches!(role, Role::Plain | Role::Inline("i" | "b")) && self.in_another_language(e) {
            role = Role::Inline("keep");
        }
        // The book's own marks: a class, a type, a language or an id on an element the markup
        // has no name for.
        if role == Role::Plain && PHRASING.contains(&name) && has_marking_attrs(e) {
            role = Role::Inline("span");
        }
        role
    }

    /// A line break or an image, taken in whole; false for any other element.
    fn content_element(&mut self, name: &str, e: &BytesStart<'_>) -> bool {
        match name {
            "br" => {
                self.text.line_break();
                if let Some(l) = &mut self.locator {
                    l.touch(&self.event);
                }
                true
            }
            "img" | "image" => {
                self.flush();
                let src = attr(e, "src")
                    .or_else(|| attr(e, "href"))
                    .unwrap_or_default();
                let alt = attr(e, "alt").unwrap_or_default();
                if !src.is_empty() && !src.starts_with("data:") {
                    let mut alt_text = MarkupBuilder::default();
                    alt_text.text(&alt);
                    let asset = resolve(self.ctx.path, &src);
                    let container = self.container();
                    if let Some(l) = &mut self.locator {
                        l.clear();
                        l.touch(&self.event);
                        l.finish(container);
                    }
                    self.push_block(BlockKind::Image { asset }, alt_text.take());
                }
                true
            }
            _ => false,
        }
    }

    /// Starts skipping an element that is not content, with everything inside it.
    fn skip(&mut self, name: String, e: &BytesStart<'_>) {
        self.skip_depth = 1;
        if let Some(l) = &mut self.locator {
            l.skip_start = self.event.start;
            l.depth.push((self.event.clone(), 1));
        }
        // `head` holds the title we want; everything else in it is skipped.
        if name == "head" {
            self.skip_depth = 0;
            self.stack.push(self.open(name, Role::Plain, e));
        }
    }

    /// What opening an element of `role` does to the text: a block ends the one before (and
    /// counts table cells), a mark opens, a note reference is put in.
    fn begin(&mut self, name: &str, role: Role, e: &BytesStart<'_>) {
        match role {
            Role::Block => {
                self.flush();
                match name {
                    "table" => {
                        self.tables += 1;
                        self.row = 0;
                    }
                    "tr" => {
                        self.row += 1;
                        self.col = 0;
                    }
                    "td" | "th" => self.col += 1,
                    _ => {}
                }
            }
            Role::Inline(tag) => {
                let attr = match tag {
                    "a" => attr(e, "href").map(|h| link_target(self.ctx.path, &h)),
                    "span" => attr(e, "class")
                        .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
                        .filter(|c| !c.is_empty()),
                    _ => None,
                };
                self.text.open(tag, attr.as_deref());
            }
            Role::NoteRef => {
                if let Some(href) = attr(e, "href") {
                    let target = link_target(self.ctx.path, &href);
                    let id = target.trim_start_matches('#');
                    self.text.note_ref(id);
                    if let Some(l) = &mut self.locator {
                        l.pending_note = Some(id.to_string());
                    }
                }
            }
            Role::Skip | Role::BackLink | Role::Plain => {}
        }
    }

    /// In a located walk, where an opened element is: a block's container, a mark's tag, a
    /// note reference, an element with an id kept as written.
    fn locate_start(&mut self, open: &mut Open, e: &BytesStart<'_>) {
        let Some(l) = &mut self.locator else {
            return;
        };
        let event = self.event.clone();
        l.depth.push((event.clone(), 1));
        match open.role {
            Role::Block => {
                let parent = self.stack.iter().rev().find_map(|o| o.container);
                if let Some(p) = parent.and_then(|p| l.located.containers.get_mut(p)) {
                    p.nested += 1;
                }
                open.container = Some(l.located.containers.len());
                l.located.containers.push(Container {
                    name: open.name.clone(),
                    start_tag: event,
                    ..Container::default()
                });
            }
            Role::Inline(tag) => {
                l.touch(&event);
                l.inlines.push(InlineTag {
                    name: tag,
                    href: (tag == "a")
                        .then(|| attr(e, "href").map(|h| link_target(self.ctx.path, &h)))
                        .flatten(),
                    element: open.name.clone(),
                    tag: event,
                    whole: None,
                });
            }
            Role::NoteRef => l.touch(&event),
            Role::Plain if open.id.is_some() || attr(e, "name").is_some() => {
                l.kept.push(Kept {
                    at_char: l.chars,
                    source: event,
                    close: Some(open.name.clone()),
                });
            }
            _ => {}
        }
    }

    fn open(&self, name: String, role: Role, e: &BytesStart<'_>) -> Open {
        Open {
            name,
            role,
            at: self.event.start,
            container: None,
            class: attr(e, "class").unwrap_or_default().to_ascii_lowercase(),
            id: attr(e, "id"),
            epub_type: format!(
                "{} {}",
                attr(e, "epub:type").unwrap_or_default(),
                attr(e, "role").unwrap_or_default()
            ),
            group: None,
            keep: translate_no(e) || self.stack.last().is_some_and(|o| o.keep),
        }
    }

    /// The kind of group a block element opens, if any.
    fn group_of(&self, open: &Open) -> Option<GroupKind> {
        match open.name.as_str() {
            "blockquote" => Some(GroupKind::Quote),
            // A typed note is a footnote block of its own; any other aside is a sidebar.
            "aside" if !is_note(&open.epub_type) => Some(GroupKind::Aside),
            "figure" => Some(GroupKind::Figure),
            "div" | "section" | "p" if is_verse_group(&open.class) => Some(GroupKind::Verse),
            _ => None,
        }
    }

    /// Whether a `span` is a line of verse of its own: its class says so, or it starts a line
    /// right inside a poem (nothing of the line is read yet), where spans set one line each.
    fn starts_verse_line(&self, e: &BytesStart<'_>) -> bool {
        let class = attr(e, "class").unwrap_or_default().to_ascii_lowercase();
        // `line`, or `line2` and the like (an indented line), not `line-through`.
        let own = class.split_whitespace().any(|c| {
            c.strip_prefix("line")
                .is_some_and(|rest| rest.chars().all(|d| d.is_ascii_digit()))
        });
        let in_poem = self.stack.last().is_some_and(|p| {
            matches!(p.name.as_str(), "div" | "section") && is_verse_group(&p.class)
        });
        own || (in_poem && self.text.is_blank())
    }

    fn end(&mut self, name: &str) {
        if self.skip_depth > 0 {
            self.skip_depth -= 1;
            if let (0, Some(l)) = (self.skip_depth, &mut self.locator) {
                l.depth.push((self.event.clone(), -1));
                l.kept.push(Kept {
                    at_char: l.chars,
                    source: l.skip_start..self.event.end,
                    close: None,
                });
            }
            return;
        }
        if VOID.contains(&name) {
            return;
        }
        if let Some(l) = &mut self.locator {
            l.depth.push((self.event.clone(), -1));
            if name == "head" {
                l.located.head_end = Some(self.event.start);
            }
        }
        // Close up to the matching element; an end tag that matches nothing is ignored.
        let Some(pos) = self.stack.iter().rposition(|o| o.name == name) else {
            return;
        };
        while self.stack.len() > pos {
            let Some((role, is_title)) = self.stack.last().map(|o| (o.role, o.name == "title"))
            else {
                break;
            };
            let closed_here = self.stack.len() == pos + 1;
            let mut span_end = None;
            match role {
                Role::Block => self.flush(),
                Role::Inline("span") => span_end = Some(self.text.close_span()),
                Role::Inline(tag) => self.text.close(tag),
                _ => {}
            }
            self.locate_end(closed_here, span_end);
            if is_title {
                self.in_title = false;
            }
            self.stack.pop();
            // Text after a block, in a parent marked `translate="no"`, is kept too.
            if role == Role::Block && self.stack.last().is_some_and(|o| o.keep) {
                self.text.open("keep", None);
            }
        }
    }

    /// In a located walk, where the innermost open element ends (`closed_here`: at this end
    /// tag, not closed by another's), and what a closed span was (`span_end`).
    fn locate_end(&mut self, closed_here: bool, span_end: Option<SpanEnd>) {
        let (Some(l), Some(open)) = (&mut self.locator, self.stack.last()) else {
            return;
        };
        let event = self.event.clone();
        match open.role {
            Role::Block => {
                if let Some(c) = open.container.and_then(|c| l.located.containers.get_mut(c)) {
                    c.end_tag = closed_here.then_some(event);
                }
            }
            Role::Inline(_) if closed_here => {
                l.touch(&event);
                let whole = open.at..event.end;
                let within = |r: &Range<usize>| r.start >= whole.start && r.end <= whole.end;
                match span_end {
                    // Written back whole: nothing inside it is placed on its own.
                    Some(SpanEnd::Sign) => {
                        l.inlines
                            .retain(|t| t.tag.start == whole.start || !within(&t.tag));
                        l.kept.retain(|k| !within(&k.source));
                        if let Some(t) = l
                            .inlines
                            .iter_mut()
                            .rev()
                            .find(|t| t.tag.start == whole.start)
                        {
                            t.name = "num";
                            t.whole = Some(whole);
                        }
                    }
                    Some(SpanEnd::Blank) => {
                        l.inlines.retain(|t| !within(&t.tag));
                        l.kept.retain(|k| !within(&k.source));
                        l.kept.push(Kept {
                            at_char: l.chars,
                            source: whole,
                            close: None,
                        });
                    }
                    _ => {}
                }
            }
            Role::NoteRef if closed_here => {
                l.touch(&event);
                let id = l.pending_note.take();
                match id {
                    Some(id) => l.notes.push((id, open.at..event.end)),
                    None => l.kept.push(Kept {
                        at_char: l.chars,
                        source: open.at..event.end,
                        close: None,
                    }),
                }
            }
            Role::BackLink if closed_here => l.kept.push(Kept {
                at_char: l.chars,
                source: open.at..event.end,
                close: None,
            }),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if self.skip_depth > 0 {
            return;
        }
        if self.in_title {
            self.title.push_str(text);
            return;
        }
        if self.stack.iter().any(|o| o.name == "head") {
            return;
        }
        if self
            .stack
            .iter()
            .any(|o| matches!(o.role, Role::NoteRef | Role::BackLink))
        {
            return;
        }
        if let Some(l) = &mut self.locator {
            l.chars += text.chars().count();
            if !text.trim().is_empty() {
                l.touch(&self.event);
            }
        }
        if self.stack.iter().any(|o| o.name == "pre") {
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    self.text.line_break();
                }
                self.text.text(line);
            }
        } else {
            self.text.text(text);
        }
        // A character is at most four bytes: past this the block is too long whatever it holds.
        if self.text.markup_len() > 4 * crate::limits::MAX_BLOCK_CHARS {
            self.refusal = Some(crate::limits::paragraph_too_long());
        }
    }

    /// Ends the current block (if it has any text) with the kind its ancestors give it.
    fn flush(&mut self) {
        if self.text.is_blank() {
            // Keep open inline tags for the next block; drop only the whitespace.
            let _ = self.text.take();
            if let Some(l) = &mut self.locator {
                l.clear();
            }
            return;
        }
        let text = self.text.take();
        let kind = self.kind();
        let container = self.container();
        if let Some(l) = &mut self.locator {
            l.finish(container);
        }
        self.push_block(kind, text);
    }

    /// The innermost open block element, among the located containers.
    fn container(&self) -> Option<usize> {
        self.stack.iter().rev().find_map(|o| o.container)
    }

    fn push_block(&mut self, kind: BlockKind, text: String) {
        if self.doc.blocks.len() >= self.ctx.max_blocks {
            self.refusal = Some(crate::limits::too_many_blocks());
            return;
        }
        let mut block = Block::new(kind, text);
        block.anchors = std::mem::take(&mut self.anchors);
        // A note keeps the groups inside it: it is set apart from the text around it.
        let from = match &block.kind {
            BlockKind::Footnote { id } => self
                .stack
                .iter()
                .rposition(|o| o.id.as_ref() == Some(id))
                .map_or(0, |p| p + 1),
            _ => 0,
        };
        block.groups = self.stack[from..].iter().filter_map(|o| o.group).collect();
        self.doc.blocks.push(block);
    }

    fn kind(&self) -> BlockKind {
        let mut kind: Option<BlockKind> = None;
        for (i, open) in self.stack.iter().enumerate().rev() {
            if is_note(&open.epub_type) {
                if let Some(id) = &open.id {
                    return BlockKind::Footnote { id: id.clone() };
                }
            }
            // An `li` inside an endnotes list (pandoc's HTML) is a note.
            if open.name == "li" {
                let in_endnotes = self.stack[..i]
                    .iter()
                    .any(|o| o.epub_type.contains("endnotes") || o.class.contains("footnotes"));
                if let (true, Some(id)) = (in_endnotes, &open.id) {
                    return BlockKind::Footnote { id: id.clone() };
                }
            }
            if kind.is_none() {
                kind = match open.name.as_str() {
                    "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => Some(BlockKind::Heading {
                        level: open.name[1..].parse().unwrap_or(1),
                    }),
                    "pre" => Some(BlockKind::Preformatted),
                    "td" | "th" => Some(BlockKind::TableCell {
                        table: self.tables,
                        row: self.row,
                        col: self.col,
                        header: open.name == "th",
                    }),
                    "li" | "dd" | "dt" => {
                        let depth = self
                            .stack
                            .iter()
                            .filter(|o| matches!(o.name.as_str(), "ul" | "ol" | "dl"))
                            .count()
                            .min(9) as u8;
                        let ordered = self.stack[..i]
                            .iter()
                            .rev()
                            .find(|o| matches!(o.name.as_str(), "ul" | "ol" | "dl"))
                            .is_some_and(|o| o.name == "ol");
                        Some(BlockKind::ListItem {
                            ordered,
                            depth: depth.max(1),
                        })
                    }
                    "div" | "p" | "span" if is_verse(open, &self.stack[..i]) => {
                        Some(BlockKind::Line)
                    }
                    _ => None,
                };
            }
            if open.name == "blockquote" && kind.is_none() {
                kind = Some(BlockKind::Quote);
            }
        }
        kind.unwrap_or(BlockKind::Paragraph)
    }
}

/// Whether an element's `epub:type` and `role` make it a note.
fn is_note(epub_type: &str) -> bool {
    [
        "footnote",
        "endnote",
        "rearnote",
        "doc-footnote",
        "doc-endnote",
    ]
    .iter()
    .any(|t| epub_type.split_whitespace().any(|w| w == *t))
}

/// Whether a class names a poem, stanza or line group (not a single line).
fn is_verse_group(class: &str) -> bool {
    class.split_whitespace().any(|c| {
        c == "lg"
            || ["verse", "stanza", "poem", "linegroup"]
                .iter()
                .any(|m| c.starts_with(m))
    })
}

/// A verse line: its own class says so, or it sits in a line group, stanza or poem.
fn is_verse(open: &Open, ancestors: &[Open]) -> bool {
    const MARKERS: &[&str] = &["line", "verse", "stanza", "poem", "linegroup"];
    let marked = |class: &str| {
        class
            .split_whitespace()
            .any(|c| MARKERS.iter().any(|m| c.starts_with(m)))
    };
    marked(&open.class) || ancestors.last().is_some_and(|parent| marked(&parent.class))
}

/// Resolves `href` against the directory of `base` (both archive paths), dropping any fragment.
/// A `..` above the archive's root stays at the root.
pub fn resolve(base: &str, href: &str) -> String {
    resolve_path(base, href).0
}

/// Like [`resolve`], but None when `href` climbs above the archive's root: such a path means
/// a file outside the book, not the root, and a caller may want to say so.
pub fn resolve_within(base: &str, href: &str) -> Option<String> {
    let (path, climbed_out) = resolve_path(base, href);
    (!climbed_out).then_some(path)
}

/// The resolved path, and whether a `..` went above the root on the way (after decoding, so
/// `%2e%2e` counts too).
fn resolve_path(base: &str, href: &str) -> (String, bool) {
    let href = href.split('#').next().unwrap_or_default();
    let href = percent_decode(href);
    let mut parts: Vec<&str> = match base.rsplit_once('/') {
        Some((dir, _)) if !href.starts_with('/') => dir.split('/').collect(),
        _ => Vec::new(),
    };
    let mut climbed_out = false;
    for segment in href.trim_start_matches('/').split('/') {
        match segment {
            "" | "." => {}
            ".." => climbed_out |= parts.pop().is_none(),
            s => parts.push(s),
        }
    }
    (parts.join("/"), climbed_out)
}

/// One round of percent-decoding: `%` and two hex digits become that byte; a `%` without them
/// stays as it is, and bytes that are not UTF-8 become U+FFFD. Read byte by byte, so a `%`
/// before a multi-byte character is kept rather than split.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where a link goes: external URLs unchanged; in-book links become `#anchor`, where the anchor
/// is the fragment, or for a whole document [`document_anchor`] of its path.
pub fn link_target(base: &str, href: &str) -> String {
    let href = href.trim();
    // Kept as written when it names a scheme: the markup builder keeps only web and mail links.
    let external = href.contains("://") || href.starts_with("mailto:");
    if external {
        return href.to_string();
    }
    match href.split_once('#') {
        Some((_, fragment)) if !fragment.is_empty() => format!("#{}", percent_decode(fragment)),
        _ => format!("#{}", document_anchor(&resolve(base, href))),
    }
}

/// The anchor that stands for the start of a whole document.
pub fn document_anchor(path: &str) -> String {
    let cleaned: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("doc-{cleaned}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(html: &str) -> Vec<Block> {
        parse(html, &Context::new("OPS/text/ch1.xhtml"))
            .unwrap()
            .blocks
    }

    #[test]
    fn paragraphs_headings_and_marks_become_blocks() {
        let b = blocks(
            r##"<html lang="en"><head><title>T</title><style>p{}</style></head><body>
            <h1 id="c1">Chapter 1. <em>Loomings</em></h1>
            <p>Call me <i>Ishmael</i>. Some years ago&mdash;never mind&#8230;</p>
            <p>See <a href="ch2.xhtml#x">there</a> and <a href="http://e.org">here</a>.</p>
            <script>alert(1)</script></body></html>"##,
        );
        assert_eq!(b.len(), 3);
        assert_eq!(b[0].kind, BlockKind::Heading { level: 1 });
        assert_eq!(b[0].text, "Chapter 1. <i>Loomings</i>");
        assert_eq!(b[0].anchors, ["c1"]);
        assert_eq!(
            b[1].text,
            "Call me <i>Ishmael</i>. Some years ago—never mind…"
        );
        assert_eq!(
            b[2].text,
            r##"See <a href="#x">there</a> and <a href="http://e.org">here</a>."##
        );
    }

    #[test]
    fn div_only_text_and_verse_lines_are_kept() {
        let b = blocks(
            r##"<body><section><div class="linegroup"><div>April is the cruellest month,</div>
            <div id="ln2">Lilacs<a epub:type="noteref" href="#note-1">*</a></div></div>
            <div>Loose text in a div</div></section>
            <div epub:type="rearnote" id="note-1"><p><a href="#ln2">Line 2.</a> Cf. Ezekiel.</p></div></body>"##,
        );
        let kinds: Vec<_> = b.iter().map(|b| b.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                BlockKind::Line,
                BlockKind::Line,
                BlockKind::Paragraph,
                BlockKind::Footnote {
                    id: "note-1".into()
                }
            ]
        );
        assert_eq!(b[1].text, r#"Lilacs<ref id="note-1"/>"#);
        assert_eq!(b[3].text, r##"<a href="#ln2">Line 2.</a> Cf. Ezekiel."##);
    }

    #[test]
    fn lists_tables_images_and_preformatted_text() {
        let b = blocks(
            r#"<body><ol><li>one</li><li>two<ul><li>inner</li></ul></li></ol>
            <table><tr><th>h</th><td>c</td></tr></table>
            <p>before<img src="../images/a%20b.png" alt="A whale">after</p>
            <pre>line 1
line 2</pre></body>"#,
        );
        assert_eq!(
            b[0].kind,
            BlockKind::ListItem {
                ordered: true,
                depth: 1
            }
        );
        assert_eq!(
            b[2].kind,
            BlockKind::ListItem {
                ordered: false,
                depth: 2
            }
        );
        assert_eq!(
            b[3].kind,
            BlockKind::TableCell {
                table: 1,
                row: 1,
                col: 1,
                header: true
            }
        );
        assert_eq!(
            b[6].kind,
            BlockKind::Image {
                asset: "OPS/images/a b.png".into()
            }
        );
        assert_eq!(b[6].text, "A whale");
        assert_eq!(
            (b[5].text.as_str(), b[7].text.as_str()),
            ("before", "after")
        );
        assert_eq!(b[8].text, "line 1<br/>line 2");
    }

    #[test]
    fn blocks_remember_the_quotation_poem_sidebar_or_figure_they_sat_in() {
        let b = blocks(
            r#"<body><blockquote><p>One</p><div class="linegroup"><div>a line</div>
            <div>another</div></div></blockquote><blockquote><p>Two</p></blockquote>
            <aside epub:type="annotation" id="a1"><p>A transcriber's note</p></aside>
            <aside epub:type="footnote" id="n1"><p>A note</p><blockquote><p>quoted</p></blockquote></aside>
            <figure><img src="a.png" alt="A"/><figcaption>Caption</figcaption></figure></body>"#,
        );
        let kinds = |i: usize| b[i].groups.iter().map(|g| g.kind).collect::<Vec<_>>();
        assert_eq!(kinds(0), [GroupKind::Quote]);
        assert_eq!(kinds(1), [GroupKind::Quote, GroupKind::Verse]);
        assert_eq!(b[1].kind, BlockKind::Line);
        assert_eq!(b[1].groups, b[2].groups, "one poem");
        assert_eq!(b[0].groups[0], b[1].groups[0], "one quotation");
        assert_ne!(b[3].groups, b[0].groups, "two quotations stay two");
        assert_eq!(kinds(4), [GroupKind::Aside]);
        assert_eq!(b[5].kind, BlockKind::Footnote { id: "n1".into() });
        assert!(b[5].groups.is_empty(), "a footnote is not a sidebar");
        assert_eq!(kinds(6), [GroupKind::Quote]);
        assert_eq!(kinds(7), [GroupKind::Figure]);
        assert_eq!(b[7].groups, b[8].groups, "an image and its caption");
    }

    #[test]
    fn spans_that_set_a_poems_lines_are_lines_of_their_own() {
        let b = blocks(
            r##"<body><div class="poem"><span class="line">Farewell, <a href="#x">warrior</a> brave,</span>
            <span class="c8">For this day thou must die!</span></div>
            <div class="poem">Roses are <span class="x">red</span>,<br/>violets blue</div>
            <p>Prose with <span class="line-through">a span</span> in it.</p></body>"##,
        );
        let texts: Vec<&str> = b.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Farewell, <a href=\"#x\">warrior</a> brave,",
                "For this day thou must die!",
                // Not lines of their own: the book's marks.
                "Roses are <span class=\"x\">red</span>,<br/>violets blue",
                "Prose with <span class=\"line-through\">a span</span> in it."
            ]
        );
    }

    #[test]
    fn inline_elements_with_attributes_are_the_books_marks_and_a_number_alone_is_a_num() {
        let b = blocks(
            r##"<body lang="en"><div class="linegroup">
            <div>And went on in sunlight, into the Hofgarten,<span class="lnum"
                >10</span>
            </div>
            <div>Out of this stony rubbish? Son of man,<a epub:type="noteref" class="noteref"
                href="#note-1">*</a><span class="lnum">20</span></div></div>
            <p>A <span class="smcap">Mother Goose</span> rhyme, <small id="s2" class="x y">small
            words</small>, a <span epub:type="bridgehead">head</span>, a plain <span>span</span>
            and a <span class="call"><sup>12</sup></span> call.</p>
            <p>An anchor<span id="a1"> </span>and <span class="empty"></span>nothing.</p>
            <p><span lang="en-GB">colour</span> <q class="q" translate="no">kept</q></p></body>"##,
        );
        let texts: Vec<&str> = b.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                r#"And went on in sunlight, into the Hofgarten,<num class="lnum" text="10"/>"#,
                r#"Out of this stony rubbish? Son of man,<ref id="note-1"/><num class="lnum" text="20"/>"#,
                r#"A <span class="smcap">Mother Goose</span> rhyme, <span class="x y">small words</span>, a <span>head</span>, a plain span and a <num class="call" text="12"/> call."#,
                "An anchor and nothing.",
                r#"<span>colour</span> <keep>kept</keep>"#,
            ]
        );
        assert_eq!(
            b[0].plain_text(),
            "And went on in sunlight, into the Hofgarten,10"
        );
        assert_eq!(
            crate::markup::translatable_text(&b[0].text),
            "And went on in sunlight, into the Hofgarten,"
        );
    }

    #[test]
    fn sloppy_html_is_read_leniently() {
        let b = blocks("<html><body><p>One<br>two &nbsp;&copy; &bogus; <b>bold</p><p>next</i></p></body></html>");
        assert_eq!(b[0].text, "One<br/>two \u{a0}© &amp;bogus; <b>bold</b>");
        assert_eq!(b[1].text, "next");
    }

    #[test]
    fn entity_declarations_are_never_expanded() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><html><body><p>&lol2;</p></body></html>"#;
        let b = blocks(bomb);
        assert_eq!(b[0].text, "&amp;lol2;");
    }

    #[test]
    fn absurdly_deep_nesting_is_an_error() {
        let deep = format!("<body>{}</body>", "<div>".repeat(MAX_DEPTH + 10));
        assert!(matches!(
            parse(&deep, &Context::new("x.html")),
            Err(FormatError::Malformed(_))
        ));
    }

    #[test]
    fn relative_paths_resolve_inside_the_archive() {
        assert_eq!(
            resolve("OPS/text/ch1.xhtml", "../img/a.png"),
            "OPS/img/a.png"
        );
        assert_eq!(resolve("ch1.xhtml", "img/a.png#x"), "img/a.png");
        assert_eq!(resolve("OPS/ch1.xhtml", "../../etc/passwd"), "etc/passwd");
        assert_eq!(resolve_within("OPS/ch1.xhtml", "../../etc/passwd"), None);
        assert_eq!(resolve_within("OPS/ch1.xhtml", "%2e%2e/%2E%2E/x"), None);
        assert_eq!(
            resolve_within("OPS/ch1.xhtml", "a/../../b.png").as_deref(),
            Some("b.png"),
            "a path that dips and comes back up to the root is still inside"
        );
        assert_eq!(
            link_target("OPS/ch1.xhtml", "ch2.xhtml"),
            "#doc-OPS-ch2-xhtml"
        );
    }
}
