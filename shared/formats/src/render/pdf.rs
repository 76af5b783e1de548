//! PDF output with printpdf: embedded Unicode fonts (DejaVu Sans covers Latin, Greek, Cyrillic,
//! Arabic and Hebrew; further fonts, such as a CJK one, can be passed as fallbacks), text shaped
//! with rustybuzz (so Arabic letters join), greedy line breaking with ragged margins (right for
//! left-to-right text, left for right-to-left), a title page, a table of contents with page
//! numbers, one PDF bookmark per chapter, page numbers and images.
//!
//! Inline marks are not drawn (the text is). Footnote references print the note's number in
//! brackets; referenced notes are set after their chapter's text, numbered, in a smaller size.
//! Block quotations and sidebars are indented, a poem's lines each start a line, list items
//! carry their bullet or number and are indented by depth, and headings are sized by level.

use std::collections::HashMap;

use printpdf::{
    Codepoint, FontId, FontParseSeverity, Mm, Op, ParsedFont, PdfDocument, PdfFontHandle, PdfPage,
    Pt, TextItem, TextMatrix, XObjectId, XObjectTransform,
};

use self::document::{describe, serialise, WriterNotes};
use self::images::{load_images, Images};
use super::{chapter_title, is_rtl, RenderOptions, Rendition, Sources};
use crate::error::FormatError;
use crate::gzipped::Gzipped;
use crate::manuscript::{Block, BlockKind, Chapter, GroupKind, Manuscript};
use crate::markup::{self, Piece, Tag};

/// DejaVu Sans, kept gzipped (`gzip -9 -n` of the TTF files): 0.7 MB less in every binary that
/// renders PDFs.
static REGULAR: Gzipped = Gzipped::new(include_bytes!("../../fonts/DejaVuSans.ttf.gz"));
static BOLD: Gzipped = Gzipped::new(include_bytes!("../../fonts/DejaVuSans-Bold.ttf.gz"));

// A5 portrait, in points.
const PAGE_W: f32 = 419.53;
const PAGE_H: f32 = 595.28;
const MARGIN_X: f32 = 48.0;
const MARGIN_TOP: f32 = 56.0;
const MARGIN_BOTTOM: f32 = 62.0;
const CONTENT_W: f32 = PAGE_W - 2.0 * MARGIN_X;

const BODY: f32 = 10.5;
const NOTE: f32 = 8.5;

/// A font as the layout uses it: shaping face, PDF resource, and its units.
struct Font<'a> {
    face: rustybuzz::Face<'a>,
    parsed: ParsedFont,
    id: FontId,
    units_per_em: f32,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Weight {
    Regular,
    Bold,
}

/// A word shaped in one font: its glyphs and width in em.
struct Shaped {
    font: usize,
    glyphs: Vec<Codepoint>,
    width_em: f32,
}

struct Layout<'a> {
    fonts: Vec<Font<'a>>,
    /// Indexes into `fonts`: the regular face first, then fallbacks; and the bold face.
    regular: Vec<usize>,
    bold: usize,
    cache: HashMap<(Weight, String), std::rc::Rc<Shaped>>,
    pages: Vec<Vec<Op>>,
    y: f32,
}

/// Renders the manuscript as a PDF. `fallback_fonts` are tried, in order, for words the
/// embedded font cannot show (such as CJK). Images past the pixel budgets, or that do not
/// decode, are left out (their alternative text stays), and the rendition's warnings say so, as
/// they say what printpdf reported wrong while it read the fonts or wrote the file.
pub fn render(
    manuscript: &Manuscript,
    options: &RenderOptions,
    fallback_fonts: &[Vec<u8>],
) -> Result<Rendition, FormatError> {
    render_with(manuscript, None, options, fallback_fonts)
}

/// Renders a bilingual PDF: `manuscript`'s chapters are the translation, `sources` what each
/// was translated from, block for block (else [`FormatError::Mismatch`]).
///
/// Each block is a row of two columns, the original in the source language's direction beside
/// the translation in the target's: the row is as tall as the taller side and the next row
/// starts below both; a row that does not fit the rest of the page starts a new one, and only a
/// row taller than a page is split across pages. The original is always the left column and
/// the translation the right one, whatever the directions: text extractors and screen readers
/// (poppler's `pdftotext` among them) read a row's columns left to right unless most of the
/// page's letters are right-to-left ones, and the Arabic and Hebrew scripts, which leave short
/// vowels unwritten, take fewer letters than the same text in the languages they are
/// translated from or into, so the extracted text is each original followed by its
/// translation. Each side is set in its own direction (right-to-left text right-aligned and
/// shaped as in [`render`]). Headings sit in the columns like any block, the chapter's title
/// too (original beside translation); an image is drawn once across the page, its caption
/// (alternative text) then set as a row. The title page, contents and bookmarks are the
/// translation's, as in [`render`].
pub fn render_bilingual(
    manuscript: &Manuscript,
    sources: Sources<'_>,
    options: &RenderOptions,
    fallback_fonts: &[Vec<u8>],
) -> Result<Rendition, FormatError> {
    sources.check(&manuscript.chapters)?;
    render_with(manuscript, Some(sources), options, fallback_fonts)
}

