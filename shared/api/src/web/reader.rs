//! The reader: the chapter list (a menu on a phone), one page of a chapter, original and
//! translation side by side or the translation alone, previous and next chapter and page, and
//! the download links. Shared (`/shared/{token}`, on the site's layout: the app's style sheet
//! and a header that fits the visitor's session) for whoever holds the link, and the owner's
//! own (`/dashboard/books/{id}/read`, on the app's layout, with the way back to the book). Both
//! render `reader_body.html` from what [`prepare`] makes, styled by the app's style sheet.
//!
//! A chapter is shown a page at a time (`?chapter=N&page=M`, both from 1): a book may hold a
//! chapter of tens of thousands of paragraphs, and one page of all of it would be hundreds of
//! megabytes of HTML for one request. A page ends at [`PAGE_BLOCKS`] rows or [`PAGE_CHARS`]
//! characters, whichever comes first, so no reader page is larger than a few megabytes
//! whatever the book. Only the rows of the page asked for are built; the others are measured
//! and dropped.
//!
//! The view (`?view=both` or `?view=translation`) is remembered in the `reader_view` cookie,
//! so a reader without JavaScript keeps it from page to page; side by side when never chosen.

use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use booktr_core::books::{Book, Chapter};
use booktr_core::job::Edition;
use booktr_core::translation::SideBySide;
use booktr_formats::manuscript::{Block, BlockKind};
use minijinja::{context, Value};
use serde::Serialize;

use super::app::i18n::Lang;
use super::layout::{head, render_with};
use crate::error::ApiError;
use crate::state::AppState;

/// Most rows (a block and its translation) on one page.
pub const PAGE_BLOCKS: usize = 200;
/// Most characters of text (originals and translations together) on one page; a page holds at
/// least one row, which [`BLOCK_CHARS`] bounds.
pub const PAGE_CHARS: usize = 200_000;
/// Most characters shown of one side of a row: extraction refuses longer paragraphs, but a
/// translation, or a book read before that limit, may hold one. The rest is in the downloads.
const BLOCK_CHARS: usize = 100_000;
/// Most characters of a chapter's name in the contents, which lists every chapter on each page.
const LABEL_CHARS: usize = 200;

/// The cookie that remembers the view.
const VIEW_COOKIE: &str = "reader_view";

/// Original and translation side by side, or the translation alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Both,
    Translation,
}

impl View {
    fn parse(text: &str) -> Option<View> {
        match text {
            "both" => Some(View::Both),
            "translation" => Some(View::Translation),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            View::Both => "both",
            View::Translation => "translation",
        }
    }

    /// The view asked for (`?view=`), else the one remembered, else side by side; and whether
    /// it was asked for (so it is to be remembered).
    pub fn chosen(asked: Option<&str>, headers: &HeaderMap) -> (View, bool) {
        if let Some(view) = asked.and_then(View::parse) {
            return (view, true);
        }
        let remembered = headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == VIEW_COOKIE)
            .and_then(|(_, value)| View::parse(value));
        (remembered.unwrap_or(View::Both), false)
    }

    /// Adds the cookie that remembers this view for a year, on every reader of the site.
    pub fn remember(self, response: &mut Response) {
        let cookie = format!(
            "{VIEW_COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax",
            self.as_str()
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(SET_COOKIE, value);
        }
    }
}

/// What the reader shows.
pub struct Reader<'a> {
    pub book: &'a Book,
    /// The reader's path (`?chapter=N&page=M` is added for the others than the first).
    pub base: &'a str,
    /// Where its downloads are (`?format=&layout=` is added).
    pub downloads: &'a str,
    /// Kept out of search engines (the owner's reader).
    pub private: bool,
    /// Whether the visitor is signed in: the shared reader's header then offers the library,
    /// else sign-in and sign-up (the owner's reader is on the app's layout, whose header shows
    /// the signed-in viewer).
    pub signed_in: bool,
    pub chapters: &'a [Chapter],
    /// The chapter shown (1-based).
    pub number: u32,
    /// The page of that chapter shown (1-based).
    pub page: u32,
    pub current: &'a SideBySide,
    /// The output files that exist, offered for download.
    pub editions: &'a [Edition],
    pub view: View,
    /// The interface's language (the page's own is the translation's).
    pub lang: Lang,
    /// The owner's way back to the book's page.
    pub back: Option<String>,
    /// Where this reader stopped last time, offered on the book's first page.
    pub continue_at: Option<(u32, u32)>,
    /// The owner's review: each row is marked when the checks flagged it and links to its
    /// editor (`?edit=N#p-N`, N the passage's place in the chapter).
    pub review: bool,
}

