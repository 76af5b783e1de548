//! Markdown books: CommonMark with GitHub's tables, footnotes and strikethrough, and a YAML
//! front matter for the title, author and language (as pandoc writes it), read by
//! pulldown-cmark.
//!
//! Chapters start at headings of one level: the highest level the book uses at least twice,
//! the level that splits it into chapters (a book with one `#` title and `##` chapters splits
//! at `##`; one with several `#` chapters at `#`). A heading of a higher level starts a chapter
//! too (the lone title, with what follows it). A book with no level used twice is one chapter.
//! A chapter of headings alone (a title page) opens the chapter after it.
//!
//! Blocks: paragraphs, headings, list items, block quotes (their paragraphs in a quote group),
//! table cells, footnotes. Code blocks are preformatted blocks of `<code>` and inline code is
//! `<code>`: kept as they are and never sent for translation. Emphasis, strong emphasis and
//! links are marks; strikethrough keeps its text. A small set of inline HTML is read as the
//! marks it means (`em`, `strong`, `sup`, `sub`, `code`, `br`, `a`, a `span` with a class, such
//! as pandoc's line numbers); other inline tags are dropped with their text kept. An HTML block
//! is read as HTML (scripts and styles dropped). Images cannot be fetched: they keep their
//! alternative text, as in an HTML book.

use std::collections::HashMap;

use pulldown_cmark::{Event, HeadingLevel, MetadataBlockKind, Options, Parser, Tag, TagEnd};

use crate::error::FormatError;
use crate::limits;
use crate::manuscript::{
    join_title_pages, Block, BlockKind, Chapter, Group, GroupKind, Manuscript,
};
use crate::markup::{escape_text, MarkupBuilder};
use crate::xhtml;

/// Deeper nesting of quotes and lists, or of emphasis and links, than this is hostile, not a
/// book (and inline marks nested thousands deep would cost the PDF writer minutes).
pub const MAX_DEPTH: usize = 64;

/// Lines and marks (the characters that open or close inline constructs) in one book. The
/// parser builds its whole tree before the first event, about a hundred bytes for each line and
/// each mark: a few megabytes of `*a` or of empty lines would take gigabytes. A 3,000,000-word
/// book has some 300,000 lines and far fewer marks.
pub const MAX_MARKS: usize = 1_000_000;

/// Reads a Markdown book.
pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let source = crate::txt::decode(bytes);
    let marks = source
        .bytes()
        .filter(|b| {
            matches!(
                b,
                b'\n'
                    | b'*'
                    | b'_'
                    | b'['
                    | b']'
                    | b'`'
                    | b'<'
                    | b'>'
                    | b'!'
                    | b'~'
                    | b'|'
                    | b'&'
                    | b'\\'
            )
        })
        .count();
    if marks > MAX_MARKS {
        return Err(FormatError::TooLarge(format!(
            "the Markdown has more than {MAX_MARKS} lines and marks (`*`, `_`, `[`, `<`, `|` ...), \
             the limit for one book"
        )));
    }
    let mut walker = Walker::default();
    for event in Parser::new_ext(&source, options()) {
        walker.event(event)?;
    }
    walker.flush()?;
    let front = FrontMatter::parse(&walker.metadata);
    let mut manuscript = Manuscript {
        title: front.title,
        author: front.author,
        language: front.language,
        chapters: join_title_pages(into_chapters(walker.blocks)),
        ..Manuscript::default()
    };
    if manuscript.word_count() == 0 {
        return Err(FormatError::NoText);
    }
    manuscript.prune_anchors();
    manuscript.detect_language_if_missing();
    Ok(manuscript)
}

/// What the reader parses: GitHub's extensions that books use, heading ids (`{#id}`, for
/// in-book links) and a YAML front matter. No math, no super- or subscript (`~x~` is GitHub's
/// strikethrough).
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
}

/// The block containers open around the text being read.
#[derive(Debug, Clone)]
enum Container {
    Quote(Group),
    List { ordered: bool },
    Item,
    Note(String),
}

