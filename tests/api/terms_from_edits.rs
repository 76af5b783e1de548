//! Terms from edits: an edit that renames a term of the book suggests it, a preview lists every
//! passage the new rendering changes (the owner's apart), and an apply changes them, never over
//! a change made since, and puts the term in the book's glossary for later runs.

use booktr_core::jobs::runner;
use booktr_translate::offline::pseudo;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp, TestUser};

type Response = reqwest::Response;

async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

/// A preface (its title, then a passage) and two chapters; the whale is in four passages of
/// three chapters.
fn book() -> Vec<u8> {
    "The Voyage\n\nA preface about the whale stands here.\n\n\
     CHAPTER I. Loomings\n\nThe whale swam in the sea.\n\n\
     It is a way I have of driving off the spleen.\n\n\
     I saw the whale again, and it saw me.\n\n\
     CHAPTER II. The Carpet-Bag\n\nI dreamt of the whale all night.\n"
        .as_bytes()
        .to_vec()
}

/// A glossary of the user's with `whale` -> `ballena`; returns its id.
async fn whale_glossary(app: &TestApp, user: &TestUser) -> String {
    let body = json!({"name": "Sea", "entries": [{"source": "whale", "target": "ballena"}]});
    let created = app
        .send_json(Method::POST, "/api/glossary", &user.key, body)
        .await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    created["glossary"]["id"].as_str().unwrap().to_string()
}

/// The [`book`] translated to COMPLETED with `start`'s choices; returns its id.
async fn translated(app: &TestApp, user: &TestUser, start: Value) -> String {
    let id = app.upload_ok(&user.key, "voyage.txt", book()).await;
    drain(app).await;
    translate(app, user, &id, start).await;
    id
}

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

