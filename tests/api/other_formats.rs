//! Markdown and FictionBook 2 books through the API: uploaded, extracted into chapters,
//! translated by the offline engine and rendered as EPUB and PDF, and a Markdown book as
//! Markdown too, which pandoc reads. The files are in `tests/fixtures/`: `voyage.md` written
//! by hand, `poems.fb2` made by pandoc's own FB2 writer from `poems.md`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::editions::{download, generate, pseudo, text_of};
use crate::helpers::{
    assert_error, epubcheck, fixture, have, on_aws, pdftotext, TestApp, TestUser, Tool,
};
use crate::reader::signed_in;

/// The titles of the book's chapters, in order.
fn titles(book: &Value) -> Vec<String> {
    book["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `pandoc` run on `markdown` read as Markdown, writing `to`.
fn pandoc(markdown: &[u8], to: &str) -> String {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("book.md");
    std::fs::write(&path, markdown).unwrap();
    let out = std::process::Command::new("pandoc")
        .args(["-f", "markdown", "-t", to])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The owner's page of the book, as the web app shows it to the signed-in `cookie`.
async fn book_page(app: &TestApp, client: &reqwest::Client, cookie: &str, id: &str) -> String {
    let page = client
        .get(format!("{}/dashboard/books/{id}", app.url))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    page.text().await.unwrap()
}

/// Asks for the `format` file of `id` in `layout`, by generate and by download: 400 both ways.
async fn refused(app: &TestApp, user: &TestUser, id: &str, format: &str, layout: &str) -> Value {
    let generated = app
        .send_json(
            Method::POST,
            "/api/generate",
            &user.key,
            json!({"bookId": id, "format": format, "layout": layout}),
        )
        .await;
    assert_error(generated, 400, "bad_request").await;
    let link = app
        .get(
            &format!("/api/download/{id}?format={format}&layout={layout}"),
            &user.key,
        )
        .await;
    assert_error(link, 400, "bad_request").await
}

#[tokio::test]
async fn a_markdown_book_is_translated_into_epub_pdf_and_markdown_that_pandoc_reads() {
    let app = TestApp::new().with_workers().start().await;
    let (client, cookie, user) = signed_in(&app).await;
    let id = app
        .upload_ok(&user.key, "voyage.md", fixture("voyage.md"))
        .await;
    let book = app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    assert_eq!(book["format"], "markdown", "{book}");
    assert_eq!(book["title"], "The Voyage");
    assert_eq!(book["author"], "Ann Writer");
    assert_eq!(
        titles(&book),
        [
            "The Voyage",
            "Loomings",
            "The Carpet-Bag",
            "The Spouter-Inn"
        ],
        "chapters at the level used more than once; the lone title opens its own"
    );
    let book = app.translate_to_end(&user.key, &id, json!({})).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");

    generate(&app, &user, &id, "epub", "translated").await;
    let epub = download(&app, &user, &id, "format=epub").await;
    epubcheck(&epub);
    let text = text_of(&epub);
    assert!(text.contains(&pseudo("Call me")), "{text}");
    // Code is never translated.
    assert!(text.contains("def sail(ship):"), "{text}");
    assert!(text.contains("# never translated"), "{text}");
    assert!(text.contains("ls -l"), "{text}");

    if have(Tool::Pdftotext) {
        generate(&app, &user, &id, "pdf", "translated").await;
        let pdf = download(&app, &user, &id, "format=pdf").await;
        let words = pdftotext(&pdf)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(words.contains(&pseudo("Call me")), "{words}");
    }

    generate(&app, &user, &id, "markdown", "translated").await;
    let link: Value = app
        .get(&format!("/api/download/{id}?format=markdown"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    let file = reqwest::get(link["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(file.status(), 200);
    if !on_aws() {
        assert_eq!(
            file.headers()["content-type"],
            "text/markdown; charset=utf-8"
        );
    }
    let markdown = file.bytes().await.unwrap().to_vec();
    let written = String::from_utf8(markdown.clone()).unwrap();
    assert!(
        written.starts_with("---\ntitle: \"The Voyage\"\n"),
        "{written}"
    );
    assert!(
        written.contains(&format!("**{}**", pseudo("Ishmael"))),
        "{written}"
    );
    assert!(
        written.contains("```\ndef sail(ship):\n    return ship.heading  # never translated\n```"),
        "{written}"
    );
    assert!(written.contains("`ls -l`"), "{written}");
    assert!(written.contains("[^1]"), "{written}");
    // Read again, the file has the source's chapters and blocks, kind for kind.
    let source = booktr_formats::markdown::extract(&fixture("voyage.md")).unwrap();
    let again = booktr_formats::markdown::extract(&markdown).unwrap();
    let kinds = |m: &booktr_formats::manuscript::Manuscript| {
        m.chapters
            .iter()
            .map(|c| c.blocks.iter().map(|b| b.kind.clone()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&again), kinds(&source), "{written}");

    if have(Tool::Pandoc) {
        // pandoc's document, as JSON: each element is `{"t":"Kind","c":…}`.
        let document = pandoc(&markdown, "json");
        for element in [
            r#""t":"Header","c":[2"#,
            r#""t":"Strong""#,
            r#""t":"Note""#,
            r#""t":"BlockQuote""#,
            r#""t":"OrderedList""#,
            r#""t":"BulletList""#,
            r#""t":"CodeBlock""#,
            r#""t":"Table""#,
            r#""t":"LineBreak""#,
            r#""t":"Link""#,
        ] {
            assert!(
                document.contains(element),
                "pandoc finds no {element}: {document}"
            );
        }
        let plain = pandoc(&markdown, "plain");
        let plain = plain.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(plain.contains(&pseudo("Call me")), "{plain}");
        assert!(plain.contains(&pseudo("Haul away together.")), "{plain}");
    }

    // The Markdown file is the translation alone.
    refused(&app, &user, &id, "markdown", "bilingual").await;
    // The book's page offers it, and its link leads to the file.
    let page = book_page(&app, &client, &cookie, &id).await;
    assert!(page.contains(">Markdown</a>"), "{page}");
    let link = client
        .get(format!(
            "{}/dashboard/books/{id}/download?format=markdown",
            app.url
        ))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(link.status(), 303);
}

#[tokio::test]
async fn a_markdown_file_is_refused_for_a_book_that_was_not_markdown() {
    let app = TestApp::new().with_workers().start().await;
    let (client, cookie, user) = signed_in(&app).await;
    let id = app.translated_sample(&user.key).await;
    let page = book_page(&app, &client, &cookie, &id).await;
    assert!(
        page.contains(">EPUB</a>") && !page.contains("format=markdown"),
        "{page}"
    );
    let body = refused(&app, &user, &id, "markdown", "translated").await;
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("only from a Markdown book") && message.contains("TXT"),
        "{message}"
    );
    // And a format no book has is named as unknown.
    let body = refused(&app, &user, &id, "mobi", "translated").await;
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("epub, pdf or markdown"),
        "{body}"
    );
}

#[tokio::test]
async fn a_fictionbook_made_by_pandoc_keeps_its_chapters_poem_lines_and_notes_in_every_file() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let id = app
        .upload_ok(&user.key, "poems.fb2", fixture("poems.fb2"))
        .await;
    let book = app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    assert_eq!(book["format"], "fb2", "{book}");
    assert_eq!(book["title"], "Songs of the Sea");
    assert_eq!(book["author"], "Ann Writer");
    assert_eq!(titles(&book), ["Harbour Songs", "Open Water", "Notes"]);
    let images = app
        .ports
        .blobs
        .list(&format!("books/{id}/assets/"))
        .await
        .unwrap();
    assert_eq!(images.len(), 1, "the map, from the book's binary");

    let book = app.translate_to_end(&user.key, &id, json!({})).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    generate(&app, &user, &id, "epub", "translated").await;
    let epub = download(&app, &user, &id, "format=epub").await;
    epubcheck(&epub);
    let read = booktr_formats::epub::extract(&epub).unwrap();
    let blocks: Vec<_> = read.chapters.iter().flat_map(|c| &c.blocks).collect();
    // Each verse line comes back a line of its own, nothing glued to it.
    for line in [
        "The tide comes in, the tide goes out,",
        "the gulls cry over the bay,",
        "line two beneath the sky.",
    ] {
        let translated = pseudo(line);
        assert!(
            blocks.iter().any(|b| b.plain_text().trim() == translated),
            "{translated} is not a line of its own"
        );
    }
    let text = text_of(&epub);
    assert!(
        text.contains(&pseudo("Harbours were built for ships, not songs.")),
        "{text}"
    );
    assert!(!read.assets.is_empty(), "the map is in the EPUB");

    if have(Tool::Pdftotext) {
        generate(&app, &user, &id, "pdf", "translated").await;
        let pdf = download(&app, &user, &id, "format=pdf").await;
        let text = pdftotext(&pdf);
        assert!(
            text.lines()
                .any(|l| l.trim() == pseudo("the gulls cry over the bay,")),
            "{text}"
        );
    }
    refused(&app, &user, &id, "markdown", "translated").await;
}

#[tokio::test]
async fn a_zipped_fictionbook_and_pandocs_markdown_of_the_waste_land_are_read() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let mut zipped = Vec::new();
    {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut zipped));
        zip.start_file("poems.fb2", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &fixture("poems.fb2")).unwrap();
        zip.finish().unwrap();
    }
    let id = app.upload_ok(&user.key, "poems.fb2.zip", zipped).await;
    let book = app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    assert_eq!(titles(&book), ["Harbour Songs", "Open Water", "Notes"]);

    let id = app
        .upload_ok(&user.key, "wasteland.md", fixture("wasteland.md"))
        .await;
    let book = app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    assert!(
        titles(&book).iter().any(|t| t == "IV. DEATH BY WATER"),
        "{book}"
    );

    // A FictionBook named as text is refused at the door.
    let response = app
        .upload(&user.key, "poems.txt", fixture("poems.fb2"))
        .await;
    let body = assert_error(response, 400, "unsupported_file").await;
    assert!(
        body["message"].as_str().unwrap().contains("content is FB2"),
        "{body}"
    );
}
