//! DOCX (Office Open XML): paragraphs and their styles, headings as chapter boundaries, bold,
//! italic, super- and subscript, links, bookmarks, footnotes, tables and images.
//!
//! The main document is read as a stream (it can be large); the small parts (styles,
//! relationships, metadata) as trees.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::archive::{Archive, Limits};
use crate::dom;
use crate::manuscript::media_type_of;
use crate::manuscript::{Block, BlockKind, Chapter, Group, GroupKind, Manuscript};
use crate::markup::MarkupBuilder;
use crate::xhtml::resolve;
use crate::FormatError;

const DOCUMENT: &str = "word/document.xml";

pub fn extract(bytes: &[u8]) -> Result<Manuscript, FormatError> {
    extract_within(bytes, crate::Budget::default())
}

pub fn extract_within(bytes: &[u8], budget: crate::Budget) -> Result<Manuscript, FormatError> {
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
    let mut out = Walked::default();
    let mut text = MarkupBuilder::default();
    let mut anchors: Vec<String> = Vec::new();
    let mut style: Option<u8> = None;
    let mut list_depth: Option<u8> = None;
    let mut run = Marks::default();
    let mut applied = Marks::default();
    let mut in_run_props = false;
    let mut in_text = false;
    let mut link_open = false;
    let mut image_alt = String::new();
    let mut image_rel: Option<String> = None;
    // Tables: depth, and position of the current cell.
    let (mut tables, mut table_depth, mut row, mut col) = (0u32, 0usize, 0u32, 0u32);
    let mut cell: Option<MarkupBuilder> = None;
    let mut note: Option<(String, MarkupBuilder)> = None;
    let mut depth = 0usize;

    loop {
        crate::limits::check_blocks(out.blocks.len())?;
        let event = reader.read_event().map_err(|e| {
            FormatError::Malformed(format!("{what}: {e} at byte {}", reader.buffer_position()))
        })?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            if !empty {
                depth += 1;
                if depth > 512 {
                    return Err(FormatError::Malformed(format!(
                        "{what}: nested deeper than 512 levels"
                    )));
                }
            }
            match local(e).as_str() {
                "p" => {
                    style = None;
                    list_depth = None;
                }
                "pstyle" => {
                    if let Some(id) = val(e) {
                        style = styles.get(&id).copied();
                    }
                }
                "outlinelvl" => {
                    if let Some(level) =
                        val(e).and_then(|v| v.parse::<u8>().ok()).filter(|l| *l < 9)
                    {
                        style = Some((level + 1).clamp(1, 6));
                    }
                }
                "ilvl" => {
                    list_depth = val(e)
                        .and_then(|v| v.parse::<u8>().ok())
                        .map(|l| l.saturating_add(1).min(9))
                }
                "numpr" => list_depth = list_depth.or(Some(1)),
                "r" => run = Marks::default(),
                "rpr" if !empty => in_run_props = true,
                "b" if in_run_props => run.bold = on(e),
                "i" if in_run_props => run.italic = on(e),
                "vertalign" if in_run_props => {
                    let v = val(e).unwrap_or_default();
                    run.sup = v == "superscript";
                    run.sub = v == "subscript";
                }
                "t" if !empty => {
                    apply_marks(&mut text, &mut applied, run);
                    in_text = true;
                }
                "tab" if !in_run_props => text.text(" "),
                "br" | "cr" if !in_run_props => text.line_break(),
                "footnotereference" => {
                    if let Some(id) = attr(e, "id") {
                        apply_marks(&mut text, &mut applied, Marks::default());
                        text.note_ref(&format!("fn{id}"));
                    }
                }
                "hyperlink" if !empty => {
                    close_marks(&mut text, &mut applied);
                    let target = attr(e, "anchor").map(|a| format!("#{a}")).or_else(|| {
                        attr(e, "id")
                            .and_then(|id| rels.get(&id))
                            .filter(|(_, ext)| *ext)
                            .map(|(t, _)| t.clone())
                    });
                    if let Some(target) = target {
                        text.open("a", Some(&target));
                        link_open = true;
                    }
                }
                "bookmarkstart" => {
                    if let Some(name) = attr(e, "name").filter(|n| n != "_GoBack") {
                        anchors.push(name);
                    }
                }
                "docpr" => {
                    image_alt = attr(e, "descr")
                        .or_else(|| attr(e, "title"))
                        .unwrap_or_default()
                }
                "blip" => image_rel = attr(e, "embed"),
                "tbl" if !empty => {
                    table_depth += 1;
                    if table_depth == 1 {
                        flush(
                            &mut out,
                            &mut text,
                            &mut anchors,
                            style,
                            list_depth,
                            &mut applied,
                        );
                        tables += 1;
                        row = 0;
                    }
                }
                "tr" if !empty && table_depth == 1 => {
                    row += 1;
                    col = 0;
                }
                "tc" if !empty && table_depth == 1 => {
                    col += 1;
                    cell = Some(MarkupBuilder::default());
                }
                "footnote" if !empty => {
                    let kind = attr(e, "type").unwrap_or_default();
                    note = attr(e, "id")
                        .filter(|_| kind.is_empty() || kind == "normal")
                        .map(|id| (format!("fn{id}"), MarkupBuilder::default()));
                }
                _ => {}
            }
        }
        match event {
            Event::Text(t) if in_text => {
                let raw = String::from_utf8_lossy(t.as_ref()).into_owned();
                let decoded = quick_xml::escape::unescape(&raw)
                    .map(|c| c.into_owned())
                    .unwrap_or(raw);
                text.text(&decoded);
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                match String::from_utf8_lossy(e.local_name().as_ref())
                    .to_ascii_lowercase()
                    .as_str()
                {
                    "t" => in_text = false,
                    "rpr" => in_run_props = false,
                    "hyperlink" if link_open => {
                        close_marks(&mut text, &mut applied);
                        text.close("a");
                        link_open = false;
                    }
                    "drawing" => {
                        if let Some((target, _)) = image_rel.take().and_then(|id| rels.get(&id)) {
                            flush(
                                &mut out,
                                &mut text,
                                &mut anchors,
                                style,
                                list_depth,
                                &mut applied,
                            );
                            let mut alt = MarkupBuilder::default();
                            alt.text(&image_alt);
                            out.blocks.push(Block::new(
                                BlockKind::Image {
                                    asset: target.clone(),
                                },
                                alt.take(),
                            ));
                        }
                        image_alt.clear();
                    }
                    "p" => {
                        close_marks(&mut text, &mut applied);
                        if let Some(builder) = note.as_mut().map(|(_, b)| b).or(cell.as_mut()) {
                            // Paragraphs of a note or a table cell stay one block, joined by breaks.
                            let para = text.take();
                            if !para.is_empty() {
                                if !builder.is_blank() {
                                    builder.line_break();
                                }
                                builder.raw(&para);
                            }
                        } else if style == Some(0) {
                            let title = text.take();
                            out.title = Some(crate::markup::plain_text(&title))
                                .filter(|t| !t.trim().is_empty());
                        } else {
                            flush(
                                &mut out,
                                &mut text,
                                &mut anchors,
                                style,
                                list_depth,
                                &mut applied,
                            );
                        }
                    }
                    "tc" if table_depth == 1 => {
                        if let Some(mut builder) = cell.take() {
                            let kind = BlockKind::TableCell {
                                table: tables,
                                row,
                                col,
                                header: row == 1,
                            };
                            let mut block = Block::new(kind, builder.take());
                            block.anchors = std::mem::take(&mut anchors);
                            out.blocks.push(block);
                        }
                    }
                    "tbl" => table_depth = table_depth.saturating_sub(1),
                    "footnote" => {
                        if let Some((id, mut builder)) = note.take() {
                            let body = builder.take();
                            if !body.is_empty() {
                                out.blocks
                                    .push(Block::new(BlockKind::Footnote { id }, body));
                            }
                        }
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

fn local(e: &BytesStart<'_>) -> String {
    String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase()
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

fn apply_marks(text: &mut MarkupBuilder, applied: &mut Marks, wanted: Marks) {
    if *applied == wanted {
        return;
    }
    close_marks(text, applied);
    if wanted.bold {
        text.open("b", None);
    }
    if wanted.italic {
        text.open("i", None);
    }
    if wanted.sup {
        text.open("sup", None);
    }
    if wanted.sub {
        text.open("sub", None);
    }
    *applied = wanted;
}

fn close_marks(text: &mut MarkupBuilder, applied: &mut Marks) {
    for (on, tag) in [
        (applied.sub, "sub"),
        (applied.sup, "sup"),
        (applied.italic, "i"),
        (applied.bold, "b"),
    ] {
        if on {
            text.close(tag);
        }
    }
    *applied = Marks::default();
}

fn flush(
    out: &mut Walked,
    text: &mut MarkupBuilder,
    anchors: &mut Vec<String>,
    style: Option<u8>,
    list_depth: Option<u8>,
    applied: &mut Marks,
) {
    close_marks(text, applied);
    if text.is_blank() {
        let _ = text.take();
        return;
    }
    let kind = match (style, list_depth) {
        (Some(QUOTE_STYLE), None) => BlockKind::Quote,
        (Some(level), _) if (1..=6).contains(&level) => BlockKind::Heading { level },
        (_, Some(depth)) => BlockKind::ListItem {
            ordered: false,
            depth,
        },
        _ => BlockKind::Paragraph,
    };
    let mut block = Block::new(kind, text.take());
    block.anchors = std::mem::take(anchors);
    if block.kind == BlockKind::Quote {
        // Word has no element around a quotation: its paragraphs are the quote-styled ones in
        // a row.
        block.groups = match out.blocks.last() {
            Some(last) if last.kind == BlockKind::Quote && !last.groups.is_empty() => {
                last.groups.clone()
            }
            _ => {
                out.quotes += 1;
                vec![Group {
                    kind: GroupKind::Quote,
                    n: out.quotes,
                }]
            }
        };
    }
    out.blocks.push(block);
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
