//! DOCX (Office Open XML): paragraphs and their styles, headings as chapter boundaries, bold,
//! italic, super- and subscript, links, bookmarks, footnotes, tables and images.
//!
//! The main document is read as a stream (it can be large); the small parts (styles,
//! relationships, metadata) as trees.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::archive::{Archive, Limits};
use crate::budget::Budget;
use crate::dom;
use crate::error::FormatError;
use crate::manuscript::media_type_of;
use crate::manuscript::{Block, BlockKind, Chapter, Group, GroupKind, Manuscript};
use crate::markup::MarkupBuilder;
use crate::xhtml::resolve;

const DOCUMENT: &str = "word/document.xml";

pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    extract_within(bytes, Budget::default())
}

pub fn extract_within(bytes: &[u8], budget: Budget) -> Result<Manuscript, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    // Password-protected Word files are not zips at all but OLE containers.
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(FormatError::Encrypted);
    }
    let mut zip = Archive::open(bytes, Limits::for_file(bytes.len(), budget))?;
    let document = zip.read_text(DOCUMENT)?.ok_or_else(|| {
        FormatError::Malformed("word/document.xml is missing: not a Word document".into())
    })?;
    let styles = match zip.read_text("word/styles.xml")? {
        Some(xml) => heading_styles(&dom::parse(&xml, "styles.xml")?),
        None => HashMap::new(),
    };
    let rels = relationships(&mut zip, "word/_rels/document.xml.rels")?;

    let mut manuscript = Manuscript::default();
    if let Some(core) = zip.read_text("docProps/core.xml")? {
        let core = dom::parse(&core, "core.xml")?;
        manuscript.title = core
            .first("title")
            .map(|e| e.text())
            .filter(|t| !t.is_empty());
        manuscript.author = core
            .first("creator")
            .map(|e| e.text())
            .filter(|t| !t.is_empty());
        manuscript.language = core
            .first("language")
            .map(|e| e.text())
            .filter(|t| !t.is_empty());
    }

    let body = walk(&document, DOCUMENT, &styles, &rels)?;
    let notes = match zip.read_text("word/footnotes.xml")? {
        Some(xml) => {
            let note_rels = relationships(&mut zip, "word/_rels/footnotes.xml.rels")?;
            walk(&xml, "word/footnotes.xml", &styles, &note_rels)?.blocks
        }
        None => Vec::new(),
    };

    if manuscript.title.is_none() {
        manuscript.title = body.title.clone();
    }
    manuscript.chapters = split_at_headings(body.blocks, notes);
    if manuscript.word_count() == 0 {
        return Err(FormatError::NoText);
    }
    load_images(&mut zip, &mut manuscript)?;
    manuscript.prune_anchors();
    manuscript.detect_language_if_missing();
    Ok(manuscript)
}

/// The "level" of a quotation style ("Quote", "Intense Quote", "Block Text") among the heading
/// levels by style id.
const QUOTE_STYLE: u8 = u8::MAX;

/// Heading level by style id: from the style's outline level, or its name ("heading 2"); 0 for
/// the title, [`QUOTE_STYLE`] for a quotation.
fn heading_styles(styles: &dom::Element) -> HashMap<String, u8> {
    let mut levels = HashMap::new();
    for style in styles.descendants("style") {
        let Some(id) = style.attr("styleid") else {
            continue;
        };
        let name = style
            .first("name")
            .and_then(|n| n.attr("val"))
            .unwrap_or_default()
            .to_ascii_lowercase();
        let outline = style
            .first("outlinelvl")
            .and_then(|o| o.attr("val"))
            .and_then(|v| v.parse::<u8>().ok());
        let level = match outline {
            Some(l) if l < 9 => Some(l + 1),
            _ => name
                .strip_prefix("heading ")
                .and_then(|n| n.trim().parse::<u8>().ok()),
        };
        if let Some(level) = level {
            levels.insert(id.to_string(), level.clamp(1, 6));
        }
        if name == "title" {
            levels.insert(id.to_string(), 0);
        }
        if level.is_none() && matches!(name.as_str(), "quote" | "intense quote" | "block text") {
            levels.insert(id.to_string(), QUOTE_STYLE);
        }
    }
    levels
}

