//! FictionBook 2 books (`.fb2`, and `.fb2.zip`, a zip archive of one): one XML document, read
//! with quick-xml. Nothing is fetched and no entity is declared or expanded: a DOCTYPE is
//! skipped, and an entity that is not XML's own or HTML's is kept as it is written.
//!
//! - Metadata: the `title-info`'s `book-title`, first `author`, `lang` and `coverpage` image.
//! - Chapters: the main `<body>`'s sections at one depth: the shallowest at which the body has
//!   two sections or more (a book of parts of chapters splits at its parts, one of chapters at
//!   its chapters; a lone top section holding the chapters is looked through). A section at a
//!   shallower depth starts a chapter too, and what comes before the first (the body's title,
//!   an epigraph) is a chapter of its own. Deeper sections are headings inside their chapter. A
//!   chapter of headings alone (a title page, a part's title) opens the chapter after it.
//! - Blocks: titles are headings (a title's paragraphs one heading, a line each), `subtitle` a
//!   heading, `p` a paragraph, `<v>` a line of verse each (in the groups of its `poem` and
//!   `stanza`), `epigraph`, `cite` and `annotation` quotations (their `text-author` too), table
//!   cells; `emphasis` and `strong` are marks, as are `sup`, `sub`, `code` and links.
//! - Notes: each section of a `<body name="notes">` (or `comments`) is a note, its paragraphs
//!   the note's text (its title, the note's number, is left to the renderers); a link of
//!   `type="note"` is a reference to it. The notes are a last chapter.
//! - Images: a block `<image>` is an image block, its bytes from the `<binary>` of its id
//!   (base64): PNG, JPEG or GIF by their first bytes, at most [`MAX_IMAGE_BYTES`] each and
//!   [`MAX_IMAGES`] in all; one past a limit, or missing, is left out and the book's warnings
//!   say so.

use std::collections::{HashMap, HashSet};

use base64::Engine;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::archive::{Archive, Limits};
use crate::budget::Budget;
use crate::error::FormatError;
use crate::limits;
use crate::manuscript::{
    join_title_pages, Block, BlockKind, Chapter, Group, GroupKind, Manuscript,
};
use crate::markup::MarkupBuilder;
use crate::xhtml::unescape_lenient;

/// Deeper nesting than this is hostile or broken, not a book.
pub const MAX_DEPTH: usize = 256;
/// Images one book may carry.
pub const MAX_IMAGES: usize = 500;
/// Bytes of one image, decoded.
pub const MAX_IMAGE_BYTES: usize = 8 << 20;

/// Reads a FictionBook 2 file within the default [`Budget`].
pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    extract_within(bytes, Budget::default())
}

/// Reads a FictionBook 2 file, or a zip archive of one within `budget`.
pub fn extract_within(bytes: &[u8], budget: Budget) -> Result<Manuscript, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        let mut archive = Archive::open(bytes, Limits::for_file(bytes.len(), budget))?;
        let name = archive
            .names()
            .into_iter()
            .find(|n| n.to_ascii_lowercase().ends_with(".fb2"))
            .ok_or_else(|| FormatError::Malformed("the zip archive holds no .fb2 file".into()))?;
        let inner = archive.read(&name)?.unwrap_or_default();
        return read(&decode(&inner));
    }
    read(&decode(bytes))
}

/// The document as text, in the encoding its byte-order mark or XML declaration names (Russian
/// books are often Windows-1251), else UTF-8 when it is, else as [`crate::txt::decode`] reads it.
fn decode(bytes: &[u8]) -> String {
    if encoding_rs::Encoding::for_bom(bytes).is_some() {
        return crate::txt::decode(bytes);
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).to_ascii_lowercase();
    let declared = head
        .strip_prefix("<?xml")
        .and_then(|decl| decl.split("?>").next())
        .and_then(|decl| decl.split_once("encoding"))
        .and_then(|(_, rest)| {
            let rest = rest.trim_start().strip_prefix('=')?.trim_start();
            let quote = rest.chars().next()?;
            rest[1..].split(quote).next().map(str::to_string)
        })
        .and_then(|label| encoding_rs::Encoding::for_label(label.trim().as_bytes()));
    match declared {
        Some(encoding) if encoding != encoding_rs::UTF_8 => {
            encoding.decode_without_bom_handling(bytes).0.into_owned()
        }
        _ => crate::txt::decode(bytes),
    }
}

