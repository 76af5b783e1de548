//! Bilingual editions rebuilt from a manuscript: the PDF in two columns and the EPUB with each
//! original before its translation, on the corpus with a fake translation that changes every
//! letter into the target's script.

use super::{corpus, epubcheck, options, pdftotext, temp_file};
use crate::epub;
use crate::error::FormatError;
use crate::manuscript::{BlockKind, Manuscript};
use crate::markup::{self, escape_text, Piece};
use crate::render::{Layout, Sources};

const HEBREW: [char; 26] = [
    'א', 'ב', 'ג', 'ד', 'ה', 'ו', 'ז', 'ח', 'ט', 'י', 'כ', 'ל', 'מ', 'נ', 'ס', 'ע', 'פ', 'צ', 'ק',
    'ר', 'ש', 'ת', 'ך', 'ם', 'ן', 'ף',
];

/// Latin letters written as Hebrew ones, without the e's: a right-to-left "translation" of an
/// English book, in fewer letters as Hebrew, which leaves most vowels unwritten, takes.
fn to_hebrew(c: char, out: &mut String) {
    match c {
        'e' | 'E' => {}
        c if c.is_ascii_alphabetic() => {
            out.push(HEBREW[usize::from(c.to_ascii_lowercase() as u8 - b'a')])
        }
        c => out.push(c),
    }
}

/// Arabic letters written as two Latin ones: a left-to-right "translation" of an Arabic book,
/// in more letters as French, which writes its vowels, takes.
fn to_latin(c: char, out: &mut String) {
    if matches!(c as u32, 0x0600..=0x06FF) && c.is_alphabetic() {
        out.push(char::from(b'b' + (c as u32 % 20) as u8));
        out.push(['a', 'e', 'i', 'o', 'u'][c as usize % 5]);
    } else {
        out.push(c)
    }
}

/// Every letter of `text` changed by `letter`.
fn spell(text: &str, letter: Letter) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    text.chars().for_each(|c| letter(c, &mut out));
    out
}

type Letter = fn(char, &mut String);

/// Every letter of the text changed by `letter`; tags kept as they were, so the markup stays
/// valid.
fn fake(markup: &str, letter: Letter) -> String {
    let mut out = String::new();
    for piece in markup::parse(markup).unwrap() {
        match piece {
            Piece::Text(text) => out.push_str(&escape_text(&spell(&text, letter))),
            Piece::Tag(tag) => out.push_str(&markup::tag_text(&tag)),
        }
    }
    out
}

/// The manuscript with every chapter (title and blocks) fake-translated.
fn translate(manuscript: &Manuscript, letter: Letter) -> Manuscript {
    let mut translated = manuscript.clone();
    for chapter in &mut translated.chapters {
        chapter.title = chapter.title.as_deref().map(|t| spell(t, letter));
        for block in &mut chapter.blocks {
            block.text = fake(&block.text, letter);
        }
    }
    translated
}

/// A book, its language, the language it is "translated" into and how its letters change.
struct Case {
    file: &'static str,
    source: &'static str,
    target: &'static str,
    letter: Letter,
}

const MOBY_DICK_IN_HEBREW: Case = Case {
    file: "moby-dick.epub",
    source: "en",
    target: "he",
    letter: to_hebrew,
};

const ARABIC_BOOK_IN_FRENCH: Case = Case {
    file: "regime-anticancer-arabic.epub",
    source: "ar",
    target: "fr",
    letter: to_latin,
};

/// The longest word of a text that extractors give back letter for letter: letters only, and
/// for Arabic no lam-alef (a ligature poppler gives back reversed) and no vowel marks.
fn probe(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()))
        .filter(|w| {
            w.chars().all(|c| {
                c.is_alphabetic() && !matches!(c as u32, 0x064B..=0x065F | 0x0670 | 0x0640)
            })
        })
        .filter(|w| !w.contains("لا") && w.chars().count() >= 5)
        .max_by_key(|w| w.chars().count())
        .map(str::to_string)
}

