//! The book's term list as its owner sees and changes it (`GET`/`PUT /api/translate/terms`),
//! and a run that stops once the list is ready (`pauseAtTerms`) for the owner to check it.

use std::sync::Arc;

use booktr_core::jobs::runner;
use booktr_translate::offline::pseudo;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};
use crate::stand_ins::StandIn;

async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

async fn terms(app: &TestApp, key: &str, id: &str) -> Value {
    let response = app
        .get(&format!("/api/translate/terms?bookId={id}"), key)
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn change(app: &TestApp, key: &str, id: &str, body: Value) -> reqwest::Response {
    app.send_json(
        Method::PUT,
        &format!("/api/translate/terms?bookId={id}"),
        key,
        body,
    )
    .await
}

fn entry<'a>(list: &'a Value, source: &str) -> &'a Value {
    list["terms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["source"] == source)
        .unwrap_or_else(|| panic!("{source} is not listed: {list}"))
}

/// Four chapters in which "Queequeg" and "Ishmael" recur, extracted, with its owner's key.
async fn book_with_names(app: &TestApp) -> (String, String) {
    let user = app.user().await;
    let mut text = String::from("The Term Book\n\n");
    for n in 1..=4 {
        text.push_str(&format!(
            "Chapter {n}\n\nIn chapter {n} the harpooneer Queequeg spoke, and then Ishmael \
             answered him.\n\nLater still Queequeg slept while Ishmael kept watch.\n\n"
        ));
    }
    let id = app
        .upload_ok(&user.key, "names.txt", text.into_bytes())
        .await;
    drain(app).await;
    (user.key, id)
}

