//! Cost control: the quote before a run, and the run's cost cap (`maxCost`).

use std::sync::Arc;
use std::time::Duration;

use booktr_core::jobs::runner;
use booktr_outbound::EnvModels;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, corpus, TestApp};
use crate::stand_ins::openai_stand_in;

/// The service without workers, its OpenAI models answered by a local stand-in in OpenAI's
/// wire format: a priced provider, which is what quotes and cost caps are about (the offline
/// engine is free).
async fn priced_app() -> TestApp {
    let (url, _calls) = openai_stand_in(Duration::ZERO).await;
    let models = EnvModels::from_vars(vec![
        ("OPENAI_API_KEY".into(), "sk-stand-in".into()),
        ("OPENAI_BASE_URL".into(), url),
    ]);
    TestApp::new().with_models(Arc::new(models)).start().await
}

async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

async fn get_json(app: &TestApp, path: &str, key: &str) -> Value {
    let response = app.get(path, key).await;
    assert_eq!(response.status(), 200, "{path}");
    response.json().await.unwrap()
}

/// The anthology from the corpus, extracted; returns its id.
async fn extracted_anthology(app: &TestApp, key: &str) -> String {
    let id = app
        .upload_ok(key, "anthology.epub", corpus("childrens-literature.epub"))
        .await;
    drain(app).await;
    id
}

/// `actual` within 15% of `quoted`.
fn within_15_percent(what: &str, quoted: f64, actual: f64) {
    let off = (actual - quoted).abs() / actual;
    assert!(
        off <= 0.15,
        "{what}: quoted {quoted}, used {actual} ({:.1}% off)",
        off * 100.0
    );
}

#[tokio::test]
async fn a_quote_is_within_15_percent_of_what_the_run_then_uses() {
    let app = priced_app().await;
    let user = app.user().await;
    let id = extracted_anthology(&app, &user.key).await;

    let quote = get_json(
        &app,
        &format!("/api/translate/quote?bookId={id}&model=gpt-4o-mini&targetLang=fr"),
        &user.key,
    )
    .await;
    assert_eq!(quote["currency"], "USD");
    assert_eq!(quote["reusedChapters"], 0);
    assert!(quote["estimatedSeconds"].as_u64().unwrap() > 0, "{quote}");
    // Nothing was spent or changed.
    let book = get_json(&app, &format!("/api/books/{id}"), &user.key).await;
    assert_eq!(book["status"], "EXTRACTED");

    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &user.key,
            json!({"bookId": id, "model": "gpt-4o-mini", "targetLang": "fr"}),
        )
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let status = get_json(
        &app,
        &format!("/api/translate/status?bookId={id}"),
        &user.key,
    )
    .await;
    assert_eq!(status["status"], "COMPLETED", "{status}");

    // What the run used, pass by pass, as the model reported it.
    let mut used = [0f64; 2];
    for chapter in status["chapters"].as_array().unwrap() {
        for pass in ["translate", "review", "polish"] {
            used[0] += chapter["quality"][pass]["inputTokens"].as_f64().unwrap();
            used[1] += chapter["quality"][pass]["outputTokens"].as_f64().unwrap();
        }
    }
    used[0] += status["terms"]["usage"]["inputTokens"]
        .as_f64()
        .unwrap_or(0.0);
    used[1] += status["terms"]["usage"]["outputTokens"]
        .as_f64()
        .unwrap_or(0.0);
    let total = &quote["total"];
    within_15_percent(
        "input tokens",
        total["inputTokens"].as_f64().unwrap(),
        used[0],
    );
    within_15_percent(
        "output tokens",
        total["outputTokens"].as_f64().unwrap(),
        used[1],
    );
    within_15_percent(
        "cost",
        quote["estimatedCost"].as_f64().unwrap(),
        status["cost"]["spent"].as_f64().unwrap(),
    );

    // Translated with the same choices, nothing is left to pay for.
    let again = get_json(
        &app,
        &format!("/api/translate/quote?bookId={id}&model=gpt-4o-mini&targetLang=fr"),
        &user.key,
    )
    .await;
    assert_eq!(again["chapters"], 0, "{again}");
    assert_eq!(again["total"]["requests"], 0, "{again}");
}