fn read(source: &str) -> Result<Manuscript, FormatError> {
    let mut reader = Reader::from_str(source);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.expand_empty_elements = false;
    let mut walker = Walker::default();
    loop {
        let event = reader.read_event().map_err(|e| {
            FormatError::Malformed(format!(
                "not well-formed FictionBook XML: {e} at byte {}",
                reader.buffer_position()
            ))
        })?;
        match event {
            Event::Start(e) => walker.start(&e, false)?,
            Event::Empty(e) => walker.start(&e, true)?,
            Event::End(_) => walker.end()?,
            // A binary's base64 has no entities: taken as it is, not copied.
            Event::Text(e) if walker.in_binary() => walker.text(&String::from_utf8_lossy(&e))?,
            Event::Text(e) => walker.text(&unescape_lenient(&String::from_utf8_lossy(&e)))?,
            Event::CData(e) => walker.text(&String::from_utf8_lossy(&e))?,
            Event::Eof => break,
            // Comments, processing instructions and the DOCTYPE (whose entity declarations are
            // never expanded) carry no content.
            _ => {}
        }
    }
    walker.finish()
}

/// What an open element is to the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    Description,
    /// A `<body>`; true for the notes.
    Body {
        notes: bool,
    },
    Section,
    /// A title: its paragraphs are one heading.
    Title,
    /// A block of text: `p`, `v`, `subtitle`, `text-author`, `date`, a table cell.
    Text,
    /// A container that groups its blocks (a quotation or a poem).
    Group(Group),
    Table,
    Row,
    /// An inline mark, closed at the element's end.
    Mark(&'static str),
    /// A link that made no mark (an unsafe target): nothing to close.
    Unmarked,
    /// A note reference: its text (the note's number) is not the book's.
    NoteRef,
    /// A `<binary>`: its text is an image's bytes, in base64.
    Binary(String),
    /// Anything else: transparent.
    Plain,
    /// Left out with everything inside (a style sheet, the document's own history).
    Skip,
}

struct Open {
    name: String,
    role: Role,
    id: Option<String>,
}

/// A block of the main body, or where one of its sections starts.
enum Item {
    Section(usize),
    Block(Block),
}

#[derive(Default)]
struct Walker {
    stack: Vec<Open>,
    text: MarkupBuilder,
    /// Ids waiting for the next block.
    anchors: Vec<String>,
    items: Vec<Item>,
    notes: Vec<Block>,
    notes_title: Option<String>,
    blocks: usize,
    groups: u32,
    tables: u32,
    row: u32,
    col: u32,
    /// Metadata being read: the element path's text, by field.
    meta: Meta,
    /// Base64 of each `<binary>`, by id; None for one past a limit.
    binaries: HashMap<String, Option<String>>,
    /// The binary id of each image block, by where the block is.
    images: Vec<(ImageAt, String)>,
}

/// Where an image block is: among the main body's items, or the notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ImageAt {
    Item(usize),
    Note(usize),
}

#[derive(Default)]
struct Meta {
    title: String,
    author: Vec<String>,
    authors: usize,
    language: String,
    cover: Option<String>,
}

impl Walker {
    fn start(&mut self, e: &BytesStart<'_>, empty: bool) -> Result<(), FormatError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(FormatError::Malformed(format!(
                "the FictionBook is nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let name = String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase();
        if self.skipping() {
            if !empty {
                self.push(name, Role::Skip, None);
            }
            return Ok(());
        }
        let id = attr(e, "id");
        let role = self.role(&name, e);
        if let Some(id) = id.clone().filter(|_| !matches!(role, Role::Binary(_))) {
            self.anchors.push(id);
        }
        match &role {
            Role::Section if self.in_main_body() => {
                self.flush()?;
                let depth = self.depth() + 1;
                self.items.push(Item::Section(depth));
            }
            Role::Title | Role::Text | Role::Group(_) | Role::Table | Role::Section => {
                self.flush()?
            }
            _ => {}
        }
        if name == "image" && !self.in_text() && !self.in_description() {
            self.image(e)?;
        }
        if name == "empty-line" {
            self.flush()?;
        }
        if empty {
            if let Role::Mark(mark) = role {
                self.text.close(mark);
            }
            return Ok(());
        }
        self.push(name, role, id);
        Ok(())
    }