/// Where in a table the reader is.
#[derive(Debug, Default, Clone, Copy)]
struct TablePlace {
    table: u32,
    row: u32,
    col: u32,
    header: bool,
}

#[derive(Default)]
struct Walker {
    blocks: Vec<Block>,
    stack: Vec<Container>,
    text: MarkupBuilder,
    /// The heading being read: its level and `{#id}`.
    heading: Option<(u8, Option<String>)>,
    /// The code block or HTML block being read, verbatim.
    verbatim: Option<(Verbatim, String)>,
    metadata: String,
    in_metadata: bool,
    table: Option<TablePlace>,
    tables: u32,
    groups: u32,
    /// Footnote ids by normalised label, in order of first mention.
    notes: HashMap<String, String>,
    /// Inline `span`s open: whether each became a mark.
    spans: Vec<bool>,
    /// Emphasis, strong emphasis, strikethrough, links and images open.
    inline_depth: usize,
    /// Marks of inline HTML open (closed or not: inline HTML need not balance).
    html_depth: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verbatim {
    Code,
    Html,
}

impl Walker {
    fn event(&mut self, event: Event<'_>) -> Result<(), FormatError> {
        match event {
            Event::Start(tag) => self.start(tag)?,
            Event::End(tag) => self.end(tag)?,
            Event::Text(text) | Event::Html(text) if self.verbatim.is_some() => {
                if let Some((_, held)) = &mut self.verbatim {
                    held.push_str(&text);
                }
            }
            Event::Text(text) if self.in_metadata => self.metadata.push_str(&text),
            Event::Text(text) => self.text.text(&text),
            Event::Code(code) => {
                self.text.open("code", None);
                self.text.text(&code);
                self.text.close("code");
            }
            Event::InlineHtml(tag) | Event::Html(tag) => self.inline_html(&tag),
            Event::FootnoteReference(label) => {
                let id = self.note_id(&label);
                self.text.note_ref(&id);
            }
            Event::SoftBreak => self.text.text(" "),
            Event::HardBreak => self.text.line_break(),
            Event::Rule => self.flush()?,
            Event::TaskListMarker(done) => self.text.text(if done { "[x] " } else { "[ ] " }),
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text.text(&text),
        }
        if self.text.markup_len() > 4 * limits::MAX_BLOCK_CHARS {
            return Err(limits::paragraph_too_long());
        }
        Ok(())
    }

