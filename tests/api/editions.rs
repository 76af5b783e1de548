//! Editions of a translated book: the translation alone, or bilingual (each translated block
//! after its original in an EPUB, beside it in a PDF), generated, downloaded and shared.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    assert_error, corpus, epubcheck, eventually, have, pdftotext, sample_txt, TestApp, TestUser,
    Tool,
};
use crate::pages::chromium;

/// Generates `format` in `layout` and waits for the book to be COMPLETED with that file.
pub(crate) async fn generate(app: &TestApp, user: &TestUser, id: &str, format: &str, layout: &str) {
    let queued = app
        .send_json(
            Method::POST,
            "/api/generate",
            &user.key,
            json!({"bookId": id, "format": format, "layout": layout}),
        )
        .await;
    assert_eq!(queued.status(), 200);
    // A Markdown file is named `.md`.
    let extension = if format == "markdown" { "md" } else { format };
    let suffix = match layout {
        "bilingual" => format!("bilingual.{extension}"),
        _ => extension.to_string(),
    };
    let key = format!("books/{id}/output/book.{suffix}");
    eventually(Duration::from_secs(30), || async {
        let book = app.book(&user.key, id).await;
        assert_ne!(book["status"], "ERROR", "{book}");
        let made = !app.ports.blobs.list(&key).await.unwrap().is_empty();
        if made && book["status"] == "COMPLETED" {
            Ok(())
        } else {
            Err(format!("{key} not made yet: {book}"))
        }
    })
    .await;
}