    fn push(&mut self, name: String, role: Role, id: Option<String>) {
        self.stack.push(Open { name, role, id });
    }

    /// What the element `name` is, at this place; opens its mark.
    fn role(&mut self, name: &str, e: &BytesStart<'_>) -> Role {
        if self.in_description() {
            if name == "image" && self.open("coverpage") {
                self.meta.cover = attr(e, "href").map(|h| h.trim_start_matches('#').to_string());
            }
            if name == "author" && self.open("title-info") {
                self.meta.authors += 1;
            }
            return Role::Plain;
        }
        match name {
            "description" => Role::Description,
            "body" => Role::Body {
                notes: matches!(attr(e, "name").as_deref(), Some("notes" | "comments")),
            },
            "section" => Role::Section,
            "title" => Role::Title,
            "p" if self.open_title() => Role::Plain,
            "p" | "v" | "subtitle" | "text-author" | "date" | "td" | "th" => Role::Text,
            "epigraph" | "cite" | "annotation" => self.group(GroupKind::Quote),
            "poem" | "stanza" => self.group(GroupKind::Verse),
            "table" => {
                self.tables += 1;
                self.row = 0;
                Role::Table
            }
            "tr" => {
                self.col = 0;
                Role::Row
            }
            "emphasis" => self.mark("i"),
            "strong" => self.mark("b"),
            "sup" => self.mark("sup"),
            "sub" => self.mark("sub"),
            "code" => self.mark("code"),
            "a" => self.link(e),
            "binary" => Role::Binary(attr(e, "id").unwrap_or_default()),
            "stylesheet" => Role::Skip,
            _ => Role::Plain,
        }
    }

    fn group(&mut self, kind: GroupKind) -> Role {
        self.groups += 1;
        Role::Group(Group {
            kind,
            n: self.groups,
        })
    }

    fn mark(&mut self, name: &'static str) -> Role {
        self.text.open(name, None);
        Role::Mark(name)
    }

    /// A link: a note's reference, else a mark to its target (an unsafe one makes none).
    fn link(&mut self, e: &BytesStart<'_>) -> Role {
        let href = attr(e, "href").unwrap_or_default();
        if attr(e, "type").as_deref() == Some("note") {
            if let Some(id) = href.strip_prefix('#') {
                self.text.note_ref(id);
                return Role::NoteRef;
            }
        }
        let before = self.text.markup_len();
        self.text.open("a", Some(&href));
        if self.text.markup_len() == before {
            Role::Unmarked
        } else {
            Role::Mark("a")
        }
    }