/// The fonts and images first, then the pages: the title page, the chapters, and the contents,
/// which must know where the chapters start; then the bookmarks, the page numbers and the
/// document's information, and the file written out.
fn render_with(
    manuscript: &Manuscript,
    sources: Option<Sources<'_>>,
    options: &RenderOptions,
    fallback_fonts: &[Vec<u8>],
) -> Result<Rendition, FormatError> {
    let title = options
        .title
        .clone()
        .or_else(|| manuscript.title.clone())
        .unwrap_or_else(|| "Untitled".into());
    let author = options.author.as_ref().or(manuscript.author.as_ref());
    let rtl = is_rtl(&options.language);
    let mut doc = PdfDocument::new(&title);
    let mut writer = WriterNotes::default();
    let mut layout = Layout::with_fonts(&mut doc, fallback_fonts, &mut writer)?;
    let (images, left_out) = load_images(&mut doc, manuscript, options.budget);

    let title_pages = layout.title_page(&title, author.map(String::as_str), rtl);
    let chapters = layout.chapters(manuscript, sources, &images, rtl);
    let contents = layout.contents(
        manuscript,
        &chapters.starts,
        title_pages.len(),
        &options.language,
        rtl,
    );
    let first_chapter_page = title_pages.len() + contents.len();
    bookmark_chapters(&mut doc, manuscript, &chapters.starts, first_chapter_page);
    let pages = layout.number_pages(title_pages, contents, chapters.pages);
    describe(
        &mut doc,
        title,
        author.cloned().unwrap_or_default(),
        options,
    );
    let bytes = serialise(doc.with_pages(pages), &options.language, &mut writer)?;
    let mut warnings = left_out.warnings(options.budget);
    warnings.extend(writer.warning());
    Ok(Rendition { bytes, warnings })
}

/// The pages a book's chapters take, and the page each chapter starts on (counted from the
/// first chapter's).
struct ChapterPages {
    pages: Vec<Vec<Op>>,
    starts: Vec<usize>,
}

/// One bookmark per chapter, at its first page.
fn bookmark_chapters(
    doc: &mut PdfDocument,
    manuscript: &Manuscript,
    starts: &[usize],
    first_chapter_page: usize,
) {
    for (index, chapter) in manuscript.chapters.iter().enumerate() {
        doc.add_bookmark(
            &chapter_title(chapter, index),
            first_chapter_page + starts[index] + 1,
        );
    }
}

fn built_in(font: &'static Gzipped) -> Result<&'static [u8], FormatError> {
    font.plain()
        .ok_or_else(|| FormatError::Malformed("a built-in PDF font does not unzip".into()))
}

/// Reads a font and adds it to the document; `about` names it in the writer's notes.
fn load_font<'a>(
    doc: &mut PdfDocument,
    bytes: &'a [u8],
    about: &str,
    fonts: &mut Vec<Font<'a>>,
    writer: &mut WriterNotes,
) -> Result<usize, FormatError> {
    let broken = || FormatError::Malformed(format!("{about} for the PDF could not be read"));
    let face = rustybuzz::Face::from_slice(bytes, 0).ok_or_else(broken)?;
    let mut messages = Vec::new();
    let parsed = ParsedFont::from_bytes(bytes, 0, &mut messages);
    for message in &messages {
        let serious = message.severity != FontParseSeverity::Info;
        writer.note(&format!("reading {about}"), serious, &message.message);
    }
    let parsed = parsed.ok_or_else(broken)?;
    let id = doc.add_font(&parsed);
    let units_per_em = f32::from(face.units_per_em().max(1) as u16);
    fonts.push(Font {
        face,
        parsed,
        id,
        units_per_em,
    });
    Ok(fonts.len() - 1)
}

fn contents_word(language: &str) -> String {
    match language.split('-').next().unwrap_or_default() {
        "es" => "Índice",
        "fr" => "Table des matières",
        "de" => "Inhalt",
        "it" => "Indice",
        "pt" => "Índice",
        "ar" => "المحتويات",
        _ => "Contents",
    }
    .to_string()
}

/// Right-to-left when the chapter's first strong character is Arabic or Hebrew.
fn chapter_direction(chapter: &Chapter) -> Option<bool> {
    chapter
        .blocks
        .iter()
        .find_map(|b| text_direction(&b.plain_text()))
}

fn text_direction(text: &str) -> Option<bool> {
    text.chars().find_map(|c| {
        if is_rtl_char(c) {
            Some(true)
        } else if c.is_alphabetic() {
            Some(false)
        } else {
            None
        }
    })
}

fn is_rtl_char(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Start,
    Center,
}

/// A column text is set in: its left edge and width, in points.
#[derive(Clone, Copy)]
struct Frame {
    x: f32,
    width: f32,
}

/// The page's single column.
const FULL: Frame = Frame {
    x: MARGIN_X,
    width: CONTENT_W,
};

/// The space between the columns of a bilingual page.
const GUTTER: f32 = 16.0;

/// What a block lays out as, before it is put on a page: each piece knows its height, so a
/// bilingual row can be measured before it is placed.
enum Item {
    /// Space down (not carried over to a new page).
    Gap(f32),
    /// Starts a new page unless this much room is left (a heading kept with what follows).
    Keep(f32),
    Line(Line),
    Image {
        id: XObjectId,
        px_w: f32,
        w: f32,
        h: f32,
    },
}

/// One line of shaped words, its start measured from the frame's left edge.
struct Line {
    words: Vec<std::rc::Rc<Shaped>>,
    size: f32,
    leading: f32,
    space: f32,
    x: f32,
    rtl: bool,
    /// A verse line's number, set in the margin the line leaves it (see [`Margin`]).
    margin: Option<Margin>,
}

/// A word set apart at a line's end: a verse line's number (`<span class="lnum">` in the
/// source), at the frame's right edge (its left edge for right-to-left text), in the notes'
/// size, with the verse kept clear of it.
struct Margin {
    word: std::rc::Rc<Shaped>,
    /// From the frame's left edge.
    x: f32,
    size: f32,
}