/// Relationship id -> (target, external?).
fn relationships(
    zip: &mut Archive<'_>,
    path: &str,
) -> Result<HashMap<String, (String, bool)>, FormatError> {
    let Some(xml) = zip.read_text(path)? else {
        return Ok(HashMap::new());
    };
    let root = dom::parse(&xml, path)?;
    Ok(root
        .descendants("relationship")
        .into_iter()
        .filter_map(|r| {
            let id = r.attr("id")?.to_string();
            let target = r.attr("target")?.to_string();
            let external = r
                .attr("targetmode")
                .is_some_and(|m| m.eq_ignore_ascii_case("external"));
            let target = if external {
                target
            } else {
                resolve("word/document.xml", &target)
            };
            Some((id, (target, external)))
        })
        .collect())
}

#[derive(Default)]
struct Walked {
    blocks: Vec<Block>,
    /// The text of the paragraph styled "Title", if any.
    title: Option<String>,
    /// Quotations so far, to number the next.
    quotes: u32,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
struct Marks {
    bold: bool,
    italic: bool,
    sup: bool,
    sub: bool,
}

/// Deeper nesting than this is hostile or broken, not a book.
const MAX_DEPTH: usize = 512;

/// Streams a WordprocessingML part into blocks. In footnotes.xml, each note's paragraphs become
/// one footnote block.
fn walk(
    xml: &str,
    what: &str,
    styles: &HashMap<String, u8>,
    rels: &HashMap<String, (String, bool)>,
) -> Result<Walked, FormatError> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = false;
    let mut walker = Walker::new(what, styles, rels);
    loop {
        // Counted as blocks are built, so a paragraph bomb is refused before it fills memory.
        crate::limits::check_blocks(walker.out.blocks.len())?;
        let event = reader.read_event().map_err(|e| {
            FormatError::Malformed(format!("{what}: {e} at byte {}", reader.buffer_position()))
        })?;
        match event {
            Event::Start(e) => walker.start(&e, false)?,
            Event::Empty(e) => walker.start(&e, true)?,
            Event::Text(t) => walker.text(t.as_ref()),
            Event::End(e) => walker.end(&lowercase(e.local_name().as_ref())),
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(walker.out)
}

/// What the walk has read so far of the part, and what it has made of it.
struct Walker<'a> {
    /// The part, for messages.
    what: &'a str,
    /// Heading level (or [`QUOTE_STYLE`]) by style id.
    styles: &'a HashMap<String, u8>,
    /// The part's relationships: hyperlink targets and pictures.
    rels: &'a HashMap<String, (String, bool)>,
    out: Walked,
    /// The paragraph being read.
    text: MarkupBuilder,
    /// Bookmarks since the last block: the next block's anchors.
    anchors: Vec<String>,
    /// The paragraph's heading level, 0 for the title or [`QUOTE_STYLE`], from its style or its
    /// outline level.
    style: Option<u8>,
    /// The paragraph's depth as a list item, when it is one.
    list_depth: Option<u8>,
    /// The marks of the run being read, and those open in `text`.
    run: Marks,
    applied: Marks,
    /// Inside a run's properties (`w:rPr`), where `b`, `i` and `vertAlign` are its marks.
    in_run_props: bool,
    /// Inside a `w:t`, whose text is the run's.
    in_text: bool,
    /// A hyperlink was opened in `text` and is to be closed at its end.
    link_open: bool,
    picture: Picture,
    table: Table,
    /// The footnote being read (footnotes.xml): its id and its paragraphs so far.
    note: Option<(String, MarkupBuilder)>,
    /// Elements open.
    depth: usize,
}

/// The picture of the drawing being read.
#[derive(Default)]
struct Picture {
    /// Its description (or title), the image block's text.
    alt: String,
    /// The relationship that names its file.
    rel: Option<String>,
}

/// Where the walk is in the tables: nested tables are read as the text of the outer cell.
#[derive(Default)]
struct Table {
    /// Top-level tables so far, to number the next.
    count: u32,
    /// Tables open.
    depth: usize,
    /// Position of the current cell in the top-level table.
    row: u32,
    col: u32,
    /// The current cell's paragraphs so far.
    cell: Option<MarkupBuilder>,
}

impl<'a> Walker<'a> {
    fn new(
        what: &'a str,
        styles: &'a HashMap<String, u8>,
        rels: &'a HashMap<String, (String, bool)>,
    ) -> Self {
        Walker {
            what,
            styles,
            rels,
            out: Walked::default(),
            text: MarkupBuilder::default(),
            anchors: Vec::new(),
            style: None,
            list_depth: None,
            run: Marks::default(),
            applied: Marks::default(),
            in_run_props: false,
            in_text: false,
            link_open: false,
            picture: Picture::default(),
            table: Table::default(),
            note: None,
            depth: 0,
        }
    }

