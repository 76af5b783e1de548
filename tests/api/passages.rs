//! A book's passages: read, flagged, edited, undone and reset by the owner; an edit kept through a
//! new run, its flag cleared, and the book's files made again with it.

use std::sync::Arc;

use async_trait::async_trait;
use booktr_core::jobs::runner;
use booktr_core::ports::{KeyCheckError, Models};
use booktr_translate::misbehaving::{Fault, Misbehaving};
use booktr_translate::model::{ChatError, ChatModel};
use booktr_translate::offline::OfflineEngine;
use booktr_translate::providers::Family;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp, TestUser};

/// Runs every due job (no background workers).
async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

/// A small plain-text book: a preface, a first chapter of three paragraphs, and a second.
pub(crate) fn book() -> Vec<u8> {
    "The Voyage\n\nA preface of seven words stands here.\n\n\
     CHAPTER I. Loomings\n\nCall me Ishmael. Some years ago I went to sea.\n\n\
     It is a way I have of driving off the spleen.\n\n\
     Whenever I find myself growing grim about the mouth, I go to sea.\n\n\
     CHAPTER II. The Carpet-Bag\n\nI stuffed a shirt or two into my old carpet-bag.\n"
        .as_bytes()
        .to_vec()
}

/// The [`book`] uploaded and translated with `start`'s choices; returns its id.
async fn translated(app: &TestApp, user: &TestUser, start: Value) -> String {
    let id = app.upload_ok(&user.key, "voyage.txt", book()).await;
    drain(app).await;
    translate(app, user, &id, start).await;
    id
}

/// A run of the book with `start`'s choices, to COMPLETED.
async fn translate(app: &TestApp, user: &TestUser, id: &str, mut start: Value) {
    start["bookId"] = Value::from(id);
    let started = app
        .send_json(Method::POST, "/api/translate", &user.key, start)
        .await;
    assert_eq!(started.status(), 200, "{}", started.text().await.unwrap());
    drain(app).await;
    let book = app.book(&user.key, id).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
}

async fn page(app: &TestApp, user: &TestUser, path: &str) -> Value {
    let response = app.get(path, &user.key).await;
    assert_eq!(response.status(), 200, "{path}");
    response.json().await.unwrap()
}

async fn passages(app: &TestApp, user: &TestUser, id: &str, chapter: u32) -> Value {
    page(
        app,
        user,
        &format!("/api/books/{id}/chapters/{chapter}/passages"),
    )
    .await
}

/// The passage of chapter 2 ("CHAPTER I. Loomings") that holds `words` of its source.
async fn passage_with(app: &TestApp, user: &TestUser, id: &str, words: &str) -> Value {
    let page = passages(app, user, id, 2).await;
    page["passages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"].as_str().unwrap().contains(words))
        .unwrap_or_else(|| panic!("no passage holds {words:?}: {page}"))
        .clone()
}

fn passage_path(id: &str, passage: &Value) -> String {
    format!(
        "/api/books/{id}/chapters/{}/passages/{}",
        passage["chapter"], passage["index"]
    )
}

async fn edit(app: &TestApp, user: &TestUser, path: &str, text: &str, version: u64) -> Response {
    app.send_json(
        Method::PUT,
        path,
        &user.key,
        json!({"text": text, "version": version}),
    )
    .await
}

async fn change(app: &TestApp, user: &TestUser, path: &str, what: &str, version: u64) -> Response {
    app.send_json(
        Method::POST,
        &format!("{path}/{what}"),
        &user.key,
        json!({"version": version}),
    )
    .await
}

type Response = reqwest::Response;