impl Item {
    /// The height it takes when nothing moves it to a new page.
    fn height(&self) -> f32 {
        match self {
            Item::Gap(h) => *h,
            Item::Keep(_) => 0.0,
            Item::Line(line) => line.leading,
            Item::Image { h, .. } => h + 4.0,
        }
    }
}

/// Where the next item goes: a page (an index into the pages being laid out) and a height.
#[derive(Clone, Copy, PartialEq)]
struct Cursor {
    page: usize,
    y: f32,
}

impl Cursor {
    /// The one further down the book.
    fn lower(self, other: Cursor) -> Cursor {
        if other.page > self.page || (other.page == self.page && other.y < self.y) {
            other
        } else {
            self
        }
    }
}

/// The two columns of a bilingual page, and the direction each side's text runs in when it
/// does not say (by its first strong character).
struct Columns {
    original: Frame,
    translation: Frame,
    original_rtl: bool,
    translation_rtl: bool,
}

impl Columns {
    /// The original on the left, the translation on the right (see [`render_bilingual`]).
    fn new(translation_rtl: bool, original_rtl: bool) -> Columns {
        let width = (CONTENT_W - GUTTER) / 2.0;
        let left = Frame { x: MARGIN_X, width };
        let right = Frame {
            x: MARGIN_X + width + GUTTER,
            width,
        };
        Columns {
            original: left,
            translation: right,
            original_rtl,
            translation_rtl,
        }
    }
}

impl<'a> Layout<'a> {
    /// A layout with the built-in faces, regular and bold, and the fallbacks after the regular
    /// one, each added to the document.
    fn with_fonts(
        doc: &mut PdfDocument,
        fallback_fonts: &'a [Vec<u8>],
        writer: &mut WriterNotes,
    ) -> Result<Self, FormatError> {
        let mut fonts = Vec::new();
        let regular = built_in(&REGULAR)?;
        let regular = load_font(doc, regular, "the font DejaVu Sans", &mut fonts, writer)?;
        let bold = built_in(&BOLD)?;
        let bold = load_font(doc, bold, "the font DejaVu Sans Bold", &mut fonts, writer)?;
        let mut chain = vec![regular];
        for (n, bytes) in fallback_fonts.iter().enumerate() {
            let about = format!("fallback font {}", n + 1);
            chain.push(load_font(doc, bytes, &about, &mut fonts, writer)?);
        }
        Ok(Layout {
            fonts,
            regular: chain,
            bold,
            cache: HashMap::new(),
            pages: Vec::new(),
            y: 0.0,
        })
    }
}

/// One chapter ready to be set: its heading, its blocks in the order printed and how each is
/// set.
struct ChapterPlan<'c> {
    blocks: &'c [Block],
    heading: String,
    plan: Plan,
    /// The plan's order, less a first heading that repeats the chapter's title.
    order: Vec<usize>,
    rtl: bool,
}

