//! What the cleaner takes out of a document and a package, what it leaves byte for byte, and
//! the active book through both renderers, checked by epubcheck.

use std::collections::HashSet;
use std::io::Read;

use super::{document, epub, own_package, safe_entry_name, Removed};
use crate::archive::Limits;
use crate::budget::Budget;
use crate::manuscript::Chapter;
use crate::render::tests::{corpus, epubcheck, options, temp_file};
use crate::render::{active, epub_in_place, translated_epub, Layout, Sources};

fn page(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\
         <head><title>t</title></head><body>{body}</body></html>"
    )
}

/// The cleaned body of `body` in a document at `OEBPS/text/c.xhtml`.
fn cleaned(body: &str) -> String {
    cleaned_with(body, &HashSet::new())
}

fn cleaned_with(body: &str, dropped: &HashSet<String>) -> String {
    let text = page(body);
    let (clean, _) = document(&text, "OEBPS/text/c.xhtml", dropped)
        .unwrap_or_else(|| (text.clone(), Default::default()));
    let start = clean.find("<body>").expect("a body") + "<body>".len();
    let end = clean.rfind("</body>").unwrap_or(clean.len());
    clean[start..end].to_string()
}

#[test]
fn a_document_with_nothing_active_is_left_as_it_was() {
    let text = page(
        r##"<h1 id="one" class="ch">One</h1><!-- a note --><p>A <a href="#one">link</a>,
        <a href="https://example.org/?a=1&amp;b=2">a site</a>, <img src="../images/a.png" alt=""/>
        <img src="data:image/png;base64,AAAA" alt="inline"/><svg xmlns="http://www.w3.org/2000/svg"><a href="#one"><rect width="1" height="1"/></a></svg></p>"##,
    );
    assert!(document(&text, "OEBPS/text/c.xhtml", &HashSet::new()).is_none());
}

/// Each entry's name and inflated bytes.
fn entries(epub: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(epub)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut entry = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            (entry.name().to_string(), bytes)
        })
        .collect()
}

#[test]
fn corpus_books_come_out_of_the_cleaner_byte_for_byte_but_for_one_script() {
    for (name, changed) in [
        ("moby-dick.epub", &[][..]),
        ("wasteland.epub", &[]),
        ("regime-anticancer-arabic.epub", &[]),
        // Its navigation document unhides nested contents with a script, and says so.
        (
            "childrens-literature.epub",
            &["EPUB/package.opf", "EPUB/nav.xhtml"],
        ),
    ] {
        let source = corpus(name);
        let (out, removed) = epub(
            source.clone(),
            Limits::for_file(source.len(), Budget::default()),
        )
        .unwrap();
        let expected = Removed {
            elements: usize::from(!changed.is_empty()),
            ..Removed::default()
        };
        assert_eq!(removed, expected, "{name}");
        if changed.is_empty() {
            assert!(out == source, "{name} was rewritten");
            continue;
        }
        let before = entries(&source);
        let after = entries(&out);
        assert_eq!(
            before.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            after.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "{name}"
        );
        let differ: Vec<&str> = before
            .iter()
            .zip(&after)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0.as_str())
            .collect();
        assert_eq!(differ, changed, "{name}");
        assert_eq!(active::findings(&out), Vec::<String>::new(), "{name}");
    }
}

#[test]
fn scripts_and_event_handlers_are_taken_out_and_the_text_kept() {
    let body = cleaned(
        r#"<p onclick="go()" class="a">Before</p><script>if (a < b) { go("</p>") }</script><p>After</p>
        <svg:script xmlns:svg="http://www.w3.org/2000/svg">x()</svg:script><SCRIPT src="a.js"/><p OnMouseOver='x()'>Still</p>"#,
    );
    assert_eq!(
        body,
        r#"<p class="a">Before</p><p>After</p>
        <p>Still</p>"#
    );
}