#[derive(Serialize)]
struct Entry {
    number: u32,
    label: String,
    current: bool,
}

#[derive(Debug, PartialEq, Serialize)]
struct Row {
    /// The block's place in its chapter, from 0 (the passage's index).
    index: usize,
    /// How the block is styled: `heading level-N`, `line` (verse), `quote`, `item`, `pre`,
    /// `note`, `cell`, `image` or `paragraph`.
    kind: String,
    original: String,
    /// A verse line's number, printed in the margin (books glue it to the line's text).
    original_number: Option<String>,
    /// None while the block is not translated yet.
    translation: Option<String>,
    translation_number: Option<String>,
    /// The checks flagged the translation (the owner's review only).
    flagged: bool,
    /// The address of the passage's editor (the owner's review only).
    edit: Option<String>,
}

fn kind_class(kind: &BlockKind) -> String {
    match kind {
        BlockKind::Heading { level } => format!("heading level-{}", level.clamp(&1, &6)),
        BlockKind::Line => "line".into(),
        BlockKind::Quote => "quote".into(),
        BlockKind::ListItem { .. } => "item".into(),
        BlockKind::Preformatted => "pre".into(),
        BlockKind::Footnote { .. } => "note".into(),
        BlockKind::TableCell { .. } => "cell".into(),
        BlockKind::Image { .. } => "image".into(),
        BlockKind::Paragraph => "paragraph".into(),
    }
}

/// A verse line's text and the line number glued to its end ("into the Hofgarten,10"): a
/// number of one to four digits right after a letter or a punctuation mark, with no space.
/// Other blocks, and lines that end in a number after a space ("in 1851"), are left whole.
fn line_number(kind: &BlockKind, text: String) -> (String, Option<String>) {
    if *kind != BlockKind::Line {
        return (text, None);
    }
    let trimmed = text.trim_end();
    let digits = trimmed
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .count();
    let before = trimmed[..trimmed.len() - digits].chars().next_back();
    let glued = before.is_some_and(|c| !c.is_whitespace() && !c.is_ascii_digit());
    if (1..=4).contains(&digits) && glued {
        let at = trimmed.len() - digits;
        let number = trimmed[at..].to_string();
        (trimmed[..at].to_string(), Some(number))
    } else {
        (text, None)
    }
}

/// One page of a chapter: its rows, and how many pages the chapter has.
#[derive(Debug)]
struct Paged {
    rows: Vec<Row>,
    pages: u32,
}

/// Lays the chapter's shown rows (blocks with text) out on pages: calls `visit` with each row's
/// page, block index, original and translation, in order, and answers how many pages there
/// are. Every row is on exactly one page; a chapter without text has one empty page.
fn lay_out(
    source: &[Block],
    translated: Option<&[Block]>,
    mut visit: impl FnMut(u32, usize, String, Option<String>),
) -> u32 {
    let mut page = 1u32;
    let (mut on_page, mut chars_on_page) = (0usize, 0usize);
    for (i, block) in source.iter().enumerate() {
        let original = block.plain_text();
        if original.trim().is_empty() {
            continue;
        }
        let translation = translated.and_then(|t| t.get(i)).map(Block::plain_text);
        let (original, translation) = (shortened(original), translation.map(shortened));
        let chars =
            original.chars().count() + translation.as_deref().map_or(0, |t| t.chars().count());
        if on_page > 0 && (on_page == PAGE_BLOCKS || chars_on_page + chars > PAGE_CHARS) {
            page += 1;
            (on_page, chars_on_page) = (0, 0);
        }
        on_page += 1;
        chars_on_page += chars;
        visit(page, i, original, translation);
    }
    page
}