impl Layout<'_> {
    /// The title page: the title, and the author when known.
    fn title_page(&mut self, title: &str, author: Option<&str>, rtl: bool) -> Vec<Vec<Op>> {
        self.new_page();
        self.y = PAGE_H * 0.62;
        self.paragraph(title, 22.0, Weight::Bold, Align::Center, rtl);
        if let Some(author) = author {
            self.y -= 12.0;
            self.paragraph(author, 13.0, Weight::Regular, Align::Center, rtl);
        }
        std::mem::take(&mut self.pages)
    }

    /// Every chapter, each from a new page, beside its source when there are `sources`.
    fn chapters(
        &mut self,
        manuscript: &Manuscript,
        sources: Option<Sources<'_>>,
        images: &Images,
        rtl_book: bool,
    ) -> ChapterPages {
        let notes = manuscript.note_numbers();
        let mut starts = Vec::new();
        for (index, chapter) in manuscript.chapters.iter().enumerate() {
            self.new_page();
            starts.push(self.pages.len() - 1);
            let heading = chapter_title(chapter, index);
            let repeats_heading = chapter.blocks.first().is_some_and(|first| {
                matches!(first.kind, BlockKind::Heading { .. })
                    && first.plain_text().trim() == heading.trim()
            });
            let skip = usize::from(repeats_heading);
            let plan = Plan::of(&chapter.blocks, &notes);
            let set = ChapterPlan {
                blocks: &chapter.blocks,
                heading,
                order: plan.order.iter().copied().filter(|&k| k >= skip).collect(),
                plan,
                rtl: chapter_direction(chapter).unwrap_or(rtl_book),
            };
            self.y -= 20.0;
            match sources.and_then(|s| Some((s, s.chapters.get(index)?))) {
                None => self.chapter_alone(&set, &notes, images),
                Some((sources, source)) => {
                    let columns = Columns::new(
                        set.rtl,
                        chapter_direction(source).unwrap_or(is_rtl(sources.language)),
                    );
                    let source_heading = chapter_title(source, index);
                    self.chapter_beside(&set, source, &source_heading, &columns, &notes, images);
                }
            }
        }
        ChapterPages {
            pages: std::mem::take(&mut self.pages),
            starts,
        }
    }

    /// A chapter's heading and blocks down the page; a table's cells side by side.
    fn chapter_alone(
        &mut self,
        chapter: &ChapterPlan<'_>,
        notes: &HashMap<String, usize>,
        images: &Images,
    ) {
        self.paragraph(
            &chapter.heading,
            17.0,
            Weight::Bold,
            Align::Start,
            chapter.rtl,
        );
        self.y -= 8.0;
        let order = &chapter.order;
        let mut at = 0;
        while let Some(&k) = order.get(at) {
            if chapter.plan.notes_from == Some(k) {
                self.y -= 14.0;
            }
            let setting = &chapter.plan.settings[k];
            let block = &chapter.blocks[k];
            // A table's row: its cells side by side.
            if let BlockKind::TableCell { table, row, .. } = block.kind {
                let cells: Vec<&Block> = order[at..]
                    .iter()
                    .map(|&k| &chapter.blocks[k])
                    .take_while(|b| {
                        matches!(b.kind, BlockKind::TableCell { table: t, row: r, .. }
                            if t == table && r == row)
                    })
                    .collect();
                at += cells.len();
                self.table_row(&cells, setting, notes, chapter.rtl);
                continue;
            }
            self.block(block, setting, notes, images, chapter.rtl);
            at += 1;
        }
    }

    /// A chapter's heading and blocks each beside its original.
    fn chapter_beside(
        &mut self,
        chapter: &ChapterPlan<'_>,
        source: &Chapter,
        source_heading: &str,
        columns: &Columns,
        notes: &HashMap<String, usize>,
        images: &Images,
    ) {
        self.heading_row(columns, source_heading, &chapter.heading);
        self.y -= 8.0;
        for &k in &chapter.order {
            let (Some(block), Some(original)) = (chapter.blocks.get(k), source.blocks.get(k))
            else {
                continue;
            };
            if chapter.plan.notes_from == Some(k) {
                self.y -= 14.0;
            }
            let setting = &chapter.plan.settings[k];
            self.row(columns, original, block, setting, notes, images);
        }
    }

    /// The table of contents. Its own length moves the chapters, so it is laid out until its
    /// page count settles.
    fn contents(
        &mut self,
        manuscript: &Manuscript,
        starts: &[usize],
        title_pages: usize,
        language: &str,
        rtl: bool,
    ) -> Vec<Vec<Op>> {
        let mut toc_len = 1;
        loop {
            let first_chapter_page = title_pages + toc_len;
            self.new_page();
            let title = contents_word(language);
            self.paragraph(&title, 17.0, Weight::Bold, Align::Start, rtl);
            self.y -= 8.0;
            for (index, chapter) in manuscript.chapters.iter().enumerate() {
                let page = first_chapter_page + starts[index] + 1;
                self.paragraph(
                    &format!("{}  {page}", chapter_title(chapter, index)),
                    BODY,
                    Weight::Regular,
                    Align::Start,
                    rtl,
                );
            }
            let pages = std::mem::take(&mut self.pages);
            if pages.len() == toc_len || toc_len > 64 {
                return pages;
            }
            toc_len = pages.len();
        }
    }

    /// The book's pages in order, numbered from the contents on.
    fn number_pages(
        &mut self,
        title: Vec<Vec<Op>>,
        contents: Vec<Vec<Op>>,
        chapters: Vec<Vec<Op>>,
    ) -> Vec<PdfPage> {
        let numbered_from = title.len();
        let all = title.into_iter().chain(contents).chain(chapters);
        all.enumerate()
            .map(|(index, mut ops)| {
                if index >= numbered_from {
                    self.page_number(&mut ops, index + 1);
                }
                PdfPage::new(Mm::from(Pt(PAGE_W)), Mm::from(Pt(PAGE_H)), ops)
            })
            .collect()
    }

    fn new_page(&mut self) {
        self.pages.push(Vec::new());
        self.y = PAGE_H - MARGIN_TOP;
    }

    fn shape(&mut self, word: &str, weight: Weight) -> std::rc::Rc<Shaped> {
        let key = (weight, word.to_string());
        if let Some(hit) = self.cache.get(&key) {
            return hit.clone();
        }
        let chain: Vec<usize> = match weight {
            Weight::Regular => self.regular.clone(),
            Weight::Bold => std::iter::once(self.bold)
                .chain(self.regular.iter().copied())
                .collect(),
        };
        // The first font that has every character; else the first of the chain.
        let font = chain
            .iter()
            .copied()
            .find(|&f| {
                word.chars()
                    .all(|c| c.is_whitespace() || self.fonts[f].face.glyph_index(c).is_some())
            })
            .unwrap_or(chain[0]);
        let shaped = std::rc::Rc::new(shape_with(&self.fonts[font], font, word));
        self.cache.insert(key, shaped.clone());
        shaped
    }

    fn space_em(&mut self) -> f32 {
        self.shape(" ", Weight::Regular).width_em.max(0.25)
    }

    /// Lays out text as wrapped lines across the page; moves `y` down.
    fn paragraph(
        &mut self,
        text: &str,
        size: f32,
        weight: Weight,
        align: Align,
        rtl_default: bool,
    ) {
        let items = self.text_items(text, size, weight, align, rtl_default, 0.0, CONTENT_W);
        self.place_here(&items);
    }

    /// Text as lines `width` wide: greedy breaking, ragged on the side the text ends.
    #[allow(clippy::too_many_arguments)]
    fn text_items(
        &mut self,
        text: &str,
        size: f32,
        weight: Weight,
        align: Align,
        rtl_default: bool,
        indent: f32,
        width: f32,
    ) -> Vec<Item> {
        let rtl = text_direction(text).unwrap_or(rtl_default);
        let leading = size * 1.45;
        let space = self.space_em() * size;
        let mut items = Vec::new();
        for hard_line in text.split('\n') {
            let words: Vec<std::rc::Rc<Shaped>> = hard_line
                .split_whitespace()
                .map(|w| self.shape(w, weight))
                .collect();
            let room = width - indent;
            let mut line: Vec<std::rc::Rc<Shaped>> = Vec::new();
            let mut line_w = 0.0;
            let mut lines = Vec::new();
            for word in words {
                let w = word.width_em * size;
                if !line.is_empty() && line_w + space + w > room {
                    lines.push(std::mem::take(&mut line));
                    line_w = 0.0;
                }
                line_w += if line.is_empty() { w } else { space + w };
                line.push(word);
            }
            if !line.is_empty() || lines.is_empty() {
                lines.push(line);
            }
            for words in lines {
                let line_w: f32 = words.iter().map(|w| w.width_em * size).sum::<f32>()
                    + space * words.len().saturating_sub(1) as f32;
                let x = match (align, rtl) {
                    (Align::Center, _) => (width - line_w) / 2.0,
                    (Align::Start, false) => indent,
                    (Align::Start, true) => width - indent - line_w,
                };
                items.push(Item::Line(Line {
                    words,
                    size,
                    leading,
                    space,
                    x,
                    rtl,
                    margin: None,
                }));
            }
        }
        items
    }

    /// Places items in the page's single column from `y` on the last page.
    fn place_here(&mut self, items: &[Item]) {
        if self.pages.is_empty() {
            self.new_page();
        }
        let mut cursor = Cursor {
            page: self.pages.len() - 1,
            y: self.y,
        };
        self.place(items, FULL, &mut cursor);
        self.y = cursor.y;
    }

    /// Moves the cursor to the top of the next page, adding one when there is none yet.
    fn next_page(&mut self, cursor: &mut Cursor) {
        if cursor.page + 1 >= self.pages.len() {
            self.pages.push(Vec::new());
        }
        cursor.page += 1;
        cursor.y = PAGE_H - MARGIN_TOP;
    }

    /// Places items in `frame` from `cursor` on, breaking pages where they do not fit.
    fn place(&mut self, items: &[Item], frame: Frame, cursor: &mut Cursor) {
        for item in items {
            match item {
                Item::Gap(h) => cursor.y -= h,
                Item::Keep(h) => {
                    if cursor.y - h < MARGIN_BOTTOM {
                        self.next_page(cursor);
                    }
                }
                Item::Line(line) => {
                    if cursor.y - line.leading < MARGIN_BOTTOM {
                        self.next_page(cursor);
                    }
                    cursor.y -= line.leading;
                    let ops = self.line_ops(line, frame.x + line.x, cursor.y);
                    self.pages[cursor.page].extend(ops);
                }
                Item::Image { id, px_w, w, h } => {
                    if cursor.y - (h + 8.0) < MARGIN_BOTTOM {
                        self.next_page(cursor);
                    }
                    cursor.y -= h + 4.0;
                    let x = frame.x + (frame.width - w) / 2.0;
                    // At `dpi`, one pixel is 72/dpi points: choose it so the image is `w`
                    // points wide.
                    let dpi = px_w * 72.0 / w;
                    self.pages[cursor.page].push(Op::UseXobject {
                        id: id.clone(),
                        transform: XObjectTransform {
                            translate_x: Some(Pt(x)),
                            translate_y: Some(Pt(cursor.y)),
                            dpi: Some(dpi),
                            ..Default::default()
                        },
                    });
                }
            }
        }
    }

    fn line_ops(&self, line: &Line, start: f32, y: f32) -> Vec<Op> {
        // Right-to-left lines run from the right: words are placed in reverse.
        let ordered: Vec<&std::rc::Rc<Shaped>> = if line.rtl {
            line.words.iter().rev().collect()
        } else {
            line.words.iter().collect()
        };
        let mut x = start;
        let mut ops = Vec::with_capacity(ordered.len() * 3 + 2);
        ops.push(Op::StartTextSection);
        let mut current_font = None;
        for word in ordered {
            if current_font != Some(word.font) {
                ops.push(Op::SetFont {
                    font: PdfFontHandle::External(self.fonts[word.font].id.clone()),
                    size: Pt(line.size),
                });
                current_font = Some(word.font);
            }
            ops.push(Op::SetTextMatrix {
                matrix: TextMatrix::Translate(Pt(x), Pt(y)),
            });
            ops.push(Op::ShowText {
                items: vec![TextItem::GlyphIds(word.glyphs.clone())],
            });
            x += word.width_em * line.size + line.space;
        }
        if let Some(margin) = &line.margin {
            ops.push(Op::SetFont {
                font: PdfFontHandle::External(self.fonts[margin.word.font].id.clone()),
                size: Pt(margin.size),
            });
            ops.push(Op::SetTextMatrix {
                matrix: TextMatrix::Translate(Pt(start - line.x + margin.x), Pt(y)),
            });
            ops.push(Op::ShowText {
                items: vec![TextItem::GlyphIds(margin.word.glyphs.clone())],
            });
        }
        ops.push(Op::EndTextSection);
        ops
    }

    fn block(
        &mut self,
        block: &Block,
        setting: &Setting,
        notes: &HashMap<String, usize>,
        images: &Images,
        rtl: bool,
    ) {
        let items = self.block_items(block, setting, notes, Some(images), rtl, CONTENT_W);
        self.place_here(&items);
    }

    /// A block laid out `width` wide. Without `images`, an image block is its caption alone
    /// (a bilingual page draws the image once, across both columns).
    fn block_items(
        &mut self,
        block: &Block,
        setting: &Setting,
        notes: &HashMap<String, usize>,
        images: Option<&Images>,
        rtl: bool,
        width: f32,
    ) -> Vec<Item> {
        let text = printable(&block.text, notes);
        let mut items = Vec::new();
        if setting.gap_before > 0.0 {
            items.push(Item::Gap(setting.gap_before));
        }
        match &block.kind {
            BlockKind::Line => {
                if let Some((verse, number)) = super::line_number(&block.text) {
                    let verse = printable_pieces(verse, notes);
                    let indent = setting.indent + 8.0;
                    items.extend(self.numbered_line(&verse, &number, rtl, indent, width));
                    return items;
                }
            }
            BlockKind::Image { asset } => {
                if let Some((id, w, h)) = images.and_then(|i| i.get(asset)) {
                    items.extend(self.image_items(id, *w, *h, &text, width));
                    return items;
                }
            }
            _ => {}
        }
        let style = TextStyle::of(block, setting, notes);
        if let BlockKind::Heading { .. } = block.kind {
            items.push(Item::Gap(style.size * 0.6));
            items.push(Item::Keep(style.size * 3.0));
        }
        let text = format!("{}{text}", style.lead);
        items.extend(self.text_items(
            &text,
            style.size,
            style.weight,
            style.align,
            rtl,
            style.indent,
            width,
        ));
        if style.gap_after > 0.0 {
            items.push(Item::Gap(style.gap_after));
        }
        items
    }

    /// A verse line with its number at the end of its last line, in the margin: the verse is
    /// set clear of the number's width, which sits at the frame's far side (the right, or the
    /// left for right-to-left text), so the number never runs into the verse's last word.
    fn numbered_line(
        &mut self,
        verse: &str,
        number: &str,
        rtl_default: bool,
        indent: f32,
        width: f32,
    ) -> Vec<Item> {
        let rtl = text_direction(verse).unwrap_or(rtl_default);
        let word = self.shape(number.trim(), Weight::Regular);
        let reserve = word.width_em * NOTE + BODY;
        let mut items = self.text_items(
            verse,
            BODY,
            Weight::Regular,
            Align::Start,
            rtl,
            indent,
            (width - reserve).max(width / 2.0),
        );
        let last = items.iter_mut().rev().find_map(|item| match item {
            Item::Line(line) => Some(line),
            _ => None,
        });
        if let Some(line) = last {
            line.margin = Some(Margin {
                x: if rtl {
                    0.0
                } else {
                    width - word.width_em * NOTE
                },
                word,
                size: NOTE,
            });
        }
        if rtl {
            // Right-aligned to the narrower measure: moved across to the frame's right edge.
            for item in &mut items {
                if let Item::Line(line) = item {
                    line.x += width - (width - reserve).max(width / 2.0);
                }
            }
        }
        items
    }

    /// A table's row: its cells side by side in equal columns, the next row below the tallest.
    fn table_row(
        &mut self,
        cells: &[&Block],
        setting: &Setting,
        notes: &HashMap<String, usize>,
        rtl: bool,
    ) {
        if self.pages.is_empty() {
            self.new_page();
        }
        let count = cells.len().max(1) as f32;
        let left = MARGIN_X + setting.indent;
        let width = (CONTENT_W - setting.indent - GUTTER * (count - 1.0)) / count;
        let plain = Setting::default();
        let columns: Vec<Vec<Item>> = cells
            .iter()
            .map(|cell| self.block_items(cell, &plain, notes, None, rtl, width))
            .collect();
        let height = columns
            .iter()
            .map(|items| items.iter().map(Item::height).sum::<f32>())
            .fold(0.0, f32::max);
        if self.y - height < MARGIN_BOTTOM && height <= PAGE_H - MARGIN_TOP - MARGIN_BOTTOM {
            self.new_page();
        }
        let start = Cursor {
            page: self.pages.len() - 1,
            y: self.y,
        };
        let mut end = start;
        for (index, items) in columns.iter().enumerate() {
            // Right-to-left tables run from the right.
            let column = if rtl { cells.len() - 1 - index } else { index };
            let frame = Frame {
                x: left + column as f32 * (width + GUTTER),
                width,
            };
            let mut cursor = start;
            self.place_kept_apart(items, frame, &mut cursor);
            end = end.lower(cursor);
        }
        self.y = end.y;
    }

    /// A chapter's title in both languages, each in its column.
    fn heading_row(&mut self, columns: &Columns, original: &str, translation: &str) {
        let width = columns.original.width;
        let bold = Weight::Bold;
        let original = self.text_items(
            original,
            17.0,
            bold,
            Align::Start,
            columns.original_rtl,
            0.0,
            width,
        );
        let translation = self.text_items(
            translation,
            17.0,
            bold,
            Align::Start,
            columns.translation_rtl,
            0.0,
            width,
        );
        self.place_row(columns, &original, &translation);
    }

    /// A block beside its original. An image is drawn once, across the page, before the row
    /// of its captions.
    fn row(
        &mut self,
        columns: &Columns,
        original: &Block,
        translation: &Block,
        setting: &Setting,
        notes: &HashMap<String, usize>,
        images: &Images,
    ) {
        if let BlockKind::Image { asset } = &translation.kind {
            if let Some((id, w, h)) = images.get(asset) {
                let items = self.image_items(id, *w, *h, "", CONTENT_W);
                self.place_here(&items);
            }
        }
        let width = columns.original.width;
        let original =
            self.block_items(original, setting, notes, None, columns.original_rtl, width);
        let translation = self.block_items(
            translation,
            setting,
            notes,
            None,
            columns.translation_rtl,
            width,
        );
        self.place_row(columns, &original, &translation);
    }

    /// Places both sides from the same height; the next row starts below the lower of the two.
    /// A row that fits a page but not the rest of this one starts a new page; a heading's row
    /// wants room for a line or two of the next row as well.
    fn place_row(&mut self, columns: &Columns, original: &[Item], translation: &[Item]) {
        if self.pages.is_empty() {
            self.new_page();
        }
        let height = |items: &[Item]| items.iter().map(Item::height).sum::<f32>();
        let keeps = original
            .iter()
            .chain(translation)
            .any(|i| matches!(i, Item::Keep(_)));
        let need = height(original).max(height(translation)) + if keeps { BODY * 3.0 } else { 0.0 };
        let page = PAGE_H - MARGIN_TOP - MARGIN_BOTTOM;
        if self.y - need < MARGIN_BOTTOM && need <= page {
            self.new_page();
        }
        let start = Cursor {
            page: self.pages.len() - 1,
            y: self.y,
        };
        let (mut a, mut b) = (start, start);
        self.place_kept_apart(original, columns.original, &mut a);
        self.place_kept_apart(translation, columns.translation, &mut b);
        let end = a.lower(b);
        self.y = end.y;
    }

    /// Places items without their `Keep`s: a row is kept together as a whole.
    fn place_kept_apart(&mut self, items: &[Item], frame: Frame, cursor: &mut Cursor) {
        for item in items {
            if !matches!(item, Item::Keep(_)) {
                self.place(std::slice::from_ref(item), frame, cursor);
            }
        }
    }

    /// An image as wide as `width` allows, at most 70% of the page high, then its caption.
    fn image_items(
        &mut self,
        id: &XObjectId,
        px_w: f32,
        px_h: f32,
        caption: &str,
        width: f32,
    ) -> Vec<Item> {
        let max_h = (PAGE_H - MARGIN_TOP - MARGIN_BOTTOM) * 0.7;
        let scale = (width / px_w).min(max_h / px_h);
        let mut items = vec![Item::Image {
            id: id.clone(),
            px_w,
            w: px_w * scale,
            h: px_h * scale,
        }];
        if !caption.trim().is_empty() {
            items.extend(self.text_items(
                caption,
                NOTE,
                Weight::Regular,
                Align::Center,
                false,
                0.0,
                width,
            ));
        }
        items.push(Item::Gap(6.0));
        items
    }

    fn page_number(&mut self, ops: &mut Vec<Op>, number: usize) {
        let shaped = self.shape(&number.to_string(), Weight::Regular);
        let size = 9.0;
        let x = (PAGE_W - shaped.width_em * size) / 2.0;
        ops.push(Op::StartTextSection);
        ops.push(Op::SetFont {
            font: PdfFontHandle::External(self.fonts[shaped.font].id.clone()),
            size: Pt(size),
        });
        ops.push(Op::SetTextMatrix {
            matrix: TextMatrix::Translate(Pt(x), Pt(MARGIN_BOTTOM / 2.0)),
        });
        ops.push(Op::ShowText {
            items: vec![TextItem::GlyphIds(shaped.glyphs.clone())],
        });
        ops.push(Op::EndTextSection);
    }
}