async fn ok(response: Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

/// Every passage of the book, chapter by chapter.
async fn all_passages(app: &TestApp, user: &TestUser, id: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for chapter in 1..=3 {
        let path = format!("/api/books/{id}/chapters/{chapter}/passages");
        let page = ok(app.get(&path, &user.key).await).await;
        all.extend(page["passages"].as_array().unwrap().iter().cloned());
    }
    all
}

async fn passage(app: &TestApp, user: &TestUser, id: &str, chapter: u64, index: u64) -> Value {
    all_passages(app, user, id)
        .await
        .into_iter()
        .find(|p| p["chapter"] == chapter && p["index"] == index)
        .unwrap()
}

async fn edit(app: &TestApp, user: &TestUser, id: &str, passage: &Value, text: &str) -> Response {
    let path = format!(
        "/api/books/{id}/chapters/{}/passages/{}",
        passage["chapter"], passage["index"]
    );
    let body = json!({"text": text, "version": passage["version"]});
    app.send_json(Method::PUT, &path, &user.key, body).await
}

async fn preview(app: &TestApp, user: &TestUser, id: &str, body: Value) -> Response {
    let path = format!("/api/books/{id}/terms/preview");
    app.send_json(Method::POST, &path, &user.key, body).await
}

async fn apply(app: &TestApp, user: &TestUser, id: &str, body: Value) -> Response {
    let path = format!("/api/books/{id}/terms/apply");
    app.send_json(Method::POST, &path, &user.key, body).await
}

fn rename() -> Value {
    json!({"source": "whale", "from": "ballena", "to": "cachalote"})
}

/// `rename` applied to `passages` (as a preview lists them: chapter, index, version).
fn apply_body(passages: &[Value]) -> Value {
    let mut body = rename();
    body["passages"] = passages
        .iter()
        .map(|p| json!({"chapter": p["chapter"], "index": p["index"], "version": p["version"]}))
        .collect();
    body
}

/// Where a passage is: (chapter, index).
fn place(passage: &Value) -> (u64, u64) {
    (
        passage["chapter"].as_u64().unwrap(),
        passage["index"].as_u64().unwrap(),
    )
}

fn places(passages: &Value) -> Vec<(u64, u64)> {
    passages.as_array().unwrap().iter().map(place).collect()
}

/// The text of the book's EPUB behind its download link.
async fn downloaded_text(app: &TestApp, user: &TestUser, id: &str) -> String {
    let link = ok(app
        .get(&format!("/api/download/{id}?format=epub"), &user.key)
        .await)
    .await;
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
async fn an_edit_that_renames_a_glossary_term_suggests_it_and_another_suggests_nothing() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let glossary = whale_glossary(&app, &user).await;
    let id = translated(&app, &user, json!({"glossaryId": glossary})).await;
    let first = passage(&app, &user, &id, 2, 0).await;
    let text = first["text"].as_str().unwrap();
    assert!(text.contains("ballena"), "{first}");

    let renamed = ok(edit(
        &app,
        &user,
        &id,
        &first,
        &text.replace("ballena", "cachalote"),
    )
    .await)
    .await;
    assert_eq!(
        renamed["termChanges"],
        json!([{"source": "whale", "from": "ballena", "to": "cachalote"}])
    );
    assert_eq!(
        renamed["origin"]["kind"], "edited",
        "the passage as ever: {renamed}"
    );
    assert_eq!(renamed["version"], 1);

    let other = passage(&app, &user, &id, 2, 1).await;
    let kept = ok(edit(
        &app,
        &user,
        &id,
        &other,
        "Es mi manera de espantar la melancolía.",
    )
    .await)
    .await;
    assert_eq!(kept["termChanges"], json!([]));
}

#[tokio::test]
async fn the_preview_lists_every_passage_with_the_term_the_owners_apart_page_by_page() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let glossary = whale_glossary(&app, &user).await;
    let id = translated(&app, &user, json!({"glossaryId": glossary})).await;
    let edited = passage(&app, &user, &id, 2, 2).await;
    let edited_text = format!("{} Fin.", edited["text"].as_str().unwrap());
    let edited = ok(edit(&app, &user, &id, &edited, &edited_text).await).await;

    let whole = ok(preview(&app, &user, &id, rename()).await).await;
    assert_eq!(
        places(&whole["passages"]),
        [(1, 1), (2, 0), (3, 0)],
        "{whole}"
    );
    assert_eq!(places(&whole["edited"]), [(2, 2)], "{whole}");
    assert!(whole["next"].is_null());
    for listed in whole["passages"].as_array().unwrap() {
        let (chapter, index) = place(listed);
        let now = passage(&app, &user, &id, chapter, index).await;
        assert_eq!(listed["text"], now["text"]);
        assert_eq!(listed["version"], 0);
        assert_eq!(
            listed["after"].as_str().unwrap(),
            now["text"]
                .as_str()
                .unwrap()
                .replace("ballena", "cachalote")
        );
    }
    let apart = &whole["edited"][0];
    assert_eq!(apart["text"], edited["text"]);
    assert_eq!(apart["version"], edited["version"]);
    assert_eq!(apart["after"], edited_text.replace("ballena", "cachalote"));

    // One passage a page: the same passages, in order, each page saying where the next starts.
    let mut paged = Vec::new();
    let mut body = rename();
    body["limit"] = json!(1);
    loop {
        let page = ok(preview(&app, &user, &id, body.clone()).await).await;
        paged.extend(places(&page["passages"]));
        paged.extend(places(&page["edited"]));
        if page["next"].is_null() {
            break;
        }
        body["start"] = page["next"].clone();
        assert!(paged.len() < 20, "the pages never end: {page}");
    }
    assert_eq!(paged, [(1, 1), (2, 0), (2, 2), (3, 0)]);
}

