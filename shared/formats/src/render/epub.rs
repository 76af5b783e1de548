//! EPUB 3 output that passes epubcheck: package document with the (target) language, navigation
//! document, one XHTML file per chapter, images and cover, right-to-left page progression for
//! right-to-left languages, working in-book links and footnotes.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use super::{chapter_title, is_rtl, RenderOptions, Sources};
use crate::error::FormatError;
use crate::manuscript::{Asset, Block, BlockKind, Group, GroupKind, Manuscript};
use crate::markup::{self, escape_attr, escape_text, Piece, Tag};

const CSS: &str = "body { font-family: serif; line-height: 1.5; margin: 0 5%; }
h1, h2, h3, h4, h5, h6 { line-height: 1.2; page-break-after: avoid; }
p { margin: 0 0 0.6em 0; text-align: justify; }
p.line { margin: 0; text-align: start; }
p.numbered > span:last-child { float: right; margin-left: 1em; font-size: 0.9em; color: #666; }
blockquote { margin: 0.6em 2em; }
pre { white-space: pre-wrap; font-family: monospace; }
figure { margin: 1em 0; text-align: center; }
figure img { max-width: 100%; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #999; padding: 0.2em 0.4em; vertical-align: top; }
aside.footnote { font-size: 0.9em; border-top: 1px solid #ccc; margin-top: 1em; padding-top: 0.3em; }
aside.footnote > a.backlink { float: left; margin-right: 0.4em; }
aside.sidebar { font-size: 0.9em; margin: 1em 2em; }
div.poem { margin: 0.6em 0 0.6em 1.5em; }
figcaption { font-size: 0.9em; }
.booktr-original { color: #666; font-size: 0.85em; }
";

/// The class of an original in a bilingual book (as in a book translated in place).
const ORIGINAL_CLASS: &str = "booktr-original";

/// Renders the manuscript as an EPUB 3 file. Asset bytes must be loaded.
pub fn render(manuscript: &Manuscript, options: &RenderOptions) -> Result<Vec<u8>, FormatError> {
    render_with(manuscript, None, options)
}

/// Renders a bilingual EPUB 3 file: `manuscript`'s chapters are the translation, `sources`
/// what each was translated from, block for block (else [`FormatError::Mismatch`]).
///
/// Each block's original comes first, styled as secondary (class `booktr-original`, as in a
/// book translated in place), then its translation; each side carries its own `lang`,
/// `xml:lang` and `dir`. A block that is one element (a heading, paragraph, verse line,
/// preformatted text) becomes two such elements, the original one carrying the block's id; one
/// that wraps its text (a quotation, note, list item or table cell) stays one element, with the
/// two sides as paragraphs inside. An image is shown once, described by its translated
/// alternative text. The package lists both languages, the translation's first.
pub fn render_bilingual(
    manuscript: &Manuscript,
    sources: Sources<'_>,
    options: &RenderOptions,
) -> Result<Vec<u8>, FormatError> {
    sources.check(&manuscript.chapters)?;
    render_with(manuscript, Some(sources), options)
}

fn render_with(
    manuscript: &Manuscript,
    sources: Option<Sources<'_>>,
    options: &RenderOptions,
) -> Result<Vec<u8>, FormatError> {
    let book = Book::prepare(manuscript);
    let lang = &options.language;
    let rtl = is_rtl(lang);
    let title = options
        .title
        .clone()
        .or_else(|| manuscript.title.clone())
        .unwrap_or_else(|| "Untitled".into());

    let mut zip = Writer::default();
    // The mimetype entry first and uncompressed, as the container format requires.
    zip.add("mimetype", b"application/epub+zip", STORED)?;
    zip.add("META-INF/container.xml", CONTAINER.as_bytes(), DEFLATED)?;
    zip.add("OEBPS/style.css", CSS.as_bytes(), DEFLATED)?;

    let cover = manuscript
        .cover
        .as_ref()
        .and_then(|id| manuscript.assets.iter().find(|a| &a.id == id));
    let mut lists = zip.add_assets(manuscript, cover, lang, rtl, &title)?;
    let mut nav_items = String::new();
    for (index, chapter) in manuscript.chapters.iter().enumerate() {
        let file = chapter_file(index);
        let heading = chapter_title(chapter, index);
        let sides = sources
            .and_then(|s| Some(Sides::new(&s.chapters.get(index)?.blocks, s.language, lang)));
        let body = book.chapter_body(index, &chapter.blocks, sides.as_ref());
        zip.add(
            &format!("OEBPS/{file}"),
            page(lang, rtl, &heading, &body).as_bytes(),
            DEFLATED,
        )?;
        let id = format!("ch{:04}", index + 1);
        let _ = writeln!(
            lists.manifest,
            r#"    <item id="{id}" href="{file}" media-type="application/xhtml+xml"/>"#
        );
        let _ = writeln!(lists.spine, r#"    <itemref idref="{id}"/>"#);
        let _ = writeln!(
            nav_items,
            r#"      <li><a href="{file}">{}</a></li>"#,
            escape_text(&heading)
        );
    }
    let nav = page(
        lang,
        rtl,
        &title,
        &format!("<nav epub:type=\"toc\" id=\"toc\">\n    <h1>{}</h1>\n    <ol>\n{nav_items}    </ol>\n  </nav>", escape_text(&title)),
    );
    zip.add("OEBPS/nav.xhtml", nav.as_bytes(), DEFLATED)?;

    let metadata = metadata(manuscript, sources, options, &title, cover);
    let opf = package_document(lang, rtl, &metadata, &lists);
    zip.add("OEBPS/content.opf", opf.as_bytes(), DEFLATED)?;
    let cursor = zip.zip.finish().map_err(write_error)?;
    // The manuscript's markup holds no scripts, but an image is the source's own file (an SVG
    // can carry one), named with the source file's extension.
    let (bytes, _) = super::inert::epub(cursor.into_inner(), super::inert::own_package())?;
    Ok(bytes)
}

const DEFLATED: CompressionMethod = CompressionMethod::Deflated;
const STORED: CompressionMethod = CompressionMethod::Stored;

/// The EPUB's zip file being written.
struct Writer {
    zip: ZipWriter<Cursor<Vec<u8>>>,
}

impl Default for Writer {
    fn default() -> Self {
        Writer {
            zip: ZipWriter::new(Cursor::new(Vec::new())),
        }
    }
}

/// The package document's manifest items and spine entries, one a line.
#[derive(Default)]
struct Lists {
    manifest: String,
    spine: String,
}

impl Writer {
    fn add(
        &mut self,
        name: &str,
        bytes: &[u8],
        method: CompressionMethod,
    ) -> Result<(), FormatError> {
        let options = SimpleFileOptions::default().compression_method(method);
        self.zip.start_file(name, options).map_err(write_error)?;
        self.zip.write_all(bytes).map_err(|e| write_error(e.into()))
    }

    /// The manuscript's images, and the cover's page when it has a cover; their manifest items
    /// and the cover page's spine entry.
    fn add_assets(
        &mut self,
        manuscript: &Manuscript,
        cover: Option<&Asset>,
        lang: &str,
        rtl: bool,
        title: &str,
    ) -> Result<Lists, FormatError> {
        let mut lists = Lists::default();
        for asset in &manuscript.assets {
            self.add(
                &format!("OEBPS/images/{}", asset.file_name),
                &asset.bytes,
                STORED,
            )?;
            let properties = if cover.is_some_and(|c| c.id == asset.id) {
                r#" properties="cover-image""#
            } else {
                ""
            };
            let _ = writeln!(
                lists.manifest,
                r#"    <item id="{}" href="images/{}" media-type="{}"{properties}/>"#,
                escape_attr(&asset.id),
                escape_attr(&asset.file_name),
                escape_attr(&asset.media_type)
            );
        }
        if let Some(cover) = cover {
            let page = page(
                lang,
                rtl,
                title,
                &format!(
                    r#"<section epub:type="cover"><figure><img src="images/{}" alt="{}"/></figure></section>"#,
                    escape_attr(&cover.file_name),
                    escape_attr(title)
                ),
            );
            self.add("OEBPS/cover.xhtml", page.as_bytes(), DEFLATED)?;
            lists.manifest.push_str("    <item id=\"cover-page\" href=\"cover.xhtml\" media-type=\"application/xhtml+xml\"/>\n");
            lists
                .spine
                .push_str("    <itemref idref=\"cover-page\" linear=\"no\"/>\n");
        }
        Ok(lists)
    }
}

/// The package document's metadata: identifier, title, languages, author, date and cover.
fn metadata(
    manuscript: &Manuscript,
    sources: Option<Sources<'_>>,
    options: &RenderOptions,
    title: &str,
    cover: Option<&Asset>,
) -> String {
    let lang = &options.language;
    let mut metadata = String::new();
    let _ = writeln!(
        metadata,
        r#"    <dc:identifier id="book-id">{}</dc:identifier>"#,
        escape_text(&options.identifier)
    );
    let _ = writeln!(metadata, "    <dc:title>{}</dc:title>", escape_text(title));
    let _ = writeln!(
        metadata,
        "    <dc:language>{}</dc:language>",
        escape_text(lang)
    );
    // A bilingual book is in both languages; the translation's is the book's.
    if let Some(source) = sources.map(|s| s.language).filter(|s| *s != lang.as_str()) {
        let _ = writeln!(
            metadata,
            "    <dc:language>{}</dc:language>",
            escape_text(source)
        );
    }
    if let Some(author) = options.author.as_ref().or(manuscript.author.as_ref()) {
        let _ = writeln!(
            metadata,
            "    <dc:creator>{}</dc:creator>",
            escape_text(author)
        );
    }
    let _ = writeln!(
        metadata,
        r#"    <meta property="dcterms:modified">{}</meta>"#,
        escape_text(&options.modified)
    );
    if let Some(cover) = cover {
        let _ = writeln!(
            metadata,
            r#"    <meta name="cover" content="{}"/>"#,
            escape_attr(&cover.id)
        );
    }
    metadata
}

/// The package document, around its metadata, manifest items and spine entries.
fn package_document(lang: &str, rtl: bool, metadata: &str, lists: &Lists) -> String {
    let direction = if rtl {
        r#" page-progression-direction="rtl""#
    } else {
        ""
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="book-id" xml:lang="{lang}">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
{metadata}  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="css" href="style.css" media-type="text/css"/>
{manifest}  </manifest>
  <spine{direction}>
{spine}  </spine>
</package>
"#,
        lang = escape_attr(lang),
        manifest = lists.manifest,
        spine = lists.spine,
    )
}

const CONTAINER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"#;

fn write_error(e: zip::result::ZipError) -> FormatError {
    FormatError::Malformed(format!("writing the EPUB failed: {e}"))
}

fn chapter_file(index: usize) -> String {
    format!("ch{:04}.xhtml", index + 1)
}

fn page(lang: &str, rtl: bool, title: &str, body: &str) -> String {
    let dir = if rtl { r#" dir="rtl""# } else { "" };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="{lang}" xml:lang="{lang}"{dir}>
<head>
  <meta charset="utf-8"/>
  <title>{title}</title>
  <link rel="stylesheet" type="text/css" href="style.css"/>
</head>
<body>
  {body}
</body>
</html>
"#,
        lang = escape_attr(lang),
        title = escape_text(title)
    )
}

/// Book-wide facts the chapter files need: where each anchor lives and how notes are numbered.
struct Book {
    /// Anchor (as written in the manuscript) -> (chapter index, XML id used in the output).
    anchors: HashMap<String, (usize, String)>,
    /// Footnote id -> its number, in order of first reference.
    note_numbers: HashMap<String, usize>,
    /// Asset id -> the file name it is stored under.
    asset_files: HashMap<String, String>,
    /// Footnote id -> (chapter index, XML id) of its first reference, which its number links
    /// back to.
    first_refs: HashMap<String, (usize, String)>,
    /// First references already written (each gets its id once).
    refs_written: RefCell<HashSet<String>>,
}

impl Book {
    fn prepare(manuscript: &Manuscript) -> Book {
        let mut anchors = HashMap::new();
        let mut used: HashSet<String> = HashSet::new();
        for (index, chapter) in manuscript.chapters.iter().enumerate() {
            for block in &chapter.blocks {
                let own = match &block.kind {
                    BlockKind::Footnote { id } => Some(id),
                    _ => None,
                };
                for anchor in block.anchors.iter().chain(own) {
                    if anchors.contains_key(anchor) {
                        continue;
                    }
                    let id = unique_id(&xml_id(anchor), &mut used);
                    anchors.insert(anchor.clone(), (index, id));
                }
            }
        }
        let note_numbers = manuscript.note_numbers();
        let mut first_refs = HashMap::new();
        for (index, chapter) in manuscript.chapters.iter().enumerate() {
            // An image's text is its alternative text, where a reference is not written.
            let written = chapter
                .blocks
                .iter()
                .filter(|b| !matches!(b.kind, BlockKind::Image { .. }));
            for block in written {
                for tag in markup::tags(&block.text).unwrap_or_default() {
                    let Tag::Empty {
                        name: "ref",
                        attr: Some(note),
                    } = tag
                    else {
                        continue;
                    };
                    if let std::collections::hash_map::Entry::Vacant(entry) = first_refs.entry(note)
                    {
                        let number = note_numbers.get(entry.key()).copied().unwrap_or(0);
                        let id = unique_id(&format!("noteref-{number}"), &mut used);
                        entry.insert((index, id));
                    }
                }
            }
        }
        let asset_files = manuscript
            .assets
            .iter()
            .map(|a| (a.id.clone(), a.file_name.clone()))
            .collect();
        Book {
            anchors,
            note_numbers,
            asset_files,
            first_refs,
            refs_written: RefCell::new(HashSet::new()),
        }
    }

    fn href(&self, from: usize, anchor: &str) -> Option<String> {
        let (chapter, id) = self.anchors.get(anchor)?;
        Some(if *chapter == from {
            format!("#{id}")
        } else {
            format!("{}#{id}", chapter_file(*chapter))
        })
    }

    /// The chapter's blocks as XHTML; in a bilingual book (`sides`), each after its original.
    ///
    /// Blocks that sat in one source element are set in one again: a note's paragraphs in one
    /// `aside`, a group's blocks (see [`Block::groups`]) in one `blockquote`, poem, sidebar or
    /// figure, nested as they were; list items in lists nested by depth; cells in tables.
    fn chapter_body(&self, index: usize, blocks: &[Block], sides: Option<&Sides<'_>>) -> String {
        let mut out = String::new();
        let mut ids_written: HashSet<String> = HashSet::new();
        let mut open: Vec<Frame> = Vec::new();
        // Whether the innermost figure's caption is open.
        let mut caption = false;
        let mut i = 0;
        while i < blocks.len() {
            let block = &blocks[i];
            let frames = frames_of(block);
            let common = open.iter().zip(&frames).take_while(|(a, b)| a == b).count();
            while open.len() > common {
                if let Some(frame) = open.pop() {
                    close_frame(&mut out, &frame, &mut caption);
                }
            }
            for frame in &frames[common..] {
                self.open_frame(&mut out, index, frame, &mut ids_written);
                open.push(frame.clone());
            }
            let in_figure = matches!(
                open.last(),
                Some(Frame::Group(Group {
                    kind: GroupKind::Figure,
                    ..
                }))
            );
            if in_figure && !caption && !matches!(block.kind, BlockKind::Image { .. }) {
                out.push_str("<figcaption>");
                caption = true;
            }
            let run = Run {
                index,
                blocks,
                sides,
                frames: &frames,
            };
            i = match &block.kind {
                BlockKind::ListItem { .. } => self.list(&mut out, &run, i, &mut ids_written),
                BlockKind::TableCell { table, .. } => {
                    self.table(&mut out, &run, i, *table, &mut ids_written)
                }
                _ => {
                    self.block(&mut out, &run, i, in_figure || caption, &mut ids_written);
                    i + 1
                }
            };
        }
        while let Some(frame) = open.pop() {
            close_frame(&mut out, &frame, &mut caption);
        }
        out
    }

    /// The list items from `start` on that sit in the same frames, as lists nested by depth;
    /// the index of the block after them.
    fn list(
        &self,
        out: &mut String,
        run: &Run<'_, '_>,
        start: usize,
        ids_written: &mut HashSet<String>,
    ) -> usize {
        let mut i = start;
        // (depth, tag) of the lists open, the innermost's last item still open.
        let mut lists: Vec<(u8, &str)> = Vec::new();
        while let Some(item) = run.blocks.get(i).filter(|b| run.holds(b)) {
            let BlockKind::ListItem { ordered, depth } = item.kind else {
                break;
            };
            let tag = if ordered { "ol" } else { "ul" };
            while let Some(&(d, t)) = lists.last() {
                if d > depth || (d == depth && t != tag) {
                    let _ = write!(out, "</li></{t}>");
                    lists.pop();
                } else {
                    break;
                }
            }
            match lists.last() {
                Some(&(d, _)) if d == depth => out.push_str("</li>"),
                // A deeper list opens inside the item before it.
                _ => {
                    let _ = write!(out, "<{tag}>");
                    lists.push((depth, tag));
                }
            }
            let (id, extra) = self.id_attr(item, ids_written);
            let _ = write!(
                out,
                "<li{id}>{extra}{}",
                self.wrapped(run.index, item, run.sides, i)
            );
            i += 1;
        }
        while let Some((_, t)) = lists.pop() {
            let _ = write!(out, "</li></{t}>");
        }
        out.push('\n');
        i
    }

    /// The cells of `table` from `start` on that sit in the same frames, as a table; the index
    /// of the block after them.
    fn table(
        &self,
        out: &mut String,
        run: &Run<'_, '_>,
        start: usize,
        table: u32,
        ids_written: &mut HashSet<String>,
    ) -> usize {
        let mut i = start;
        out.push_str("<table>");
        let mut row = None;
        while let Some(cell) = run.blocks.get(i).filter(|b| run.holds(b)) {
            let BlockKind::TableCell {
                table: t,
                row: r,
                header,
                ..
            } = &cell.kind
            else {
                break;
            };
            if *t != table {
                break;
            }
            if row != Some(*r) {
                if row.is_some() {
                    out.push_str("</tr>");
                }
                out.push_str("<tr>");
                row = Some(*r);
            }
            let tag = if *header { "th" } else { "td" };
            let (id, extra) = self.id_attr(cell, ids_written);
            let _ = write!(
                out,
                "<{tag}{id}>{extra}{}</{tag}>",
                self.wrapped(run.index, cell, run.sides, i)
            );
            i += 1;
        }
        if row.is_some() {
            out.push_str("</tr>");
        } else {
            out.push_str("<tr><td></td></tr>");
        }
        out.push_str("</table>\n");
        i
    }

    /// Block `i`, neither a list item nor a table cell; `in_figure`: inside a figure or its
    /// caption, where an image is no figure of its own.
    fn block(
        &self,
        out: &mut String,
        run: &Run<'_, '_>,
        i: usize,
        in_figure: bool,
        ids_written: &mut HashSet<String>,
    ) {
        let (index, sides, block) = (run.index, run.sides, &run.blocks[i]);
        let in_quote = block.groups.iter().any(|g| g.kind == GroupKind::Quote);
        let (id, extra) = self.id_attr(block, ids_written);
        let text = format!("{extra}{}", self.inline(index, block));
        // A block that is one element: in a bilingual book, the original's element (with the
        // block's id) and then the translation's.
        let mut element = |tag: &str, class: Option<&str>, text: &str| {
            let class_attr = |extra: Option<&str>| {
                let classes: Vec<&str> = class.into_iter().chain(extra).collect();
                if classes.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"{}\"", classes.join(" "))
                }
            };
            match sides.and_then(|s| Some((s, s.originals.get(i)?))) {
                None => writeln!(out, "<{tag}{}{id}>{text}</{tag}>", class_attr(None)),
                Some((sides, original)) => {
                    let mut original = self.inline(index, original);
                    if tag == "pre" {
                        original = original.replace("<br/>", "\n");
                    }
                    writeln!(
                        out,
                        "<{tag}{}{id}{}>{original}</{tag}>\n<{tag}{}{}>{text}</{tag}>",
                        class_attr(Some(ORIGINAL_CLASS)),
                        sides.source_attrs,
                        class_attr(None),
                        sides.target_attrs,
                    )
                }
            }
        };
        let _ = match &block.kind {
            BlockKind::Heading { level } => {
                let level = (*level).clamp(1, 6);
                element(&format!("h{level}"), None, &text)
            }
            BlockKind::Paragraph => element("p", None, &text),
            // Inside its quotation, or one of its note's paragraphs.
            BlockKind::Quote if in_quote => element("p", None, &text),
            BlockKind::Footnote { .. } => element("p", None, &text),
            // A quotation in no group (a manuscript stored without groups): one per block.
            BlockKind::Quote => writeln!(
                out,
                "<blockquote{id}>{extra}{}</blockquote>",
                self.wrapped_in_p(index, block, sides, i)
            ),
            // A line number set apart, at the line's end (see `CSS`).
            BlockKind::Line if super::line_number(&block.text).is_some() => {
                element("p", Some("line numbered"), &text)
            }
            BlockKind::Line => element("p", Some("line"), &text),
            BlockKind::Preformatted => element("pre", None, &text.replace("<br/>", "\n")),
            BlockKind::Image { asset } => match self.asset_files.get(asset) {
                Some(file) if in_figure => writeln!(
                    out,
                    "{extra}<img{id} src=\"images/{}\" alt=\"{}\"/>",
                    escape_attr(file),
                    escape_attr(&block.plain_text())
                ),
                Some(file) => writeln!(
                    out,
                    "<figure{id}>{extra}<img src=\"images/{}\" alt=\"{}\"/></figure>",
                    escape_attr(file),
                    escape_attr(&block.plain_text())
                ),
                // The image is gone; its description is not.
                None => element("p", None, &text),
            },
            BlockKind::ListItem { .. } | BlockKind::TableCell { .. } => Ok(()),
        };
    }

    /// Opens the element of a note or group that starts at `block`.
    fn open_frame(
        &self,
        out: &mut String,
        chapter: usize,
        frame: &Frame,
        written: &mut HashSet<String>,
    ) {
        match frame {
            Frame::Note(id) => {
                // The note's own id goes on the aside; the block's other anchors on its text.
                let xml = self
                    .anchors
                    .get(id)
                    .map(|(_, xml)| xml)
                    .filter(|xml| written.insert((*xml).clone()))
                    .map(|xml| format!(" id=\"{}\"", escape_attr(xml)))
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "<aside epub:type=\"footnote\" class=\"footnote\"{xml}>"
                );
                // Its number leads back to where it is first referred to.
                if let (Some(number), Some(href)) =
                    (self.note_numbers.get(id), self.back_href(chapter, id))
                {
                    let _ = write!(
                        out,
                        "<a class=\"backlink\" role=\"doc-backlink\" href=\"{}\">{number}</a>",
                        escape_attr(&href)
                    );
                }
                out.push('\n');
            }
            Frame::Group(group) => {
                let _ = match group.kind {
                    GroupKind::Quote => writeln!(out, "<blockquote>"),
                    GroupKind::Verse => writeln!(out, "<div class=\"poem\">"),
                    GroupKind::Aside => writeln!(out, "<aside class=\"sidebar\">"),
                    GroupKind::Figure => writeln!(out, "<figure>"),
                };
            }
        }
    }

    /// Where a note's number links back to: its first reference.
    fn back_href(&self, from: usize, note: &str) -> Option<String> {
        let (chapter, id) = self.first_refs.get(note)?;
        Some(if *chapter == from {
            format!("#{id}")
        } else {
            format!("{}#{id}", chapter_file(*chapter))
        })
    }

    /// The content of an element that wraps a block's text (a list item, a table cell): the
    /// text itself, or in a bilingual book the original and the translation as paragraphs.
    fn wrapped(
        &self,
        chapter: usize,
        block: &Block,
        sides: Option<&Sides<'_>>,
        at: usize,
    ) -> String {
        match sides.and_then(|s| Some((s, s.originals.get(at)?))) {
            None => self.inline(chapter, block),
            Some(_) => self.wrapped_in_p(chapter, block, sides, at),
        }
    }

    /// As [`Book::wrapped`], the translation alone in a paragraph too (a quotation, a note).
    fn wrapped_in_p(
        &self,
        chapter: usize,
        block: &Block,
        sides: Option<&Sides<'_>>,
        at: usize,
    ) -> String {
        let text = self.inline(chapter, block);
        match sides.and_then(|s| Some((s, s.originals.get(at)?))) {
            None => format!("<p>{text}</p>"),
            Some((sides, original)) => format!(
                "<p class=\"{ORIGINAL_CLASS}\"{}>{}</p><p{}>{text}</p>",
                sides.source_attrs,
                self.inline(chapter, original),
                sides.target_attrs
            ),
        }
    }

    /// The block's first anchor as its id, and its others as empty anchors to put inside it,
    /// each once per file.
    fn id_attr(&self, block: &Block, written: &mut HashSet<String>) -> (String, String) {
        let own = match &block.kind {
            BlockKind::Footnote { id } => Some(id),
            _ => None,
        };
        let ids: Vec<&String> = own
            .into_iter()
            .chain(&block.anchors)
            .filter_map(|a| self.anchors.get(a).map(|(_, id)| id))
            .filter(|id| written.insert((*id).clone()))
            .collect();
        let attr = ids
            .first()
            .map(|id| format!(" id=\"{}\"", escape_attr(id)))
            .unwrap_or_default();
        let extra = ids
            .iter()
            .skip(1)
            .map(|id| format!("<a id=\"{}\"></a>", escape_attr(id)))
            .collect();
        (attr, extra)
    }

    /// The block's markup as XHTML phrasing content.
    fn inline(&self, chapter: usize, block: &Block) -> String {
        let pieces = match markup::parse(&block.text) {
            Ok(pieces) => pieces,
            Err(_) => return escape_text(&block.plain_text()),
        };
        let mut out = String::with_capacity(block.text.len() + 16);
        // Closing tags for open links: a link to a missing target renders as plain text.
        let mut links: Vec<bool> = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(&escape_text(&t)),
                Piece::Tag(Tag::Open { name: "a", attr }) => {
                    let href = attr.as_deref().and_then(|h| match h.strip_prefix('#') {
                        Some(anchor) => self.href(chapter, anchor),
                        None => Some(h.to_string()),
                    });
                    // No links inside links: the inner one becomes text.
                    match href.filter(|_| !links.contains(&true)) {
                        Some(href) => {
                            let _ = write!(out, "<a href=\"{}\">", escape_attr(&href));
                            links.push(true);
                        }
                        None => links.push(false),
                    }
                }
                Piece::Tag(Tag::Close("a")) => {
                    if links.pop() == Some(true) {
                        out.push_str("</a>");
                    }
                }
                Piece::Tag(Tag::Open { name: "keep", .. }) => {
                    out.push_str(r#"<span translate="no">"#);
                }
                // The book's own marks, as a `span` of their class.
                Piece::Tag(Tag::Open {
                    name: "span",
                    attr: Some(class),
                }) => {
                    let _ = write!(out, "<span class=\"{}\">", escape_attr(&class));
                }
                Piece::Tag(Tag::Num { class, text }) => {
                    let class = class
                        .map(|c| format!(" class=\"{}\"", escape_attr(&c)))
                        .unwrap_or_default();
                    let _ = write!(out, "<span{class}>{}</span>", escape_text(&text));
                }
                Piece::Tag(Tag::Open { name, .. }) => {
                    let _ = write!(out, "<{}>", html_name(name));
                }
                Piece::Tag(Tag::Close(name)) => {
                    let _ = write!(out, "</{}>", html_name(name));
                }
                Piece::Tag(Tag::Empty { name: "br", .. }) => out.push_str("<br/>"),
                Piece::Tag(Tag::Empty {
                    name: "ref",
                    attr: Some(id),
                }) => {
                    let number = self.note_numbers.get(&id).copied().unwrap_or(0);
                    // The first reference is where the note's number links back to.
                    let ref_id = self
                        .first_refs
                        .get(&id)
                        .filter(|(c, xml)| {
                            *c == chapter && self.refs_written.borrow_mut().insert(xml.clone())
                        })
                        .map(|(_, xml)| format!(" id=\"{}\"", escape_attr(xml)))
                        .unwrap_or_default();
                    match self.href(chapter, &id).filter(|_| !links.contains(&true)) {
                        Some(href) => {
                            let _ = write!(
                                out,
                                "<sup{ref_id}><a epub:type=\"noteref\" href=\"{}\">{number}</a></sup>",
                                escape_attr(&href)
                            );
                        }
                        None => {
                            let _ = write!(out, "<sup{ref_id}>{number}</sup>");
                        }
                    }
                }
                Piece::Tag(Tag::Empty { .. }) => {}
            }
        }
        out
    }
}

/// An element open around blocks: a note (its id), or a group of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Frame {
    Note(String),
    Group(Group),
}