fn bilingual_pdf_reads_each_original_then_its_translation(case: Case) {
    let source = epub::extract(&corpus(case.file)).unwrap();
    let translated = translate(&source, case.letter);
    let sources = Sources {
        language: case.source,
        chapters: &source.chapters,
    };
    let pdf =
        crate::render::pdf::render_bilingual(&translated, sources, &options(case.target), &[])
            .unwrap();
    let path = temp_file(&format!("bilingual-{}.pdf", case.target), &pdf.bytes);
    let text = pdftotext(&path);

    // Paragraphs from all over the book, each with a word to look for on both sides that is
    // nowhere else in the PDF.
    let paragraphs: Vec<(String, String)> = source
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .filter(|b| b.kind == BlockKind::Paragraph && b.word_count() >= 6)
        .filter_map(|b| probe(&b.plain_text()))
        .map(|word| {
            let translation = spell(&word, case.letter);
            (word, translation)
        })
        .filter(|(word, translation)| {
            text.matches(word.as_str()).count() == 1
                && text.matches(translation.as_str()).count() == 1
        })
        .collect();
    let step = (paragraphs.len() / 60).max(1);
    let sample: Vec<&(String, String)> = paragraphs.iter().step_by(step).collect();
    assert!(sample.len() >= 20, "{} paragraphs sampled", sample.len());
    // In reading order: the original's word, then its translation's, then the next original's.
    let mut at = 0;
    let mut in_order = 0;
    for (original, translation) in &sample {
        let Some(found) = text[at..].find(original.as_str()).map(|i| at + i) else {
            continue;
        };
        let after = found + original.len();
        let Some(next) = text[after..].find(translation.as_str()).map(|i| after + i) else {
            continue;
        };
        in_order += 1;
        at = next + translation.len();
    }
    eprintln!(
        "{}: {in_order} of {} sampled paragraphs read as the original then its translation",
        case.file,
        sample.len()
    );
    assert!(
        in_order * 10 >= sample.len() * 9,
        "{}: only {in_order} of {} sampled paragraphs read as the original then its translation",
        case.file,
        sample.len()
    );
    // Both languages' scripts are there, in like amounts.
    let rtl = text
        .chars()
        .filter(|c| matches!(*c as u32, 0x0590..=0x06FF))
        .count();
    let latin = text.chars().filter(char::is_ascii_alphabetic).count();
    assert!(
        rtl > 10_000 && latin > 10_000,
        "{rtl} right-to-left and {latin} Latin letters"
    );
    // The contents and bookmarks are the translation's.
    let doc = pdf_extract::Document::load_mem(&pdf.bytes).unwrap();
    assert_eq!(doc.get_toc().unwrap().toc.len(), translated.chapters.len());
}

#[test]
fn a_bilingual_pdf_of_moby_dick_in_hebrew_reads_each_original_then_its_translation() {
    bilingual_pdf_reads_each_original_then_its_translation(MOBY_DICK_IN_HEBREW);
}

#[test]
fn a_bilingual_pdf_of_the_arabic_book_in_french_reads_each_original_then_its_translation() {
    bilingual_pdf_reads_each_original_then_its_translation(ARABIC_BOOK_IN_FRENCH);
}

/// Every element of class `booktr-original` and the element after it, in document order.
fn pairs<'a>(
    element: &'a crate::dom::Element,
    out: &mut Vec<(&'a crate::dom::Element, Option<&'a crate::dom::Element>)>,
) {
    let children: Vec<&crate::dom::Element> = element.elements().collect();
    for (k, child) in children.iter().enumerate() {
        if child
            .attr("class")
            .is_some_and(|c| c.split(' ').any(|c| c == "booktr-original"))
        {
            out.push((child, children.get(k + 1).copied()));
        }
        pairs(child, out);
    }
}

fn dir_of(lang: &str) -> &'static str {
    if crate::render::is_rtl(lang) {
        "rtl"
    } else {
        "ltr"
    }
}