#[tokio::test]
async fn applying_changes_the_passages_named_puts_the_term_in_the_glossary_and_the_epub() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let glossary = whale_glossary(&app, &user).await;
    let id = translated(&app, &user, json!({"glossaryId": glossary})).await;
    let edited = passage(&app, &user, &id, 2, 2).await;
    let edited_text = format!("{} Fin.", edited["text"].as_str().unwrap());
    ok(edit(&app, &user, &id, &edited, &edited_text).await).await;
    let before = downloaded_text(&app, &user, &id).await;
    assert!(!before.contains("cachalote"), "{before}");

    let listed = ok(preview(&app, &user, &id, rename()).await).await;
    let model = listed["passages"].as_array().unwrap().clone();
    let done = ok(apply(&app, &user, &id, apply_body(&model)).await).await;
    assert_eq!(places(&done["applied"]), [(1, 1), (2, 0), (3, 0)], "{done}");
    assert_eq!(done["skipped"], json!([]));
    assert_eq!(done["glossary"]["id"], glossary.as_str());
    assert_eq!(done["glossary"]["created"], false);
    for (applied, listed) in done["applied"].as_array().unwrap().iter().zip(&model) {
        assert_eq!(applied["text"], listed["after"]);
        assert_eq!(applied["origin"]["kind"], "edited");
        assert_eq!(applied["version"], 1);
        let now = passage(&app, &user, &id, place(applied).0, place(applied).1).await;
        assert_eq!(&now, applied);
    }
    // The owner's passage was not named: it keeps its text.
    let kept = passage(&app, &user, &id, 2, 2).await;
    assert_eq!(kept["text"], edited_text.as_str());

    let glossary: Value = ok(app
        .get(&format!("/api/glossary/{glossary}"), &user.key)
        .await)
    .await;
    assert_eq!(
        glossary["entries"],
        json!([{"id": glossary["entries"][0]["id"], "source": "whale", "target": "cachalote", "context": null}])
    );

    let after = downloaded_text(&app, &user, &id).await;
    assert_eq!(after.matches("cachalote").count(), 3, "{after}");
    assert_eq!(
        after.matches("ballena").count(),
        1,
        "the owner's passage: {after}"
    );
    assert!(
        after.contains(edited_text.trim_end_matches(" Fin.")),
        "{after}"
    );

    // Nothing left to rename but the owner's passage, which an apply changes when named.
    let again = ok(preview(&app, &user, &id, rename()).await).await;
    assert_eq!(again["passages"], json!([]));
    let owners = again["edited"].as_array().unwrap().clone();
    let done = ok(apply(&app, &user, &id, apply_body(&owners)).await).await;
    assert_eq!(places(&done["applied"]), [(2, 2)]);
    assert_eq!(
        done["applied"][0]["text"],
        edited_text.replace("ballena", "cachalote")
    );
}

#[tokio::test]
async fn a_passage_changed_between_preview_and_apply_is_skipped_never_overwritten() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let glossary = whale_glossary(&app, &user).await;
    let id = translated(&app, &user, json!({"glossaryId": glossary})).await;
    let listed = ok(preview(&app, &user, &id, rename()).await).await;
    let model = listed["passages"].as_array().unwrap().clone();

    let meanwhile = passage(&app, &user, &id, 3, 0).await;
    let owners = "Soñé con la ballena toda la noche.";
    ok(edit(&app, &user, &id, &meanwhile, owners).await).await;

    let done = ok(apply(&app, &user, &id, apply_body(&model)).await).await;
    assert_eq!(places(&done["applied"]), [(1, 1), (2, 0), (2, 2)], "{done}");
    let skipped = &done["skipped"][0];
    assert_eq!(place(skipped), (3, 0));
    assert_eq!(skipped["error"], "version_conflict");
    assert_eq!(skipped["passage"]["text"], owners);
    assert_eq!(skipped["passage"]["version"], 1);
    assert_eq!(passage(&app, &user, &id, 3, 0).await["text"], owners);

    // Applied again with the versions seen now, and once more: the second finds nothing to do.
    let now = passage(&app, &user, &id, 3, 0).await;
    let done = ok(apply(&app, &user, &id, apply_body(&[now])).await).await;
    assert_eq!(
        done["applied"][0]["text"],
        "Soñé con la cachalote toda la noche."
    );
    let stale = ok(apply(&app, &user, &id, apply_body(&model[..1])).await).await;
    assert_eq!(stale["skipped"][0]["error"], "version_conflict");
}

#[tokio::test]
async fn a_book_without_a_glossary_gets_one_that_its_next_run_uses() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = translated(&app, &user, json!({"model": "gpt-4o-mini"})).await;
    assert!(app.book(&user.key, &id).await["glossaryId"].is_null());
    let whale = pseudo("whale", &[]);
    let body = json!({"source": "whale", "from": whale, "to": "cachalote"});
    let listed = ok(preview(&app, &user, &id, body.clone()).await).await;
    assert_eq!(
        places(&listed["passages"]),
        [(1, 1), (2, 0), (2, 2), (3, 0)]
    );

    // Only the first chapter's passage now; the next run renames the others.
    let mut first = body.clone();
    first["passages"] = json!([{"chapter": 1, "index": 1, "version": 0}]);
    let done = ok(apply(&app, &user, &id, first).await).await;
    assert_eq!(done["glossary"]["created"], true);
    let glossary_id = done["glossary"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        app.book(&user.key, &id).await["glossaryId"],
        glossary_id.as_str()
    );
    let glossary = ok(app
        .get(&format!("/api/glossary/{glossary_id}"), &user.key)
        .await)
    .await;
    assert_eq!(glossary["entries"][0]["source"], "whale");
    assert_eq!(glossary["entries"][0]["target"], "cachalote");

    translate(&app, &user, &id, json!({"model": "claude-3-haiku"})).await;
    let book = app.book(&user.key, &id).await;
    assert_eq!(book["glossaryId"], glossary_id.as_str());
    let last = passage(&app, &user, &id, 3, 0).await;
    assert_eq!(last["origin"]["kind"], "model");
    assert!(
        last["text"].as_str().unwrap().contains("cachalote"),
        "{last}"
    );
}