#[tokio::test]
async fn a_run_capped_below_its_quote_pauses_before_going_past_the_cap() {
    let app = priced_app().await;
    let user = app.user().await;
    let id = extracted_anthology(&app, &user.key).await;
    let quote = get_json(
        &app,
        &format!("/api/translate/quote?bookId={id}&model=gpt-4o-mini"),
        &user.key,
    )
    .await;
    let estimated = quote["estimatedCost"].as_f64().unwrap();
    let cap = estimated / 2.0;

    let body = json!({"bookId": id, "model": "gpt-4o-mini", "maxCost": cap});
    let started = app
        .send_json(Method::POST, "/api/translate", &user.key, body)
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let paused = get_json(
        &app,
        &format!("/api/translate/status?bookId={id}"),
        &user.key,
    )
    .await;
    assert_eq!(paused["status"], "PAUSED", "{paused}");
    assert!(
        paused["pauseReason"].as_str().unwrap().contains("cost cap"),
        "{paused}"
    );
    let spent = paused["cost"]["spent"].as_f64().unwrap();
    assert!(
        spent > 0.0 && spent <= cap,
        "spent {spent} of a cap of {cap}"
    );
    assert_eq!(paused["cost"]["maxCost"].as_f64(), Some(cap));
    let completed = paused["chaptersCompleted"].as_u64().unwrap();
    assert!(
        completed < paused["chaptersTotal"].as_u64().unwrap(),
        "{paused}"
    );

    // A resume with a higher cap goes on from where the run paused, and finishes.
    let resumed = app
        .send_json(
            Method::POST,
            "/api/translate/resume",
            &user.key,
            json!({"bookId": id, "maxCost": estimated * 2.0}),
        )
        .await;
    assert_eq!(resumed.status(), 200);
    drain(&app).await;
    let done = get_json(
        &app,
        &format!("/api/translate/status?bookId={id}"),
        &user.key,
    )
    .await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["pauseReason"], Value::Null);
    let spent = done["cost"]["spent"].as_f64().unwrap();
    assert!(spent <= estimated * 2.0, "{done}");
    within_15_percent("cost", estimated, spent);
}

#[tokio::test]
async fn quotes_and_caps_refuse_what_they_cannot_use() {
    let app = priced_app().await;
    let user = app.user().await;
    let other = app.user().await;
    let id = extracted_anthology(&app, &user.key).await;
    assert_error(
        app.get("/api/translate/quote", &user.key).await,
        400,
        "bad_request",
    )
    .await;
    assert_error(
        app.get(&format!("/api/translate/quote?bookId={id}"), &other.key)
            .await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        app.get(
            &format!("/api/translate/quote?bookId={id}&model=gpt-9"),
            &user.key,
        )
        .await,
        400,
        "bad_request",
    )
    .await;
    for max_cost in [json!(0), json!(-1), json!(1e9), json!("ten")] {
        let response = app
            .send_json(
                Method::POST,
                "/api/translate",
                &user.key,
                json!({"bookId": id, "maxCost": max_cost}),
            )
            .await;
        assert_eq!(response.status(), 400, "maxCost {max_cost}");
    }
    let book = get_json(&app, &format!("/api/books/{id}"), &user.key).await;
    assert_eq!(book["status"], "EXTRACTED");
}

#[tokio::test]
async fn an_offline_run_says_so_quotes_nothing_and_costs_nothing() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let id = extracted_anthology(&app, &user.key).await;
    let quote = get_json(
        &app,
        &format!("/api/translate/quote?bookId={id}"),
        &user.key,
    )
    .await;
    assert_eq!(quote["model"], "gpt-4o-mini");
    assert_eq!(quote["engine"], "offline-pseudo", "{quote}");
    assert_eq!(quote["estimatedCost"].as_f64(), Some(0.0));
    assert!(quote["total"]["outputTokens"].as_u64().unwrap() > 0);

    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &user.key,
            json!({"bookId": id}),
        )
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let status = get_json(
        &app,
        &format!("/api/translate/status?bookId={id}"),
        &user.key,
    )
    .await;
    assert_eq!(status["status"], "COMPLETED", "{status}");
    assert_eq!(status["engine"], "offline-pseudo");
    assert_eq!(status["cost"]["spent"].as_f64(), Some(0.0));
    let book = get_json(&app, &format!("/api/books/{id}"), &user.key).await;
    assert_eq!(book["engine"], "offline-pseudo", "{book}");
}