/// Splits the chapter's shown rows into pages and keeps page `wanted`'s.
fn paginate(source: &[Block], translated: Option<&[Block]>, wanted: u32) -> Paged {
    let mut rows = Vec::new();
    let pages = lay_out(source, translated, |page, i, original, translation| {
        if page != wanted {
            return;
        }
        let kind = &source[i].kind;
        let (original, original_number) = line_number(kind, original);
        let (translation, translation_number) = match translation {
            Some(t) => {
                let (t, n) = line_number(kind, t);
                (Some(t), n)
            }
            None => (None, None),
        };
        rows.push(Row {
            index: i,
            kind: kind_class(kind),
            original,
            original_number,
            translation,
            translation_number,
            flagged: false,
            edit: None,
        });
    });
    Paged { rows, pages }
}

/// The page of the chapter that shows block `index`: the first page for a block without text
/// or past the chapter's end.
pub fn page_of(source: &[Block], translated: Option<&[Block]>, index: usize) -> u32 {
    let mut found = 1;
    lay_out(source, translated, |page, i, _, _| {
        if i == index {
            found = page;
        }
    });
    found
}

/// `text` cut to [`BLOCK_CHARS`] characters, marked where it was cut.
fn shortened(text: String) -> String {
    truncate(text, BLOCK_CHARS, " […]")
}

fn truncate(mut text: String, chars: usize, mark: &str) -> String {
    if let Some((at, _)) = text.char_indices().nth(chars) {
        text.truncate(at);
        text.push_str(mark);
    }
    text
}

/// The reader's address of a page: the first page of the first chapter is the base itself.
fn link(base: &str, chapter: u32, page: u32) -> String {
    match (chapter, page) {
        (1, 1) => base.to_string(),
        (_, 1) => format!("{base}?chapter={chapter}"),
        _ => format!("{base}?chapter={chapter}&page={page}"),
    }
}

fn dir(lang: &str) -> &'static str {
    if booktr_formats::render::is_rtl(lang) {
        "rtl"
    } else {
        "ltr"
    }
}

/// What both readers show of a page, and what its head says.
pub struct Prepared {
    pub data: Value,
    pub title: String,
    pub description: String,
    /// The page's own address.
    pub path: String,
    /// The page shown (1-based), and the place in the chapter of its first row's block.
    pub page: u32,
    pub first_index: Option<usize>,
}

/// A chapter as the reader names it: its title (cut to [`LABEL_CHARS`]), else "Chapter N".
fn label_of(lang: Lang, chapter: &Chapter) -> String {
    chapter.title.clone().map_or_else(
        || format!("{} {}", lang.get("chapter"), chapter.number),
        |t| truncate(t, LABEL_CHARS, "…"),
    )
}

/// Chapter `number` of `chapters` as the reader names it (its title, else "Chapter N").
pub fn chapter_label(lang: Lang, chapters: &[Chapter], number: u32) -> String {
    chapters.iter().find(|c| c.number == number).map_or_else(
        || format!("{} {number}", lang.get("chapter")),
        |c| label_of(lang, c),
    )
}

/// The page's contents; a page past the chapter's last is not found.
pub fn prepare(reader: Reader<'_>) -> Result<Prepared, ApiError> {
    let Reader {
        book,
        base,
        downloads: download_path,
        private: _,
        signed_in: _,
        chapters,
        number,
        page,
        current,
        editions,
        view,
        lang,
        back,
        continue_at,
        review,
    } = reader;
    let translated = current.translation.as_ref().map(|t| t.blocks.as_slice());
    let Paged { mut rows, pages } = paginate(&current.source.blocks, translated, page);
    if page == 0 || page > pages {
        return Err(ApiError::not_found("page"));
    }
    if review {
        mark_for_review(&mut rows, current, number, page);
    }
    let first_index = rows.first().map(|r| r.index);
    let contents: Vec<Entry> = chapters
        .iter()
        .map(|c| Entry {
            number: c.number,
            label: label_of(lang, c),
            current: c.number == number,
        })
        .collect();
    let chapter_label = self::chapter_label(lang, chapters, number);
    let path = link(base, number, page);
    let downloads: Vec<_> = editions
        .iter()
        .map(|e| context! { query => e.query(), label => e.label() })
        .collect();
    let data = context! {
        ui => lang.code(),
        t => lang.messages(),
        book => book_view(book),
        base,
        back,
        continue_at => continue_at
            .filter(|&at| at != (1, 1) && (number, page) == (1, 1))
            .map(|(chapter, page)| context! {
                chapter,
                label => self::chapter_label(lang, chapters, chapter),
                page,
                href => link(base, chapter, page),
            }),
        view => view.as_str(),
        download_path,
        downloads,
        contents,
        chapter_label,
        rows,
        review,
        paging => paging_view(base, chapters, number, page, pages, &path),
    };
    Ok(Prepared {
        data,
        title: format!("{} · {chapter_label}", book.title),
        description: description_of(book),
        path,
        page,
        first_index,
    })
}

