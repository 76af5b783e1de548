//! Book jobs end to end: translate, pause, resume, stop, status, generate, download, share.

use std::sync::Arc;
use std::time::Duration;

use booktr_core::job::{Job, Layout, OutputFormat};
use booktr_core::jobs::runner;
use booktr_core::ports::{Outgoing, QueueName};
use booktr_core::types::{Plan, Role};
use booktr_outbound::EnvModels;
use reqwest::Method;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::helpers::{assert_error, corpus, epubcheck, eventually, on_aws, sample_txt, TestApp};
use crate::stand_ins::{is_term_list, StandIn};
use crate::webhooks::{hmac_hex, Receiver};
use booktr_translate::offline::pseudo;

async fn post(app: &TestApp, path: &str, key: &str, body: Value) -> reqwest::Response {
    app.send_json(Method::POST, path, key, body).await
}

async fn status(app: &TestApp, key: &str, book_id: &str) -> Value {
    let response = app
        .get(&format!("/api/translate/status?bookId={book_id}"), key)
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// Runs every due job (no background workers), moving the clock past retry delays.
async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

/// Runs every due job, then moves the clock past the queue's retry delays, until a job that
/// fails every time has used its tries.
async fn drain_through_retries(app: &TestApp) {
    for _ in 0..6 {
        drain(app).await;
        app.clock.advance(chrono::Duration::minutes(2));
    }
}

/// An extracted sample book (a preface and three chapters) and its owner's key.
async fn extracted_book(app: &TestApp) -> (String, String) {
    let user = app.user().await;
    let id = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    drain(app).await;
    let book: Value = app
        .get(&format!("/api/books/{id}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(book["status"], "EXTRACTED", "{book}");
    (user.key, id)
}

/// Runs the next job of the jobs queue, one message.
async fn run_one_job(app: &TestApp) {
    runner::run_once(
        app.ports.queue.as_ref(),
        &app.services.jobs,
        booktr_core::ports::QueueName::Jobs,
        &runner::RunnerConfig {
            batch: 1,
            ..runner::RunnerConfig::default()
        },
    )
    .await
    .unwrap();
}

/// Fetches a link without credentials.
async fn fetch(url: &str) -> reqwest::Response {
    reqwest::get(url).await.unwrap()
}

/// The whole journey over HTTP with background workers and the offline engine.
#[tokio::test]
async fn a_book_is_translated_downloaded_generated_as_pdf_and_shared_publicly() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let key = &user.key;
    let id = app
        .upload_ok(key, "wasteland.epub", corpus("wasteland.epub"))
        .await;
    let book = app.wait_for_status(key, &id, "EXTRACTED").await;
    let glossary: Value = post(
        &app,
        "/api/glossary",
        key,
        json!({"name": "Eliot", "entries": [{"source": "April", "target": "Abril"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    let glossary_id = glossary["glossary"]["id"].as_str().unwrap();

    let started = post(
        &app,
        "/api/translate",
        key,
        json!({"bookId": id, "glossaryId": glossary_id}),
    )
    .await;
    assert_eq!(started.status(), 200);
    let started: Value = started.json().await.unwrap();
    assert_eq!(started["success"], true);
    assert_eq!(started["jobsCreated"], book["chapterCount"]);

    // Progress only grows, and ends at 100 with every chapter completed.
    let last_progress = std::cell::Cell::new(0);
    let seen = eventually(Duration::from_secs(30), || async {
        let seen = status(&app, key, &id).await;
        let progress = seen["progress"].as_u64().unwrap();
        assert!(
            progress >= last_progress.get(),
            "progress went down: {seen}"
        );
        last_progress.set(progress);
        if seen["status"] == "COMPLETED" {
            Ok(seen)
        } else {
            Err(seen)
        }
    })
    .await;
    assert_eq!(seen["progress"], 100);
    assert_eq!(seen["chaptersCompleted"], seen["chaptersTotal"]);
    assert_eq!(seen["errors"], json!([]));
    assert_eq!(seen["passes"]["polish"], seen["chaptersTotal"]);
    assert!(seen["chapters"][1]["quality"]["glossaryChecked"].is_number());
    let detail: Value = app
        .get(&format!("/api/books/{id}"), key)
        .await
        .json()
        .await
        .unwrap();
    assert!(detail["completedAt"].is_string());
    assert_eq!(detail["glossaryId"], glossary_id);

    // The EPUB: a signed link anyone holding it can use, for an hour, that passes epubcheck.
    let link: Value = app
        .get(&format!("/api/download/{id}?format=epub"), key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(link["complete"], true);
    let url = link["url"].as_str().unwrap();
    let file = fetch(url).await;
    assert_eq!(file.status(), 200);
    assert_eq!(file.headers()["content-type"], "application/epub+zip");
    let epub = file.bytes().await.unwrap();
    epubcheck(&epub);
    let translated = booktr_formats::epub::extract(&epub).unwrap();
    assert_eq!(translated.language.as_deref(), Some("es"));
    assert!(translated.plain_text_contains("Abril"));

    // A tampered or expired link is refused (this service's signed links; on AWS the link is
    // S3's own presigned URL, which S3 checks).
    if !on_aws() {
        let tampered = url.replace("signature=", "signature=00");
        assert_error(fetch(&tampered).await, 403, "forbidden").await;
        let other_book = url.replace(&id, "0000");
        assert_error(fetch(&other_book).await, 403, "forbidden").await;
        app.clock.advance(chrono::Duration::minutes(61));
        assert_error(fetch(url).await, 403, "forbidden").await;
    }

    // The PDF, generated on request.
    let generated = post(
        &app,
        "/api/generate",
        key,
        json!({"bookId": id, "format": "pdf"}),
    )
    .await;
    assert_eq!(generated.status(), 200);
    let pdf_key = format!("books/{id}/output/book.pdf");
    eventually(Duration::from_secs(30), || async {
        let generated = !app.ports.blobs.list(&pdf_key).await.unwrap().is_empty();
        let book = status(&app, key, &id).await;
        if generated && book["status"] == "COMPLETED" {
            Ok(())
        } else {
            Err(format!("{pdf_key} generated: {generated}; {book}"))
        }
    })
    .await;
    let link: Value = app
        .get(&format!("/api/download/{id}?format=pdf"), key)
        .await
        .json()
        .await
        .unwrap();
    let pdf = fetch(link["url"].as_str().unwrap()).await;
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF-"));

    // Shared: a public page with the chapters side by side and download links, until revoked.
    let shared = post(
        &app,
        &format!("/api/books/{id}/share"),
        key,
        json!({"expiresIn": 7}),
    )
    .await;
    assert_eq!(shared.status(), 200);
    let shared: Value = shared.json().await.unwrap();
    let share_url = shared["shareUrl"].as_str().unwrap();
    assert!(shared["shareToken"].as_str().unwrap().len() >= 22);
    assert!(shared["expiresAt"].is_string());
    assert_eq!(shared["public"], false, "unlisted unless asked");
    let page = fetch(&format!("{share_url}?chapter=2")).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("April is the cruellest month"), "{html}");
    assert!(html.contains("Abril"));
    assert!(html.contains("/download?format=epub"));
    let redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{share_url}/download?format=epub"))
        .send()
        .await
        .unwrap();
    assert_eq!(redirect.status(), 302);
    let handed_out = redirect.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(fetch(&handed_out).await.status(), 200);
    let revoked = app
        .request(Method::DELETE, &format!("/api/books/{id}/share"), key)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_error(fetch(share_url).await, 404, "not_found").await;
    // The share's copy is gone: 404 from this server's links; S3 answers a presigned link to
    // a missing object with 403 unless the signer may list the bucket.
    let after = fetch(&handed_out).await.status().as_u16();
    assert!(
        matches!(after, 403 | 404),
        "a download link given out through a revoked share ends with it: {after}"
    );
    // The owner's own links are not the share's.
    let own: Value = app
        .get(&format!("/api/download/{id}?format=epub"), key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(fetch(own["url"].as_str().unwrap()).await.status(), 200);

    // Another tenant sees none of it.
    let stranger = app.user().await;
    assert_error(
        app.get(&format!("/api/translate/status?bookId={id}"), &stranger.key)
            .await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        app.get(&format!("/api/download/{id}?format=epub"), &stranger.key)
            .await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        post(
            &app,
            &format!("/api/books/{id}/share"),
            &stranger.key,
            json!({}),
        )
        .await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        post(
            &app,
            "/api/translate/stop",
            &stranger.key,
            json!({"bookId": id}),
        )
        .await,
        404,
        "not_found",
    )
    .await;
}

trait PlainText {
    fn plain_text_contains(&self, needle: &str) -> bool;
}

impl PlainText for booktr_formats::manuscript::Manuscript {
    fn plain_text_contains(&self, needle: &str) -> bool {
        self.chapters
            .iter()
            .any(|c| c.plain_text().contains(needle))
    }
}

#[tokio::test]
async fn pause_resume_and_stop_are_refused_where_the_state_table_says() {
    let app = TestApp::new().start().await;
    // FREE: gpt-4o is not in its plan.
    let user = app.user_with(Plan::Free, Role::User).await;
    let id = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    let key = &user.key;
    let body = json!({ "bookId": id });
    // Not extracted yet.
    assert_error(
        post(&app, "/api/translate", key, body.clone()).await,
        400,
        "bad_request",
    )
    .await;
    drain(&app).await;
    // Never started: nothing to pause, resume or stop.
    for action in ["pause", "resume", "stop"] {
        let path = format!("/api/translate/{action}");
        assert_error(
            post(&app, &path, key, body.clone()).await,
            400,
            "bad_request",
        )
        .await;
    }
    // Unknown and not-allowed models, a glossary that does not exist, a bad language.
    for (field, value) in [
        ("model", "gpt-9"),
        ("model", "gpt-4o"),
        ("glossaryId", "nope"),
        ("targetLang", "not a language"),
    ] {
        let mut request = body.clone();
        request[field] = json!(value);
        let refused = assert_error(
            post(&app, "/api/translate", key, request).await,
            400,
            "bad_request",
        )
        .await;
        assert!(
            refused["message"].as_str().unwrap().contains(field),
            "{refused}"
        );
    }
    assert_error(
        post(
            &app,
            "/api/translate",
            key,
            json!({"bookId": id, "extra": 1}),
        )
        .await,
        400,
        "bad_request",
    )
    .await;
    assert_error(
        app.get("/api/translate/status", key).await,
        400,
        "bad_request",
    )
    .await;

    // A book whose file could not be read is in ERROR, but has no translation to resume or stop.
    let broken = app
        .upload_ok(key, "broken.pdf", b"%PDF-1.4\n%EOF\n".to_vec())
        .await;
    drain(&app).await;
    assert_eq!(status(&app, key, &broken).await["status"], "ERROR");
    for action in ["resume", "stop", "pause"] {
        let path = format!("/api/translate/{action}");
        let request = json!({ "bookId": broken });
        assert_error(post(&app, &path, key, request).await, 400, "bad_request").await;
    }
    let start_broken = post(&app, "/api/translate", key, json!({ "bookId": broken })).await;
    let refused = assert_error(start_broken, 400, "bad_request").await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("upload it again"),
        "{refused}"
    );

    let started = post(&app, "/api/translate", key, body.clone()).await;
    assert_eq!(started.status(), 200);
    // Started twice: refused.
    assert_error(
        post(&app, "/api/translate", key, body.clone()).await,
        400,
        "bad_request",
    )
    .await;
    assert_eq!(
        post(&app, "/api/translate/pause", key, body.clone())
            .await
            .status(),
        200
    );
    assert_eq!(status(&app, key, &id).await["status"], "PAUSED");
    assert_error(
        post(&app, "/api/translate/pause", key, body.clone()).await,
        400,
        "bad_request",
    )
    .await;
    // Queued jobs of a paused book are dropped: nothing is translated.
    drain(&app).await;
    let paused = status(&app, key, &id).await;
    assert_eq!(
        (
            paused["status"].as_str(),
            paused["chaptersCompleted"].as_u64()
        ),
        (Some("PAUSED"), Some(0))
    );

    let resumed: Value = post(&app, "/api/translate/resume", key, body.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (resumed["resumed"].as_u64(), resumed["total"].as_u64()),
        (Some(4), Some(4))
    );
    drain(&app).await;
    let done = status(&app, key, &id).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    // A finished book can be neither resumed, stopped nor paused (started again, it is a new
    // run: `a_finished_book_is_translated_again_...`).
    for action in ["translate/resume", "translate/stop", "translate/pause"] {
        let path = format!("/api/{action}");
        assert_error(
            post(&app, &path, key, body.clone()).await,
            400,
            "bad_request",
        )
        .await;
    }
}

/// Stop while a chapter is being translated: the chapter finishes and is kept, the rest of the
/// run is dropped, and a new start with the same model and glossary pays only for the others.
#[tokio::test]
async fn stop_during_a_chapter_keeps_it_and_a_new_start_reuses_the_completed_chapters() {
    let gate = Arc::new(Semaphore::new(0));
    let entered = Arc::new(Semaphore::new(0));
    let model = StandIn {
        gate: Some(gate.clone()),
        entered: Some(entered.clone()),
        ..StandIn::default()
    };
    let calls = model.calls.clone();
    // Windows of one chapter (two with the test user's priority).
    let app = TestApp::new()
        .with_models(Arc::new(model))
        .with_env(&[("BOOKTR_CHAPTER_WINDOW", "1")])
        .start()
        .await;
    let (key, id) = extracted_book(&app).await;
    let body = json!({ "bookId": id });
    assert_eq!(
        post(&app, "/api/translate", &key, body.clone())
            .await
            .status(),
        200
    );

    // The term pass (never held), then the first window's chapters run until their first model
    // call, where they are held.
    runner::run_once(
        app.ports.queue.as_ref(),
        &app.services.jobs,
        booktr_core::ports::QueueName::Jobs,
        &runner::RunnerConfig::default(),
    )
    .await
    .unwrap();
    let worker = {
        let queue = app.ports.queue.clone();
        let jobs = app.services.jobs.clone();
        tokio::spawn(async move {
            runner::run_once(
                queue.as_ref(),
                &jobs,
                booktr_core::ports::QueueName::Jobs,
                &runner::RunnerConfig::default(),
            )
            .await
            .unwrap()
        })
    };
    // Both chapters of the window are held; waiting for only one would race the other's start.
    tokio::time::timeout(Duration::from_secs(60), entered.acquire_many(2))
        .await
        .expect("the window's two chapters reach the model within a minute")
        .unwrap()
        .forget();
    let during = status(&app, &key, &id).await;
    assert_eq!(during["chapters"][0]["status"], "TRANSLATING", "{during}");
    assert_eq!(during["chapters"][1]["status"], "TRANSLATING", "{during}");
    assert!(during["currentChapter"].is_string());
    assert_eq!(
        post(&app, "/api/translate/stop", &key, body.clone())
            .await
            .status(),
        200
    );
    assert_eq!(status(&app, &key, &id).await["status"], "EXTRACTED");
    gate.add_permits(1000);
    worker.await.unwrap();
    drain(&app).await;

    let stopped = status(&app, &key, &id).await;
    assert_eq!(stopped["status"], "EXTRACTED");
    assert_eq!(stopped["chapters"][0]["status"], "COMPLETED", "{stopped}");
    assert_eq!(stopped["chapters"][1]["status"], "COMPLETED", "{stopped}");
    assert_eq!(
        stopped["chaptersCompleted"], 2,
        "the window in flight finished; the stopped run's other window was dropped"
    );
    let preface_calls = calls.translate_calls_with("A preface of seven words");
    assert_eq!(preface_calls, 1);

    let again: Value = post(&app, "/api/translate", &key, body.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        again["jobsCreated"], 2,
        "the completed chapters are not queued again"
    );
    drain(&app).await;
    assert_eq!(status(&app, &key, &id).await["status"], "COMPLETED");
    assert_eq!(
        calls.translate_calls_with("A preface of seven words"),
        preface_calls,
        "no second model call for a completed chapter"
    );
    assert_eq!(calls.translate_calls_with("Call me Ishmael"), 1);

    let stopped_again = post(&app, "/api/translate/stop", &key, body.clone()).await;
    assert_eq!(
        stopped_again.status(),
        400,
        "a completed book has nothing to stop"
    );
}

/// A chapter whose model calls always fail: four attempts, then ERROR with the real cause, then a
/// resume (the model healthy again) re-queues only the failed and pending chapters.
#[tokio::test]
async fn a_chapter_that_always_fails_ends_in_error_and_resume_finishes_the_book() {
    let model = StandIn::default().failing_on("carpet-bag");
    let app = TestApp::new()
        .with_models(Arc::new(model.clone()))
        .start()
        .await;
    let (key, id) = extracted_book(&app).await;
    let receiver = Receiver::start(200).await;
    let hook: Value = post(
        &app,
        "/api/webhooks",
        &key,
        json!({"url": receiver.url, "events": ["translation.error", "book.completed"]}),
    )
    .await
    .json()
    .await
    .unwrap();
    let secret = hook["secret"].as_str().unwrap();
    let body = json!({ "bookId": id });
    assert_eq!(
        post(&app, "/api/translate", &key, body.clone())
            .await
            .status(),
        200
    );
    drain_through_retries(&app).await;
    let failed = status(&app, &key, &id).await;
    assert_eq!(failed["status"], "ERROR", "{failed}");
    // The chapters of its window are done (a failing chapter fails alone); one in a later
    // window may be too, or may be dropped once the book is ERROR.
    let completed = failed["chaptersCompleted"].as_u64().unwrap();
    assert!(completed >= 2, "{failed}");
    let errors = failed["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{failed}");
    assert_eq!(errors[0]["chapterId"], format!("{id}-3"));
    // The real cause, not the queue's: the model's answer on the last failed try.
    assert_eq!(
        errors[0]["error"],
        "translation failed after 4 attempts: the model is unavailable: stand-in overloaded",
        "{failed}"
    );
    // Every attempt went through the model's own retries (1 + 5) before the job failed.
    assert_eq!(model.calls.translate_calls_with("carpet-bag"), 4 * 6);
    let book: Value = app
        .get(&format!("/api/books/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert!(
        book["error"].as_str().unwrap().contains("chapter 3"),
        "{book}"
    );

    // The user is told: a signed webhook delivery and an in-app notification.
    let events = |receiver: &Receiver| -> Vec<Value> {
        receiver
            .hits()
            .iter()
            .map(|hit| {
                let signature = hit.headers["x-webhook-signature"].to_str().unwrap();
                assert_eq!(signature, hmac_hex(secret, &hit.body));
                serde_json::from_slice(&hit.body).unwrap()
            })
            .collect()
    };
    let told = events(&receiver);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["event"], "translation.error");
    assert_eq!(told[0]["data"]["bookId"], id.as_str());
    assert_eq!(told[0]["data"]["chapterIndex"], 3);
    assert!(told[0]["data"]["error"]
        .as_str()
        .unwrap()
        .contains("4 attempts"));
    let notifications: Value = app
        .get("/api/notifications", &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        notifications["notifications"][0]["type"], "TRANSLATION_ERROR",
        "{notifications}"
    );

    model.heal();
    let resumed: Value = post(&app, "/api/translate/resume", &key, body.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (resumed["resumed"].as_u64(), resumed["total"].as_u64()),
        (Some(4 - completed), Some(4))
    );
    drain(&app).await;
    let done = status(&app, &key, &id).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["errors"], json!([]));
    assert_eq!(model.calls.translate_calls_with("Spouter-Inn"), 1);
    let told = events(&receiver);
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[1]["event"], "book.completed");
    assert_eq!(told[1]["data"]["status"], "COMPLETED");
    assert_eq!(
        told[1]["data"]["downloadUrl"],
        format!("/api/download/{id}?format=epub")
    );
    assert_eq!(model.calls.translate_calls_with("Call me Ishmael"), 1);
}

/// A chapter whose review pass keeps failing: its translate pass is paid for once, kept across
/// the four failed tries and the resume, and the resumed chapter goes on at the review.
#[tokio::test]
async fn a_chapter_failing_in_its_review_pays_its_translate_pass_once_and_resumes_at_the_review() {
    // The draft of chapter 3 carries the translated word; its source, the original.
    let model = StandIn::default().failing_on(&pseudo("carpet-bag", &[]));
    let app = TestApp::new()
        .with_models(Arc::new(model.clone()))
        .start()
        .await;
    let (key, id) = extracted_book(&app).await;
    let body = json!({ "bookId": id });
    assert_eq!(
        post(&app, "/api/translate", &key, body.clone())
            .await
            .status(),
        200
    );
    drain_through_retries(&app).await;
    let failed = status(&app, &key, &id).await;
    assert_eq!(failed["status"], "ERROR", "{failed}");
    assert_eq!(
        failed["errors"][0]["chapterId"],
        format!("{id}-3"),
        "{failed}"
    );
    // The translate pass is done and counted; progress shows it.
    assert_eq!(failed["chapters"][2]["passesDone"], 1, "{failed}");
    assert_eq!(model.calls.translate_calls_with("carpet-bag"), 1);

    model.heal();
    let resumed: Value = post(&app, "/api/translate/resume", &key, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(resumed["resumed"], 1, "{resumed}");
    drain(&app).await;
    let done = status(&app, &key, &id).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(
        model.calls.translate_calls_with("carpet-bag"),
        1,
        "the translate pass was not paid for again"
    );
}

/// While a book is translating, the chapters finished so far can be downloaded.
#[tokio::test]
async fn a_partial_download_holds_the_chapters_finished_so_far() {
    let gate = Arc::new(Semaphore::new(0));
    let entered = Arc::new(Semaphore::new(0));
    let model = StandIn {
        gate: Some(gate.clone()),
        entered: Some(entered.clone()),
        ..StandIn::default()
    };
    // One chapter in flight at a time (two with the test user's priority).
    let app = TestApp::new()
        .with_models(Arc::new(model))
        .with_env(&[("BOOKTR_CHAPTER_WINDOW", "1")])
        .start()
        .await;
    let (key, id) = extracted_book(&app).await;
    assert_error(
        app.get(&format!("/api/download/{id}?format=epub"), &key)
            .await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        app.get(&format!("/api/download/{id}?format=doc"), &key)
            .await,
        400,
        "bad_request",
    )
    .await;
    assert_eq!(
        post(&app, "/api/translate", &key, json!({"bookId": id}))
            .await
            .status(),
        200
    );
    // The term pass (never held), then the run's chapters job: the first two chapters take
    // the book's places and are held at their first model call, the book is paused, and they
    // finish; the chapters after them see the pause as they start and are not translated.
    run_one_job(&app).await;
    let worker = {
        let app_queue = app.ports.queue.clone();
        let jobs = app.services.jobs.clone();
        tokio::spawn(async move {
            runner::run_once(
                app_queue.as_ref(),
                &jobs,
                booktr_core::ports::QueueName::Jobs,
                &runner::RunnerConfig {
                    batch: 1,
                    ..runner::RunnerConfig::default()
                },
            )
            .await
            .unwrap()
        })
    };
    entered.acquire_many(2).await.unwrap().forget();
    assert_eq!(
        post(&app, "/api/translate/pause", &key, json!({"bookId": id}))
            .await
            .status(),
        200
    );
    gate.add_permits(1000);
    worker.await.unwrap();
    let paused = status(&app, &key, &id).await;
    assert_eq!(paused["status"], "PAUSED", "{paused}");
    assert_eq!(paused["chaptersCompleted"], 2, "{paused}");
    let link: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(link["complete"], false);
    let url = link["url"].as_str().unwrap();
    assert!(url.contains(".partial.epub"), "{url}");
    let epub = fetch(url).await.bytes().await.unwrap();
    epubcheck(&epub);
    let partial = booktr_formats::epub::extract(&epub).unwrap();
    assert_eq!(partial.chapters.len(), 2);
    // The same progress is served from the file rendered for the first request.
    let file_of = |link: &Value| {
        link["url"]
            .as_str()
            .unwrap()
            .split('?')
            .next()
            .unwrap()
            .to_string()
    };
    let again: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(file_of(&again), file_of(&link));
    // Generating needs a translated book.
    assert_error(
        post(
            &app,
            "/api/generate",
            &key,
            json!({"bookId": id, "format": "epub"}),
        )
        .await,
        400,
        "bad_request",
    )
    .await;
    assert_error(
        post(&app, &format!("/api/books/{id}/share"), &key, json!({})).await,
        400,
        "bad_request",
    )
    .await;
    // More progress, a new file; the one before it is gone.
    assert_eq!(
        post(&app, "/api/translate/resume", &key, json!({"bookId": id}))
            .await
            .status(),
        200
    );
    for _ in 0..10 {
        if status(&app, &key, &id).await["chaptersCompleted"].as_u64() > Some(2) {
            break;
        }
        run_one_job(&app).await;
    }
    let later: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_ne!(file_of(&later), file_of(&link));
    let more = fetch(later["url"].as_str().unwrap())
        .await
        .bytes()
        .await
        .unwrap();
    assert!(booktr_formats::epub::extract(&more).unwrap().chapters.len() > 2);
    // Gone: 404 from this server, 403 from S3 for a presigned link to a missing object.
    let gone = fetch(url).await.status().as_u16();
    assert!(
        gone == 404 || gone == 403,
        "the older file is dropped: {gone}"
    );
}

/// The user's preferences fill in what a start leaves out: model, glossary.
#[tokio::test]
async fn a_start_without_a_glossary_uses_the_default_glossary_from_the_preferences() {
    let app = TestApp::new().start().await;
    let (key, id) = extracted_book(&app).await;
    let defaults: Value = app
        .get("/api/settings/preferences", &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(defaults["defaultModel"], "gpt-4o-mini");
    assert_eq!(defaults["defaultGlossaryId"], Value::Null);
    let glossary: Value = post(
        &app,
        "/api/glossary",
        &key,
        json!({"name": "Names", "entries": [{"source": "Ishmael", "target": "Ismael"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    let glossary_id = glossary["glossary"]["id"].as_str().unwrap();
    for bad in [
        json!({"defaultModel": "gpt-9"}),
        json!({"defaultGlossaryId": "someone-elses"}),
        json!({"defaultTargetLanguage": "??"}),
        json!({"preserveFormatting": "yes"}),
        json!({"colour": "blue"}),
    ] {
        let response = app
            .send_json(Method::PATCH, "/api/settings/preferences", &key, bad)
            .await;
        assert_error(response, 400, "bad_request").await;
    }
    let saved: Value = app
        .send_json(
            Method::PATCH,
            "/api/settings/preferences",
            &key,
            json!({"defaultGlossaryId": glossary_id, "defaultModel": "claude-3-haiku"}),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(saved["defaultGlossaryId"], glossary_id);

    assert_eq!(
        post(&app, "/api/translate", &key, json!({"bookId": id}))
            .await
            .status(),
        200
    );
    drain(&app).await;
    let book: Value = app
        .get(&format!("/api/books/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(book["glossaryId"], glossary_id);
    assert_eq!(book["translationModel"], "claude-3-haiku");
    let done = status(&app, &key, &id).await;
    let quality = &done["chapters"][1]["quality"];
    assert_eq!(quality["glossaryChecked"], 1, "{done}");
    assert_eq!(quality["glossarySatisfied"], 1, "{done}");
}

/// A start names a book by id; an id that is no book of the caller's is 404 and touches
/// nothing, even shaped as a path into someone else's files.
#[tokio::test]
async fn a_start_with_a_path_for_a_book_id_is_404_and_touches_no_files() {
    let app = TestApp::new().start().await;
    let (victim_key, victim_book) = extracted_book(&app).await;
    let attacker = app.user().await;
    for folder in ["chapters", "run", "output", "original", ""] {
        let response = post(
            &app,
            "/api/translate",
            &attacker.key,
            json!({"bookId": format!("{victim_book}/{folder}")}),
        )
        .await;
        assert_error(response, 404, "not_found").await;
    }
    let response = post(
        &app,
        "/api/translate",
        &attacker.key,
        json!({"bookId": victim_book}),
    )
    .await;
    assert_error(response, 404, "not_found").await;
    // The victim's book is whole: it translates to the end.
    let started = post(
        &app,
        "/api/translate",
        &victim_key,
        json!({"bookId": victim_book}),
    )
    .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let done = status(&app, &victim_key, &victim_book).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
}

/// One paragraph as long as the service takes (just under 100,000 characters, about forty
/// pages): it goes to the model in parts no larger than a chunk (checked at the stand-in), and
/// comes back as one paragraph, complete. A longer one is refused at extraction, naming the
/// limit, and costs no book.
#[tokio::test]
async fn the_longest_paragraph_taken_goes_in_parts_that_fit_and_comes_back_whole() {
    let (openai, calls) = crate::stand_ins::openai_stand_in(Duration::ZERO).await;
    let models = EnvModels::from_vars(vec![
        ("OPENAI_API_KEY".into(), "sk-stand-in".into()),
        ("OPENAI_BASE_URL".into(), openai),
    ]);
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(models))
        .start()
        .await;
    let user = app.user().await;
    // 16 words and 80 characters, 1,240 times: 99,199 characters.
    let sentence =
        "Call me Ishmael and some years ago never mind how long precisely I went to sea. ";
    let paragraph =
        |times: usize| format!("A Long Breath\n\n{}\n", sentence.repeat(times).trim_end());
    let refused = app
        .upload_ok(&user.key, "too-long.txt", paragraph(1_300).into_bytes())
        .await;
    let refused = app.wait_for_status(&user.key, &refused, "ERROR").await;
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("more than 100,000 characters, the limit for one paragraph"),
        "{refused}"
    );
    let text = paragraph(1_240);
    let id = app
        .upload_ok(&user.key, "breath.txt", text.into_bytes())
        .await;
    app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    let book = app
        .translate_to_end(&user.key, &id, json!({"model": "gpt-4o-mini"}))
        .await;
    assert_eq!(book["status"], "COMPLETED", "{book}");

    // Every request of the first pass carried at most a chunk (2,000 estimated tokens) of
    // blocks; the later passes carry a draft beside each source, so twice that.
    let all = calls.all();
    assert!(all.len() > 3 * 10, "{} requests", all.len());
    for user_part in &all {
        let blocks = user_part.split("BLOCKS:\n").nth(1).unwrap_or_default();
        let tokens = booktr_translate::model::estimate_tokens(blocks);
        let budget = if user_part.starts_with("TASK: translate") {
            2_000
        } else {
            4_100
        };
        assert!(
            tokens <= budget,
            "a request carried {tokens} tokens of blocks"
        );
    }

    // The translation is one paragraph with every sentence in it.
    let link: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    let epub = fetch(link["url"].as_str().unwrap())
        .await
        .bytes()
        .await
        .unwrap();
    let translated = booktr_formats::epub::extract(&epub).unwrap();
    let paragraphs: Vec<String> = translated
        .chapters
        .iter()
        .flat_map(|c| c.blocks.iter())
        .map(|b| b.plain_text())
        .filter(|t| t.split_whitespace().count() > 1_000)
        .collect();
    assert_eq!(paragraphs.len(), 1, "the paragraph stays one block");
    let ishmael = booktr_translate::offline::pseudo("Ishmael", &[]);
    assert_eq!(paragraphs[0].matches(ishmael.as_str()).count(), 1_240);
    assert_eq!(paragraphs[0].split_whitespace().count(), 16 * 1_240);
}

/// A provider that answers half of the requests 429 for a while: requests in flight on the key
/// drop while the 429s last, and the book completes with no chapter in ERROR.
#[tokio::test]
async fn under_rate_limits_fewer_requests_are_in_flight_and_no_chapter_fails() {
    let (openai, arrivals) =
        crate::stand_ins::rate_limiting_openai_stand_in(12, 40, Duration::from_millis(150)).await;
    let models = EnvModels::from_vars(vec![
        ("OPENAI_API_KEY".into(), "sk-stand-in".into()),
        ("OPENAI_BASE_URL".into(), openai),
    ]);
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(models))
        .start()
        .await;
    let user = app.user().await;
    // One chapter (its heading makes it one) of 40 paragraphs of about a chunk each: 40 chunks
    // a pass, 12 at once.
    let paragraph =
        "It is a way I have of driving off the spleen and regulating the circulation. ".repeat(100);
    let text = format!(
        "Chapter 1\n\n{}\n",
        vec![paragraph.trim_end(); 40].join("\n\n")
    );
    let id = app
        .upload_ok(&user.key, "spleen.txt", text.into_bytes())
        .await;
    app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    let book = app
        .translate_to_end(&user.key, &id, json!({"model": "gpt-4o-mini"}))
        .await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    let done = status(&app, &user.key, &id).await;
    assert_eq!(done["errors"], json!([]), "{done}");

    let arrivals = arrivals.lock().unwrap().clone();
    let before = arrivals[..12].iter().map(|a| a.in_flight).max().unwrap();
    assert!(before >= 10, "{before} in flight before any 429");
    let limited = arrivals[12..52]
        .iter()
        .filter(|a| a.limited_before >= 3)
        .map(|a| a.in_flight)
        .max()
        .unwrap();
    assert!(
        limited <= 8,
        "{limited} in flight while the 429s lasted (before: {before})"
    );
}

/// A book whose names recur from its first chapter to its last, translated with windows of
/// chapters in parallel by a model that renders "Queequeg" and "Ishmael" differently in every
/// call unless told: the term pass fixes one rendering, and every chapter uses it.
#[tokio::test]
async fn chapters_translated_in_parallel_all_use_the_term_passs_names() {
    let model = StandIn {
        drifting: vec!["Queequeg".into(), "Ishmael".into()],
        ..StandIn::default()
    };
    let calls = model.calls.clone();
    let app = TestApp::new().with_models(Arc::new(model)).start().await;
    let user = app.user().await;
    let mut text = String::from("The Term Book\n\n");
    for n in 1..=12 {
        text.push_str(&format!(
            "Chapter {n}\n\nIn chapter {n} the harpooneer Queequeg spoke, and then Ishmael \
             answered him.\n\nLater still Queequeg slept while Ishmael kept watch.\n\n"
        ));
    }
    let id = app
        .upload_ok(&user.key, "terms.txt", text.into_bytes())
        .await;
    drain(&app).await;
    let started = post(&app, "/api/translate", &user.key, json!({"bookId": id})).await;
    assert_eq!(started.status(), 200);
    let during = status(&app, &user.key, &id).await;
    assert_eq!(during["terms"]["status"], "PENDING", "{during}");
    drain(&app).await;
    let done = status(&app, &user.key, &id).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["terms"]["status"], "COMPLETED", "{done}");
    assert!(done["terms"]["found"].as_i64().unwrap() >= 2, "{done}");
    assert!(done["terms"]["usage"]["requests"].as_u64().unwrap() >= 1);
    // One term request, then chapters: the 12 chapters went in windows, not one by one.
    assert_eq!(calls.all().iter().filter(|u| is_term_list(u)).count(), 1);

    let link: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    let epub = fetch(link["url"].as_str().unwrap())
        .await
        .bytes()
        .await
        .unwrap();
    let translated = booktr_formats::epub::extract(&epub).unwrap();
    let names = [pseudo("Queequeg", &[]), pseudo("Ishmael", &[])];
    let harpooneer = pseudo("harpooneer", &[]);
    for chapter in translated
        .chapters
        .iter()
        .filter(|c| c.plain_text().contains(&harpooneer))
    {
        let text = chapter.plain_text();
        for name in &names {
            assert_eq!(text.matches(name.as_str()).count(), 2, "{text}");
            // No rendering of its own (the stand-in appends a call number).
            for digit in 0..10 {
                assert!(!text.contains(&format!("{name}{digit}")), "{text}");
            }
        }
    }
    assert_eq!(
        translated
            .chapters
            .iter()
            .filter(|c| c.plain_text().contains(&harpooneer))
            .count(),
        12
    );
}

/// The EPUB a download of the book links to, with the download's answer.
async fn downloaded_epub(app: &TestApp, key: &str, id: &str) -> Vec<u8> {
    let link = app
        .get(&format!("/api/download/{id}?format=epub"), key)
        .await;
    assert_eq!(link.status(), 200);
    let link: Value = link.json().await.unwrap();
    fetch(link["url"].as_str().unwrap())
        .await
        .bytes()
        .await
        .unwrap()
        .to_vec()
}

#[tokio::test]
async fn a_finished_book_is_translated_again_and_serves_its_earlier_file_until_the_new_one_is_made()
{
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    drain(&app).await;
    let start = |lang: &str| json!({"bookId": id, "targetLang": lang});
    let started = post(&app, "/api/translate", &user.key, start("es")).await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let spanish = downloaded_epub(&app, &user.key, &id).await;
    let language = |epub: &[u8]| booktr_formats::epub::extract(epub).unwrap().language;
    assert_eq!(language(&spanish).as_deref(), Some("es"));
    let used = |usage: Value| usage["words"]["used"].as_u64().unwrap();
    let before = used(app.get("/api/usage", &user.key).await.json().await.unwrap());

    let again = post(&app, "/api/translate", &user.key, start("fr")).await;
    assert_eq!(again.status(), 200, "{}", again.text().await.unwrap());
    let during = status(&app, &user.key, &id).await;
    assert_eq!(during["status"], "TRANSLATING");
    assert_eq!(during["previousFiles"], json!(["EPUB"]), "{during}");
    assert_eq!(downloaded_epub(&app, &user.key, &id).await, spanish);
    let after = used(app.get("/api/usage", &user.key).await.json().await.unwrap());
    assert!(
        after > before,
        "the new run counts against the quota: {before} -> {after}"
    );

    drain(&app).await;
    let french = downloaded_epub(&app, &user.key, &id).await;
    assert_eq!(language(&french).as_deref(), Some("fr"));
    let done = status(&app, &user.key, &id).await;
    assert_eq!(done["status"], "COMPLETED");
    assert_eq!(done["previousFiles"], json!([]));
}

/// Runs one message of `queue`; how many messages it took.
async fn run_one_of(app: &TestApp, queue: QueueName) -> usize {
    runner::run_once(
        app.ports.queue.as_ref(),
        &app.services.jobs,
        queue,
        &runner::RunnerConfig::default(),
    )
    .await
    .unwrap()
}

/// Whether the book's file `suffix` (`pdf`, `bilingual.epub`) is stored.
async fn has_output(app: &TestApp, id: &str, suffix: &str) -> bool {
    let key = format!("books/{id}/output/book.{suffix}");
    !app.ports.blobs.list(&key).await.unwrap().is_empty()
}

/// Rendering runs from a queue of its own (on AWS a Lambda of its own, so the jobs worker
/// carries no renderer): a requested file's job waits there, not on the jobs queue; and a
/// generate job still on the jobs queue (queued there before a deploy) is sent on to the render
/// queue unrendered, and rendered from there.
#[tokio::test]
async fn a_generate_job_goes_to_the_render_queue_and_one_found_on_the_jobs_queue_is_forwarded() {
    let app = TestApp::new().start().await;
    let (key, id) = extracted_book(&app).await;
    let started = post(&app, "/api/translate", &key, json!({"bookId": id})).await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    assert_eq!(status(&app, &key, &id).await["status"], "COMPLETED");

    let generated = post(
        &app,
        "/api/generate",
        &key,
        json!({"bookId": id, "format": "pdf"}),
    )
    .await;
    assert_eq!(generated.status(), 200);
    assert_eq!(
        run_one_of(&app, QueueName::Jobs).await,
        0,
        "nothing on jobs"
    );
    assert_eq!(run_one_of(&app, QueueName::Render).await, 1);
    assert!(has_output(&app, &id, "pdf").await);

    let old = Job::Generate {
        book_id: id.clone(),
        format: OutputFormat::Epub,
        layout: Layout::Bilingual,
        requested: 1,
    };
    let message = Outgoing {
        group: old.group(),
        dedup_id: old.dedup_id(),
        body: serde_json::to_string(&old).unwrap(),
    };
    app.ports
        .queue
        .send(QueueName::Jobs, message)
        .await
        .unwrap();
    assert_eq!(run_one_of(&app, QueueName::Jobs).await, 1);
    assert!(
        !has_output(&app, &id, "bilingual.epub").await,
        "the jobs queue's worker does not render"
    );
    assert_eq!(run_one_of(&app, QueueName::Render).await, 1, "forwarded");
    assert!(has_output(&app, &id, "bilingual.epub").await);
    assert_eq!(status(&app, &key, &id).await["status"], "COMPLETED");
}