/// How a chapter is set: the order of its blocks (referenced notes after the text) and how
/// each block is set beyond its kind.
struct Plan {
    order: Vec<usize>,
    settings: Vec<Setting>,
    /// The block the notes start at, after a gap.
    notes_from: Option<usize>,
}

/// How a block's text is set: what leads it (a list item's marker, a note's number), its size,
/// weight, alignment and indent, and the space after it.
struct TextStyle {
    lead: String,
    size: f32,
    weight: Weight,
    align: Align,
    indent: f32,
    gap_after: f32,
}

impl TextStyle {
    /// A block's style by its kind and its setting (a verse line's number and an image that is
    /// drawn are laid out on their own).
    fn of(block: &Block, setting: &Setting, notes: &HashMap<String, usize>) -> TextStyle {
        let plain = TextStyle {
            lead: String::new(),
            size: BODY,
            weight: Weight::Regular,
            align: Align::Start,
            indent: setting.indent,
            gap_after: 0.0,
        };
        match &block.kind {
            BlockKind::Heading { level } => TextStyle {
                size: match level {
                    0 | 1 => 16.0,
                    2 => 14.5,
                    3 => 13.0,
                    4 => 12.0,
                    5 => 11.5,
                    _ => 11.0,
                },
                weight: Weight::Bold,
                gap_after: 3.0,
                ..plain
            },
            BlockKind::Line => TextStyle {
                indent: setting.indent + 8.0,
                ..plain
            },
            BlockKind::Quote => TextStyle {
                // Inside its quotation the indent is the quotation's.
                indent: setting.indent + if setting.quoted { 0.0 } else { 18.0 },
                gap_after: 4.0,
                ..plain
            },
            BlockKind::ListItem { depth, .. } => TextStyle {
                lead: format!("{} ", setting.marker.as_deref().unwrap_or("•")),
                indent: setting.indent + 12.0 * f32::from(*depth),
                ..plain
            },
            BlockKind::Footnote { id } => TextStyle {
                // The number leads the note's first paragraph only.
                lead: notes
                    .get(id)
                    .filter(|_| setting.first_of_note)
                    .map(|n| format!("{n}. "))
                    .unwrap_or_default(),
                size: NOTE,
                gap_after: 2.0,
                ..plain
            },
            // An image not drawn: its description, centred.
            BlockKind::Image { .. } => TextStyle {
                size: NOTE,
                align: Align::Center,
                indent: 0.0,
                ..plain
            },
            BlockKind::TableCell { header, .. } => TextStyle {
                weight: if *header {
                    Weight::Bold
                } else {
                    Weight::Regular
                },
                gap_after: 4.0,
                ..plain
            },
            BlockKind::Preformatted | BlockKind::Paragraph => {
                // A figure's caption is centred under it, as an image's description is.
                let (size, align) = match (setting.caption, setting.aside) {
                    (true, _) => (NOTE, Align::Center),
                    (false, true) => (NOTE + 1.0, Align::Start),
                    (false, false) => (BODY, Align::Start),
                };
                TextStyle {
                    size,
                    align,
                    gap_after: 4.0,
                    ..plain
                }
            }
        }
    }
}