/// The owner's review: each translated row is marked when the checks flagged it and links to
/// its editor, relative to the reader's own address (a page may hold 200 rows).
fn mark_for_review(rows: &mut [Row], current: &SideBySide, number: u32, page: u32) {
    let flagged = current
        .translation
        .as_ref()
        .map(|t| t.quality.flagged_blocks())
        .unwrap_or_default();
    let here = format!("?chapter={number}&page={page}");
    for row in rows.iter_mut().filter(|r| r.translation.is_some()) {
        row.flagged = flagged.contains(&row.index);
        row.edit = Some(format!("{here}&edit={i}#p-{i}", i = row.index));
    }
}

/// The book as the reader's page shows it: title, author, and both languages with their tags
/// (none for an unknown language) and directions.
fn book_view(book: &Book) -> Value {
    let known = |code: &str| (code != super::words::UNKNOWN_LANGUAGE).then(|| code.to_string());
    context! {
        title => book.title,
        author => book.author,
        from => book.original_lang,
        to => book.target_lang,
        from_tag => known(&book.original_lang),
        to_tag => known(&book.target_lang),
        from_dir => dir(&book.original_lang),
        to_dir => dir(&book.target_lang),
    }
}

/// The page's description for search engines and link previews, in English.
fn description_of(book: &Book) -> String {
    let by = book
        .author
        .as_deref()
        .map(|a| format!(" by {a}"))
        .unwrap_or_default();
    format!(
        "\"{}\"{by}, translated from {} to {}: read it side by side with the original.",
        book.title,
        super::words::language(Lang::En, &book.original_lang),
        super::words::language(Lang::En, &book.target_lang),
    )
}

/// The links to the pages and chapters around page `page` of chapter `number`.
fn paging_view(
    base: &str,
    chapters: &[Chapter],
    number: u32,
    page: u32,
    pages: u32,
    here: &str,
) -> Value {
    let next_chapter = chapters
        .iter()
        .map(|c| c.number)
        .filter(|&n| n > number)
        .min();
    let previous_chapter = chapters
        .iter()
        .map(|c| c.number)
        .filter(|&n| n < number)
        .max();
    context! {
        page,
        pages,
        here,
        previous_page => (page > 1).then(|| link(base, number, page - 1)),
        next_page => (page < pages).then(|| link(base, number, page + 1)),
        previous_chapter => previous_chapter.map(|n| link(base, n, 1)),
        next_chapter => next_chapter.map(|n| link(base, n, 1)),
    }
}

/// The shared reader's page, on the site's layout with the header of the visitor's session.
/// Never cached: revoking the link must take effect at once.
pub fn page(state: &AppState, reader: Reader<'_>) -> Result<Response, ApiError> {
    let (private, signed_in, lang) = (reader.private, reader.signed_in, reader.lang);
    let Prepared {
        data,
        title,
        description,
        path,
        ..
    } = prepare(reader)?;
    let mut head = head(state, &path, title, description);
    // The page, its header too, speaks the interface's language; the text carries the book's
    // languages.
    head.lang = lang.code().into();
    head.t = lang.messages();
    head.og_type = "book";
    head.noindex = private;
    head.signed_in = signed_in;
    render_with("reader.html", head, data, "no-store")
}

#[cfg(test)]
mod tests {
    use super::*;
    use booktr_formats::manuscript::BlockKind;

    fn paragraph(text: &str) -> Block {
        Block::new(BlockKind::Paragraph, text.to_string())
    }

    #[test]
    fn a_long_chapter_is_split_into_pages_that_hold_every_row_once_in_order() {
        let blocks: Vec<Block> = (0..1_001).map(|i| paragraph(&format!("p{i}"))).collect();
        let first = paginate(&blocks, None, 1);
        assert_eq!(first.pages, 6);
        let mut seen = Vec::new();
        for page in 1..=first.pages {
            let paged = paginate(&blocks, None, page);
            assert!(paged.rows.len() <= PAGE_BLOCKS);
            seen.extend(paged.rows.into_iter().map(|r| r.original));
        }
        let expected: Vec<String> = (0..1_001).map(|i| format!("p{i}")).collect();
        assert_eq!(seen, expected);
        assert!(paginate(&blocks, None, 7).rows.is_empty());
    }

