//! Round trips through the renderers, checked by the tools readers' software relies on.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::RenderOptions;
use crate::epub;

pub(crate) use crate::corpus_tests::corpus_epub as corpus;

pub(crate) fn options(language: &str) -> RenderOptions {
    RenderOptions {
        language: language.into(),
        title: None,
        author: None,
        identifier: "urn:booktr:test".into(),
        modified: "2026-01-01T00:00:00Z".into(),
        budget: crate::Budget::default(),
    }
}

pub(crate) fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("booktr-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// What epubcheck printed about a file it found errors in.
#[derive(Debug)]
pub(crate) struct EpubcheckReport(String);

impl std::fmt::Display for EpubcheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// epubcheck (Debian package `epubcheck`; `scripts/test.sh` installs it) on a file, with Java's
/// quick compiler alone and its serial collector: a check lasts seconds, too short for the
/// optimising compiler's work to pay back, and so takes half the CPU time.
pub(crate) fn epubcheck_command(path: &Path) -> Command {
    let jar = "/usr/share/java/epubcheck.jar";
    assert!(
        Path::new(jar).exists(),
        "epubcheck is not installed: run scripts/test.sh, which installs it"
    );
    let mut command = Command::new("java");
    command
        .args(["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", jar])
        .arg(path);
    command
}

/// Runs epubcheck and returns its report when it finds errors.
pub(crate) fn epubcheck(path: &Path) -> Result<(), EpubcheckReport> {
    let out = epubcheck_command(path).arg("-q").output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(EpubcheckReport(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

#[test]
fn every_corpus_book_round_trips_to_an_epub_that_epubcheck_accepts() {
    for (name, lang) in [
        ("moby-dick.epub", "en"),
        ("wasteland.epub", "en"),
        ("childrens-literature.epub", "en"),
        ("regime-anticancer-arabic.epub", "ar"),
    ] {
        let manuscript = epub::extract(&corpus(name)).unwrap();
        let rendered = super::epub::render(&manuscript, &options(lang)).unwrap();
        let path = temp_file(name, &rendered);
        if let Err(report) = epubcheck(&path) {
            panic!("{name}: epubcheck found errors:\n{report}");
        }
        // And it reads back as the same book.
        let again = epub::extract(&rendered).unwrap();
        assert_eq!(again.chapters.len(), manuscript.chapters.len(), "{name}");
        let (before, after) = (manuscript.word_count(), again.word_count());
        assert!(
            after.abs_diff(before) * 100 <= before,
            "{name}: {before} words became {after}"
        );
    }
}

#[test]
fn the_arabic_book_is_right_to_left() {
    let manuscript = epub::extract(&corpus("regime-anticancer-arabic.epub")).unwrap();
    let rendered = super::epub::render(&manuscript, &options("ar")).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(rendered)).unwrap();
    let mut opf = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("OEBPS/content.opf").unwrap(), &mut opf)
        .unwrap();
    assert!(opf.contains(r#"page-progression-direction="rtl""#), "{opf}");
    assert!(opf.contains("<dc:language>ar</dc:language>"));
    let mut chapter = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("OEBPS/ch0001.xhtml").unwrap(),
        &mut chapter,
    )
    .unwrap();
    assert!(chapter.contains(r#"dir="rtl""#));
}

/// Text of a PDF as poppler's pdftotext gives it (Debian package `poppler-utils`), whitespace folded.
pub(crate) fn pdftotext(path: &Path) -> String {
    let out = Command::new("pdftotext").arg(path).arg("-").output();
    let out = out.unwrap_or_else(|e| {
        panic!("pdftotext is not installed ({e}): run scripts/test.sh, which installs it")
    });
    assert!(
        out.status.success(),
        "pdftotext failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first sentence of a chapter's first paragraph (or its first 12 words).
fn first_sentence(chapter: &crate::manuscript::Chapter) -> Option<String> {
    let text = chapter
        .blocks
        .iter()
        .find(|b| b.kind == crate::manuscript::BlockKind::Paragraph && b.word_count() > 3)?
        .plain_text();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut sentence = Vec::new();
    for word in words.iter().take(12) {
        sentence.push(*word);
        if word.ends_with(['.', '!', '?']) {
            break;
        }
    }
    Some(sentence.join(" "))
}

#[test]
fn moby_dick_renders_to_a_pdf_that_gives_back_every_chapters_first_sentence() {
    let manuscript = epub::extract(&corpus("moby-dick.epub")).unwrap();
    let pdf = super::pdf::render(&manuscript, &options("en"), &[])
        .unwrap()
        .bytes;
    let path = temp_file("moby-dick.pdf", &pdf);
    let text = pdftotext(&path);
    let mut checked = 0;
    for chapter in &manuscript.chapters {
        if let Some(sentence) = first_sentence(chapter) {
            // Footnote markers are printed as [n]; compare the words only.
            assert!(
                text.contains(&sentence),
                "missing from the PDF: {sentence:?} ({:?})",
                chapter.title
            );
            checked += 1;
        }
    }
    assert!(checked > 130, "{checked} chapters checked");
    // One bookmark per chapter.
    let doc = pdf_extract::Document::load_mem(&pdf).unwrap();
    let toc = doc.get_toc().unwrap();
    assert_eq!(toc.toc.len(), manuscript.chapters.len());
    assert!(text.contains("Contents"), "a table of contents");
}

#[test]
fn the_arabic_book_renders_to_a_pdf_with_its_arabic_text() {
    let manuscript = epub::extract(&corpus("regime-anticancer-arabic.epub")).unwrap();
    let pdf = super::pdf::render(&manuscript, &options("ar"), &[])
        .unwrap()
        .bytes;
    let path = temp_file("arabic.pdf", &pdf);
    let text = pdftotext(&path);
    let words: Vec<String> = manuscript.chapters[0]
        .plain_text()
        .split_whitespace()
        .take(40)
        .map(str::to_string)
        .collect();
    let found = words.iter().filter(|w| text.contains(w.as_str())).count();
    assert!(
        found * 10 >= words.len() * 9,
        "{found} of {} Arabic words found in: {}",
        words.len(),
        &text[..text.len().min(400)]
    );
}

#[test]
fn a_smaller_ceiling_leaves_out_an_image_the_default_renders() {
    use crate::budget::Budget;
    use crate::manuscript::{Asset, Block, BlockKind, Chapter, Manuscript};
    let manuscript = Manuscript {
        chapters: vec![Chapter {
            title: Some("One".into()),
            blocks: vec![Block {
                kind: BlockKind::Image {
                    asset: "picture".into(),
                },
                text: "A picture".into(),
                anchors: Vec::new(),
                groups: Vec::new(),
            }],
        }],
        assets: vec![Asset {
            id: "picture".into(),
            media_type: "image/png".into(),
            file_name: "picture.png".into(),
            // 9 megapixels: within the default's 16, past the 4 of a 16 MiB ceiling.
            bytes: crate::test_images::png(3_000, 3_000),
        }],
        ..Manuscript::default()
    };
    let left_out = |budget: Budget| {
        let options = RenderOptions {
            budget,
            ..options("en")
        };
        super::pdf::render(&manuscript, &options, &[])
            .unwrap()
            .warnings
    };
    assert_eq!(left_out(Budget::default()), Vec::<String>::new());
    let warnings = left_out(Budget::of_mib(16).unwrap());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("4 megapixels per image: picture.png"),
        "{warnings:?}"
    );
}

#[test]
fn a_pdf_says_its_title_author_language_and_when_it_was_made() {
    let manuscript = epub::extract(&corpus("wasteland.epub")).unwrap();
    let options = RenderOptions {
        title: Some("La Terre vaine".into()),
        author: Some("T. S. Eliot".into()),
        modified: "2026-03-04T05:06:07Z".into(),
        ..options("fr")
    };
    let pdf = super::pdf::render(&manuscript, &options, &[])
        .unwrap()
        .bytes;
    let doc = pdf_extract::Document::load_mem(&pdf).unwrap();
    let text = |object: &pdf_extract::Object| match object {
        pdf_extract::Object::String(bytes, _) => {
            // UTF-16BE with a byte-order mark, or PDFDocEncoding (ASCII here).
            match bytes.strip_prefix(&[0xFE, 0xFF]) {
                Some(utf16) => String::from_utf16_lossy(
                    &utf16
                        .chunks(2)
                        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                        .collect::<Vec<_>>(),
                ),
                None => String::from_utf8_lossy(bytes).into_owned(),
            }
        }
        other => panic!("not a string: {other:?}"),
    };
    let info_ref = doc.trailer.get(b"Info").unwrap().as_reference().unwrap();
    let info = doc.get_dictionary(info_ref).unwrap();
    assert_eq!(text(info.get(b"Title").unwrap()), "La Terre vaine");
    assert_eq!(text(info.get(b"Author").unwrap()), "T. S. Eliot");
    let created = text(info.get(b"CreationDate").unwrap());
    assert!(created.starts_with("D:20260304050607"), "{created}");
    assert_eq!(text(doc.catalog().unwrap().get(b"Lang").unwrap()), "fr");
}

mod bilingual;
mod structure;

/// Each verse line of `manuscript` that ends with a line number: the verse's last word as a
/// PDF prints it (a note's reference as `[n]`) and the number.
pub(crate) fn numbered_lines(manuscript: &crate::manuscript::Manuscript) -> Vec<(String, String)> {
    use crate::markup::{Piece, Tag};
    let notes = manuscript.note_numbers();
    manuscript
        .chapters
        .iter()
        .flat_map(|c| &c.blocks)
        .filter(|b| b.kind == crate::manuscript::BlockKind::Line)
        .filter_map(|b| {
            let (verse, number) = super::line_number(&b.text)?;
            let printed: String = verse
                .into_iter()
                .map(|p| match p {
                    Piece::Text(t) | Piece::Tag(Tag::Num { text: t, .. }) => t,
                    Piece::Tag(Tag::Empty {
                        name: "ref",
                        attr: Some(id),
                    }) => format!("[{}]", notes[&id]),
                    Piece::Tag(Tag::Empty { .. }) => " ".into(),
                    Piece::Tag(_) => String::new(),
                })
                .collect();
            Some((printed.split_whitespace().last()?.to_string(), number))
        })
        .collect()
}

#[test]
fn the_waste_lands_line_numbers_stand_apart_from_their_verses_in_a_pdf() {
    let manuscript = epub::extract(&corpus("wasteland.epub")).unwrap();
    let numbered = numbered_lines(&manuscript);
    assert_eq!(numbered.len(), 43, "{numbered:?}");
    let pdf = super::pdf::render(&manuscript, &options("en"), &[])
        .unwrap()
        .bytes;
    let path = temp_file("wasteland-numbers.pdf", &pdf);
    let text = pdftotext(&path);
    for (last, number) in &numbered {
        assert!(
            !text.contains(&format!("{last}{number}")),
            "{number} is glued to {last:?}"
        );
    }
    // Set at the end of their verse's line, in the margin: by position, each line ends with
    // its number, apart from the last word.
    let layout = Command::new("pdftotext")
        .arg("-layout")
        .arg(&path)
        .arg("-")
        .output()
        .unwrap();
    let layout = String::from_utf8_lossy(&layout.stdout);
    for (last, number) in &numbered {
        assert!(
            layout
                .lines()
                .any(|l| ends_apart(l.trim_end(), last, number)),
            "no line ends with {last:?} and, apart, {number}"
        );
    }
}

/// Whether `line` ends with `last`, space, and `number`.
fn ends_apart(line: &str, last: &str, number: &str) -> bool {
    let Some(rest) = line.strip_suffix(number) else {
        return false;
    };
    let before = rest.trim_end();
    rest.len() > before.len() && before.ends_with(last)
}