    fn start(&mut self, e: &BytesStart<'_>, empty: bool) -> Result<(), FormatError> {
        if !empty {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(FormatError::Malformed(format!(
                    "{}: nested deeper than {MAX_DEPTH} levels",
                    self.what
                )));
            }
        }
        match lowercase(e.local_name().as_ref()).as_str() {
            "p" => {
                self.style = None;
                self.list_depth = None;
            }
            "pstyle" => {
                if let Some(id) = val(e) {
                    self.style = self.styles.get(&id).copied();
                }
            }
            "outlinelvl" => {
                if let Some(level) = val(e).and_then(|v| v.parse::<u8>().ok()).filter(|l| *l < 9) {
                    self.style = Some((level + 1).clamp(1, 6));
                }
            }
            "ilvl" => {
                self.list_depth = val(e)
                    .and_then(|v| v.parse::<u8>().ok())
                    .map(|l| l.saturating_add(1).min(9))
            }
            "numpr" => self.list_depth = self.list_depth.or(Some(1)),
            "r" => self.run = Marks::default(),
            "rpr" if !empty => self.in_run_props = true,
            "b" if self.in_run_props => self.run.bold = on(e),
            "i" if self.in_run_props => self.run.italic = on(e),
            "vertalign" if self.in_run_props => {
                let v = val(e).unwrap_or_default();
                self.run.sup = v == "superscript";
                self.run.sub = v == "subscript";
            }
            "t" if !empty => {
                self.apply_marks(self.run);
                self.in_text = true;
            }
            "tab" if !self.in_run_props => self.text.text(" "),
            "br" | "cr" if !self.in_run_props => self.text.line_break(),
            "footnotereference" => self.note_reference(e),
            "hyperlink" if !empty => self.link_starts(e),
            "bookmarkstart" => {
                if let Some(name) = attr(e, "name").filter(|n| n != "_GoBack") {
                    self.anchors.push(name);
                }
            }
            "docpr" => {
                self.picture.alt = attr(e, "descr")
                    .or_else(|| attr(e, "title"))
                    .unwrap_or_default()
            }
            "blip" => self.picture.rel = attr(e, "embed"),
            "tbl" if !empty => self.table_starts(),
            "tr" if !empty && self.table.depth == 1 => {
                self.table.row += 1;
                self.table.col = 0;
            }
            "tc" if !empty && self.table.depth == 1 => {
                self.table.col += 1;
                self.table.cell = Some(MarkupBuilder::default());
            }
            "footnote" if !empty => {
                let kind = attr(e, "type").unwrap_or_default();
                self.note = attr(e, "id")
                    .filter(|_| kind.is_empty() || kind == "normal")
                    .map(|id| (format!("fn{id}"), MarkupBuilder::default()));
            }
            _ => {}
        }
        Ok(())
    }

    /// Text counts inside a `w:t` only (elsewhere it is the indentation of the XML).
    fn text(&mut self, raw: &[u8]) {
        if !self.in_text {
            return;
        }
        let raw = String::from_utf8_lossy(raw).into_owned();
        let decoded = quick_xml::escape::unescape(&raw)
            .map(|c| c.into_owned())
            .unwrap_or(raw);
        self.text.text(&decoded);
    }

