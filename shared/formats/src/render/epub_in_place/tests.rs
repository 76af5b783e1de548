//! The corpus translated in place with a fake translation that marks every word, checked file
//! by file, block by block, and by epubcheck.

use std::io::Read;
use std::path::Path;

use super::render;
use crate::budget::Budget;
use crate::epub;
use crate::error::FormatError;
use crate::manuscript::{BlockKind, Chapter, Manuscript};
use crate::markup::{self, escape_text, Piece};
use crate::render::tests::{corpus, epubcheck_command, options, temp_file};
use crate::render::{Layout, RenderOptions};
use crate::structure::{count_epub, count_inline_epub};

const BOOKS: [(&str, &str); 4] = [
    ("moby-dick.epub", "fr"),
    ("wasteland.epub", "fr"),
    ("childrens-literature.epub", "fr"),
    ("regime-anticancer-arabic.epub", "en"),
];

/// Every word marked: `§§word`. Tags are kept as they were, so the markup stays valid.
fn fake(markup: &str) -> String {
    let mut out = String::new();
    for piece in markup::parse(markup).unwrap() {
        match piece {
            Piece::Text(text) => {
                let mut word_start = true;
                let mut marked = String::new();
                for c in text.chars() {
                    if c.is_whitespace() {
                        word_start = true;
                    } else if word_start {
                        marked.push_str("§§");
                        word_start = false;
                    }
                    marked.push(c);
                }
                out.push_str(&escape_text(&marked));
            }
            Piece::Tag(tag) => out.push_str(&markup::tag_text(&tag)),
        }
    }
    out
}

fn fake_title(title: &str) -> String {
    markup::plain_text(&fake(&escape_text(title)))
}

fn translate(manuscript: &Manuscript) -> Vec<Option<Chapter>> {
    manuscript
        .chapters
        .iter()
        .map(|chapter| {
            let mut chapter = chapter.clone();
            chapter.title = chapter.title.as_deref().map(fake_title);
            for block in &mut chapter.blocks {
                block.text = fake(&block.text);
            }
            Some(chapter)
        })
        .collect()
}

fn in_place_options(language: &str) -> RenderOptions {
    RenderOptions {
        title: Some("§§Title §§translated".into()),
        modified: "2026-02-03T04:05:06Z".into(),
        ..options(language)
    }
}

fn entries(epub: &[u8]) -> Vec<(String, Vec<u8>, zip::CompressionMethod)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(epub)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut file = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).unwrap();
            (file.name().to_string(), bytes, file.compression())
        })
        .collect()
}

fn text_of(entries: &[(String, Vec<u8>, zip::CompressionMethod)], name: &str) -> String {
    let (_, bytes, _) = entries.iter().find(|(n, _, _)| n == name).unwrap();
    String::from_utf8(bytes.clone()).unwrap()
}

/// Parses strictly: every start tag closed by its own end tag.
fn well_formed(name: &str, text: &str) {
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut depth = 0i32;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Start(_)) => depth += 1,
            Ok(quick_xml::events::Event::End(_)) => depth -= 1,
            Ok(_) => {}
            Err(e) => panic!(
                "{name} no longer parses: {e} at {}",
                reader.buffer_position()
            ),
        }
    }
    assert_eq!(depth, 0, "{name}: unclosed elements");
}

/// Every `id` of an XML file, sorted.
fn ids(text: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut ids = Vec::new();
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Start(e)) | Ok(quick_xml::events::Event::Empty(e)) => ids
                .extend(e.attributes().flatten().filter_map(|a| {
                    (a.key.as_ref() == b"id")
                        .then(|| String::from_utf8_lossy(&a.value).into_owned())
                })),
            Ok(quick_xml::events::Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
    }
    ids.sort();
    ids
}

/// epubcheck's count of fatal errors, errors and warnings for a file.
fn epubcheck_messages(path: &Path) -> (usize, String) {
    let out = epubcheck_command(path).output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let count = report
        .lines()
        .filter(|l| l.starts_with("ERROR") || l.starts_with("WARNING") || l.starts_with("FATAL"))
        .count();
    (count, report)
}

fn first_title(opf: &str) -> Option<String> {
    let root = crate::dom::parse(opf, "opf").unwrap();
    root.first("title").map(|t| t.text())
}