#[test]
fn script_addresses_are_refused_however_they_are_spelled() {
    for href in [
        "javascript:go()",
        " JavaScript:go()",
        "&#106;avascript:go()",
        "java&#x09;script:go()",
        "java&Tab;script:go()",
        "vbscript:go()",
        "java&#115cript:go()",
        "data:text/html,x",
        "C:/Windows/x.html",
    ] {
        let body = cleaned(&format!(r#"<p><a href="{href}" title="t">text</a></p>"#));
        assert_eq!(body, r#"<p><a title="t">text</a></p>"#, "{href}");
    }
}

#[test]
fn data_addresses_stay_only_as_an_images_source() {
    let image = r#"<img src="data:image/png;base64,AAAA" alt="kept"/>"#;
    assert_eq!(cleaned(image), image);
    let srcset = r#"<img src="a.png" srcset="data:image/png;base64,AA,BB 1x, b.png 2x" alt=""/>"#;
    assert_eq!(cleaned(srcset), srcset);
    assert_eq!(
        cleaned(r#"<img src="data:text/html;base64,AAAA" alt="gone"/><p>x</p>"#),
        "<p>x</p>"
    );
    assert_eq!(
        cleaned(r#"<img src="a.png" srcset="a.png 1x, javascript:x 2x" alt=""/>"#),
        "",
        "a refused candidate refuses the image"
    );
    assert_eq!(
        cleaned(r#"<video poster="data:image/png;base64,AA" src="v.mp4"></video>"#),
        r#"<video src="v.mp4"></video>"#
    );
}

#[test]
fn frames_plug_ins_refreshes_bases_and_remote_stylesheets_are_taken_out() {
    let text = "<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head>\
        <title>t</title><meta http-equiv=\"Refresh\" content=\"0;url=https://evil.example/\"/>\
        <meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\"/>\
        <base href=\"https://evil.example/\"/><link rel=\"stylesheet\" href=\"https://evil.example/a.css\"/>\
        <link rel=\"stylesheet\" href=\"../css/book.css\"/></head><body>\
        <iframe src=\"a.html\"><p>no</p></iframe><embed src=\"x.swf\"/><frameset><frame src=\"x\"/></frameset>\
        <p>kept</p></body></html>";
    let (clean, removed) = document(text, "OEBPS/c.xhtml", &HashSet::new()).unwrap();
    assert_eq!(
        clean,
        "<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head>\
        <title>t</title>\
        <meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\"/>\
        <link rel=\"stylesheet\" href=\"../css/book.css\"/></head><body>\
        <p>kept</p></body></html>"
    );
    assert_eq!((removed.elements, removed.fetches), (5, 1));
}

#[test]
fn forms_and_objects_are_unwrapped_and_their_words_kept() {
    assert_eq!(
        cleaned(
            r#"<form action="https://evil.example/"><p>Name <input name="n"/><button formaction="javascript:x()">Go</button></p></form>"#
        ),
        r#"<p>Name <input name="n"/><button>Go</button></p>"#
    );
    assert_eq!(
        cleaned(
            r#"<object data="x.swf"><param name="movie" value="x.swf"/><p>Fallback <img src="a.png" alt=""/></p></object>"#
        ),
        r#"<p>Fallback <img src="a.png" alt=""/></p>"#
    );
}

#[test]
fn scripted_svg_is_made_still() {
    let body = cleaned(
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="x()"><script>x()</script><a xlink:href="javascript:x()"><rect width="1" height="1"/></a><set attributeName="onclick" to="x()"/><animate attributeName="xlink:href" values="javascript:x()"/><animate attributeName="opacity" values="0;1"/><use href="data:image/svg+xml,x"/><handler>x()</handler><foreignObject><p xmlns="http://www.w3.org/1999/xhtml" onclick="x()">words</p></foreignObject></svg>"#,
    );
    assert_eq!(
        body,
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a><rect width="1" height="1"/></a><animate attributeName="opacity" values="0;1"/><foreignObject><p xmlns="http://www.w3.org/1999/xhtml">words</p></foreignObject></svg>"#
    );
}

#[test]
fn an_svg_file_loses_its_script_and_handlers() {
    let svg = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"x()\">\
               <script><![CDATA[ if (a < b) x() ]]></script><circle r=\"1\"/></svg>";
    let (clean, _) = document(svg, "OEBPS/a.svg", &HashSet::new()).unwrap();
    assert_eq!(
        clean,
        "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><circle r=\"1\"/></svg>"
    );
}

#[test]
fn markup_an_html_parser_would_read_otherwise_is_taken_out_or_escaped() {
    // An HTML parser ends `<!-->` at once, and a processing instruction at its first `>`.
    assert_eq!(
        cleaned("<!--><script>x()</script>--><p>a</p><?x ><script>y()</script>?><p>b</p>"),
        "<p>a</p><p>b</p>"
    );
    assert_eq!(
        cleaned("<style><!-- </style><script>x()</script> --></style><p>c</p>"),
        "<style></style><p>c</p>"
    );
    // Markup commented out in the body is only a comment to either parser.
    let commented = "<!-- <link rel=\"stylesheet\" href=\"night.css\"/> --><p>d</p>";
    assert_eq!(cleaned(commented), commented);
    assert_eq!(
        cleaned("<style><![CDATA[ p { } </style><script>x()</script> ]]></style>"),
        "<style> p { } &lt;/style&gt;&lt;script&gt;x()&lt;/script&gt; </style>"
    );
    let declared =
        "<?xml version=\"1.0\"?>\n<!DOCTYPE html [<!ENTITY s \"<script>x()</script>\">]>\n\
                    <html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>a</p></body></html>";
    let (clean, _) = document(declared, "c.xhtml", &HashSet::new()).unwrap();
    assert_eq!(
        clean,
        "<?xml version=\"1.0\"?>\n<!DOCTYPE html>\n\
         <html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>a</p></body></html>"
    );
}

#[test]
fn what_follows_a_point_the_reader_cannot_parse_is_kept_as_text() {
    let text = "<html><body><p>fine</p><!x <script>x()</script></body></html>";
    let (clean, _) = document(text, "c.xhtml", &HashSet::new()).unwrap();
    assert_eq!(
        clean,
        "<html><body><p>fine</p>&lt;!x &lt;script&gt;x()&lt;/script&gt;&lt;/body&gt;&lt;/html&gt;"
    );
    // What a lenient reader takes for an attribute's name is none.
    assert_eq!(cleaned("<p <script>x</p>"), "<p>x</p>");
}

#[test]
fn links_are_kept_only_to_the_web_mail_and_the_book() {
    assert_eq!(
        cleaned(
            r#"<a href="https://example.org/">w</a><a href="MAILTO:a@b.org">m</a><a href="c2.xhtml#x">b</a><a href="file:///etc/passwd">f</a><a href="ms-msdt:/id x">d</a><a href="tel:123">t</a><area href="news:x"/>"#
        ),
        r#"<a href="https://example.org/">w</a><a href="MAILTO:a@b.org">m</a><a href="c2.xhtml#x">b</a><a>f</a><a>d</a><a>t</a><area/>"#
    );
}

#[test]
fn nothing_is_fetched_from_another_site_when_the_book_opens() {
    assert_eq!(
        cleaned(
            r#"<img src="https://evil.example/pixel.png" alt=""/><img srcset="a.png 1x, //evil.example/b.png 2x" alt=""/><link rel="stylesheet" href="HTTPS://evil.example/x.css"/><video poster="https://evil.example/p.png">v</video><audio><source src="https://evil.example/a.mp3"/></audio><blockquote cite="https://example.org/">q</blockquote>"#
        ),
        r#"<video>v</video><audio></audio><blockquote cite="https://example.org/">q</blockquote>"#
    );
    let text = page(r#"<img src="https://evil.example/pixel.png" alt=""/>"#);
    let (_, removed) = document(&text, "OEBPS/text/c.xhtml", &HashSet::new()).unwrap();
    assert_eq!(removed.fetches, 1);
}

#[test]
fn style_attributes_and_elements_lose_their_remote_urls() {
    assert_eq!(
        cleaned(
            r#"<p style="color: red; background:url(&quot;https://evil.example/s.png&quot;)">x</p><svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(https://evil.example/p.svg#g) red" width="1" height="1"/></svg>"#
        ),
        r#"<p style="color: red; background:none">x</p><svg xmlns="http://www.w3.org/2000/svg"><rect fill="none red" width="1" height="1"/></svg>"#
    );
    assert_eq!(
        cleaned(
            r#"<style>@import url(https://evil.example/i.css); p { color: red }</style><p style="background:url(a.png)">k</p>"#
        ),
        r#"<style> p { color: red }</style><p style="background:url(a.png)">k</p>"#
    );
    // Hidden behind a character reference, or in a CDATA section.
    assert_eq!(
        cleaned(r#"<style>p { background: url(h&#116;tps://evil.example/a.png) }</style>"#),
        r#"<style>p { background: none }</style>"#
    );
    assert_eq!(
        cleaned(
            r#"<style><![CDATA[ p > i { background: url(https://evil.example/a.png) } ]]></style>"#
        ),
        r#"<style> p > i { background: none } </style>"#
    );
}

/// A package of `entries` (name, media type, content) after its container and package
/// document, every entry but the style sheets in the spine.
fn package(entries: &[(&str, &str, &str)]) -> Vec<u8> {
    use std::io::Write;
    let items: String = entries
        .iter()
        .enumerate()
        .map(|(i, (name, media, _))| {
            format!(r#"<item id="i{i}" href="{name}" media-type="{media}"/>"#)
        })
        .collect();
    let spine: String = (0..entries.len())
        .filter(|i| !entries[*i].0.ends_with(".css"))
        .map(|i| format!(r#"<itemref idref="i{i}"/>"#))
        .collect();
    let opf = format!(
        r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/><manifest>{items}</manifest><spine>{spine}</spine></package>"#
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    let mut files = vec![
        ("mimetype".to_string(), "application/epub+zip".to_string()),
        (
            "META-INF/container.xml".to_string(),
            r#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#.to_string(),
        ),
        ("OEBPS/content.opf".to_string(), opf),
    ];
    files.extend(
        entries
            .iter()
            .map(|(name, _, content)| (format!("OEBPS/{name}"), content.to_string())),
    );
    for (name, content) in files {
        zip.start_file(name, options).unwrap();
        zip.write_all(content.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

#[test]
fn a_file_is_cleaned_as_what_its_type_its_name_or_its_bytes_say_it_is() {
    let script = page("<p>words</p><script>alert(1)</script>");
    let source = package(&[
        ("a.xml", "application/xhtml+xml;charset=utf-8", &script),
        ("b.htm5", " Text/HTML ; charset=utf-8", &script),
        // Declared an image, named as a page: a reading system may open it as either.
        ("c.xhtml", "image/png", &script),
        // Declared nothing known: its opening bytes say markup.
        ("d.bin", "application/x-unknown", &script),
        (
            "e.css",
            "text/css",
            "p { background: url(https://evil.example/p.png) }",
        ),
    ]);
    let (out, removed) = epub(source, own_package()).unwrap();
    assert_eq!((removed.elements, removed.fetches), (4, 1), "{removed:?}");
    for (name, bytes) in entries(&out) {
        let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        assert!(!text.contains("<script"), "{name}");
        assert!(!text.contains("evil.example"), "{name}");
    }
}

#[test]
fn a_spine_item_that_is_neither_markup_nor_an_image_is_left_out() {
    let source = package(&[
        ("a.xhtml", "application/xhtml+xml", &page("<p>words</p>")),
        ("movie.swf", "application/x-shockwave-flash", "FWS\u{a}"),
        ("notes.txt", "text/plain", "just words"),
    ]);
    let (out, removed) = epub(source, own_package()).unwrap();
    assert_eq!(removed.files, 2);
    let names: Vec<String> = entries(&out).into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&"OEBPS/a.xhtml".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".swf") || n.ends_with(".txt")),
        "{names:?}"
    );
    let opf = entries(&out)
        .into_iter()
        .find(|(n, _)| n.ends_with(".opf"))
        .map(|(_, b)| String::from_utf8(b).unwrap())
        .unwrap();
    assert!(!opf.contains("movie") && !opf.contains("notes"), "{opf}");
}

#[test]
fn references_outside_the_package_or_to_dropped_entries_are_refused() {
    let dropped: HashSet<String> = ["OEBPS/gone.png".to_string()].into();
    assert_eq!(
        cleaned_with(
            r#"<p><a href="../../../../etc/passwd">a</a><a href="/tmp/x.txt">b</a><a href="..\..\x">c</a><a href="%2e%2e/%2e%2e/%2e%2e/x">d</a><a href="../c2.xhtml#n">e</a></p><img src="../gone.png" alt=""/><img src="../kept.png" alt=""/>"#,
            &dropped
        ),
        r#"<p><a>a</a><a>b</a><a>c</a><a>d</a><a href="../c2.xhtml#n">e</a></p><img src="../kept.png" alt=""/>"#
    );
}

#[test]
fn a_changed_document_keeps_every_byte_around_what_was_taken_out() {
    let body = "<p  class='x'   id=\"a\">Some &amp; <i>text</i></p>\n  <p onclick=\"x()\">b</p>\n  <!-- kept -->";
    assert_eq!(
        cleaned(body),
        "<p  class='x'   id=\"a\">Some &amp; <i>text</i></p>\n  <p>b</p>\n  <!-- kept -->"
    );
}

#[test]
fn the_warning_names_only_what_was_removed() {
    assert_eq!(Removed::default().warning(), None);
    let removed = Removed {
        elements: 1,
        attributes: 0,
        files: 3,
        fetches: 2,
    };
    assert_eq!(
        removed.warning().as_deref(),
        Some(
            "removed what could run in a reader or reach outside the book: 1 element (scripts, \
             frames, plug-ins, forms), 3 files (scripts, or names that leave the package), 2 \
             remote references (images, style sheets or fonts from another site)"
        )
    );
}

#[test]
fn entry_names_that_leave_the_package_are_recognised() {
    for name in active::UNSAFE_NAMES {
        assert!(!safe_entry_name(name), "{name}");
    }
    for name in ["", "a//b", "./a", "a/./b", "a/..", "nul\0.txt", "C:x"] {
        assert!(!safe_entry_name(name), "{name:?}");
    }
    for name in [
        "mimetype",
        "OEBPS/",
        "OEBPS/Text/ch..1.xhtml",
        "a b/c.xhtml",
    ] {
        assert!(safe_entry_name(name), "{name}");
    }
}

/// Each block's text with " (fr)" after it: a translation that keeps the words.
fn translated(chapters: &[Chapter]) -> Vec<Option<Chapter>> {
    chapters
        .iter()
        .map(|chapter| {
            let mut chapter = chapter.clone();
            for block in &mut chapter.blocks {
                block.text.push_str(" (fr)");
            }
            Some(chapter)
        })
        .collect()
}

fn names(epub: &[u8]) -> Vec<String> {
    let zip = zip::ZipArchive::new(std::io::Cursor::new(epub)).unwrap();
    zip.file_names().map(str::to_string).collect()
}

fn text_of(epub: &[u8]) -> String {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(epub)).unwrap();
    let mut all = String::new();
    // Every document, whatever its name (`c3.xml`, `c4.htm5`).
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        if let Ok(text) = String::from_utf8(bytes) {
            all.push_str(&text);
        }
    }
    all
}

#[test]
fn the_active_book_has_what_the_check_looks_for() {
    let findings = active::findings(&active::epub());
    for needle in [
        "<script",
        "javascript:",
        "vbscript:",
        "<iframe",
        "<object",
        "<embed",
        "<form",
        "<base",
        "onclick",
        "onload",
        "scripted",
        "app.js",
        "a data: address not an image's source",
        "an entry named \"/tmp/x.txt\"",
        "evil.example",
        "file:",
        "ms-msdt:",
        "a plug-in file",
        "remote-resources",
    ] {
        assert!(
            findings.iter().any(|f| f.contains(needle)),
            "{needle}: {findings:?}"
        );
    }
}

#[test]
fn the_active_book_comes_out_of_both_renderers_with_nothing_active_and_valid() {
    let source = active::epub();
    let manuscript = crate::epub::extract(&source).unwrap();
    let translation = translated(&manuscript.chapters);
    let sources = Sources {
        language: "en",
        chapters: &manuscript.chapters,
    };
    let mut outputs = Vec::new();
    for layout in [Layout::Translated, Layout::Bilingual] {
        let in_place = epub_in_place::render(
            &source,
            &translation,
            &options("fr"),
            layout,
            Budget::default(),
        )
        .unwrap();
        assert!(
            in_place
                .warnings
                .iter()
                .any(|w| w.starts_with("removed what could run in a reader")),
            "{:?}",
            in_place.warnings
        );
        outputs.push((format!("in place, {layout:?}"), in_place.bytes));
        let rebuilt = translated_epub(
            None,
            &manuscript,
            &translation,
            Some(sources),
            &options("fr"),
            layout,
        )
        .unwrap();
        outputs.push((format!("rebuilt, {layout:?}"), rebuilt.bytes));
    }
    for (what, bytes) in &outputs {
        assert_eq!(active::findings(bytes), Vec::<String>::new(), "{what}");
        let names = names(bytes);
        assert!(
            names.iter().all(|n| safe_entry_name(n)),
            "{what}: {names:?}"
        );
        if what.starts_with("in place") {
            let text = text_of(bytes);
            for words in active::KEPT_WORDS {
                assert!(text.contains(words), "{what}: {words}");
            }
            assert!(
                names.contains(&"OEBPS/drawing.svg".to_string()),
                "{what}: the drawing stays, still: {names:?}"
            );
        }
        let path = temp_file(
            &format!("inert-{}.epub", what.replace([' ', ','], "-")),
            bytes,
        );
        if let Err(report) = epubcheck(&path) {
            panic!("{what}: epubcheck found errors:\n{report}");
        }
        // A second pass finds nothing more to take out.
        let (again, removed) = epub(bytes.clone(), own_package()).unwrap();
        assert_eq!(removed, Default::default(), "{what}");
        assert!(again == *bytes, "{what}: a second pass changed the book");
    }
}