    #[test]
    fn a_page_ends_at_its_character_budget_before_its_block_count() {
        let long = "x".repeat(PAGE_CHARS / 4);
        let blocks: Vec<Block> = (0..10).map(|_| paragraph(&long)).collect();
        let translated = blocks.clone();
        let paged = paginate(&blocks, Some(&translated), 1);
        assert_eq!(
            paged.rows.len(),
            2,
            "two rows of originals and translations fill a page"
        );
        assert_eq!(paged.pages, 5);
    }

    #[test]
    fn a_paragraph_longer_than_a_page_is_shown_cut_on_a_page_of_its_own() {
        let blocks = vec![
            paragraph("before"),
            paragraph(&"é".repeat(3 * BLOCK_CHARS)),
            paragraph("after"),
        ];
        let translated = Some(blocks.as_slice());
        assert_eq!(paginate(&blocks, translated, 1).pages, 3);
        let pages: Vec<Vec<Row>> = (1..=3)
            .map(|p| paginate(&blocks, translated, p).rows)
            .collect();
        assert!(pages.iter().all(|rows| rows.len() == 1));
        let cut = &pages[1][0];
        assert_eq!(
            cut.original.chars().count(),
            BLOCK_CHARS + " […]".chars().count()
        );
        assert!(cut.original.ends_with("[…]"));
        assert_eq!(cut.translation.as_ref(), Some(&cut.original));
    }

    #[test]
    fn blocks_without_text_take_no_row_and_translations_stay_beside_their_originals() {
        let blocks = vec![paragraph("one"), paragraph("  "), paragraph("three")];
        let translated = vec![paragraph("un"), paragraph(""), paragraph("trois")];
        let paged = paginate(&blocks, Some(&translated), 1);
        assert_eq!(
            paged.rows,
            vec![
                Row {
                    index: 0,
                    kind: "paragraph".into(),
                    original: "one".into(),
                    original_number: None,
                    translation: Some("un".into()),
                    translation_number: None,
                    flagged: false,
                    edit: None,
                },
                Row {
                    index: 2,
                    kind: "paragraph".into(),
                    original: "three".into(),
                    original_number: None,
                    translation: Some("trois".into()),
                    translation_number: None,
                    flagged: false,
                    edit: None,
                },
            ]
        );
    }

    #[test]
    fn a_verse_lines_glued_number_is_taken_out_of_its_text() {
        let line = BlockKind::Line;
        assert_eq!(
            line_number(&line, "into the Hofgarten,10".into()),
            ("into the Hofgarten,".to_string(), Some("10".to_string()))
        );
        assert_eq!(
            line_number(&line, "And drank coffee".into()),
            ("And drank coffee".to_string(), None)
        );
        assert_eq!(
            line_number(&line, "the year 1851".into()),
            ("the year 1851".to_string(), None)
        );
        assert_eq!(
            line_number(&BlockKind::Paragraph, "Hofgarten,10".into()),
            ("Hofgarten,10".to_string(), None)
        );
    }

    #[test]
    fn a_blocks_page_is_the_page_that_shows_its_row() {
        let blocks: Vec<Block> = (0..450).map(|i| paragraph(&format!("p{i}"))).collect();
        for (index, page) in [(0, 1), (199, 1), (200, 2), (449, 3)] {
            assert_eq!(page_of(&blocks, None, index), page, "block {index}");
            let shown = paginate(&blocks, None, page).rows;
            assert!(shown.iter().any(|r| r.index == index), "block {index}");
        }
        assert_eq!(page_of(&blocks, None, 10_000), 1);
    }

    #[test]
    fn the_first_page_of_the_first_chapter_is_the_reader_itself() {
        assert_eq!(link("/shared/t", 1, 1), "/shared/t");
        assert_eq!(link("/shared/t", 3, 1), "/shared/t?chapter=3");
        assert_eq!(link("/shared/t", 1, 2), "/shared/t?chapter=1&page=2");
    }
}