/// The file behind the book's download link for `query` (`format=epub&layout=bilingual`).
pub(crate) async fn download(app: &TestApp, user: &TestUser, id: &str, query: &str) -> Vec<u8> {
    let link: Value = app
        .get(&format!("/api/download/{id}?{query}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    let url = link["url"].as_str().unwrap_or_else(|| panic!("{link}"));
    let file = reqwest::get(url).await.unwrap();
    assert_eq!(file.status(), 200);
    file.bytes().await.unwrap().to_vec()
}

/// The offline engine's translation of `text` (vowels accented).
pub(crate) fn pseudo(text: &str) -> String {
    booktr_translate::offline::pseudo(text, &[])
}

/// The book's text, chapter after chapter.
pub(crate) fn text_of(epub: &[u8]) -> String {
    booktr_formats::epub::extract(epub)
        .unwrap()
        .chapters
        .iter()
        .map(|c| c.plain_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn an_epub_books_bilingual_editions_hold_each_original_with_its_translation() {
    if !have(Tool::Pdftotext) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let id = app
        .upload_ok(&user.key, "wasteland.epub", corpus("wasteland.epub"))
        .await;
    app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    let book = app.translate_to_end(&user.key, &id, json!({})).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    let original = "April is the cruellest month";

    generate(&app, &user, &id, "epub", "bilingual").await;
    let epub = download(&app, &user, &id, "format=epub&layout=bilingual").await;
    epubcheck(&epub);
    let text = text_of(&epub);
    let at = text
        .find(original)
        .expect("the original is in the bilingual EPUB");
    let translated = pseudo(original);
    assert!(
        text[at..].contains(&translated),
        "its translation follows it: {translated}"
    );
    // The translated edition is still the translation alone.
    let alone = download(&app, &user, &id, "format=epub").await;
    assert!(!text_of(&alone).contains(original));

    generate(&app, &user, &id, "pdf", "bilingual").await;
    let pdf = download(&app, &user, &id, "format=pdf&layout=bilingual").await;
    let text = pdftotext(&pdf);
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    let at = joined
        .find("April is the cruellest")
        .expect("the original is in the bilingual PDF");
    assert!(
        joined[at..].contains(&pseudo("April is the cruellest")),
        "the translation follows the original in reading order"
    );

    // A share page offers every edition there is, and each downloads.
    let token = app.share(&user.key, &id).await;
    let page = reqwest::get(format!("{}/shared/{token}", app.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // (Listed under "Downloads" by their names.)
    for label in ["EPUB", "bilingual EPUB", "bilingual PDF"] {
        assert!(page.contains(&format!(">{label}</a>")), "{label}: {page}");
    }
    assert!(
        page.contains("download?format=pdf&amp;layout=bilingual"),
        "{page}"
    );
    let shared = reqwest::get(format!(
        "{}/shared/{token}/download?format=pdf&layout=bilingual",
        app.url
    ))
    .await
    .unwrap();
    assert_eq!(shared.status(), 200);
    assert!(shared.bytes().await.unwrap().starts_with(b"%PDF-"));
}

#[tokio::test]
async fn a_text_books_bilingual_epub_is_rebuilt_with_each_original_before_its_translation() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let id = app.translated_sample(&user.key).await;
    generate(&app, &user, &id, "epub", "bilingual").await;
    let epub = download(&app, &user, &id, "format=epub&layout=bilingual").await;
    epubcheck(&epub);
    let source = String::from_utf8(sample_txt()).unwrap();
    let line = source
        .lines()
        .find(|l| l.split_whitespace().count() > 6)
        .unwrap()
        .trim()
        .to_string();
    let text = text_of(&epub);
    let at = text
        .find(&line)
        .expect("the original is in the bilingual EPUB");
    assert!(text[at..].contains(&pseudo(&line)), "{text}");
}

#[tokio::test]
async fn an_unknown_layout_is_refused_with_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let id = app.translated_sample(&user.key).await;
    let generated = app
        .send_json(
            Method::POST,
            "/api/generate",
            &user.key,
            json!({"bookId": id, "format": "epub", "layout": "interleaved"}),
        )
        .await;
    assert_error(generated, 400, "bad_request").await;
    assert_error(
        app.get(
            &format!("/api/download/{id}?format=epub&layout=sideways"),
            &user.key,
        )
        .await,
        400,
        "bad_request",
    )
    .await;
}

/// The element names of a page's body in document order, as Chromium parsed it: the block
/// structure (headings, paragraphs, quotes, notes, lists, tables, images, line breaks), not the
/// inline marks, which a translation may place differently.
fn block_structure(dom: &str) -> Vec<String> {
    const BLOCKS: &[&str] = &[
        "p",
        "div",
        "blockquote",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "tr",
        "td",
        "th",
        "aside",
        "section",
        "figure",
        "figcaption",
        "img",
        "pre",
        "hr",
        "br",
    ];
    let body = dom.split_once("<body").map_or(dom, |(_, b)| b);
    body.split('<')
        .skip(1)
        .filter_map(|tag| {
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            BLOCKS.contains(&name.as_str()).then_some(name)
        })
        .collect()
}

/// The package's files, by name.
fn unpack(epub: &[u8], into: &std::path::Path) {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(epub)).unwrap();
    zip.extract(into).unwrap();
}

/// The content document holding the most paragraphs: a chapter of running text.
fn busiest_document(dir: &std::path::Path) -> std::path::PathBuf {
    let mut best = (0, std::path::PathBuf::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "xhtml" || e == "html" || e == "htm")
            {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let paragraphs = text.matches("<p").count();
                if paragraphs > best.0 && !text.contains("epub:type=\"toc\"") {
                    best = (paragraphs, path);
                }
            }
        }
    }
    best.1
}

/// Every corpus EPUB translated in place, in both layouts, opened in headless Chromium beside
/// its source (screenshots under `target/screenshots/editions-*`): the translated chapter has
/// the source's block structure exactly, and the bilingual one has each source block followed
/// by its translation.
#[tokio::test]
async fn each_corpus_books_chapter_renders_in_a_browser_with_its_sources_structure() {
    if !have(Tool::Chromium) {
        return;
    }
    use booktr_formats::render::{self, Layout, RenderOptions, Sources};
    for book in [
        "moby-dick",
        "childrens-literature",
        "wasteland",
        "regime-anticancer-arabic",
    ] {
        let original = corpus(&format!("{book}.epub"));
        let manuscript = booktr_formats::epub::extract(&original).unwrap();
        let translated: Vec<_> = manuscript
            .chapters
            .iter()
            .map(|chapter| {
                let mut chapter = chapter.clone();
                // Marked as well as accented: the offline engine leaves Arabic script as it is.
                for block in &mut chapter.blocks {
                    block.text = format!("{} (es)", pseudo(&block.text));
                }
                Some(chapter)
            })
            .collect();
        let options = RenderOptions {
            language: "es".into(),
            title: manuscript.title.clone(),
            author: manuscript.author.clone(),
            identifier: "urn:booktr:browser".into(),
            modified: "2026-11-25T12:00:00Z".into(),
            budget: booktr_formats::Budget::default(),
        };
        let source_language = manuscript.language.clone().unwrap_or_default();
        let dir = tempfile::TempDir::new().unwrap();
        unpack(&original, &dir.path().join("source"));
        let page = busiest_document(&dir.path().join("source"));
        let relative = page.strip_prefix(dir.path().join("source")).unwrap();
        let dom_of = |layout: &str| {
            let url = format!(
                "file://{}",
                dir.path().join(layout).join(relative).display()
            );
            let screenshot = format!("editions-{book}-{layout}.png");
            chromium(&url, &screenshot)
        };
        let source = block_structure(&dom_of("source"));
        assert!(source.len() > 10, "{book}: {source:?}");

        for layout in [Layout::Translated, Layout::Bilingual] {
            let file = render::translated_epub(
                Some(&original),
                &manuscript,
                &translated,
                Some(Sources {
                    language: &source_language,
                    chapters: &manuscript.chapters,
                }),
                &options,
                layout,
            )
            .unwrap();
            // The anthology's navigation document carries a script, which does not come out.
            assert!(
                file.warnings.iter().all(|w| book == "childrens-literature"
                    && w.starts_with("removed what could run in a reader")),
                "{book}: {:?}",
                file.warnings
            );
            let name = match layout {
                Layout::Translated => "translated",
                Layout::Bilingual => "bilingual",
            };
            unpack(&file.bytes, &dir.path().join(name));
            let dom = dom_of(name);
            let output = block_structure(&dom);
            match layout {
                Layout::Translated => assert_eq!(output, source, "{book}: {relative:?}"),
                Layout::Bilingual => {
                    // The source's blocks, in order, with the translations among them.
                    let mut rest = output.iter();
                    for tag in &source {
                        assert!(
                            rest.any(|t| t == tag),
                            "{book}: <{tag}> of the source is missing from the bilingual page"
                        );
                    }
                    let originals = dom.matches("booktr-original").count();
                    let translations = dom.matches("booktr-translation").count();
                    assert!(originals > 10, "{book}: {originals} originals marked");
                    assert_eq!(originals, translations, "{book}");
                }
            }
        }
    }
}

/// An EPUB carrying scripts, event handlers, `javascript:` and `data:` links, frames, plug-ins,
/// scripted SVG and zip entries named to land outside the package
/// (`booktr_formats::render::active`) comes back with none of it: the translated and the
/// bilingual editions as downloaded and as a share link hands them out, each still valid.
#[tokio::test]
async fn an_epub_carrying_active_content_comes_back_inert_in_every_edition_and_share() {
    use booktr_formats::render::active;
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let id = app
        .upload_ok(&user.key, "active.epub", active::epub())
        .await;
    app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    let book = app.translate_to_end(&user.key, &id, json!({})).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    generate(&app, &user, &id, "epub", "bilingual").await;
    let book: Value = app
        .get(&format!("/api/books/{id}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert!(
        book["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("bilingual EPUB file: removed what could run in a reader")),
        "the owner is told: {book}"
    );

    let token = app.share(&user.key, &id).await;
    for query in ["format=epub", "format=epub&layout=bilingual"] {
        let owned = download(&app, &user, &id, query).await;
        let shared = reqwest::get(format!("{}/shared/{token}/download?{query}", app.url))
            .await
            .unwrap();
        assert_eq!(shared.status(), 200, "{query}");
        let shared = shared.bytes().await.unwrap().to_vec();
        for (who, epub) in [("download", &owned), ("share", &shared)] {
            assert_eq!(
                active::findings(epub),
                Vec::<String>::new(),
                "{who} of {query}"
            );
            assert!(
                text_of(epub).contains(&pseudo("stormy night")),
                "{who} of {query}: the text is translated"
            );
            epubcheck(epub);
        }
    }
}