    fn start(&mut self, tag: Tag<'_>) -> Result<(), FormatError> {
        if matches!(
            tag,
            Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. } | Tag::Image { .. }
        ) {
            self.inline_depth += 1;
            if self.inline_depth > MAX_DEPTH {
                return Err(too_deep());
            }
        }
        match tag {
            Tag::Paragraph => self.flush()?,
            Tag::Heading { level, id, .. } => {
                self.flush()?;
                self.heading = Some((heading_level(level), id.map(|id| id.to_string())));
            }
            Tag::BlockQuote(_) => {
                self.flush()?;
                self.groups += 1;
                self.push(Container::Quote(Group {
                    kind: GroupKind::Quote,
                    n: self.groups,
                }))?;
            }
            Tag::CodeBlock(_) => {
                self.flush()?;
                self.verbatim = Some((Verbatim::Code, String::new()));
            }
            Tag::HtmlBlock => {
                self.flush()?;
                self.verbatim = Some((Verbatim::Html, String::new()));
            }
            Tag::List(start) => {
                self.flush()?;
                self.push(Container::List {
                    ordered: start.is_some(),
                })?;
            }
            Tag::Item => {
                self.flush()?;
                self.push(Container::Item)?;
            }
            Tag::FootnoteDefinition(label) => {
                self.flush()?;
                let id = self.note_id(&label);
                self.push(Container::Note(id))?;
            }
            Tag::Table(_) => {
                self.flush()?;
                self.tables += 1;
                self.table = Some(TablePlace {
                    table: self.tables,
                    ..TablePlace::default()
                });
            }
            Tag::TableHead => self.set_table(|t| t.header = true),
            Tag::TableRow => self.set_table(|t| t.col = 0),
            Tag::TableCell => self.flush()?,
            Tag::Emphasis => self.text.open("i", None),
            Tag::Strong => self.text.open("b", None),
            Tag::Link { dest_url, .. } => self.text.open("a", Some(&dest_url)),
            Tag::MetadataBlock(MetadataBlockKind::YamlStyle) => self.in_metadata = true,
            // Strikethrough keeps its text; an image its alternative text (its only content).
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, tag: TagEnd) -> Result<(), FormatError> {
        if matches!(
            tag,
            TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link
                | TagEnd::Image
        ) {
            self.inline_depth = self.inline_depth.saturating_sub(1);
        }
        match tag {
            TagEnd::Paragraph | TagEnd::Heading(_) => self.flush()?,
            TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition => {
                self.flush()?;
                self.stack.pop();
            }
            TagEnd::CodeBlock => self.code_block()?,
            TagEnd::HtmlBlock => self.html_block()?,
            TagEnd::Table => {
                self.flush()?;
                self.table = None;
            }
            TagEnd::TableHead => self.set_table(|t| {
                t.header = false;
                t.row += 1;
            }),
            TagEnd::TableRow => self.set_table(|t| t.row += 1),
            TagEnd::TableCell => {
                self.flush()?;
                self.set_table(|t| t.col += 1);
            }
            TagEnd::Emphasis => self.text.close("i"),
            TagEnd::Strong => self.text.close("b"),
            TagEnd::Link => self.text.close("a"),
            TagEnd::MetadataBlock(_) => self.in_metadata = false,
            _ => {}
        }
        Ok(())
    }

    fn set_table(&mut self, change: impl FnOnce(&mut TablePlace)) {
        if let Some(place) = &mut self.table {
            change(place);
        }
    }