    fn end(&mut self) -> Result<(), FormatError> {
        let Some(open) = self.stack.pop() else {
            return Ok(());
        };
        match open.role {
            Role::Mark(mark) => self.text.close(mark),
            Role::Text => {
                self.flush_as(&open)?;
                if matches!(open.name.as_str(), "td" | "th") {
                    self.col += 1;
                }
            }
            Role::Title if self.in_notes() => self.notes_title(),
            Role::Title => self.flush_as(&open)?,
            Role::Row => self.row += 1,
            Role::Section | Role::Group(_) | Role::Table | Role::Body { .. } => self.flush()?,
            Role::Plain if open.name == "p" => self.text.line_break(),
            _ => {}
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), FormatError> {
        if self.skipping() || self.stack.iter().any(|o| o.role == Role::NoteRef) {
            return Ok(());
        }
        if let Some(Open {
            role: Role::Binary(id),
            ..
        }) = self.stack.last()
        {
            let id = id.clone();
            self.binary(id, text);
            return Ok(());
        }
        if self.in_description() {
            self.metadata(text);
            return Ok(());
        }
        if self.in_body() {
            self.text.text(text);
        }
        if self.text.markup_len() > 4 * limits::MAX_BLOCK_CHARS {
            return Err(limits::paragraph_too_long());
        }
        Ok(())
    }

    /// Text of the description: the fields the book's metadata takes.
    fn metadata(&mut self, text: &str) {
        if !self.open("title-info") {
            return;
        }
        let inner = self
            .stack
            .last()
            .map(|o| o.name.as_str())
            .unwrap_or_default();
        match inner {
            "book-title" => self.meta.title.push_str(text),
            "lang" => self.meta.language.push_str(text),
            "first-name" | "middle-name" | "last-name" | "nickname"
                if self.meta.authors == 1 && self.open("author") =>
            {
                self.meta.author.push(text.trim().to_string())
            }
            _ => {}
        }
    }

    /// Text of a `<binary>`: kept while the book has room for it.
    fn binary(&mut self, id: String, text: &str) {
        const MAX_BASE64: usize = MAX_IMAGE_BYTES / 3 * 4 + 4096;
        let room = self.binaries.len() < MAX_IMAGES || self.binaries.contains_key(&id);
        let entry = self
            .binaries
            .entry(id)
            .or_insert_with(|| Some(String::new()));
        match entry {
            Some(held) if room && held.len() + text.len() <= MAX_BASE64 => held.push_str(text),
            _ => *entry = None,
        }
    }

    /// A block image: an image block, its binary found at the end.
    fn image(&mut self, e: &BytesStart<'_>) -> Result<(), FormatError> {
        self.flush()?;
        let Some(target) = attr(e, "href").and_then(|h| h.strip_prefix('#').map(str::to_string))
        else {
            return Ok(());
        };
        let alt = attr(e, "alt")
            .or_else(|| attr(e, "title"))
            .unwrap_or_default();
        let mut builder = MarkupBuilder::default();
        builder.text(&alt);
        let block = Block::new(
            BlockKind::Image {
                asset: target.clone(),
            },
            builder.take(),
        );
        let at = match self.add(block)? {
            Some(at) => at,
            None => return Ok(()),
        };
        self.images.push((at, target));
        Ok(())
    }

    /// A title in the notes: the notes' own is the chapter's title; a note's is its number,
    /// which renderers make.
    fn notes_title(&mut self) {
        let title = crate::markup::plain_text(&self.text.take());
        if self.depth() == 0 {
            self.notes_title = Some(fold(&title)).filter(|t| !t.is_empty());
        }
    }

    /// Ends the block being read, if it has text, as a paragraph in its context.
    fn flush(&mut self) -> Result<(), FormatError> {
        if self.text.is_blank() {
            self.text.take();
            return Ok(());
        }
        let kind = self.kind(None);
        let text = self.text.take();
        self.add(Block::new(kind, text)).map(|_| ())
    }

    /// Ends the block of the element that just closed (a paragraph, a line, a title ...).
    fn flush_as(&mut self, open: &Open) -> Result<(), FormatError> {
        if self.text.is_blank() {
            self.text.take();
            return Ok(());
        }
        let kind = self.kind(Some(open));
        let mut text = self.text.take();
        if let Some(kept) = text.strip_suffix("<br/>") {
            text = kept.to_string();
        }
        self.add(Block::new(kind, text)).map(|_| ())
    }

    /// The kind of a block of `element` (None: loose text) in what is open around it.
    fn kind(&self, element: Option<&Open>) -> BlockKind {
        let name = element.map_or("", |o| o.name.as_str());
        let depth = self.depth();
        let heading = |extra: usize| BlockKind::Heading {
            level: (depth + extra).clamp(1, 6) as u8,
        };
        let in_group = self.stack.iter().any(|o| matches!(o.role, Role::Group(_)));
        match name {
            "title" if in_group => heading(2),
            "title" => heading(1),
            "subtitle" => heading(2),
            "v" => BlockKind::Line,
            "td" | "th" => BlockKind::TableCell {
                table: self.tables,
                row: self.row,
                col: self.col,
                header: name == "th",
            },
            _ => {
                let quoted = self.stack.iter().any(|o| {
                    matches!(
                        o.role,
                        Role::Group(Group {
                            kind: GroupKind::Quote,
                            ..
                        })
                    )
                });
                if quoted {
                    BlockKind::Quote
                } else {
                    BlockKind::Paragraph
                }
            }
        }
    }

    /// Adds a block of the body it is in; where it went.
    fn add(&mut self, mut block: Block) -> Result<Option<ImageAt>, FormatError> {
        if !self.in_body() {
            return Ok(None);
        }
        self.blocks += 1;
        if self.blocks > limits::MAX_BLOCKS {
            return Err(limits::too_many_blocks());
        }
        block.groups = self
            .stack
            .iter()
            .filter_map(|o| match o.role {
                Role::Group(group) => Some(group),
                _ => None,
            })
            .collect();
        if self.in_notes() {
            let note = self
                .stack
                .iter()
                .rev()
                .find(|o| o.role == Role::Section)
                .and_then(|o| o.id.clone());
            if let (Some(id), false) = (note, matches!(block.kind, BlockKind::Image { .. })) {
                block.kind = BlockKind::Footnote { id };
                block.groups.clear();
            }
            self.anchors.clear();
            self.notes.push(block);
            return Ok(Some(ImageAt::Note(self.notes.len() - 1)));
        }
        block.anchors = std::mem::take(&mut self.anchors);
        self.items.push(Item::Block(block));
        Ok(Some(ImageAt::Item(self.items.len() - 1)))
    }

    fn open(&self, name: &str) -> bool {
        self.stack.iter().any(|o| o.name == name)
    }

    fn open_title(&self) -> bool {
        self.stack.last().is_some_and(|o| o.role == Role::Title)
    }

    fn in_description(&self) -> bool {
        self.stack.iter().any(|o| o.role == Role::Description)
    }

    fn in_text(&self) -> bool {
        self.stack
            .iter()
            .any(|o| matches!(o.role, Role::Text | Role::Title))
    }

    fn in_body(&self) -> bool {
        self.stack
            .iter()
            .any(|o| matches!(o.role, Role::Body { .. }))
    }

    fn in_notes(&self) -> bool {
        self.stack
            .iter()
            .any(|o| o.role == Role::Body { notes: true })
    }

    fn in_main_body(&self) -> bool {
        self.in_body() && !self.in_notes()
    }

    fn in_binary(&self) -> bool {
        self.stack
            .last()
            .is_some_and(|o| matches!(o.role, Role::Binary(_)))
    }

    fn skipping(&self) -> bool {
        self.stack.last().is_some_and(|o| o.role == Role::Skip)
    }

    /// How many sections are open.
    fn depth(&self) -> usize {
        self.stack
            .iter()
            .filter(|o| o.role == Role::Section)
            .count()
    }

    /// The book: chapters from the main body's sections, the notes last, images from their
    /// binaries.
    fn finish(mut self) -> Result<Manuscript, FormatError> {
        self.flush()?;
        let mut manuscript = Manuscript {
            title: Some(fold(&self.meta.title)).filter(|t| !t.is_empty()),
            author: Some(fold(&self.meta.author.join(" "))).filter(|a| !a.is_empty()),
            language: Some(fold(&self.meta.language)).filter(|l| !l.is_empty()),
            ..Manuscript::default()
        };
        let (kept, warnings) = self.images(&mut manuscript);
        manuscript.warnings = warnings;
        let mut chapters = join_title_pages(into_chapters(self.items, &kept));
        let notes: Vec<Block> = self
            .notes
            .into_iter()
            .enumerate()
            .filter(|(i, b)| {
                !matches!(b.kind, BlockKind::Image { .. }) || kept.contains(&ImageAt::Note(*i))
            })
            .map(|(_, b)| b)
            .collect();
        if !notes.is_empty() {
            chapters.push(Chapter {
                title: Some(self.notes_title.unwrap_or_else(|| "Notes".into())),
                blocks: notes,
            });
        }
        manuscript.chapters = chapters;
        if manuscript.word_count() == 0 {
            return Err(FormatError::NoText);
        }
        manuscript.prune_anchors();
        manuscript.detect_language_if_missing();
        Ok(manuscript)
    }

    /// Decodes the images the blocks show into the manuscript's assets, pointing each block at
    /// its asset; returns the blocks that have theirs, and what was left out.
    fn images(&mut self, manuscript: &mut Manuscript) -> (HashSet<ImageAt>, Vec<String>) {
        let mut kept = HashSet::new();
        let mut warnings = Vec::new();
        let mut assets: HashMap<String, Option<String>> = HashMap::new();
        let cover = self.meta.cover.clone();
        let wanted = cover
            .clone()
            .into_iter()
            .chain(self.images.iter().map(|(_, id)| id.clone()));
        for id in wanted.collect::<Vec<_>>() {
            if assets.contains_key(&id) {
                continue;
            }
            let asset = match self.binaries.remove(&id) {
                Some(Some(base64)) => match image(&base64) {
                    Some((extension, bytes)) => Some(manuscript.add_asset(
                        &format!("{id}.{extension}"),
                        media(extension),
                        bytes,
                    )),
                    None => {
                        warnings.push(format!(
                            "image '{id}' left out: not a PNG, JPEG or GIF image"
                        ));
                        None
                    }
                },
                Some(None) => {
                    warnings.push(format!(
                        "image '{id}' left out: past the limit of {MAX_IMAGES} images of {} MiB each",
                        MAX_IMAGE_BYTES >> 20
                    ));
                    None
                }
                None => {
                    warnings.push(format!("image '{id}' left out: the book does not hold it"));
                    None
                }
            };
            assets.insert(id, asset);
        }
        manuscript.cover = cover.and_then(|id| assets.get(&id).cloned().flatten());
        for (at, id) in &self.images {
            let Some(Some(asset)) = assets.get(id) else {
                continue;
            };
            let block = match at {
                ImageAt::Item(i) => match self.items.get_mut(*i) {
                    Some(Item::Block(block)) => block,
                    _ => continue,
                },
                ImageAt::Note(i) => match self.notes.get_mut(*i) {
                    Some(block) => block,
                    None => continue,
                },
            };
            block.kind = BlockKind::Image {
                asset: asset.clone(),
            };
            kept.insert(*at);
        }
        (kept, warnings)
    }
}

/// The image's extension and bytes: base64 of a PNG, JPEG or GIF within the limit.
fn image(base64: &str) -> Option<(&'static str, Vec<u8>)> {
    let compact: Vec<u8> = base64
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return None;
    }
    let extension = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if bytes.starts_with(b"\xFF\xD8\xFF") {
        "jpg"
    } else if bytes.starts_with(b"GIF8") {
        "gif"
    } else {
        return None;
    };
    Some((extension, bytes))
}

