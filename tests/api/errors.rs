use reqwest::Method;
use serde_json::json;

use booktr_core::books::store;
use booktr_core::jobs::runner;
use booktr_core::ports::{Condition, Update};

use crate::helpers::{assert_error, sample_txt, TestApp};

#[tokio::test]
async fn an_unknown_route_is_a_json_404() {
    let app = TestApp::new().with_workers().start().await;
    let response = app.get_anonymous("/api/nothing-here").await;
    assert_error(response, 404, "not_found").await;
}

#[tokio::test]
async fn a_uri_too_long_is_a_json_414_and_one_past_hypers_limit_a_bare_414() {
    let app = TestApp::new().with_workers().start().await;
    let long = format!("/api/books?q={}", "a".repeat(9_000));
    let response = app.get_anonymous(&long).await;
    assert!(response.headers().contains_key("x-request-id"));
    assert_error(response, 414, "uri_too_long").await;
    let at_the_limit = format!("/api/{}", "a".repeat(8 * 1024 - "/api/".len()));
    assert_error(app.get_anonymous(&at_the_limit).await, 404, "not_found").await;

    // Past 65,534 bytes hyper refuses the request head itself, before any layer, with no body
    // (by hand: HTTP clients refuse to send a URI this long at all).
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let path = format!("/api/{}", "a".repeat(100_000 - "/api/".len()));
    let mut stream = tokio::net::TcpStream::connect(app.url.trim_start_matches("http://"))
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 414 "), "{answer}");
    // The server carries on.
    assert_eq!(app.get_anonymous("/api/health").await.status(), 200);
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405() {
    let app = TestApp::new().with_workers().start().await;
    let response = app
        .anonymous(Method::PUT, "/api/health")
        .send()
        .await
        .unwrap();
    assert_error(response, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn malformed_json_and_wrong_content_types_are_400_with_the_error_shape() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let broken = app
        .request(Method::POST, "/api/keys", &user.key)
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    assert_error(broken, 400, "bad_request").await;
    let no_type = app
        .request(Method::POST, "/api/keys", &user.key)
        .body("{\"name\":\"x\"}")
        .send()
        .await
        .unwrap();
    assert_error(no_type, 400, "bad_request").await;
    let wrong_type = app
        .request(Method::PATCH, "/api/user", &user.key)
        .json(&serde_json::json!({"name": 5}))
        .send()
        .await
        .unwrap();
    assert_error(wrong_type, 400, "bad_request").await;
}

#[tokio::test]
async fn a_json_body_over_the_limit_is_413_with_the_error_shape() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(3 * 1024 * 1024));
    let response = app
        .request(Method::POST, "/api/keys", &user.key)
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    let body = assert_error(response, 413, "payload_too_large").await;
    assert!(
        body["message"].as_str().unwrap().contains("2 MiB"),
        "{body}"
    );
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::new().with_workers().start().await;
    let response = app
        .anonymous(Method::GET, "/api/health")
        .header("x-request-id", "trace-me")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "trace-me");
    let response = app.get_anonymous("/api/health").await;
    assert!(!response.headers()["x-request-id"].is_empty());
}

/// `sam build` runs `cargo lambda build --release`, which turns on `panic = "abort"` unless the
/// release profile names a panic strategy. With abort, a PDF that makes the parser panic would
/// kill the worker instead of being refused, and a handler's panic would not answer 500.
#[test]
fn the_release_profile_keeps_panics_catchable_when_cargo_lambda_builds_it() {
    let manifest = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"),
    )
    .unwrap();
    let release = manifest
        .split("\n[")
        .find(|section| section.starts_with("profile.release]"))
        .expect("the workspace has a release profile");
    assert!(
        release
            .lines()
            .any(|line| line.trim() == r#"panic = "unwind""#),
        "[profile.release] must say panic = \"unwind\":\n{release}"
    );
}