/// The elements a block sits in, outermost first: its note, then its groups.
fn frames_of(block: &Block) -> Vec<Frame> {
    let note = match &block.kind {
        BlockKind::Footnote { id } => Some(Frame::Note(id.clone())),
        _ => None,
    };
    note.into_iter()
        .chain(block.groups.iter().copied().map(Frame::Group))
        .collect()
}

fn close_frame(out: &mut String, frame: &Frame, caption: &mut bool) {
    let _ = match frame {
        Frame::Note(_) => writeln!(out, "</aside>"),
        Frame::Group(group) => match group.kind {
            GroupKind::Quote => writeln!(out, "</blockquote>"),
            GroupKind::Verse => writeln!(out, "</div>"),
            GroupKind::Aside => writeln!(out, "</aside>"),
            GroupKind::Figure => {
                if std::mem::take(caption) {
                    out.push_str("</figcaption>");
                }
                writeln!(out, "</figure>")
            }
        },
    };
}

/// The blocks of one chapter being written, with their originals in a bilingual book, and the
/// frames (notes, groups) the block being written sits in.
struct Run<'a, 's> {
    index: usize,
    blocks: &'a [Block],
    sides: Option<&'a Sides<'s>>,
    frames: &'a [Frame],
}

impl Run<'_, '_> {
    /// Whether `block` sits in the same frames, so that it joins the list or table being written.
    fn holds(&self, block: &Block) -> bool {
        frames_of(block) == self.frames
    }
}

