//! Every extractor on real books: the corpus EPUBs and the DOCX, HTML, TXT, Markdown, FB2
//! (pandoc 2.17) and PDF (LibreOffice 7.4, from the DOCX) files made from them, in
//! `tests/fixtures/`.

use std::path::Path;

use crate::manuscript::Manuscript;
use crate::{docx, fb2, html, markdown, txt};

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One of the corpus EPUBs, in `corpus/` at the repository's root.
pub(crate) fn corpus_epub(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `pandoc FILE -t plain | wc -w` on each fixture (pandoc 2.17.1.1).
const PANDOC_WORDS: &[(&str, u64)] = &[
    ("moby-dick.docx", 212_222),
    ("wasteland.docx", 4_634),
    ("childrens-literature.docx", 54_745),
    ("regime-anticancer-arabic.docx", 4_750),
    ("moby-dick.html", 212_226),
    ("wasteland.html", 4_654),
    ("childrens-literature.html", 54_762),
    ("regime-anticancer-arabic.html", 4_764),
    ("moby-dick.txt", 212_222),
    ("wasteland.txt", 4_634),
    ("childrens-literature.txt", 54_745),
    ("regime-anticancer-arabic.txt", 4_751),
    ("wasteland.md", 4_634),
];

fn extract(name: &str) -> Manuscript {
    let bytes = fixture(name);
    let result = match name.rsplit_once('.').map(|(_, e)| e) {
        Some("docx") => docx::extract(&bytes),
        Some("html") => html::extract(&bytes),
        Some("txt") => txt::extract(&bytes),
        Some("md") => markdown::extract(&bytes),
        Some("fb2") => fb2::extract(&bytes),
        other => panic!("no extractor for {other:?}"),
    };
    result.unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn pandocs_markdown_of_the_waste_land_has_its_parts_as_chapters() {
    let book = extract("wasteland.md");
    let titles: Vec<_> = book
        .chapters
        .iter()
        .filter_map(|c| c.title.as_deref())
        .collect();
    assert!(titles.contains(&"IV. DEATH BY WATER"), "{titles:?}");
}

#[test]
fn pandocs_fictionbook_keeps_its_sections_poem_lines_notes_and_image() {
    let book = extract("poems.fb2");
    let titles: Vec<_> = book.chapters.iter().map(|c| c.title.as_deref()).collect();
    assert_eq!(
        titles,
        [Some("Harbour Songs"), Some("Open Water"), Some("Notes")],
        "the title page opens the first chapter"
    );
    let lines: Vec<String> = book.chapters[0]
        .blocks
        .iter()
        .filter(|b| b.kind == crate::manuscript::BlockKind::Line)
        .map(|b| b.plain_text())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], "the gulls cry over the bay,");
    assert_eq!(book.assets.len(), 1);
    assert_eq!(book.chapters[2].blocks.len(), 2, "two notes");
    assert_eq!(book.title.as_deref(), Some("Songs of the Sea"));
}

#[test]
fn word_counts_are_within_two_percent_of_pandoc_for_every_format() {
    for (name, pandoc) in PANDOC_WORDS {
        let ours = extract(name).word_count();
        let off = ours.abs_diff(*pandoc) as f64 / *pandoc as f64;
        eprintln!(
            "{name}: {ours} words, pandoc {pandoc} ({:.2}% off)",
            off * 100.0
        );
        assert!(
            off < 0.02,
            "{name}: {ours} words, pandoc {pandoc} ({:.2}% off)",
            off * 100.0
        );
    }
}

#[test]
fn moby_dick_has_its_chapter_titles_in_every_format() {
    for name in ["moby-dick.docx", "moby-dick.html", "moby-dick.txt"] {
        let m = extract(name);
        let titles: Vec<String> = m.chapters.iter().filter_map(|c| c.title.clone()).collect();
        for expected in [
            "Chapter 1. Loomings.",
            "Chapter 42. The Whiteness of The Whale.",
            "Chapter 135. The Chase.—Third Day.",
        ] {
            assert!(
                titles.iter().any(|t| t == expected),
                "{name}: no {expected:?} among {} titles",
                titles.len()
            );
        }
        let first = m
            .chapters
            .iter()
            .find(|c| c.title.as_deref() == Some("Chapter 1. Loomings."))
            .unwrap();
        assert!(first.plain_text().contains("Call me Ishmael."), "{name}");
    }
}

#[test]
fn the_waste_land_has_its_five_parts_in_every_format() {
    for name in ["wasteland.docx", "wasteland.html", "wasteland.txt"] {
        let m = extract(name);
        let titles: Vec<String> = m.chapters.iter().filter_map(|c| c.title.clone()).collect();
        for part in [
            "I. THE BURIAL OF THE DEAD",
            "II. A GAME OF CHESS",
            "III. THE FIRE SERMON",
            "IV. DEATH BY WATER",
            "V. WHAT THE THUNDER SAID",
        ] {
            assert!(
                titles.iter().any(|t| t == part),
                "{name}: no {part:?} in {titles:?}"
            );
        }
    }
}

#[test]
fn the_arabic_book_is_detected_as_arabic_in_every_format() {
    for name in [
        "regime-anticancer-arabic.docx",
        "regime-anticancer-arabic.html",
        "regime-anticancer-arabic.txt",
    ] {
        let m = extract(name);
        assert!(
            m.language.as_deref().is_some_and(|l| l.starts_with("ar")),
            "{name}: {:?}",
            m.language
        );
    }
}