    fn end(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        match name {
            "t" => self.in_text = false,
            "rpr" => self.in_run_props = false,
            "hyperlink" if self.link_open => {
                self.close_marks();
                self.text.close("a");
                self.link_open = false;
            }
            "drawing" => self.drawing_ends(),
            "p" => self.paragraph_ends(),
            "tc" if self.table.depth == 1 => self.cell_ends(),
            "tbl" => self.table.depth = self.table.depth.saturating_sub(1),
            "footnote" => self.note_ends(),
            _ => {}
        }
    }

    fn note_reference(&mut self, e: &BytesStart<'_>) {
        if let Some(id) = attr(e, "id") {
            self.apply_marks(Marks::default());
            self.text.note_ref(&format!("fn{id}"));
        }
    }

    /// A link to a bookmark of the document or to an outside address; one to another part of
    /// the package is read as plain text.
    fn link_starts(&mut self, e: &BytesStart<'_>) {
        self.close_marks();
        let target = attr(e, "anchor").map(|a| format!("#{a}")).or_else(|| {
            attr(e, "id")
                .and_then(|id| self.rels.get(&id))
                .filter(|(_, external)| *external)
                .map(|(target, _)| target.clone())
        });
        if let Some(target) = target {
            self.text.open("a", Some(&target));
            self.link_open = true;
        }
    }

    /// A top-level table ends the paragraph before it; its cells are blocks of their own.
    fn table_starts(&mut self) {
        self.table.depth += 1;
        if self.table.depth == 1 {
            self.flush();
            self.table.count += 1;
            self.table.row = 0;
        }
    }

    /// A picture is a block of its own, after the text before it.
    fn drawing_ends(&mut self) {
        let picture = std::mem::take(&mut self.picture);
        let rels = self.rels;
        if let Some((target, _)) = picture.rel.and_then(|id| rels.get(&id)) {
            self.flush();
            let mut alt = MarkupBuilder::default();
            alt.text(&picture.alt);
            self.out.blocks.push(Block::new(
                BlockKind::Image {
                    asset: target.clone(),
                },
                alt.take(),
            ));
        }
    }

    fn paragraph_ends(&mut self) {
        self.close_marks();
        let joined = match &mut self.note {
            Some((_, builder)) => Some(builder),
            None => self.table.cell.as_mut(),
        };
        if let Some(builder) = joined {
            // Paragraphs of a note or a table cell stay one block, joined by breaks.
            let para = self.text.take();
            if !para.is_empty() {
                if !builder.is_blank() {
                    builder.line_break();
                }
                builder.raw(&para);
            }
        } else if self.style == Some(0) {
            let title = self.text.take();
            self.out.title =
                Some(crate::markup::plain_text(&title)).filter(|t| !t.trim().is_empty());
        } else {
            self.flush();
        }
    }

    fn cell_ends(&mut self) {
        if let Some(mut builder) = self.table.cell.take() {
            let kind = BlockKind::TableCell {
                table: self.table.count,
                row: self.table.row,
                col: self.table.col,
                header: self.table.row == 1,
            };
            let mut block = Block::new(kind, builder.take());
            block.anchors = std::mem::take(&mut self.anchors);
            self.out.blocks.push(block);
        }
    }

    fn note_ends(&mut self) {
        if let Some((id, mut builder)) = self.note.take() {
            let body = builder.take();
            if !body.is_empty() {
                self.out
                    .blocks
                    .push(Block::new(BlockKind::Footnote { id }, body));
            }
        }
    }

    /// Makes the paragraph read so far a block, of the kind its style and list depth say.
    fn flush(&mut self) {
        self.close_marks();
        if self.text.is_blank() {
            let _ = self.text.take();
            return;
        }
        let kind = match (self.style, self.list_depth) {
            (Some(QUOTE_STYLE), None) => BlockKind::Quote,
            (Some(level), _) if (1..=6).contains(&level) => BlockKind::Heading { level },
            (_, Some(depth)) => BlockKind::ListItem {
                ordered: false,
                depth,
            },
            _ => BlockKind::Paragraph,
        };
        let mut block = Block::new(kind, self.text.take());
        block.anchors = std::mem::take(&mut self.anchors);
        if block.kind == BlockKind::Quote {
            // Word has no element around a quotation: its paragraphs are the quote-styled ones in
            // a row.
            block.groups = match self.out.blocks.last() {
                Some(last) if last.kind == BlockKind::Quote && !last.groups.is_empty() => {
                    last.groups.clone()
                }
                _ => {
                    self.out.quotes += 1;
                    vec![Group {
                        kind: GroupKind::Quote,
                        n: self.out.quotes,
                    }]
                }
            };
        }
        self.out.blocks.push(block);
    }