/// A bilingual chapter's originals, block for block, and each side's language attributes.
struct Sides<'a> {
    originals: &'a [Block],
    source_attrs: String,
    target_attrs: String,
}

impl<'a> Sides<'a> {
    fn new(originals: &'a [Block], source: &str, target: &str) -> Sides<'a> {
        Sides {
            originals,
            source_attrs: language_attrs(source),
            target_attrs: language_attrs(target),
        }
    }
}

/// `lang`, `xml:lang` and `dir`: each side of a bilingual page says all three, so neither
/// depends on the page's.
fn language_attrs(lang: &str) -> String {
    let dir = if is_rtl(lang) { "rtl" } else { "ltr" };
    let lang = escape_attr(lang);
    format!(r#" lang="{lang}" xml:lang="{lang}" dir="{dir}""#)
}

fn html_name(tag: &str) -> &str {
    match tag {
        "i" => "em",
        "b" => "strong",
        "keep" => "span",
        other => other,
    }
}

/// A valid XML id from any anchor text.
fn xml_id(anchor: &str) -> String {
    let mut id: String = anchor
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if !id
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
    {
        id.insert(0, 'a');
    }
    id
}

fn unique_id(base: &str, used: &mut HashSet<String>) -> String {
    let mut id = base.to_string();
    let mut n = 1;
    while !used.insert(id.clone()) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}