    fn push(&mut self, container: Container) -> Result<(), FormatError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(too_deep());
        }
        self.stack.push(container);
        Ok(())
    }

    /// The id of the footnote labelled `label`: labels match as CommonMark matches them
    /// (case and runs of white space aside), and become ids a book can carry.
    fn note_id(&mut self, label: &str) -> String {
        let key = label
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        let next = self.notes.len() + 1;
        self.notes
            .entry(key)
            .or_insert_with(|| format!("fn{next}"))
            .clone()
    }

    /// The kind of block the text read so far makes, from what holds it.
    fn kind(&self) -> BlockKind {
        if let Some((level, _)) = self.heading {
            return BlockKind::Heading { level };
        }
        if let Some(place) = self.table {
            return BlockKind::TableCell {
                table: place.table,
                row: place.row,
                col: place.col,
                header: place.header,
            };
        }
        for (i, container) in self.stack.iter().enumerate().rev() {
            match container {
                Container::Note(id) => return BlockKind::Footnote { id: id.clone() },
                Container::Item => {
                    let lists = self.stack[..i].iter().rev();
                    let ordered = lists
                        .clone()
                        .find_map(|c| match c {
                            Container::List { ordered } => Some(*ordered),
                            _ => None,
                        })
                        .unwrap_or(false);
                    let depth = self
                        .stack
                        .iter()
                        .filter(|c| matches!(c, Container::List { .. }))
                        .count();
                    return BlockKind::ListItem {
                        ordered,
                        depth: depth.clamp(1, 9) as u8,
                    };
                }
                Container::Quote(_) => return BlockKind::Quote,
                Container::List { .. } => {}
            }
        }
        BlockKind::Paragraph
    }

    /// The quotes around the text, outermost first (a note's own quotes only).
    fn groups(&self) -> Vec<Group> {
        let from = self
            .stack
            .iter()
            .rposition(|c| matches!(c, Container::Note(_)))
            .map_or(0, |p| p + 1);
        self.stack[from..]
            .iter()
            .filter_map(|c| match c {
                Container::Quote(group) => Some(*group),
                _ => None,
            })
            .collect()
    }

    /// Ends the block being read, if it has any text.
    fn flush(&mut self) -> Result<(), FormatError> {
        let kind = self.kind();
        let anchors = match self.heading.take() {
            Some((_, Some(id))) => vec![id],
            _ => Vec::new(),
        };
        self.spans.clear();
        self.html_depth = 0;
        if self.text.is_blank() {
            self.text.take();
            return Ok(());
        }
        let text = self.text.take();
        let mut block = Block::new(kind, text);
        block.anchors = anchors;
        block.groups = self.groups();
        self.add(block)
    }

    fn add(&mut self, block: Block) -> Result<(), FormatError> {
        if self.blocks.len() >= limits::MAX_BLOCKS {
            return Err(limits::too_many_blocks());
        }
        self.blocks.push(block);
        Ok(())
    }

    /// A code block: preformatted, its text kept as it is (spacing included) and never
    /// translated.
    fn code_block(&mut self) -> Result<(), FormatError> {
        let Some((_, code)) = self.verbatim.take() else {
            return Ok(());
        };
        let code = code.strip_suffix('\n').unwrap_or(&code);
        if code.trim().is_empty() {
            return Ok(());
        }
        if code.chars().count() > limits::MAX_BLOCK_CHARS {
            return Err(limits::paragraph_too_long());
        }
        let lines: Vec<String> = code.split('\n').map(escape_text).collect();
        let mut block = Block::new(
            BlockKind::Preformatted,
            format!("<code>{}</code>", lines.join("<br/>")),
        );
        block.groups = self.groups();
        self.add(block)
    }

    /// An HTML block, read as HTML: its blocks join the book's, inside the quotes around it.
    fn html_block(&mut self) -> Result<(), FormatError> {
        let Some((_, html)) = self.verbatim.take() else {
            return Ok(());
        };
        let context = xhtml::Context {
            path: "index.md",
            max_blocks: limits::MAX_BLOCKS.saturating_sub(self.blocks.len()),
        };
        let document = xhtml::parse(&html, &context)?;
        let around = self.groups();
        // The block's own groups are numbered after the book's, so that none is taken for one
        // read before.
        let offset = self.groups;
        for mut block in document.blocks {
            if let BlockKind::Image { .. } = block.kind {
                if block.text.is_empty() {
                    continue;
                }
                block.kind = BlockKind::Paragraph;
            }
            for group in &mut block.groups {
                group.n += offset;
                self.groups = self.groups.max(group.n);
            }
            let mut groups = around.clone();
            groups.append(&mut block.groups);
            block.groups = groups;
            self.add(block)?;
        }
        Ok(())
    }

    /// A tag of inline HTML: the marks it means, and nothing for the others (their text is
    /// kept).
    fn inline_html(&mut self, raw: &str) {
        let Some(tag) = HtmlTag::parse(raw) else {
            return;
        };
        // Past the limit an opening tag is dropped (its text kept) rather than the book refused:
        // inline HTML need not balance.
        if tag.closing {
            self.html_depth = self.html_depth.saturating_sub(1);
        } else if tag.name != "br" {
            if self.html_depth >= MAX_DEPTH {
                return;
            }
            self.html_depth += 1;
        }
        let mark = match tag.name.as_str() {
            "em" | "i" | "cite" => "i",
            "strong" | "b" => "b",
            "sup" => "sup",
            "sub" => "sub",
            "code" | "kbd" | "samp" | "tt" => "code",
            "a" => "a",
            "br" => {
                self.text.line_break();
                return;
            }
            "span" if tag.closing => {
                if self.spans.pop() == Some(true) {
                    self.text.close_span();
                }
                return;
            }
            "span" => {
                let class = tag.attr("class");
                if let Some(class) = &class {
                    self.text.open("span", Some(class));
                }
                self.spans.push(class.is_some());
                return;
            }
            _ => return,
        };
        match (tag.closing, mark) {
            (true, _) => self.text.close(mark),
            (false, "a") => {
                if let Some(href) = tag.attr("href") {
                    self.text.open("a", Some(&href));
                }
            }
            (false, _) => self.text.open(mark, None),
        }
    }
}

