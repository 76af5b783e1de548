//! Structure kept through the manuscript: a corpus EPUB read into a manuscript and rebuilt (as
//! a book from any other source is) has the source's quotes, notes, verse line breaks, lists,
//! tables, images and headings.

use super::{corpus, options};
use crate::epub;
use crate::manuscript::{Block, BlockKind, Chapter, Manuscript};
use crate::structure::{count_epub, count_inline_epub, StructureCounts};

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
            let href = piece
                .split("href=\"")
                .nth(1)
                .and_then(|h| h.split('"').next());
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

/// The lines of a PDF as pdftotext reads them, each with its whitespace folded.
fn pdf_lines(name: &str, pdf: &[u8]) -> Vec<String> {
    let path = super::temp_file(name, pdf);
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext is not installed: run scripts/test.sh, which installs it");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

fn pdf_of(name: &str) -> Vec<String> {
    let manuscript = epub::extract(&corpus(name)).unwrap();
    let pdf = super::super::pdf::render(&manuscript, &options("en"), &[])
        .unwrap()
        .bytes;
    pdf_lines(&format!("{name}.pdf"), &pdf)
}

/// pdftotext's `-layout` text: words placed by their position, so an indent shows as spaces.
fn pdf_layout(name: &str) -> String {
    let path = std::env::temp_dir()
        .join(format!("booktr-render-{}", std::process::id()))
        .join(format!("{name}.pdf"));
    let out = std::process::Command::new("pdftotext")
        .arg("-layout")
        .arg(&path)
        .arg("-")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The indent of the first line that starts with `text` in `-layout` text.
fn indent_of(layout: &str, text: &str) -> usize {
    let line = layout
        .lines()
        .find(|l| l.trim_start().starts_with(text))
        .unwrap_or_else(|| panic!("no line starts with {text:?}"));
    line.len() - line.trim_start().len()
}

/// Whether `first` and `second` are whole lines, one right after the other.
fn consecutive(lines: &[String], first: &str, second: &str) -> bool {
    lines.windows(2).any(|w| w[0] == first && w[1] == second)
}

#[test]
fn the_waste_lands_pdf_sets_verse_lines_apart_quotations_indented_and_notes_numbered() {
    let lines = pdf_of("wasteland.epub");
    // The song in German is a quotation of four lines, each on its own.
    assert!(
        consecutive(&lines, "Frisch weht der Wind[3]", "Der Heimat zu"),
        "the quoted song's lines run together"
    );
    assert!(consecutive(&lines, "Mein Irisch Kind,", "Wo weilest du?"));
    let layout = pdf_layout("wasteland.epub");
    assert!(
        indent_of(&layout, "Frisch weht der Wind") > indent_of(&layout, "April is the cruellest"),
        "the quotation is not indented"
    );
    // References carry their note's number, and each note starts with it.
    assert!(lines.iter().any(|l| l.contains("[1]")));
    assert!(lines.iter().any(|l| l.starts_with("1. Line 20.")), "note 1");
    assert!(lines.iter().any(|l| l.starts_with("3. 31.")), "note 3");
}

#[test]
fn the_anthologys_pdf_numbers_its_list_and_sets_its_poems_lines_apart() {
    let lines = pdf_of("childrens-literature.epub");
    assert!(lines.iter().any(|l| l.starts_with("1. Alden, Raymond")));
    assert!(lines.iter().any(|l| l.starts_with("2. Andersen, Hans")));
    assert!(
        consecutive(
            &lines,
            "Farewell, farewell, thou warrior brave,",
            "For this day thou must die!"
        ),
        "the poem's lines run together"
    );
    // The transcriber's note stays where it was, set apart.
    assert!(consecutive(
        &lines,
        "For this day thou must die!",
        "Transcriber's Note: original reads 'warrier'"
    ));
    let layout = pdf_layout("childrens-literature.epub");
    assert!(
        indent_of(&layout, "Transcriber's Note: original reads 'warrier'")
            > indent_of(&layout, "And now the paper parted"),
        "the note is not set apart"
    );
}

/// The HTML files pandoc made from the corpus, rebuilt as EPUBs, keep their quotations, notes
/// and verse line breaks. (Their other counts differ for reasons of their own: the HTML reader
/// does not carry images, pandoc's endnotes are a list set as notes, and its table of contents
/// is not the book's text.)
#[test]
fn html_books_rebuilt_keep_their_quotations_notes_and_line_breaks() {
    for name in [
        "wasteland.html",
        "childrens-literature.html",
        "moby-dick.html",
        "regime-anticancer-arabic.html",
    ] {
        let bytes = crate::corpus_tests::fixture(name);
        let source = crate::structure::count_xhtml(&String::from_utf8_lossy(&bytes));
        let manuscript = crate::html::extract(&bytes).unwrap();
        let rebuilt = super::super::epub::render(&manuscript, &options("en")).unwrap();
        let rebuilt = count_epub(&rebuilt).unwrap();
        let kept = |c: &StructureCounts| (c.block_quotes, c.notes, c.line_breaks);
        assert_eq!(kept(&rebuilt), kept(&source), "{name}");
    }
}

/// Books from HTML and Word, with their quotations, poems and notes set as such, rebuild to
/// EPUBs epubcheck accepts (links to anchors that share a block included).
#[test]
fn html_and_word_books_rebuild_to_epubs_that_epubcheck_accepts() {
    for name in [
        "wasteland.html",
        "childrens-literature.html",
        "wasteland.docx",
        "childrens-literature.docx",
    ] {
        let bytes = crate::corpus_tests::fixture(name);
        let manuscript = if name.ends_with(".html") {
            crate::html::extract(&bytes).unwrap()
        } else {
            crate::docx::extract(&bytes).unwrap()
        };
        let rebuilt = super::super::epub::render(&manuscript, &options("en")).unwrap();
        let path = super::temp_file(&format!("rebuilt-{name}.epub"), &rebuilt);
        if let Err(report) = super::epubcheck(&path) {
            panic!("{name}: epubcheck found errors:\n{report}");
        }
    }
}

fn block(kind: BlockKind, text: &str) -> Block {
    Block::new(kind, text.into())
}

#[test]
fn a_pdf_sets_tables_in_rows_and_nested_lists_with_their_markers() {
    let item = |ordered, depth, text| block(BlockKind::ListItem { ordered, depth }, text);
    let cell = |row, col, header, text| {
        block(
            BlockKind::TableCell {
                table: 1,
                row,
                col,
                header,
            },
            text,
        )
    };
    let manuscript = Manuscript {
        chapters: vec![Chapter {
            title: Some("Structures".into()),
            blocks: vec![
                block(BlockKind::Paragraph, "Before the list."),
                item(true, 1, "First step"),
                item(false, 2, "a detail"),
                item(true, 1, "Second step"),
                block(BlockKind::Paragraph, "Between."),
                cell(1, 1, true, "Name"),
                cell(1, 2, true, "Value"),
                cell(2, 1, false, "whales"),
                cell(2, 2, false, "many"),
            ],
        }],
        ..Manuscript::default()
    };
    let pdf = super::super::pdf::render(&manuscript, &options("en"), &[])
        .unwrap()
        .bytes;
    let lines = pdf_lines("structures.pdf", &pdf);
    for expected in ["1. First step", "• a detail", "2. Second step"] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected:?} in {lines:?}"
        );
    }
    let layout = pdf_layout("structures");
    assert!(indent_of(&layout, "• a detail") > indent_of(&layout, "1. First step"));
    // A row's cells share a line.
    for (a, b) in [("Name", "Value"), ("whales", "many")] {
        assert!(
            layout
                .lines()
                .any(|l| l.trim_start().starts_with(a) && l.trim_end().ends_with(b)),
            "{a} and {b} are not one row:\n{layout}"
        );
    }
}

