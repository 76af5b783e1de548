//! The reader's page, on the site's layout: the chapter list, one page of a chapter's original
//! and translation side by side, and the download links. Shared (`/shared/{token}`) for whoever
//! holds the link, and the owner's own (`/dashboard/books/{id}/read`).
//!
//! A chapter is shown a page at a time (`?chapter=N&page=M`, both from 1): a book may hold a
//! chapter of tens of thousands of paragraphs, and one page of all of it was hundreds of
//! megabytes of HTML for one request. A page ends at [`PAGE_BLOCKS`] rows or [`PAGE_CHARS`]
//! characters, whichever comes first, so no reader page is larger than a few megabytes
//! whatever the book. Only the rows of the page asked for are built; the others are measured
//! and dropped.

use axum::response::Response;
use booktr_core::books::{Book, Chapter};
use booktr_core::job::Edition;
use booktr_core::translation::SideBySide;
use booktr_formats::manuscript::Block;
use minijinja::context;
use serde::Serialize;

use super::{head, render_with};
use crate::error::ApiError;
use crate::AppState;

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

/// What the reader shows.
pub struct Reader<'a> {
    pub book: &'a Book,
    /// The reader's path (`?chapter=N&page=M` is added for the others than the first).
    pub base: &'a str,
    /// Where its downloads are (`?format=&layout=` is added).
    pub downloads: &'a str,
    /// Kept out of search engines (the owner's reader).
    pub private: bool,
    /// Whether the visitor is signed in: the header then offers the library, else sign-in and
    /// sign-up.
    pub signed_in: bool,
    pub chapters: &'a [Chapter],
    /// The chapter shown (1-based).
    pub number: u32,
    /// The page of that chapter shown (1-based).
    pub page: u32,
    pub current: &'a SideBySide,
    /// The output files that exist, offered for download.
    pub editions: &'a [Edition],
}

#[derive(Serialize)]
struct Entry {
    number: u32,
    label: String,
    current: bool,
}

#[derive(Debug, PartialEq, Serialize)]
struct Row {
    original: String,
    /// None while the block is not translated yet.
    translation: Option<String>,
}

/// One page of a chapter: its rows, and how many pages the chapter has.
#[derive(Debug)]
struct Paged {
    rows: Vec<Row>,
    pages: u32,
}

/// Splits the chapter's shown rows (blocks with text) into pages and keeps page `wanted`'s.
/// Every row is on exactly one page, in order; a chapter without text has one empty page.
fn paginate(source: &[Block], translated: Option<&[Block]>, wanted: u32) -> Paged {
    let mut rows = Vec::new();
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
        if page == wanted {
            rows.push(Row {
                original,
                translation,
            });
        }
    }
    Paged { rows, pages: page }
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

/// Renders the page; a page past the chapter's last is not found. Never cached: revoking the
/// link must take effect at once.
pub fn page(state: &AppState, reader: Reader<'_>) -> Result<Response, ApiError> {
    let Reader {
        book,
        base,
        downloads: download_path,
        private,
        signed_in,
        chapters,
        number,
        page,
        current,
        editions,
    } = reader;
    let translated = current.translation.as_ref().map(|t| t.blocks.as_slice());
    let Paged { rows, pages } = paginate(&current.source.blocks, translated, page);
    if page == 0 || page > pages {
        return Err(ApiError::not_found("page"));
    }
    let contents: Vec<Entry> = chapters
        .iter()
        .map(|c| Entry {
            number: c.number,
            label: c.title.clone().map_or_else(
                || format!("Chapter {}", c.number),
                |t| truncate(t, LABEL_CHARS, "…"),
            ),
            current: c.number == number,
        })
        .collect();
    let next_chapter = chapters
        .iter()
        .map(|c| c.number)
        .filter(|&n| n > number)
        .min();
    let previous = (page > 1).then(|| link(base, number, page - 1));
    let next = if page < pages {
        Some((link(base, number, page + 1), "Next page"))
    } else {
        next_chapter.map(|n| (link(base, n, 1), "Next chapter"))
    };
    let path = link(base, number, page);
    let by = book
        .author
        .as_deref()
        .map(|a| format!(" by {a}"))
        .unwrap_or_default();
    let description = format!(
        "\"{}\"{by}, translated from {} to {}: read it side by side with the original.",
        book.title, book.original_lang, book.target_lang
    );
    let mut head = head(state, &path, book.title.clone(), description);
    head.lang = book.target_lang.clone();
    head.og_type = "book";
    head.noindex = private;
    head.signed_in = signed_in;
    let downloads: Vec<_> = editions
        .iter()
        .map(|e| context! { query => e.query(), label => e.label() })
        .collect();
    render_with(
        "reader.html",
        head,
        context! {
            book => context! {
                title => book.title,
                author => book.author,
                from => book.original_lang,
                to => book.target_lang,
                from_dir => dir(&book.original_lang),
                to_dir => dir(&book.target_lang),
            },
            base,
            download_path,
            downloads,
            contents,
            rows,
            paging => context! {
                page,
                pages,
                previous,
                next => next.as_ref().map(|(href, _)| href),
                next_label => next.map(|(_, label)| label),
            },
        },
        "no-store",
    )
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
                    original: "one".into(),
                    translation: Some("un".into())
                },
                Row {
                    original: "three".into(),
                    translation: Some("trois".into())
                },
            ]
        );
    }

    #[test]
    fn the_first_page_of_the_first_chapter_is_the_reader_itself() {
        assert_eq!(link("/shared/t", 1, 1), "/shared/t");
        assert_eq!(link("/shared/t", 3, 1), "/shared/t?chapter=3");
        assert_eq!(link("/shared/t", 1, 2), "/shared/t?chapter=1&page=2");
    }
}