/// What a block's neighbours and groups say about setting it.
#[derive(Default)]
struct Setting {
    /// From the quotations and sidebars around it.
    indent: f32,
    /// Inside a block quotation (group).
    quoted: bool,
    /// Inside a sidebar: set smaller.
    aside: bool,
    /// A list item's bullet or number.
    marker: Option<String>,
    /// The first paragraph of its note (which carries the number).
    first_of_note: bool,
    /// A figure's caption.
    caption: bool,
    /// Space before it: where a poem or quotation begins or ends.
    gap_before: f32,
}

impl Plan {
    fn of(blocks: &[Block], notes: &HashMap<String, usize>) -> Plan {
        let mut settings = Vec::with_capacity(blocks.len());
        // Per depth: (ordered, items so far) of the lists open.
        let mut counters: Vec<(bool, u32)> = Vec::new();
        let mut previous: Option<&Block> = None;
        for block in blocks {
            let count = |kind| block.groups.iter().filter(|g| g.kind == kind).count() as f32;
            let mut setting = Setting {
                indent: 18.0 * count(GroupKind::Quote) + 12.0 * count(GroupKind::Aside),
                quoted: count(GroupKind::Quote) > 0.0,
                aside: count(GroupKind::Aside) > 0.0,
                caption: block
                    .groups
                    .last()
                    .is_some_and(|g| g.kind == GroupKind::Figure)
                    && !matches!(block.kind, BlockKind::Image { .. }),
                ..Setting::default()
            };
            let grouped = |b: &Block| {
                b.groups
                    .iter()
                    .any(|g| matches!(g.kind, GroupKind::Quote | GroupKind::Verse))
            };
            if let Some(previous) = previous {
                if previous.groups != block.groups && (grouped(previous) || grouped(block)) {
                    setting.gap_before = 5.0;
                }
            }
            match &block.kind {
                BlockKind::ListItem { ordered, depth } => {
                    let depth = usize::from((*depth).max(1));
                    let same_list = previous.is_some_and(|p| {
                        matches!(p.kind, BlockKind::ListItem { .. }) && p.groups == block.groups
                    });
                    if !same_list {
                        counters.clear();
                    }
                    counters.truncate(depth);
                    counters.resize(depth, (*ordered, 0));
                    if let Some(level) = counters.last_mut() {
                        if level.0 != *ordered {
                            *level = (*ordered, 0);
                        }
                        level.1 += 1;
                        setting.marker = Some(if *ordered {
                            format!("{}.", level.1)
                        } else {
                            "•".into()
                        });
                    }
                }
                BlockKind::Footnote { id } => {
                    setting.first_of_note = !previous.is_some_and(
                        |p| matches!(&p.kind, BlockKind::Footnote { id: other } if other == id),
                    );
                }
                _ => {}
            }
            settings.push(setting);
            previous = Some(block);
        }
        // Notes that are referenced follow the text; others (a transcriber's note) stay put.
        let is_note =
            |b: &Block| matches!(&b.kind, BlockKind::Footnote { id } if notes.contains_key(id));
        let (mut order, moved): (Vec<usize>, Vec<usize>) =
            (0..blocks.len()).partition(|&k| !is_note(&blocks[k]));
        let notes_from = moved.first().copied();
        order.extend(moved);
        Plan {
            order,
            settings,
            notes_from,
        }
    }
}

