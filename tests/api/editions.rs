//! Editions of a translated book: the translation alone, or bilingual (each translated block
//! after its original in an EPUB, beside it in a PDF), generated, downloaded and shared.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    assert_error, corpus, epubcheck, pdftotext, sample_txt, spawn_app, TestApp, TestUser,
};

/// Generates `format` in `layout` and waits for the book to be COMPLETED with that file.
async fn generate(app: &TestApp, user: &TestUser, id: &str, format: &str, layout: &str) {
    let queued = app
        .send_json(
            Method::POST,
            "/api/generate",
            &user.key,
            json!({"bookId": id, "format": format, "layout": layout}),
        )
        .await;
    assert_eq!(queued.status(), 200);
    let suffix = match layout {
        "bilingual" => format!("bilingual.{format}"),
        _ => format.to_string(),
    };
    let key = format!("books/{id}/output/book.{suffix}");
    for _ in 0..1500 {
        let book: Value = app
            .get(&format!("/api/books/{id}"), &user.key)
            .await
            .json()
            .await
            .unwrap();
        let made = !app.ports.blobs.list(&key).await.unwrap().is_empty();
        if made && book["status"] == "COMPLETED" {
            return;
        }
        assert_ne!(book["status"], "ERROR", "{book}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{key} was not generated");
}

/// The file behind the book's download link for `query` (`format=epub&layout=bilingual`).
async fn download(app: &TestApp, user: &TestUser, id: &str, query: &str) -> Vec<u8> {
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
fn pseudo(text: &str) -> String {
    booktr_translate::offline::pseudo(text, &[])
}

/// The book's text, chapter after chapter.
fn text_of(epub: &[u8]) -> String {
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
    let app = spawn_app().await;
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
    for label in [
        "Download EPUB",
        "Download bilingual EPUB",
        "Download bilingual PDF",
    ] {
        assert!(page.contains(label), "{label}: {page}");
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
    let app = spawn_app().await;
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
    let app = spawn_app().await;
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