fn nav_texts(source: &str) -> Vec<String> {
    let root = crate::dom::parse(source, "nav").unwrap();
    root.descendants("a").iter().map(|a| a.text()).collect()
}

fn ncx_texts(source: &str) -> Vec<String> {
    let root = crate::dom::parse(source, "ncx").unwrap();
    root.descendants("navlabel")
        .iter()
        .map(|l| l.text())
        .collect()
}

#[test]
fn every_corpus_book_translated_in_place_keeps_its_files_structure_and_validity() {
    for (name, target) in BOOKS {
        let source = corpus(name);
        let manuscript = epub::extract(&source).unwrap();
        let translated = translate(&manuscript);
        let (source_messages, _) =
            epubcheck_messages(&temp_file(&format!("in-place-source-{name}"), &source));
        let source_entries = entries(&source);
        let source_counts = count_epub(&source).unwrap();
        let source_inline = count_inline_epub(&source).unwrap();
        for layout in [Layout::Translated, Layout::Bilingual] {
            let rendition = render(
                &source,
                &translated,
                &in_place_options(target),
                layout,
                Budget::default(),
            )
            .unwrap();
            // The anthology's navigation document carries a script, which does not come out.
            let scripted = name == "childrens-literature.epub";
            assert!(
                rendition.warnings.len() == usize::from(scripted)
                    && rendition
                        .warnings
                        .iter()
                        .all(|w| w.starts_with("removed what could run in a reader")),
                "{name}: {:?}",
                rendition.warnings
            );
            let output = rendition.bytes;
            let output_entries = entries(&output);
            let what = format!("{name} ({layout:?})");

            // The container: mimetype first and stored; every file of the source still there,
            // and every one that is not text to translate byte for byte.
            assert_eq!(output_entries[0].0, "mimetype", "{what}");
            assert_eq!(
                output_entries[0].2,
                zip::CompressionMethod::Stored,
                "{what}"
            );
            for (file, bytes, _) in &source_entries {
                let out = output_entries.iter().find(|(n, _, _)| n == file);
                let (_, out_bytes, _) = out.unwrap_or_else(|| panic!("{what}: {file} is missing"));
                let text = [".xhtml", ".html", ".opf", ".ncx"]
                    .iter()
                    .any(|e| file.ends_with(e));
                if !text {
                    assert_eq!(bytes, out_bytes, "{what}: {file} changed");
                }
                if text {
                    let out_text = String::from_utf8_lossy(out_bytes);
                    well_formed(file, &out_text);
                    // Every id stays, once: links and notes keep their targets (the package
                    // document gains its translated title's).
                    let before = ids(&String::from_utf8_lossy(bytes));
                    let after = ids(&out_text);
                    let mut unique = after.clone();
                    unique.dedup();
                    assert_eq!(unique, after, "{what}: {file} repeats an id");
                    if !file.ends_with(".opf") {
                        assert_eq!(before, after, "{what}: {file}'s ids changed");
                    }
                }
            }

            // Every block's translation is in the book, where the extractor finds it again.
            let again = epub::extract(&output).unwrap();
            match layout {
                Layout::Translated => {
                    assert_eq!(again.chapters.len(), manuscript.chapters.len(), "{what}");
                    for (c, (read, made)) in again.chapters.iter().zip(&translated).enumerate() {
                        let made = made.as_ref().unwrap();
                        assert_eq!(read.blocks.len(), made.blocks.len(), "{what}: chapter {c}");
                        for (read, made) in read.blocks.iter().zip(&made.blocks) {
                            assert_eq!(read.plain_text(), made.plain_text(), "{what}: chapter {c}");
                            assert_eq!(read.kind, made.kind, "{what}: chapter {c}");
                        }
                    }
                    let counts = count_epub(&output).unwrap();
                    assert_eq!(counts, source_counts, "{what}: the structure changed");
                    // The book's own marks (a poem's line numbers, small capitals, a sentence's
                    // span) and every other inline element are all still there.
                    assert_eq!(
                        count_inline_epub(&output).unwrap(),
                        source_inline,
                        "{what}: inline elements by (element, class)"
                    );
                }
                Layout::Bilingual => {
                    let all: String = again
                        .chapters
                        .iter()
                        .map(|c| c.plain_text())
                        .collect::<Vec<_>>()
                        .join("\n");
                    let all = all.split_whitespace().collect::<Vec<_>>().join(" ");
                    for block in translated.iter().flatten().flat_map(|c| &c.blocks) {
                        let text = block.plain_text();
                        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                        assert!(all.contains(&text), "{what}: {text:?} is missing");
                        if matches!(block.kind, BlockKind::Image { .. }) {
                            // An image has one alternative text: the translation.
                            continue;
                        }
                        let original = text.replace("§§", "");
                        assert!(all.contains(&original), "{what}: {original:?} is missing");
                    }
                }
            }

            // The language and the title.
            let opf_name = source_entries
                .iter()
                .map(|(n, _, _)| n)
                .find(|n| n.ends_with(".opf"))
                .unwrap();
            let opf = text_of(&output_entries, opf_name);
            let package = crate::dom::parse(&opf, "opf").unwrap();
            assert_eq!(
                package.first("language").map(|l| l.text()).as_deref(),
                Some(target),
                "{what}"
            );
            assert_eq!(
                first_title(&opf).as_deref(),
                Some("§§Title §§translated"),
                "{what}"
            );
            let titles: Vec<String> = package
                .descendants("title")
                .iter()
                .map(|t| t.text())
                .collect();
            assert!(
                titles.contains(&manuscript.title.clone().unwrap()),
                "{what}: the original title is kept: {titles:?}"
            );
            assert!(opf.contains("2026-02-03T04:05:06Z"), "{what}");
            for (file, bytes, _) in &output_entries {
                let original = source_entries.iter().find(|(n, _, _)| n == file);
                let changed = original.is_some_and(|(_, b, _)| b != bytes);
                if changed && (file.ends_with(".xhtml") || file.ends_with(".html")) {
                    let text = String::from_utf8_lossy(bytes);
                    let root = &text[text.find("<html").unwrap()..];
                    let root = &root[..root.find('>').unwrap()];
                    assert!(
                        root.contains(&format!(r#" lang="{target}""#)),
                        "{what}: {file}: {root}"
                    );
                    assert!(
                        root.contains(&format!(r#"xml:lang="{target}""#)),
                        "{what}: {file}"
                    );
                }
            }

            // The navigation document and the NCX name every chapter by its translated title.
            for (file, _, _) in &source_entries {
                let list = if file.ends_with(".ncx") {
                    ncx_texts
                } else if file.contains("nav") && file.ends_with(".xhtml") {
                    nav_texts
                } else {
                    continue;
                };
                let before = list(&text_of(&source_entries, file));
                let after = list(&text_of(&output_entries, file));
                assert_eq!(before.len(), after.len(), "{what}: {file}");
                let mut checked = 0;
                for chapter in &manuscript.chapters {
                    let Some(title) = &chapter.title else {
                        continue;
                    };
                    if before.contains(title) {
                        assert!(
                            after.contains(&fake_title(title)),
                            "{what}: {file} has no {:?}: {after:?}",
                            fake_title(title)
                        );
                        checked += 1;
                    }
                }
                assert!(checked > 0, "{what}: {file}: no chapter title checked");
            }

            // And epubcheck finds nothing it did not find in the source.
            let path = temp_file(&format!("in-place-{layout:?}-{name}"), &output);
            let (messages, report) = epubcheck_messages(&path);
            eprintln!("epubcheck {what}: source {source_messages}, output {messages}");
            assert!(
                messages <= source_messages,
                "{what}: epubcheck reports {messages} messages, the source {source_messages}:\n{report}"
            );
        }
    }
}

#[test]
fn a_translation_that_does_not_match_the_book_is_refused_as_a_mismatch() {
    let source = corpus("wasteland.epub");
    let manuscript = epub::extract(&source).unwrap();
    let mut translated = translate(&manuscript);
    let render = |translated: &[Option<Chapter>]| {
        render(
            &source,
            translated,
            &in_place_options("fr"),
            Layout::Translated,
            Budget::default(),
        )
    };
    assert!(render(&translated).is_ok());
    if let Some(Some(chapter)) = translated.get_mut(1) {
        chapter.blocks.pop();
    }
    assert!(matches!(render(&translated), Err(FormatError::Mismatch(_))));
    translated.pop();
    assert!(matches!(render(&translated), Err(FormatError::Mismatch(_))));
}

#[test]
fn a_partial_translation_keeps_the_untranslated_chapters_as_they_were() {
    let source = corpus("moby-dick.epub");
    let manuscript = epub::extract(&source).unwrap();
    let mut translated = translate(&manuscript);
    for chapter in translated.iter_mut().skip(3) {
        *chapter = None;
    }
    let output = render(
        &source,
        &translated,
        &in_place_options("fr"),
        Layout::Translated,
        Budget::default(),
    )
    .unwrap()
    .bytes;
    let again = epub::extract(&output).unwrap();
    for (index, chapter) in again.chapters.iter().enumerate() {
        let expected = match &translated[index] {
            Some(made) => made.plain_text(),
            None => manuscript.chapters[index].plain_text(),
        };
        assert_eq!(chapter.plain_text(), expected, "chapter {index}");
    }
}

fn make_epub(files: &[(&str, &str)]) -> Vec<u8> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/epub+zip").unwrap();
    for (name, text) in files {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    out.into_inner()
}

const CONTAINER: &str = r#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#;

const OPF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">x</dc:identifier><dc:title>Book</dc:title><dc:language>en</dc:language>
    <meta property="dcterms:modified">2020-01-01T00:00:00Z</meta>
  </metadata>
  <manifest><item id="c1" href="text/c1.xhtml" media-type="application/xhtml+xml"/></manifest>
  <spine><itemref idref="c1"/></spine>
</package>"#;

const CHAPTER: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en">
<head><title>One</title></head>
<body>
  <h1 id="top" class="chapter">One</h1>
  <p class="first"><span id="s1">A <em class="name">whale</em> swims<a epub:type="noteref" id="r1" href="#n1">1</a> by<span epub:type="pagebreak" id="p2"/> the <a href="c2.xhtml#there">shore</a>.</span> <math xmlns="http://www.w3.org/1998/Math/MathML"><mi>x</mi></math> Then it dives.</p>
  <ul><li>An item</li></ul>
  <aside epub:type="footnote" id="n1"><p>A note.</p></aside>
</body>
</html>"##;

fn uppercase(markup: &str) -> String {
    // Inside text only: tags and entities keep their case.
    let mut out = String::new();
    let mut in_tag = false;
    for c in markup.chars() {
        match c {
            '<' | '&' => in_tag = true,
            '>' | ';' => in_tag = false,
            _ => {}
        }
        if in_tag || matches!(c, '>' | ';') {
            out.push(c);
        } else {
            out.extend(c.to_uppercase());
        }
    }
    out
}

#[test]
fn a_paragraphs_marks_notes_page_markers_and_math_come_back_around_the_translation() {
    let source = make_epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("OEBPS/content.opf", OPF),
        ("OEBPS/text/c1.xhtml", CHAPTER),
    ]);
    let manuscript = epub::extract(&source).unwrap();
    let translated: Vec<Option<Chapter>> = manuscript
        .chapters
        .iter()
        .map(|c| {
            let mut c = c.clone();
            for block in &mut c.blocks {
                block.text = uppercase(&block.text);
            }
            Some(c)
        })
        .collect();
    let render = |layout| {
        let bytes = render(
            &source,
            &translated,
            &in_place_options("fr"),
            layout,
            Budget::default(),
        )
        .unwrap()
        .bytes;
        text_of(&entries(&bytes), "OEBPS/text/c1.xhtml")
    };

    let page = render(Layout::Translated);
    for kept in [
        r#"<h1 id="top" class="chapter">ONE</h1>"#,
        r#"<em class="name">WHALE</em>"#,
        r##"<a epub:type="noteref" id="r1" href="#n1">1</a>"##,
        r#"<span epub:type="pagebreak" id="p2"/>"#,
        r#"<a href="c2.xhtml#there">SHORE</a>"#,
        // The book's mark around the first sentence, around its translation.
        r#"<span id="s1">A <em class="name">WHALE</em> SWIMS"#,
        "<mi>x</mi></math></span> THEN IT DIVES.",
        "<li>AN ITEM</li>",
        r#"<aside epub:type="footnote" id="n1"><p>A NOTE.</p></aside>"#,
        r#"lang="fr" xml:lang="fr""#,
    ] {
        assert!(page.contains(kept), "no {kept:?} in\n{page}");
    }
    assert!(page.contains("THEN IT DIVES."), "{page}");
    assert!(!page.contains("whale"), "{page}");

    let page = render(Layout::Bilingual);
    for present in [
        r#"<h1 id="top" class="chapter booktr-original" lang="en" xml:lang="en">One</h1>"#,
        r#"<h1 class="chapter booktr-translation" lang="fr" xml:lang="fr">ONE</h1>"#,
        r##"<a epub:type="noteref" href="#n1">1</a>"##,
        r#"<li><span class="booktr-original" lang="en" xml:lang="en">An item</span> <span class="booktr-translation" lang="fr" xml:lang="fr">AN ITEM</span></li>"#,
        "booktr-bilingual.css",
    ] {
        assert!(page.contains(present), "no {present:?} in\n{page}");
    }
    for id in ["top", "r1", "p2", "s1", "n1"] {
        assert_eq!(
            page.matches(&format!(r#"id="{id}""#)).count(),
            1,
            "id {id} once in\n{page}"
        );
    }
}

const CODE_CHAPTER: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head><title>Code</title></head>
<body>
  <p>Run <code class="cmd">ls -l</code> aboard the <span translate="no" class="ship">Pequod</span>, then press <kbd>q</kbd>.</p>
  <pre><code>fn main() {
    whale();
}</code></pre>
  <div translate="no"><p class="motto">Nantucket forever.</p><p>Ahab <em>said</em> so.</p></div>
  <p>He said <i xml:lang="la">carpe diem</i> and <span lang="fr">c'est la vie</span>, in <span lang="en-GB">colour</span>.</p>
</body>
</html>"##;

#[test]
fn code_text_marked_translate_no_and_phrases_in_other_languages_come_back_as_written() {
    let source = make_epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("OEBPS/content.opf", OPF),
        ("OEBPS/text/c1.xhtml", CODE_CHAPTER),
    ]);
    let manuscript = epub::extract(&source).unwrap();
    let texts: Vec<&str> = manuscript.chapters[0]
        .blocks
        .iter()
        .map(|b| b.text.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "Run <code>ls -l</code> aboard the <keep>Pequod</keep>, then press <code>q</code>.",
            // Spacing is folded in the manuscript; the book in place keeps the source's.
            "<code>fn main() {<br/>whale();<br/>}</code>",
            "<keep>Nantucket forever.</keep>",
            "<keep>Ahab <i>said</i> so.</keep>",
            "He said <keep>carpe diem</keep> and <keep>c'est la vie</keep>, in <span>colour</span>.",
        ]
    );
    assert_eq!(
        markup::translatable_text(texts[0]),
        "Run  aboard the , then press ."
    );
    // A model that translated everything, kept text included, as the pipeline hands it on.
    let translated: Vec<Option<Chapter>> = manuscript
        .chapters
        .iter()
        .map(|c| {
            let mut c = c.clone();
            for block in &mut c.blocks {
                block.text = markup::with_kept_text(&block.text, &uppercase(&block.text));
            }
            Some(c)
        })
        .collect();
    let bytes = render(
        &source,
        &translated,
        &in_place_options("fr"),
        Layout::Translated,
        Budget::default(),
    )
    .unwrap()
    .bytes;
    let page = text_of(&entries(&bytes), "OEBPS/text/c1.xhtml");
    for kept in [
        r#"RUN <code class="cmd">ls -l</code> ABOARD THE <span translate="no" class="ship">Pequod</span>, THEN PRESS <kbd>q</kbd>."#,
        "<pre><code>fn main() {\n    whale();\n}</code></pre>",
        r#"<div translate="no"><p class="motto">Nantucket forever.</p><p>Ahab <em>said</em> so.</p></div>"#,
        r#"<i xml:lang="la">carpe diem</i> AND <span lang="fr">c'est la vie</span>, IN <span lang="en-GB">COLOUR</span>."#,
    ] {
        assert!(page.contains(kept), "no {kept:?} in\n{page}");
    }

    let rebuilt = crate::render::epub::render(
        &Manuscript {
            chapters: translated.into_iter().flatten().collect(),
            ..manuscript.clone()
        },
        &options("fr"),
    )
    .unwrap();
    let chapter = entries(&rebuilt)
        .into_iter()
        .filter(|(name, _, _)| name.ends_with(".xhtml") && !name.ends_with("nav.xhtml"))
        .map(|(_, bytes, _)| String::from_utf8(bytes).unwrap())
        .find(|text| text.contains("RUN"))
        .unwrap();
    assert!(
        chapter.contains(r#"<code>ls -l</code> ABOARD THE <span translate="no">Pequod</span>"#),
        "{chapter}"
    );
}