    /// Opens `wanted`'s marks in the text, closing those open first when they differ.
    fn apply_marks(&mut self, wanted: Marks) {
        if self.applied == wanted {
            return;
        }
        self.close_marks();
        for (on, tag) in [
            (wanted.bold, "b"),
            (wanted.italic, "i"),
            (wanted.sup, "sup"),
            (wanted.sub, "sub"),
        ] {
            if on {
                self.text.open(tag, None);
            }
        }
        self.applied = wanted;
    }

    fn close_marks(&mut self) {
        for (on, tag) in [
            (self.applied.sub, "sub"),
            (self.applied.sup, "sup"),
            (self.applied.italic, "i"),
            (self.applied.bold, "b"),
        ] {
            if on {
                self.text.close(tag);
            }
        }
        self.applied = Marks::default();
    }
}

fn lowercase(name: &[u8]) -> String {
    String::from_utf8_lossy(name).to_ascii_lowercase()
}

/// An attribute by local name (prefixes such as `w:` and `r:` dropped).
fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        let key = a.key.local_name();
        key.as_ref().eq_ignore_ascii_case(name.as_bytes()).then(|| {
            let raw = String::from_utf8_lossy(&a.value).into_owned();
            quick_xml::escape::unescape(&raw)
                .map(|c| c.into_owned())
                .unwrap_or(raw)
        })
    })
}

fn val(e: &BytesStart<'_>) -> Option<String> {
    attr(e, "val")
}

/// A toggle property (`<w:b/>`, `<w:i w:val="0"/>`).
fn on(e: &BytesStart<'_>) -> bool {
    !matches!(val(e).as_deref(), Some("0" | "false" | "off" | "none"))
}

/// Chapters start at the top heading level in use; when that level appears only once (the
/// book's own title), at the next level down. Notes go to the chapter that first refers to them.
fn split_at_headings(blocks: Vec<Block>, notes: Vec<Block>) -> Vec<Chapter> {
    let mut counts = [0usize; 7];
    for block in &blocks {
        if let BlockKind::Heading { level } = block.kind {
            counts[usize::from(level.min(6))] += 1;
        }
    }
    let mut levels = (1..=6u8).filter(|l| counts[usize::from(*l)] > 0);
    let top = levels.next();
    let chapter_level = match (top, levels.next()) {
        (Some(top), Some(next)) if counts[usize::from(top)] == 1 => next,
        (Some(top), _) => top,
        (None, _) => 0,
    };
    let mut chapters: Vec<Chapter> = Vec::new();
    let mut current = Chapter::default();
    for block in blocks {
        if let BlockKind::Heading { level } = block.kind {
            if level <= chapter_level {
                if !current.blocks.is_empty() {
                    chapters.push(std::mem::take(&mut current));
                }
                current.title = Some(block.plain_text()).filter(|t| !t.trim().is_empty());
            }
        }
        current.blocks.push(block);
    }
    if !current.blocks.is_empty() {
        chapters.push(current);
    }
    let mut notes: HashMap<String, Block> = notes
        .into_iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Footnote { id } => Some((id.clone(), b.clone())),
            _ => None,
        })
        .collect();
    for chapter in &mut chapters {
        let mut referenced = Vec::new();
        for block in &chapter.blocks {
            for tag in crate::markup::tags(&block.text).unwrap_or_default() {
                if let crate::markup::Tag::Empty {
                    name: "ref",
                    attr: Some(id),
                } = tag
                {
                    if let Some(note) = notes.remove(&id) {
                        referenced.push(note);
                    }
                }
            }
        }
        chapter.blocks.extend(referenced);
    }
    chapters
}