/// A bilingual rebuilt book sets each original beside its translation inside the same
/// quotation, note or list: as many of those as the source has (headings and line breaks come
/// twice, once per side).
#[test]
fn a_rebuilt_bilingual_epub_keeps_quotations_notes_and_lists_whole() {
    for (name, lang, _) in BOOKS {
        let source = corpus(name);
        let manuscript = epub::extract(&source).unwrap();
        let sources = crate::render::Sources {
            language: lang,
            chapters: &manuscript.chapters,
        };
        let rebuilt =
            super::super::epub::render_bilingual(&manuscript, sources, &options(lang)).unwrap();
        let (source, rebuilt) = (count_epub(&source).unwrap(), count_epub(&rebuilt).unwrap());
        let whole = |c: &StructureCounts| (c.block_quotes, c.notes, c.lists, c.tables);
        assert_eq!(whole(&rebuilt), whole(&source), "{name}");
        assert_eq!(rebuilt.headings, 2 * source.headings, "{name}");
        assert_eq!(rebuilt.line_breaks, 2 * source.line_breaks, "{name}");
    }
}

#[test]
fn a_rebuilt_epub_writes_the_books_marks_back_as_spans_of_their_class() {
    let spans = |counts: std::collections::BTreeMap<(String, String), usize>| {
        counts
            .into_iter()
            .filter(|((element, class), _)| element == "span" && !class.is_empty())
            .collect::<Vec<_>>()
    };
    for (name, lang, _) in BOOKS {
        let source = corpus(name);
        let manuscript = epub::extract(&source).unwrap();
        let rebuilt = super::super::epub::render(&manuscript, &options(lang)).unwrap();
        let (mut before, after) = (
            spans(count_inline_epub(&source).unwrap()),
            spans(count_inline_epub(&rebuilt).unwrap()),
        );
        // The anthology's poem sets its two lines as spans (`line`, `c8`): they are verse
        // lines, paragraphs of their own in a rebuilt book, not marks.
        before.retain(|((_, class), _)| !matches!(class.as_str(), "line" | "c8"));
        assert_eq!(after, before, "{name}");
    }
    // A poem's line numbers are set apart, at their line's end.
    let manuscript = epub::extract(&corpus("wasteland.epub")).unwrap();
    let rebuilt = super::super::epub::render(&manuscript, &options("en")).unwrap();
    let files = chapter_files(&rebuilt);
    let numbered: usize = files
        .iter()
        .map(|(_, t)| t.matches(r#"<p class="line numbered""#).count())
        .sum();
    assert_eq!(numbered, 43);
    assert!(
        files
            .iter()
            .any(|(_, t)| t.contains(r#"into the Hofgarten,<span class="lnum">10</span></p>"#)),
        "no line 10"
    );
}