async fn ok(response: Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

/// The text of the book's EPUB behind its download link.
async fn downloaded_text(app: &TestApp, user: &TestUser, id: &str) -> String {
    let link = page(app, user, &format!("/api/download/{id}?format=epub")).await;
    let file = reqwest::get(link["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(file.status(), 200);
    let epub = file.bytes().await.unwrap();
    booktr_formats::epub::extract(&epub)
        .unwrap()
        .chapters
        .iter()
        .map(|c| c.plain_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_chapters_passages_are_paged_with_source_text_flags_and_origin() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({})).await;

    let all = passages(&app, &user, &id, 2).await;
    let total = all["total"].as_u64().unwrap();
    assert_eq!(total, 3, "{all}");
    assert_eq!(all["chapter"], 2);
    let first = &all["passages"][0];
    assert_eq!(first["index"], 0);
    let source = first["source"].as_str().unwrap();
    assert_eq!(
        first["text"].as_str().unwrap(),
        booktr_translate::offline::pseudo(source, &[])
    );
    assert_eq!(first["origin"]["kind"], "model", "{first}");
    assert!(first["origin"]["pass"].is_string(), "{first}");
    assert_eq!(first["flags"], json!([]));
    assert_eq!(
        (first["version"].as_u64(), first["undoable"].as_u64()),
        (Some(0), Some(0))
    );

    let second = page(
        &app,
        &user,
        &format!("/api/books/{id}/chapters/2/passages?offset=1&limit=1"),
    )
    .await;
    assert_eq!(second["offset"], 1);
    assert_eq!(second["passages"].as_array().unwrap().len(), 1);
    assert_eq!(second["passages"][0], all["passages"][1]);
    let past = page(
        &app,
        &user,
        &format!("/api/books/{id}/chapters/2/passages?offset={total}"),
    )
    .await;
    assert_eq!(past["passages"], json!([]));

    for bad in [
        "limit=0",
        "limit=201",
        "offset=-1",
        "offset=4294967296",
        "limit=many",
    ] {
        let path = format!("/api/books/{id}/chapters/2/passages?{bad}");
        assert_error(app.get(&path, &user.key).await, 400, "bad_request").await;
    }
    let path = format!("/api/books/{id}/chapters/x/passages");
    assert_error(app.get(&path, &user.key).await, 400, "bad_request").await;
    let path = format!("/api/books/{id}/chapters/99/passages");
    assert_error(app.get(&path, &user.key).await, 404, "not_found").await;
    let clean = page(&app, &user, &format!("/api/books/{id}/passages/flagged")).await;
    assert_eq!(
        (clean["total"].as_u64(), clean["passages"].clone()),
        (Some(0), json!([]))
    );
}

#[tokio::test]
async fn an_edit_is_versioned_a_stale_one_conflicts_and_undo_and_reset_go_back() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({})).await;
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    let path = passage_path(&id, &model);

    let mut first = ok(edit(&app, &user, &path, "Llamadme Ismael.", 0).await).await;
    // The edit's answer is the passage and the term changes it suggests (none here).
    let suggested = first.as_object_mut().unwrap().remove("termChanges");
    assert_eq!(suggested, Some(json!([])));
    assert_eq!(first["text"], "Llamadme Ismael.");
    assert_eq!(first["origin"]["kind"], "edited");
    assert_eq!(first["origin"]["by"], user.id);
    assert!(first["origin"]["at"].is_string(), "{first}");
    assert_eq!(
        (first["version"].as_u64(), first["undoable"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(passage_with(&app, &user, &id, "Ishmael").await, first);

    // A client that read version 0 loses to the edit made since, and learns what it is.
    let stale = edit(&app, &user, &path, "Llamadme otra cosa.", 0).await;
    let body = assert_error(stale, 409, "version_conflict").await;
    assert_eq!(body["passage"], first);
    assert_eq!(passage_with(&app, &user, &id, "Ishmael").await, first);

    let second = ok(edit(&app, &user, &path, "Llamadme Ismael, amigo.", 1).await).await;
    assert_eq!(second["version"], 2);
    let undone = ok(change(&app, &user, &path, "undo", 2).await).await;
    assert_eq!(undone["text"], "Llamadme Ismael.");
    assert_eq!(
        (undone["version"].as_u64(), undone["undoable"].as_u64()),
        (Some(3), Some(1))
    );
    let stale = change(&app, &user, &path, "undo", 2).await;
    assert_error(stale, 409, "version_conflict").await;

    let reset = ok(change(&app, &user, &path, "reset", 3).await).await;
    assert_eq!(reset["text"], model["text"]);
    assert_eq!(reset["origin"], model["origin"]);
    assert_eq!(reset["version"], 4);
    // The edit is a change the undo brings back.
    let back = ok(change(&app, &user, &path, "undo", 4).await).await;
    assert_eq!(back["text"], "Llamadme Ismael.");
    let gone = ok(change(&app, &user, &path, "undo", 5).await).await;
    assert_eq!(gone["text"], model["text"]);
    assert_eq!(gone["undoable"], 0);
    let nothing = change(&app, &user, &path, "undo", 6).await;
    let body = assert_error(nothing, 409, "nothing_to_undo").await;
    assert_eq!(body["passage"]["version"], 6);
}

#[tokio::test]
async fn an_edit_whose_marks_are_not_the_sources_or_that_is_empty_is_refused_by_name() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({})).await;
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    let path = passage_path(&id, &model);

    let marked = edit(&app, &user, &path, "Llamadme <i>Ismael</i>.", 0).await;
    let body = assert_error(marked, 400, "marks_mismatch").await;
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("<i>") && message.contains("not in the source"),
        "{message}"
    );
    let broken = edit(&app, &user, &path, "Llamadme <i>Ismael.", 0).await;
    assert_error(broken, 400, "marks_mismatch").await;
    let empty = edit(&app, &user, &path, "  ", 0).await;
    assert_error(empty, 400, "bad_request").await;
    let malformed = app
        .send_json(Method::PUT, &path, &user.key, json!({"text": "Hola"}))
        .await;
    assert_error(malformed, 400, "bad_request").await;
    let beyond = format!("/api/books/{id}/chapters/2/passages/999");
    assert_error(
        edit(&app, &user, &beyond, "Hola", 0).await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(passage_with(&app, &user, &id, "Ishmael").await, model);
}

#[tokio::test]
async fn another_users_book_has_no_passages_for_them() {
    let app = TestApp::new().start().await;
    let owner = app.user().await;
    let other = app.user().await;
    let id = translated(&app, &owner, json!({})).await;
    let model = passage_with(&app, &owner, &id, "Ishmael").await;
    let path = passage_path(&id, &model);

    for read in [
        format!("/api/books/{id}/chapters/2/passages"),
        format!("/api/books/{id}/passages/flagged"),
    ] {
        assert_error(app.get(&read, &other.key).await, 404, "not_found").await;
    }
    assert_error(edit(&app, &other, &path, "Mío.", 0).await, 404, "not_found").await;
    for what in ["undo", "reset"] {
        assert_error(change(&app, &other, &path, what, 0).await, 404, "not_found").await;
    }
    assert_eq!(passage_with(&app, &owner, &id, "Ishmael").await, model);
}

#[tokio::test]
async fn an_edit_is_in_the_next_download_and_kept_through_a_run_with_another_model() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({"model": "gpt-4o-mini"})).await;
    let before = downloaded_text(&app, &user, &id).await;
    assert!(!before.contains("Llamadme Ismael"), "{before}");
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    let path = passage_path(&id, &model);

    ok(edit(&app, &user, &path, "Llamadme Ismael.", 0).await).await;
    let after = downloaded_text(&app, &user, &id).await;
    assert!(after.contains("Llamadme Ismael."), "{after}");
    assert!(!after.contains(model["text"].as_str().unwrap()), "{after}");

    translate(&app, &user, &id, json!({"model": "claude-3-haiku"})).await;
    let book = app.book(&user.key, &id).await;
    assert_eq!(book["translationModel"], "claude-3-haiku");
    let kept = passage_with(&app, &user, &id, "Ishmael").await;
    assert_eq!(kept["text"], "Llamadme Ismael.");
    assert_eq!(kept["origin"]["kind"], "edited");
    let next = &passages(&app, &user, &id, 2).await["passages"][1];
    assert_eq!(next["origin"]["kind"], "model", "{next}");
    let again = downloaded_text(&app, &user, &id).await;
    assert!(again.contains("Llamadme Ismael."), "{again}");
}

