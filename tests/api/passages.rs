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

/// Every XHTML page of the book's EPUB behind its download link, parsed as XML as a reader
/// parses it: each character one XML 1.0 allows (quick-xml does not check them itself), no
/// bidirectional control (the test book's source has none), and the markup well-formed (every
/// element closed by its own name, every entity known). Returns how many pages were read.
async fn every_page_parses_as_xml(app: &TestApp, user: &TestUser, id: &str) -> usize {
    use quick_xml::events::Event;
    use std::io::Read;

    let link = page(app, user, &format!("/api/download/{id}?format=epub")).await;
    let file = reqwest::get(link["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(file.status(), 200);
    let epub = file.bytes().await.unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(epub.to_vec())).unwrap();
    let mut pages = 0;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let name = entry.name().to_string();
        if !name.ends_with(".xhtml") && !name.ends_with(".html") {
            continue;
        }
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        let xml_char = |c: char| {
            matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
        };
        let bidi = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
        if let Some((at, c)) = text.char_indices().find(|&(_, c)| !xml_char(c) || bidi(c)) {
            panic!("{name}: byte {at} is U+{:04X}", c as u32);
        }
        let mut reader = quick_xml::Reader::from_str(&text);
        reader.config_mut().check_end_names = true;
        loop {
            match reader.read_event() {
                Ok(Event::Eof) => break,
                Ok(Event::Text(t)) => {
                    if let Err(e) = t.unescape() {
                        panic!("{name}: {e} at {}", reader.buffer_position());
                    }
                }
                Ok(Event::Start(e) | Event::Empty(e)) => {
                    for attribute in e.attributes() {
                        let attribute = attribute.unwrap_or_else(|e| panic!("{name}: {e}"));
                        if let Err(e) = attribute.unescape_value() {
                            panic!("{name}: {e} at {}", reader.buffer_position());
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => panic!(
                    "{name} is not well-formed: {e} at {}",
                    reader.buffer_position()
                ),
            }
        }
        pages += 1;
    }
    pages
}

#[tokio::test]
async fn an_edit_with_a_character_the_book_cannot_hold_is_refused_by_place_and_the_epub_still_parses(
) {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({})).await;
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    let path = passage_path(&id, &model);

    // The audit's four: two C0 controls, a noncharacter, a right-to-left override.
    for (text, place, code) in [
        ("Llamadme\u{1} Ismael.", 8, "U+0001"),
        ("Llamadme \u{B}Ismael.", 9, "U+000B"),
        ("Llamadme Ismael.\u{FFFE}", 16, "U+FFFE"),
        ("\u{202E}Llamadme Ismael.", 0, "U+202E"),
        ("Llamadme \u{2066}Ismael\u{2069}.", 9, "U+2066"),
        ("Llamadme\u{0} Ismael.", 8, "U+0000"),
        ("Llamadme Ismael.\u{FFFF}", 16, "U+FFFF"),
    ] {
        let refused = edit(&app, &user, &path, text, 0).await;
        let body = assert_error(refused, 400, "invalid_character").await;
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("character {place} is {code}")),
            "{text:?}: {message}"
        );
    }
    assert_eq!(passage_with(&app, &user, &id, "Ishmael").await, model);

    // What a book can hold is taken: tabs, line breaks, escaped markup characters, an implicit
    // direction mark, letters beyond the Basic Multilingual Plane.
    let kept = "Llamadme\tIsmael &amp; \u{200F}compañía &lt;sic&gt;\r\n— 🐋 \u{10FFFD}.";
    let edited = ok(edit(&app, &user, &path, kept, 0).await).await;
    assert_eq!(edited["text"], kept);
    let other = passage_with(&app, &user, &id, "spleen").await;
    let other_path = passage_path(&id, &other);
    ok(edit(
        &app,
        &user,
        &other_path,
        "Es mi manera de \u{85}ahuyentar el esplín.",
        0,
    )
    .await)
    .await;
    let pages = every_page_parses_as_xml(&app, &user, &id).await;
    assert!(pages >= 2, "{pages} pages");
    assert!(downloaded_text(&app, &user, &id)
        .await
        .contains("compañía <sic>"));
}

/// The owner's stored edits as their usage reports them: changes kept, and their bytes.
async fn usage(app: &TestApp, user: &TestUser) -> (u64, u64) {
    let body = page(app, user, "/api/usage").await;
    assert!(
        body["books"]["used"].is_u64(),
        "the spec's Usage still: {body}"
    );
    (
        body["storedEdits"]["versions"].as_u64().unwrap(),
        body["storedEdits"]["bytes"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn an_edit_is_bounded_by_its_source_and_a_passage_keeps_its_last_twenty_changes() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({})).await;
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    let path = passage_path(&id, &model);
    assert_eq!(usage(&app, &user).await, (0, 0));

    // A short source (47 characters): the floor of 2,000 holds, and no more.
    let source_chars = model["source"].as_str().unwrap().chars().count();
    assert!(source_chars * 4 < 2_000, "{source_chars}");
    let long = edit(&app, &user, &path, &"a".repeat(2_001), 0).await;
    let body = assert_error(long, 400, "text_too_long").await;
    assert!(
        body["message"].as_str().unwrap().contains("at most 2000"),
        "{body}"
    );
    let huge = edit(&app, &user, &path, &"a".repeat(50_000), 0).await;
    assert_error(huge, 400, "text_too_long").await;
    let full = ok(edit(&app, &user, &path, &"a".repeat(2_000), 0).await).await;
    assert_eq!(full["version"], 1);
    assert_eq!(usage(&app, &user).await, (1, 2_000));

    // 25 more changes: the passage keeps the last 20, each counted in the owner's usage.
    let mut version = 1;
    for n in 0..25 {
        let text = format!("Llamadme Ismael, versión {n:02}.");
        let done = ok(edit(&app, &user, &path, &text, version).await).await;
        version = done["version"].as_u64().unwrap();
    }
    assert_eq!(version, 26);
    let now = passage_with(&app, &user, &id, "Ishmael").await;
    assert_eq!(now["undoable"], 20, "{now}");
    let bytes_each = "Llamadme Ismael, versión 00.".len() as u64;
    assert_eq!(usage(&app, &user).await, (20, 20 * bytes_each));

    // Undo goes back through all 20, to the model's text, and no further.
    for n in (0..19).rev() {
        let back = ok(change(&app, &user, &path, "undo", version).await).await;
        version = back["version"].as_u64().unwrap();
        assert_eq!(
            back["text"],
            format!("Llamadme Ismael, versión {:02}.", n + 5)
        );
    }
    let last = ok(change(&app, &user, &path, "undo", version).await).await;
    assert_eq!(last["text"], model["text"], "the oldest changes are gone");
    assert_eq!(last["undoable"], 0);
    assert_eq!(usage(&app, &user).await, (0, 0));
    let nothing = change(
        &app,
        &user,
        &path,
        "undo",
        last["version"].as_u64().unwrap(),
    )
    .await;
    assert_error(nothing, 409, "nothing_to_undo").await;
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
