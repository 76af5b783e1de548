//! Structure kept through the manuscript: a corpus EPUB read into a manuscript and rebuilt (as
//! a book from any other source is) has the source's quotes, notes, verse line breaks, lists,
//! tables, images and headings.

use super::{corpus, options};
use crate::epub;
use crate::structure::{count_epub, StructureCounts};

/// Each book, its language, and whether the rebuilt book adds a cover page: The Waste Land's
/// package names a cover image that none of its pages shows, and a rebuilt book gives its cover
/// a page (one `img` more than the source).
const BOOKS: &[(&str, &str, bool)] = &[
    ("moby-dick.epub", "en", false),
    ("wasteland.epub", "en", true),
    ("childrens-literature.epub", "en", false),
    ("regime-anticancer-arabic.epub", "ar", false),
];

fn counts(name: &str, lang: &str) -> (StructureCounts, StructureCounts) {
    let source = corpus(name);
    let manuscript = epub::extract(&source).unwrap();
    let rebuilt = super::super::epub::render(&manuscript, &options(lang)).unwrap();
    (count_epub(&source).unwrap(), count_epub(&rebuilt).unwrap())
}

#[test]
fn a_rebuilt_epub_has_the_structure_of_its_source_for_every_corpus_book() {
    let mut differences = Vec::new();
    for (name, lang, cover_page) in BOOKS {
        let (mut source, rebuilt) = counts(name, lang);
        source.images += usize::from(*cover_page);
        eprintln!("{name}\n  source  {source:?}\n  rebuilt {rebuilt:?}");
        if source != rebuilt {
            differences.push(format!("{name}: source {source:?}, rebuilt {rebuilt:?}"));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The XHTML chapter files of a rebuilt EPUB, by name.
fn chapter_files(epub: &[u8]) -> Vec<(String, String)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(epub.to_vec())).unwrap();
    let names: Vec<String> = zip.file_names().map(str::to_string).collect();
    let mut files = Vec::new();
    for name in names.into_iter().filter(|n| n.contains("/ch")) {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(&name).unwrap(), &mut text).unwrap();
        files.push((name.trim_start_matches("OEBPS/").to_string(), text));
    }
    files
}

/// Every `href="file#id"` (or `#id`) after `marker` in the chapter files, resolved.
fn links_after(files: &[(String, String)], marker: &str) -> Vec<(String, String)> {
    let mut links = Vec::new();
    for (name, text) in files {
        for piece in text.split(marker).skip(1) {
            let href = piece.split("href=\"").nth(1).and_then(|h| h.split('"').next());
            let Some(href) = href else { continue };
            let (file, id) = href.split_once('#').unwrap();
            let file = if file.is_empty() { name.as_str() } else { file };
            links.push((file.to_string(), id.to_string()));
        }
    }
    links
}

#[test]
fn rebuilt_notes_link_to_their_text_and_back_to_their_reference() {
    for name in ["wasteland.epub", "moby-dick.epub"] {
        let manuscript = epub::extract(&corpus(name)).unwrap();
        let rebuilt = super::super::epub::render(&manuscript, &options("en")).unwrap();
        let files = chapter_files(&rebuilt);
        let has_id = |(file, id): &(String, String)| {
            files
                .iter()
                .any(|(n, t)| n == file && t.contains(&format!("id=\"{id}\"")))
        };
        let to_notes = links_after(&files, "epub:type=\"noteref\"");
        let back = links_after(&files, "role=\"doc-backlink\"");
        assert!(!to_notes.is_empty() && !back.is_empty(), "{name}");
        assert_eq!(back.len(), manuscript.note_numbers().len(), "{name}");
        for link in to_notes.iter().chain(&back) {
            assert!(has_id(link), "{name}: nothing has the id of {link:?}");
        }
        // A note's paragraphs and quotations stay in one note.
        let notes: usize = files.iter().map(|(_, t)| t.matches("<aside").count()).sum();
        let source = count_epub(&corpus(name)).unwrap();
        assert_eq!(notes, source.notes, "{name}");
    }
}

#[test]
fn a_poems_lines_are_set_one_to_a_line_inside_one_poem() {
    let manuscript = epub::extract(&corpus("childrens-literature.epub")).unwrap();
    let rebuilt = super::super::epub::render(&manuscript, &options("en")).unwrap();
    let files = chapter_files(&rebuilt);
    let page = files
        .iter()
        .map(|(_, t)| t)
        .find(|t| t.contains("For this day thou must die!"))
        .unwrap();
    let poem = page.split("<div class=\"poem\">").nth(1).unwrap();
    let poem = poem.split("</div>").next().unwrap();
    let lines: Vec<&str> = poem.matches("<p class=\"line\"").collect();
    assert_eq!(lines.len(), 2, "{poem}");
    assert!(poem.contains("brave,</p>"), "{poem}");
}