#[tokio::test]
async fn a_path_parameter_that_does_not_decode_is_a_json_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for path in ["/api/books/%FF%FE", "/api/glossary/%C3%28"] {
        let body = assert_error(app.get(path, &user.key).await, 400, "bad_request").await;
        assert!(
            !body["message"].as_str().unwrap().is_empty(),
            "{path}: {body}"
        );
    }
}

#[tokio::test]
async fn a_translation_that_cannot_start_or_a_download_too_early_names_the_way_forward() {
    // Without workers: the book stays where each step leaves it.
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = app.upload_ok(&user.key, "book.txt", sample_txt()).await;
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();

    let early = app
        .get(&format!("/api/download/{id}?format=epub"), &user.key)
        .await;
    let body = assert_error(early, 404, "not_found").await;
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("POST /api/translate"),
        "{body}"
    );

    let start = json!({"bookId": id});
    let again = || app.send_json(Method::POST, "/api/translate", &user.key, start.clone());
    assert_eq!(again().await.status(), 200);
    let translating = assert_error(again().await, 400, "bad_request").await;
    assert!(
        translating["message"]
            .as_str()
            .unwrap()
            .contains("/api/translate/status"),
        "{translating}"
    );
    let paused = app
        .send_json(
            Method::POST,
            "/api/translate/pause",
            &user.key,
            start.clone(),
        )
        .await;
    assert_eq!(paused.status(), 200);
    let body = assert_error(again().await, 400, "bad_request").await;
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("/api/translate/resume") && message.contains("/api/translate/stop"),
        "{message}"
    );
}

/// A book, extracted, without workers: each job runs when the test drains the queue.
async fn extracted_book(app: &crate::helpers::TestApp) -> (crate::helpers::TestUser, String) {
    let user = app.user().await;
    let id = app.upload_ok(&user.key, "book.txt", sample_txt()).await;
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
    (user, id)
}

#[tokio::test]
async fn a_chapter_text_gone_from_storage_is_a_500_without_a_try_again() {
    let app = TestApp::new().start().await;
    let (user, id) = extracted_book(&app).await;
    let key = store::chapter_key(&id, 1).unwrap();
    app.ports.blobs.delete(&key).await.unwrap();

    let quote = app
        .get(&format!("/api/translate/quote?bookId={id}"), &user.key)
        .await;
    assert!(quote.headers().get("retry-after").is_none());
    let body = assert_error(quote, 500, "internal_error").await;
    assert!(
        !body["message"].as_str().unwrap().contains("chapter"),
        "the cause is logged, not answered: {body}"
    );
}

#[tokio::test]
async fn a_corrupt_book_item_is_a_500_without_a_try_again() {
    let app = TestApp::new().start().await;
    let (user, id) = extracted_book(&app).await;
    app.ports
        .table
        .update(
            &store::book_pk(&id),
            store::BOOK_SK,
            Update::default().set("status", "NOT_A_STATUS"),
            Condition::Always,
        )
        .await
        .unwrap();

    let read = app.get(&format!("/api/books/{id}"), &user.key).await;
    assert!(read.headers().get("retry-after").is_none());
    assert_error(read, 500, "internal_error").await;
}

#[tokio::test]
async fn a_chapter_whose_text_is_gone_fails_at_once_rather_than_being_retried() {
    let app = TestApp::new().start().await;
    let (user, id) = extracted_book(&app).await;
    let start = json!({"bookId": id});
    let started = app
        .send_json(Method::POST, "/api/translate", &user.key, start)
        .await;
    assert_eq!(started.status(), 200);
    let key = store::chapter_key(&id, 1).unwrap();
    app.ports.blobs.delete(&key).await.unwrap();

    // One drain, no time passing: a retried job would wait for its backoff and leave the
    // chapter as it was.
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
    let status: serde_json::Value = app
        .get(&format!("/api/translate/status?bookId={id}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    let errors = status["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["error"]
            .as_str()
            .unwrap()
            .contains("chapter 1 text is missing")),
        "{status}"
    );
}