fn rebuilt_bilingual_epub_sets_each_original_before_its_translation(case: Case) {
    let source = epub::extract(&corpus(case.file)).unwrap();
    let translated = translate(&source, case.letter);
    let chapters: Vec<_> = translated.chapters.iter().cloned().map(Some).collect();
    let sources = Sources {
        language: case.source,
        chapters: &source.chapters,
    };
    // Rebuilt as if the source were not an EPUB: no package to translate in place.
    let rendition = crate::render::translated_epub(
        None,
        &translated,
        &chapters,
        Some(sources),
        &options(case.target),
        Layout::Bilingual,
    )
    .unwrap();
    let path = temp_file(&format!("bilingual-{}.epub", case.target), &rendition.bytes);
    if let Err(report) = epubcheck(&path) {
        panic!("{}: epubcheck found errors:\n{report}", case.file);
    }
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(rendition.bytes)).unwrap();
    let mut read = |name: &str| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut text).unwrap();
        text
    };
    let opf = read("OEBPS/content.opf");
    assert!(
        opf.contains(&format!(
            "<dc:language>{}</dc:language>\n    <dc:language>{}</dc:language>",
            case.target, case.source
        )),
        "{opf}"
    );
    let mut checked = 0;
    for (index, chapter) in source.chapters.iter().enumerate() {
        let page = read(&format!("OEBPS/ch{:04}.xhtml", index + 1));
        let root = crate::dom::parse(&page, "chapter").unwrap();
        let mut found = Vec::new();
        pairs(&root, &mut found);
        // Every block but an image (shown once) is an original and its translation.
        let expected: Vec<String> = chapter
            .blocks
            .iter()
            .filter(|b| !matches!(b.kind, BlockKind::Image { .. }))
            .map(|b| {
                b.plain_text()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(found.len(), expected.len(), "chapter {}", index + 1);
        for ((original, translation), text) in found.iter().zip(&expected) {
            let translation =
                translation.unwrap_or_else(|| panic!("no translation after {text:?}"));
            assert_eq!(original.attr("lang"), Some(case.source));
            assert_eq!(original.attr("dir"), Some(dir_of(case.source)));
            assert_eq!(translation.attr("lang"), Some(case.target));
            assert_eq!(translation.attr("dir"), Some(dir_of(case.target)));
            assert_eq!(translation.name, original.name, "{text:?}");
            assert!(translation.attr("id").is_none(), "ids are not repeated");
            // The translation is the original's text with its letters changed.
            let expected_translation = spell(&original.text(), case.letter);
            assert_eq!(translation.text(), expected_translation);
            // Footnote references are numbered in the page; the words are the block's.
            let letters = |t: &str| t.chars().filter(|c| c.is_alphabetic()).collect::<String>();
            assert_eq!(letters(&original.text()), letters(text));
            checked += 1;
        }
        // No id twice in a page.
        let mut ids: Vec<&str> = Vec::new();
        fn collect<'a>(e: &'a crate::dom::Element, ids: &mut Vec<&'a str>) {
            ids.extend(e.attr("id"));
            e.elements().for_each(|c| collect(c, ids));
        }
        collect(&root, &mut ids);
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(
            ids.len(),
            count,
            "an id is repeated in chapter {}",
            index + 1
        );
    }
    assert!(checked > 100, "{checked} blocks checked");
}

#[test]
fn a_rebuilt_bilingual_epub_of_moby_dick_in_hebrew_sets_each_original_before_its_translation() {
    rebuilt_bilingual_epub_sets_each_original_before_its_translation(MOBY_DICK_IN_HEBREW);
}

#[test]
fn a_rebuilt_bilingual_epub_of_the_arabic_book_in_french_sets_each_original_before_its_translation()
{
    rebuilt_bilingual_epub_sets_each_original_before_its_translation(ARABIC_BOOK_IN_FRENCH);
}

#[test]
fn sources_that_do_not_match_the_translation_are_refused_as_a_mismatch() {
    let source = epub::extract(&corpus("wasteland.epub")).unwrap();
    let translated = translate(&source, to_hebrew);
    let options = options("he");
    let mismatch = |result: Result<_, FormatError>, why: &str| match result {
        Err(FormatError::Mismatch(message)) => assert!(message.contains(why), "{message}"),
        Err(other) => panic!("not a mismatch: {other}"),
        Ok(_) => panic!("misaligned sources were accepted"),
    };

    let fewer_chapters = Sources {
        language: "en",
        chapters: &source.chapters[1..],
    };
    mismatch(
        crate::render::pdf::render_bilingual(&translated, fewer_chapters, &options, &[])
            .map(|_| ()),
        "chapters",
    );
    mismatch(
        crate::render::epub::render_bilingual(&translated, fewer_chapters, &options).map(|_| ()),
        "chapters",
    );

    let mut short = source.chapters.clone();
    let longest = (0..short.len())
        .max_by_key(|&i| short[i].blocks.len())
        .unwrap();
    short[longest].blocks.pop();
    let fewer_blocks = Sources {
        language: "en",
        chapters: &short,
    };
    mismatch(
        crate::render::pdf::render_bilingual(&translated, fewer_blocks, &options, &[]).map(|_| ()),
        "blocks",
    );
    let chapters: Vec<_> = translated.chapters.iter().cloned().map(Some).collect();
    mismatch(
        crate::render::translated_epub(
            None,
            &translated,
            &chapters,
            Some(fewer_blocks),
            &options,
            Layout::Bilingual,
        )
        .map(|_| ()),
        "blocks",
    );
    // Without sources a rebuilt book cannot be bilingual; translated only, it needs none.
    mismatch(
        crate::render::translated_epub(
            None,
            &translated,
            &chapters,
            None,
            &options,
            Layout::Bilingual,
        )
        .map(|_| ()),
        "source text",
    );
    assert!(crate::render::translated_epub(
        None,
        &translated,
        &chapters,
        None,
        &options,
        Layout::Translated
    )
    .is_ok());
}
