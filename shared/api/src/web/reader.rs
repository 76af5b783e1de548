//! The reader's page, on the site's layout: the chapter list, one chapter's original and
//! translation side by side, and the download links. Shared (`/shared/{token}`) for whoever
//! holds the link, and the owner's own (`/dashboard/books/{id}/read`).

use axum::response::Response;
use booktr_core::books::{Book, Chapter};
use booktr_core::job::Edition;
use booktr_core::translation::SideBySide;
use minijinja::context;
use serde::Serialize;

use super::{head, render_with};
use crate::error::ApiError;
use crate::AppState;

/// What the reader shows.
pub struct Reader<'a> {
    pub book: &'a Book,
    /// The reader's path (`?chapter=N` is added for the others than the first).
    pub base: &'a str,
    /// Where its downloads are (`?format=&layout=` is added).
    pub downloads: &'a str,
    /// Kept out of search engines (the owner's reader).
    pub private: bool,
    pub chapters: &'a [Chapter],
    /// The chapter shown (1-based).
    pub number: u32,
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

#[derive(Serialize)]
struct Row {
    original: String,
    /// None while the block is not translated yet.
    translation: Option<String>,
}

fn dir(lang: &str) -> &'static str {
    if booktr_formats::render::is_rtl(lang) {
        "rtl"
    } else {
        "ltr"
    }
}

/// Renders the page. Never cached: revoking the link must take effect at once.
pub fn page(state: &AppState, reader: Reader<'_>) -> Result<Response, ApiError> {
    let Reader {
        book,
        base,
        downloads: download_path,
        private,
        chapters,
        number,
        current,
        editions,
    } = reader;
    let contents: Vec<Entry> = chapters
        .iter()
        .map(|c| Entry {
            number: c.number,
            label: c
                .title
                .clone()
                .unwrap_or_else(|| format!("Chapter {}", c.number)),
            current: c.number == number,
        })
        .collect();
    let translated = current.translation.as_ref().map(|t| &t.blocks);
    let rows: Vec<Row> = current
        .source
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(i, block)| {
            let original = block.plain_text();
            (!original.trim().is_empty()).then(|| Row {
                original,
                translation: translated
                    .and_then(|blocks| blocks.get(i))
                    .map(|b| b.plain_text()),
            })
        })
        .collect();
    let path = if number == 1 {
        base.to_string()
    } else {
        format!("{base}?chapter={number}")
    };
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
        },
        "no-store",
    )
}