#[tokio::test]
async fn bad_term_requests_are_400_and_another_users_book_is_404() {
    let app = TestApp::new().start().await;
    let owner = app.user().await;
    let other = app.user().await;
    let glossary = whale_glossary(&app, &owner).await;
    let id = translated(&app, &owner, json!({"glossaryId": glossary})).await;
    let one = json!([{"chapter": 2, "index": 0, "version": 0}]);

    for bad in [
        json!({"source": "", "from": "ballena", "to": "cachalote"}),
        json!({"source": "whale", "from": "ballena", "to": "ballena"}),
        json!({"source": "whale", "from": "ballena"}),
        json!({"source": "whale", "from": "ballena", "to": "x", "limit": 0}),
        json!({"source": "whale", "from": "ballena", "to": "x", "limit": 201}),
        json!({"source": "whale", "from": "ballena", "to": "x", "start": {"chapter": 0, "index": 0}}),
        json!({"source": "whale", "from": "ballena", "to": "x", "color": "red"}),
    ] {
        assert_error(preview(&app, &owner, &id, bad).await, 400, "bad_request").await;
    }
    let twice =
        json!([{"chapter": 2, "index": 0, "version": 0}, {"chapter": 2, "index": 0, "version": 0}]);
    for passages in [json!([]), twice, json!([{"chapter": 2, "index": 0}])] {
        let mut body = rename();
        body["passages"] = passages;
        assert_error(apply(&app, &owner, &id, body).await, 400, "bad_request").await;
    }
    let mut body = rename();
    body["passages"] = one.clone();
    let nowhere = json!([{"chapter": 9, "index": 0, "version": 0}, {"chapter": 2, "index": 99, "version": 0}]);
    let mut missing = rename();
    missing["passages"] = nowhere;
    let done = ok(apply(&app, &owner, &id, missing).await).await;
    let errors: Vec<&Value> = done["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["error"])
        .collect();
    assert_eq!(errors, [&json!("not_found"), &json!("not_found")], "{done}");
    // Nothing took the rendering: nothing was written, the glossary neither.
    assert_eq!(done["applied"], json!([]));
    assert_eq!(done["glossary"], Value::Null, "{done}");

    // A rendering the book cannot hold is refused whole, naming the character.
    for (to, code) in [
        ("cacha\u{1}lote", "U+0001"),
        ("\u{202E}etolahcac", "U+202E"),
    ] {
        let mut hostile = rename();
        hostile["to"] = json!(to);
        let body = assert_error(
            preview(&app, &owner, &id, hostile.clone()).await,
            400,
            "invalid_character",
        )
        .await;
        assert!(body["message"].as_str().unwrap().contains(code), "{body}");
        hostile["passages"] = one.clone();
        assert_error(
            apply(&app, &owner, &id, hostile).await,
            400,
            "invalid_character",
        )
        .await;
    }

    assert_error(preview(&app, &other, &id, rename()).await, 404, "not_found").await;
    assert_error(
        apply(&app, &other, &id, body.clone()).await,
        404,
        "not_found",
    )
    .await;
    let untouched = passage(&app, &owner, &id, 2, 0).await;
    assert_eq!(untouched["version"], 0);
    let glossary = ok(app
        .get(&format!("/api/glossary/{glossary}"), &owner.key)
        .await)
    .await;
    assert_eq!(
        glossary["entries"][0]["target"], "ballena",
        "no apply above changed a passage, so none wrote the glossary"
    );
}