/// The block's text as printed: marks dropped (a `<num/>` mark's text kept), footnote
/// references as bracketed numbers.
fn printable(text: &str, notes: &HashMap<String, usize>) -> String {
    match markup::parse(text) {
        Ok(pieces) => printable_pieces(pieces, notes),
        Err(_) => markup::plain_text(text),
    }
}

fn printable_pieces(pieces: Vec<Piece>, notes: &HashMap<String, usize>) -> String {
    pieces
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) | Piece::Tag(Tag::Num { text: t, .. }) => t,
            Piece::Tag(Tag::Empty { name: "br", .. }) => "\n".into(),
            Piece::Tag(Tag::Empty {
                name: "ref",
                attr: Some(id),
            }) => notes.get(&id).map(|n| format!("[{n}]")).unwrap_or_default(),
            Piece::Tag(_) => String::new(),
        })
        .collect()
}

/// Shapes one word. The glyphs carry their source text so text extraction (and copy and paste)
/// gives back the words, in logical order.
fn shape_with(font: &Font<'_>, index: usize, word: &str) -> Shaped {
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(word);
    buffer.guess_segment_properties();
    let output = rustybuzz::shape(&font.face, &[], buffer);
    let infos = output.glyph_infos();
    let mut glyphs = Vec::with_capacity(infos.len());
    let mut width = 0i32;
    for (info, pos) in infos.iter().zip(output.glyph_positions()) {
        let gid = u16::try_from(info.glyph_id).unwrap_or(0);
        let advance = i32::from(font.parsed.get_glyph_width(gid).unwrap_or(0));
        // The PDF advances by the font's width; correct it to the shaped advance.
        let offset = (advance - pos.x_advance) as f32 * 1000.0 / font.units_per_em;
        let start = info.cluster as usize;
        let end = infos
            .iter()
            .map(|g| g.cluster as usize)
            .filter(|&c| c > start)
            .min()
            .unwrap_or(word.len());
        let cid = word.get(start..end).map(str::to_string);
        glyphs.push(Codepoint { gid, offset, cid });
        width += pos.x_advance;
    }
    Shaped {
        font: index,
        glyphs,
        width_em: width as f32 / font.units_per_em,
    }
}

mod document;
mod images;