fn too_deep() -> FormatError {
    FormatError::Malformed(format!(
        "the Markdown is nested deeper than {MAX_DEPTH} levels (quotes, lists, emphasis or links)"
    ))
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// One tag of inline HTML, as far as the reader needs it.
struct HtmlTag<'a> {
    name: String,
    closing: bool,
    attrs: &'a str,
}

impl<'a> HtmlTag<'a> {
    /// `<name ...>`, `</name>` or `<name .../>`; None for a comment, a declaration or
    /// anything else.
    fn parse(raw: &'a str) -> Option<HtmlTag<'a>> {
        let inner = raw.trim().strip_prefix('<')?.strip_suffix('>')?;
        let (closing, inner) = match inner.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, inner),
        };
        let end = inner
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(inner.len());
        if end == 0 {
            return None;
        }
        Some(HtmlTag {
            name: inner[..end].to_ascii_lowercase(),
            closing,
            attrs: &inner[end..],
        })
    }

    /// The value of attribute `name`, quoted with `"` or `'`, its entities resolved.
    fn attr(&self, name: &str) -> Option<String> {
        let mut rest = self.attrs;
        while let Some(at) = rest.find('=') {
            let key = rest[..at]
                .trim_end()
                .rsplit(|c: char| c.is_whitespace())
                .next()
                .unwrap_or_default();
            let after = rest[at + 1..].trim_start();
            let quote = after.chars().next().filter(|q| *q == '"' || *q == '\'')?;
            let value_end = after[1..].find(quote)? + 1;
            if key.eq_ignore_ascii_case(name) {
                return Some(xhtml::unescape_lenient(&after[1..value_end]));
            }
            rest = &after[value_end + 1..];
        }
        None
    }
}

/// The front matter's title, author and language (`key: value` lines; other keys, and values
/// that are not on one line, are left alone).
#[derive(Debug, Default, PartialEq, Eq)]
struct FrontMatter {
    title: Option<String>,
    author: Option<String>,
    language: Option<String>,
}

impl FrontMatter {
    fn parse(yaml: &str) -> FrontMatter {
        let mut front = FrontMatter::default();
        for line in yaml.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value)
                .trim();
            if value.is_empty() {
                continue;
            }
            let slot = match key.trim() {
                "title" => &mut front.title,
                "author" => &mut front.author,
                "lang" | "language" => &mut front.language,
                _ => continue,
            };
            slot.get_or_insert_with(|| value.to_string());
        }
        front
    }
}

/// The level chapters start at: the highest heading level used at least twice.
fn chapter_level(blocks: &[Block]) -> Option<u8> {
    let mut counts = [0usize; 7];
    for block in blocks {
        if let BlockKind::Heading { level } = block.kind {
            counts[usize::from(level.min(6))] += 1;
        }
    }
    (1..=6u8).find(|&level| counts[usize::from(level)] >= 2)
}

/// The blocks cut into chapters at the [`chapter_level`]'s headings and the higher ones.
fn into_chapters(blocks: Vec<Block>) -> Vec<Chapter> {
    let level = chapter_level(&blocks).unwrap_or(0);
    let mut chapters: Vec<Chapter> = Vec::new();
    let mut current = Chapter::default();
    for block in blocks {
        let starts = match block.kind {
            BlockKind::Heading { level: l } => l <= level || current.blocks.is_empty(),
            _ => false,
        };
        if starts {
            if !current.blocks.is_empty() {
                chapters.push(std::mem::take(&mut current));
            }
            current.title = Some(block.plain_text()).filter(|t| !t.trim().is_empty());
        }
        current.blocks.push(block);
    }
    if !current.blocks.is_empty() {
        chapters.push(current);
    }
    chapters
}

#[cfg(test)]
mod tests;