fn load_images(zip: &mut Archive<'_>, manuscript: &mut Manuscript) -> Result<(), FormatError> {
    let paths: Vec<String> = manuscript
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .filter_map(|b| match &b.kind {
            BlockKind::Image { asset } => Some(asset.clone()),
            _ => None,
        })
        .collect();
    let mut by_path: HashMap<String, String> = HashMap::new();
    for path in paths {
        let media_type = media_type_of(&path);
        if by_path.contains_key(&path) || !media_type.starts_with("image/") {
            continue;
        }
        if let Some(bytes) = zip.read(&path)? {
            let id = manuscript.add_asset(&path, media_type, bytes);
            by_path.insert(path, id);
        }
    }
    for chapter in &mut manuscript.chapters {
        for block in &mut chapter.blocks {
            let BlockKind::Image { asset } = &mut block.kind else {
                continue;
            };
            match by_path.get(asset.as_str()) {
                Some(id) => *asset = id.clone(),
                // The picture is missing from the file; its description is kept as text.
                None => block.kind = BlockKind::Paragraph,
            }
        }
        chapter
            .blocks
            .retain(|b| !(b.kind == BlockKind::Paragraph && b.text.is_empty()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn pandoc_docx_of_the_waste_land_has_its_sections_and_notes() {
        let m = extract(&fixture("wasteland.docx")).unwrap();
        let titles: Vec<_> = m.chapters.iter().filter_map(|c| c.title.clone()).collect();
        assert!(
            titles.contains(&"I. THE BURIAL OF THE DEAD".to_string()),
            "{titles:?}"
        );
        assert!(
            titles.contains(&"V. WHAT THE THUNDER SAID".to_string()),
            "{titles:?}"
        );
        assert_eq!(m.title.as_deref(), Some("The Waste Land"));
    }

    #[test]
    fn pandoc_docx_of_moby_dick_keeps_chapters_emphasis_and_words() {
        let m = extract(&fixture("moby-dick.docx")).unwrap();
        let titles: Vec<_> = m.chapters.iter().filter_map(|c| c.title.clone()).collect();
        assert!(
            titles.contains(&"Chapter 1. Loomings.".to_string()),
            "{:?}",
            &titles[..titles.len().min(10)]
        );
        let words = m.word_count();
        assert!(words.abs_diff(212_222) * 50 <= 212_222, "{words} words");
    }

    fn count(m: &Manuscript, test: impl Fn(&Block) -> bool) -> usize {
        m.chapters
            .iter()
            .flat_map(|c| &c.blocks)
            .filter(|b| test(b))
            .count()
    }

    /// The fixtures were made by pandoc 2.17 from the corpus EPUBs; the expected numbers were
    /// counted in their XML (paragraphs with an italic run; notes of type "normal").
    #[test]
    fn emphasis_and_footnotes_are_kept() {
        let children = extract(&fixture("childrens-literature.docx")).unwrap();
        assert_eq!(count(&children, |b| b.text.contains("<i>")), 27);
        let waste_land = extract(&fixture("wasteland.docx")).unwrap();
        let notes = count(&waste_land, |b| {
            matches!(b.kind, BlockKind::Footnote { .. })
        });
        let refs = count(&waste_land, |b| b.text.contains("<ref id="));
        assert_eq!(
            notes, 50,
            "every referenced note (52 minus the two separators)"
        );
        assert!(refs >= 48, "{refs}");
    }

    /// pandoc writes a block quotation's paragraphs in the "Block Text" style: in The Waste
    /// Land (counted in its XML) the four lines of the sailor's song, one quotation.
    #[test]
    fn quote_styled_paragraphs_are_quotations_grouped_by_run() {
        let m = extract(&fixture("wasteland.docx")).unwrap();
        let quotes: Vec<&Block> = m
            .chapters
            .iter()
            .flat_map(|c| &c.blocks)
            .filter(|b| b.kind == BlockKind::Quote)
            .collect();
        assert_eq!(quotes.len(), 4);
        let groups: std::collections::HashSet<_> = quotes.iter().map(|b| &b.groups).collect();
        assert!(quotes.iter().all(|b| b.groups.len() == 1), "{quotes:?}");
        assert_eq!(groups.len(), 1, "{quotes:?}");
    }

    #[test]
    fn a_password_protected_document_is_reported_as_encrypted() {
        assert_eq!(
            extract(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]),
            Err(FormatError::Encrypted)
        );
    }
}