fn media(extension: &str) -> String {
    crate::manuscript::media_type_of(&format!("x.{extension}"))
}

/// The blocks cut into chapters at the sections of the chapter depth and shallower: the
/// shallowest depth at which the body has two sections or more. Image blocks without their
/// image are left out.
fn into_chapters(items: Vec<Item>, kept: &HashSet<ImageAt>) -> Vec<Chapter> {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for item in &items {
        if let Item::Section(depth) = item {
            *counts.entry(*depth).or_default() += 1;
        }
    }
    let split = (1..=MAX_DEPTH)
        .take_while(|d| counts.contains_key(d))
        .find(|d| counts.get(d).copied().unwrap_or(0) >= 2)
        .unwrap_or(0);
    let mut chapters = Vec::new();
    let mut current = Chapter::default();
    for (i, item) in items.into_iter().enumerate() {
        match item {
            Item::Section(depth) if depth <= split => {
                if !current.blocks.is_empty() {
                    chapters.push(std::mem::take(&mut current));
                }
            }
            Item::Section(_) => {}
            Item::Block(block) => {
                if matches!(block.kind, BlockKind::Image { .. })
                    && !kept.contains(&ImageAt::Item(i))
                {
                    continue;
                }
                if current.title.is_none() && matches!(block.kind, BlockKind::Heading { .. }) {
                    current.title = Some(block.plain_text()).filter(|t| !t.trim().is_empty());
                }
                current.blocks.push(block);
            }
        }
    }
    if !current.blocks.is_empty() {
        chapters.push(current);
    }
    chapters
}

/// The value of the attribute of local name `name` (`l:href`, `xlink:href` and `href` alike),
/// its entities resolved.
fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref() == name.as_bytes())
            .then(|| unescape_lenient(&String::from_utf8_lossy(&a.value)))
    })
}

/// White space folded to single spaces, trimmed.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