async fn status(app: &TestApp, user: &TestUser, id: &str) -> Value {
    page(app, user, &format!("/api/translate/status?bookId={id}")).await
}

/// Every request answered by a model that refuses every block.
pub(crate) struct Refusing;

#[async_trait]
impl Models for Refusing {
    fn model(&self, _: &str, _: Option<String>) -> Result<Arc<dyn ChatModel>, ChatError> {
        Ok(Arc::new(Misbehaving::new(
            OfflineEngine,
            &[Fault::Refusal],
            1,
        )))
    }

    async fn check_key(&self, _: Family, _: &str) -> Result<(), KeyCheckError> {
        Ok(())
    }
}

#[tokio::test]
async fn editing_a_flagged_passage_clears_its_flag_in_the_list_the_status_and_the_warnings() {
    let app = TestApp::new().with_models(Arc::new(Refusing)).start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({})).await;
    let flagged_before = status(&app, &user, &id).await["quality"]["flaggedBlocks"]
        .as_u64()
        .unwrap();
    assert!(flagged_before > 0);
    let list = page(&app, &user, &format!("/api/books/{id}/passages/flagged")).await;
    assert_eq!(list["total"].as_u64(), Some(flagged_before), "{list}");
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    let flags = model["flags"].as_array().unwrap();
    assert!(flags.iter().any(|f| f["kind"] == "refusal"), "{model}");
    assert!(flags
        .iter()
        .all(|f| f["reason"].as_str().is_some_and(|r| !r.is_empty())));
    let path = passage_path(&id, &model);

    let edited = ok(edit(&app, &user, &path, "Llamadme Ismael.", 0).await).await;
    assert_eq!(edited["flags"], json!([]));
    let quality = &status(&app, &user, &id).await["quality"];
    assert_eq!(
        quality["flaggedBlocks"].as_u64(),
        Some(flagged_before - 1),
        "{quality}"
    );
    let list = page(&app, &user, &format!("/api/books/{id}/passages/flagged")).await;
    assert_eq!(list["total"].as_u64(), Some(flagged_before - 1));
    assert!(list["passages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["index"] != model["index"] || p["chapter"] != model["chapter"]));
    let warnings = app.book(&user.key, &id).await["warnings"].to_string();
    assert!(
        warnings.contains(&format!("Translation: {} block", flagged_before - 1)),
        "{warnings}"
    );

    // A new run flags the model's text of every passage again, but not the owner's.
    translate(&app, &user, &id, json!({"model": "claude-3-haiku"})).await;
    let quality = &status(&app, &user, &id).await["quality"];
    assert_eq!(
        quality["flaggedBlocks"].as_u64(),
        Some(flagged_before - 1),
        "{quality}"
    );
    let kept = passage_with(&app, &user, &id, "Ishmael").await;
    assert_eq!(
        (kept["text"].as_str(), kept["flags"].clone()),
        (Some("Llamadme Ismael."), json!([]))
    );

    // Back to the model's text, back to its flag.
    ok(change(&app, &user, &path, "reset", 1).await).await;
    let quality = &status(&app, &user, &id).await["quality"];
    assert_eq!(quality["flaggedBlocks"].as_u64(), Some(flagged_before));
}
