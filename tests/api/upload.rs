use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

use crate::helpers::{assert_error, corpus, sample_txt, TestApp};

const MB: u64 = 1024 * 1024;

#[tokio::test]
async fn a_txt_upload_reaches_extracted_with_chapters_and_word_counts() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let form = Form::new()
        .part("file", Part::bytes(sample_txt()).file_name("voyage.txt"))
        .text("title", "The Voyage")
        .text("targetLang", "fr");
    let response = app.post_upload_form(&user.key, form).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["success"], true);
    let book = &body["book"];
    assert_eq!(
        (book["status"].as_str(), book["title"].as_str()),
        (Some("UPLOADED"), Some("The Voyage"))
    );
    assert_eq!(book["targetLang"], "fr");

    let detail = app
        .wait_for_status(&user.key, book["id"].as_str().unwrap(), "EXTRACTED")
        .await;
    let chapters = detail["chapters"].as_array().unwrap();
    let titles: Vec<Value> = chapters.iter().map(|c| c["title"].clone()).collect();
    assert_eq!(
        titles,
        [
            Value::Null,
            "CHAPTER I. Loomings".into(),
            "CHAPTER II. The Carpet-Bag".into(),
            "CHAPTER III. The Spouter-Inn".into()
        ]
    );
    let words: Vec<u64> = chapters
        .iter()
        .map(|c| c["wordCount"].as_u64().unwrap())
        .collect();
    assert_eq!(words, [9, 10, 10, 12]);
    assert_eq!(detail["wordCount"], 41);
    assert_eq!(detail["chapterCount"], 4);
    assert_eq!(detail["originalLang"], "en");
    assert!(chapters.iter().all(|c| c["status"] == "PENDING"));
    let numbers: Vec<u64> = chapters
        .iter()
        .map(|c| c["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
}

#[tokio::test]
async fn an_empty_file_is_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    assert_error(
        app.upload(&user.key, "empty.txt", Vec::new()).await,
        400,
        "bad_request",
    )
    .await;
}

#[tokio::test]
async fn files_of_the_wrong_type_are_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00".to_vec()),
        ("book.mobi", b"BOOKMOBI".to_vec()),
        ("noextension", b"Chapter 1\n\nText".to_vec()),
        ("binary.txt", vec![0u8, 159, 146, 150, 0, 1, 2]),
        ("moby-dick.pdf", corpus("moby-dick.epub")),
        (
            "page.txt",
            b"<!DOCTYPE html><html><body>hi</body></html>".to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        let body = assert_error(
            app.upload(&user.key, name, bytes).await,
            400,
            "unsupported_file",
        )
        .await;
        assert!(
            body["message"].as_str().unwrap().contains(name),
            "{name}: {body}"
        );
    }
    let listed: Value = app.get("/api/books", &user.key).await.json().await.unwrap();
    assert_eq!(
        listed["books"].as_array().unwrap().len(),
        0,
        "nothing was stored"
    );
}

#[tokio::test]
async fn a_request_without_a_file_part_or_not_multipart_is_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let no_file = Form::new().text("title", "x");
    let response = app.post_upload_form(&user.key, no_file).await;
    assert_error(response, 400, "bad_request").await;
    let json = app
        .send_json(
            Method::POST,
            "/api/upload",
            &user.key,
            serde_json::json!({"file": "x"}),
        )
        .await;
    assert_error(json, 400, "bad_request").await;
    let nameless = Form::new().part("file", Part::bytes(b"Chapter 1\n\ntext".to_vec()));
    let response = app.post_upload_form(&user.key, nameless).await;
    assert_error(response, 400, "bad_request").await;
}

#[tokio::test]
async fn an_epub_upload_reaches_extracted_with_the_books_own_title_author_and_chapters() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let book = app
        .upload_ok(&user.key, "moby-dick.epub", corpus("moby-dick.epub"))
        .await;
    let detail = app.wait_for_status(&user.key, &book, "EXTRACTED").await;
    assert_eq!(
        detail["title"], "Moby-Dick",
        "the file's title replaces the file name"
    );
    assert_eq!(detail["author"], "Herman Melville");
    assert_eq!(detail["originalLang"], "en-US");
    let chapters = detail["chapters"].as_array().unwrap();
    assert_eq!(detail["chapterCount"].as_u64(), Some(chapters.len() as u64));
    let loomings = chapters
        .iter()
        .find(|c| c["title"] == "Chapter 1. Loomings.")
        .unwrap();
    assert!(loomings["wordCount"].as_u64().unwrap() > 2000);
    let cover = app
        .ports
        .blobs
        .list(&format!("books/{book}/assets/"))
        .await
        .unwrap();
    assert!(!cover.is_empty(), "images are kept");
}

#[tokio::test]
async fn docx_pdf_and_html_uploads_reach_extracted_with_their_chapters() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for name in ["wasteland.docx", "wasteland.pdf", "wasteland.html"] {
        let book = app
            .upload_ok(&user.key, name, crate::helpers::fixture(name))
            .await;
        let detail = app.wait_for_status(&user.key, &book, "EXTRACTED").await;
        let titles: Vec<&str> = detail["chapters"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["title"].as_str())
            .collect();
        assert!(titles.contains(&"IV. DEATH BY WATER"), "{name}: {titles:?}");
    }
}

#[tokio::test]
async fn a_user_title_is_kept_over_the_files_own() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let form = Form::new()
        .part(
            "file",
            Part::bytes(corpus("wasteland.epub")).file_name("wasteland.epub"),
        )
        .text("title", "My Waste Land");
    let response = app.post_upload_form(&user.key, form).await;
    let book: Value = response.json().await.unwrap();
    let detail = app
        .wait_for_status(&user.key, book["book"]["id"].as_str().unwrap(), "EXTRACTED")
        .await;
    assert_eq!(detail["title"], "My Waste Land");
    assert_eq!(detail["author"], "T.S. Eliot");
}