/// The run stops with its list made and no chapter translated; the owner renames one term and
/// binds another to itself; the resumed chapters use both.
#[tokio::test]
async fn a_run_started_to_pause_at_its_terms_waits_for_the_owners_list_and_resumes_with_it() {
    let model = StandIn::default();
    let calls = model.calls.clone();
    let app = TestApp::new().with_models(Arc::new(model)).start().await;
    let (key, id) = book_with_names(&app).await;

    let before = terms(&app, &key, &id).await;
    assert_eq!(before, json!({"ready": false, "terms": []}));
    let not_yet = change(
        &app,
        &key,
        &id,
        json!({"terms": [{"source": "Queequeg", "target": "Kwikweg"}]}),
    );
    let body = assert_error(not_yet.await, 400, "bad_request").await;
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("no term list yet"),
        "{body}"
    );

    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &key,
            json!({"bookId": id, "pauseAtTerms": true}),
        )
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let paused: Value = app
        .get(&format!("/api/translate/status?bookId={id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(paused["status"], "PAUSED", "{paused}");
    assert_eq!(paused["chaptersCompleted"], 0, "{paused}");
    assert_eq!(paused["terms"]["status"], "COMPLETED", "{paused}");
    let reason = paused["pauseReason"].as_str().unwrap();
    assert!(reason.contains("term list ready for review"), "{paused}");
    assert_eq!(calls.translate_calls_with("harpooneer"), 0);

    let listed = terms(&app, &key, &id).await;
    assert_eq!(listed["ready"], true, "{listed}");
    let queequeg = entry(&listed, "Queequeg");
    assert_eq!(queequeg["origin"], "model", "{listed}");
    assert_eq!(queequeg["target"], pseudo("Queequeg", &[]), "{listed}");
    assert_eq!(queequeg["occurrences"], 8, "{listed}");

    let changed = change(
        &app,
        &key,
        &id,
        json!({"terms": [
            {"source": "queequeg", "target": " Kwikweg "},
            {"source": "Ishmael", "target": "Ishmael"}
        ]}),
    )
    .await;
    assert_eq!(changed.status(), 200);
    let changed: Value = changed.json().await.unwrap();
    let queequeg = entry(&changed, "Queequeg");
    assert_eq!(
        (&queequeg["target"], &queequeg["origin"]),
        (&json!("Kwikweg"), &json!("owner")),
        "{changed}"
    );
    assert_eq!(entry(&changed, "Ishmael")["origin"], "owner", "{changed}");
    assert_eq!(terms(&app, &key, &id).await, changed);

    let resumed = app
        .send_json(
            Method::POST,
            "/api/translate/resume",
            &key,
            json!({"bookId": id}),
        )
        .await;
    assert_eq!(resumed.status(), 200);
    drain(&app).await;
    let done = app.book(&key, &id).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    // The term list was made once and kept as the owner left it.
    assert_eq!(
        calls
            .all()
            .iter()
            .filter(|u| crate::stand_ins::is_term_list(u))
            .count(),
        1
    );
    let link: Value = app
        .get(&format!("/api/download/{id}?format=epub"), &key)
        .await
        .json()
        .await
        .unwrap();
    let epub = reqwest::get(link["url"].as_str().unwrap())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let translated = booktr_formats::epub::extract(&epub).unwrap();
    let harpooneer = pseudo("harpooneer", &[]);
    let chapters: Vec<String> = translated
        .chapters
        .iter()
        .map(|c| c.plain_text())
        .filter(|t| t.contains(&harpooneer))
        .collect();
    assert_eq!(chapters.len(), 4);
    for text in chapters {
        assert_eq!(text.matches("Kwikweg").count(), 2, "{text}");
        assert_eq!(text.matches("Ishmael").count(), 2, "{text}");
        assert!(!text.contains(&pseudo("Queequeg", &[])), "{text}");
    }
}

#[tokio::test]
async fn a_run_started_without_the_pause_goes_on_and_its_list_can_still_be_read_and_changed() {
    let app = TestApp::new().start().await;
    let (key, id) = book_with_names(&app).await;
    let started = app
        .send_json(Method::POST, "/api/translate", &key, json!({"bookId": id}))
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    assert_eq!(app.book(&key, &id).await["status"], "COMPLETED");
    let listed = terms(&app, &key, &id).await;
    assert_eq!(entry(&listed, "Ishmael")["origin"], "model", "{listed}");
    let removed = change(&app, &key, &id, json!({"remove": ["Ishmael", "Nobody"]})).await;
    assert_eq!(removed.status(), 200);
    let removed: Value = removed.json().await.unwrap();
    assert!(
        removed["terms"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["source"] != "Ishmael"),
        "{removed}"
    );
}

#[tokio::test]
async fn term_list_changes_are_checked_and_another_users_book_is_not_found() {
    let app = TestApp::new().start().await;
    let (key, id) = book_with_names(&app).await;
    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &key,
            json!({"bookId": id, "pauseAtTerms": true}),
        )
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    assert_eq!(app.book(&key, &id).await["status"], "PAUSED");

    let refused = [
        (
            json!({"terms": [{"source": "", "target": "x"}]}),
            "terms[0].source",
        ),
        (
            json!({"terms": [{"source": "Queequeg", "target": "Kw\u{0}ikweg"}]}),
            "U+0000",
        ),
        (
            json!({"terms": [{"source": "Queequeg", "target": "Kw\u{FFFF}"}]}),
            "U+FFFF",
        ),
        (
            json!({"terms": [{"source": "Queequeg", "target": "K".repeat(201)}]}),
            "1 to 200",
        ),
        (
            json!({"terms": [{"source": "Queequeg", "target": "Kwikweg"}], "remove": ["QUEEQUEG"]}),
            "more than once",
        ),
        (
            json!({"remove": (0..301).map(|i| format!("T{i}")).collect::<Vec<_>>()}),
            "at most 300",
        ),
        (json!({"terms": [{"source": "Queequeg"}]}), "target"),
        (json!({"rename": []}), "rename"),
    ];
    for (body, says) in refused {
        let answer = assert_error(
            change(&app, &key, &id, body.clone()).await,
            400,
            "bad_request",
        )
        .await;
        assert!(
            answer["message"].as_str().unwrap().contains(says),
            "{body}: {answer}"
        );
    }
    let no_book = app
        .send_json(Method::PUT, "/api/translate/terms", &key, json!({}))
        .await;
    assert_error(no_book, 400, "bad_request").await;
    let broken = app
        .request(
            Method::PUT,
            &format!("/api/translate/terms?bookId={id}"),
            &key,
        )
        .header("content-type", "application/json")
        .body("{\"terms\": [")
        .send()
        .await
        .unwrap();
    assert_error(broken, 400, "bad_request").await;
    // Nothing refused was kept.
    let listed = terms(&app, &key, &id).await;
    assert_eq!(entry(&listed, "Queequeg")["origin"], "model", "{listed}");

    let other = app.user().await;
    assert_error(
        app.get(&format!("/api/translate/terms?bookId={id}"), &other.key)
            .await,
        404,
        "not_found",
    )
    .await;
    let change_of_other = change(
        &app,
        &other.key,
        &id,
        json!({"terms": [{"source": "Queequeg", "target": "Kwikweg"}]}),
    );
    assert_error(change_of_other.await, 404, "not_found").await;
    assert_eq!(
        entry(&terms(&app, &key, &id).await, "Queequeg")["origin"],
        "model"
    );
}

/// The book page's start form has the checkbox, and a start with it ticked pauses at the list.
#[tokio::test]
async fn the_book_pages_start_form_can_stop_at_the_term_list() {
    use crate::web_app::{location, Browser};
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(
            &token,
            "voyage.txt",
            crate::helpers::sample_txt(),
            "The Voyage",
        )
        .await;
    let page = location(&uploaded);
    let page = page.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let html = owner.html(&page).await;
    assert!(html.contains("name=\"pauseAtTerms\""), "{html}");
    assert!(html.contains("Stop when the term list is ready, so I can check it"));
    let started = owner
        .post_form(
            &format!("{page}/start"),
            &[("csrf", &token), ("pauseAtTerms", "yes")],
        )
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "PAUSED").await;
}