#[tokio::test]
async fn a_broken_pdf_is_accepted_and_fails_extraction_with_a_clear_message() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let book = app
        .upload_ok(&user.key, "book.pdf", b"%PDF-1.4\n%EOF\n".to_vec())
        .await;
    let detail = app.wait_for_status(&user.key, &book, "ERROR").await;
    let error = detail["error"].as_str().unwrap();
    assert!(
        error.starts_with("the file could not be read: "),
        "{detail}"
    );
    assert!(error.contains("not a readable PDF"), "{detail}");
}

/// A declared length over the limit is refused from the headers alone: the test sends no body
/// at all and still gets its answer.
#[tokio::test]
async fn an_upload_declaring_51_mb_is_refused_before_its_body_is_sent() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let addr = app.url.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/upload HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: {}\r\n\r\n",
        user.key,
        51 * MB
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), socket.read(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("file_too_large"), "{answer}");
}

/// Without a declared length, the server reads until the file passes 50 MB and stops there: the
/// body stream is pulled only about as far as the limit, never to its 51 MB end.
#[tokio::test]
async fn a_streamed_51_mb_upload_is_refused_after_reading_no_more_than_the_limit() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let pulled = Arc::new(AtomicU64::new(0));
    let counter = pulled.clone();
    let chunk = Bytes::from(vec![b'a'; 64 * 1024]);
    let head = Bytes::from_static(
        b"--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\nContent-Type: text/plain\r\n\r\n",
    );
    let chunks = (51 * MB / chunk.len() as u64) as usize;
    let body = futures::stream::iter(
        std::iter::once(head).chain(std::iter::repeat_n(chunk, chunks)),
    )
    .map(move |c| {
        counter.fetch_add(c.len() as u64, Ordering::SeqCst);
        Ok::<_, std::io::Error>(c)
    });
    let request = axum::http::Request::builder()
        .method("POST")
        .uri("/api/upload")
        .header("authorization", format!("Bearer {}", user.key))
        .header("content-type", "multipart/form-data; boundary=XYZ")
        .body(Body::from_stream(body))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 400);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"], "file_too_large", "{body}");
    let read = pulled.load(Ordering::SeqCst);
    assert!(
        read <= 50 * MB + 256 * 1024,
        "the server pulled {read} bytes of a 51 MB body"
    );
    assert!(read > 49 * MB, "it did read up to the limit ({read} bytes)");
}

/// A backend failure is retried with backoff; after four receives the job moves to the
/// dead-letter queue, whose handler puts the book in ERROR with the last failure.
#[tokio::test]
async fn an_extraction_that_keeps_failing_ends_in_error_through_the_dead_letter_queue() {
    use booktr_core::jobs::runner;

    let app = crate::helpers::TestApp::new().start().await;
    let user = app.user().await;
    let book = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    // The stored original becomes unreadable: a directory where the file was.
    let original = app
        .data
        .path()
        .join(format!("blobs/books/{book}/original.txt"));
    std::fs::remove_file(&original).unwrap();
    std::fs::create_dir(&original).unwrap();

    for attempt in 1..=4 {
        let seen = runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
            .await
            .unwrap();
        assert_eq!(seen, 1, "attempt {attempt} ran once");
        let detail: Value = app
            .get(&format!("/api/books/{book}"), &user.key)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            detail["status"], "EXTRACTING",
            "still retrying after attempt {attempt}"
        );
        assert!(
            detail["error"].as_str().unwrap().contains("unavailable"),
            "{detail}"
        );
        app.clock.advance(chrono::Duration::minutes(1));
    }
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
    let detail: Value = app
        .get(&format!("/api/books/{book}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(detail["status"], "ERROR");
    assert!(
        detail["error"]
            .as_str()
            .unwrap()
            .starts_with("extraction failed after 4 attempts"),
        "{detail}"
    );

    let health: Value = app.get_anonymous("/api/health").await.json().await.unwrap();
    assert_eq!(health["queues"]["translate"]["failed"], 1);
    assert_eq!(health["queues"]["translate"]["waiting"], 0);
}

/// File names are stored as their last path component; control characters in a file name or a
/// title are refused, at upload and on rename.
#[tokio::test]
async fn paths_in_file_names_are_dropped_and_control_characters_refused() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for (sent, stored) in [
        ("../../x.txt", "x.txt"),
        ("C:\\books\\voyage.txt", "voyage.txt"),
    ] {
        let id = app.upload_ok(&user.key, sent, sample_txt()).await;
        let book: Value = app
            .get(&format!("/api/books/{id}"), &user.key)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(book["fileName"], stored, "{book}");
        assert!(!book["title"].as_str().unwrap().contains('/'), "{book}");
    }
    assert_error(
        app.upload(&user.key, "bad\u{0}name.txt", sample_txt())
            .await,
        400,
        "bad_request",
    )
    .await;
    let with_nul = Form::new()
        .part("file", Part::bytes(sample_txt()).file_name("voyage.txt"))
        .text("title", "The\u{0}Voyage");
    let response = app.post_upload_form(&user.key, with_nul).await;
    assert_error(response, 400, "bad_request").await;
    let id = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    let renamed = app
        .send_json(
            Method::PATCH,
            &format!("/api/books/{id}"),
            &user.key,
            serde_json::json!({"title": "Line\nbreak"}),
        )
        .await;
    assert_error(renamed, 400, "bad_request").await;
}
