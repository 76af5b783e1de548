//! The fallback model (`fallbackModel` on a start): what the first model leaves flagged goes to
//! a second one, whose better text is taken, counted in the status, priced and capped.

use std::sync::Arc;

use async_trait::async_trait;
use booktr_core::jobs::runner;
use booktr_core::ports::{KeyCheckError, Models};
use booktr_translate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::providers::Family;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};
use crate::stand_ins::{is_term_list, StandIn};

/// Answers like the offline engine. The first model refuses every chapter request that holds
/// `refused` and answers as the free `stand-in`; any other is the fallback, under the name of
/// the model asked for (priced as that model).
#[derive(Clone)]
struct TwoModels {
    first: &'static str,
    refused: &'static str,
    /// What the fallback was asked (prompts' user parts).
    fallback_calls: StandIn,
}

struct Named {
    name: String,
    refuses: Option<&'static str>,
    answers: StandIn,
}

#[async_trait]
impl ChatModel for Named {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = self.answers.complete(request.clone()).await?;
        if self
            .refuses
            .is_some_and(|marker| !is_term_list(&request.user) && request.user.contains(marker))
        {
            response.text = "I'm sorry, but I can't help with translating this text.".into();
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

#[async_trait]
impl Models for TwoModels {
    fn model(
        &self,
        model: &str,
        _user_key: Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        let first = model == self.first;
        Ok(Arc::new(Named {
            name: if first { "stand-in" } else { model }.to_string(),
            refuses: first.then_some(self.refused),
            answers: if first {
                StandIn::default()
            } else {
                self.fallback_calls.clone()
            },
        }))
    }

    async fn check_key(&self, _family: Family, _key: &str) -> Result<(), KeyCheckError> {
        Ok(())
    }
}

async fn app_with(models: TwoModels) -> TestApp {
    TestApp::new().with_models(Arc::new(models)).start().await
}

fn models() -> TwoModels {
    TwoModels {
        first: "gpt-4o-mini",
        refused: "carpet-bag",
        fallback_calls: StandIn::default(),
    }
}

async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

async fn extracted(app: &TestApp, key: &str) -> String {
    let id = app
        .upload_ok(key, "voyage.txt", crate::helpers::sample_txt())
        .await;
    drain(app).await;
    id
}

async fn get_json(app: &TestApp, path: &str, key: &str) -> Value {
    let response = app.get(path, key).await;
    assert_eq!(response.status(), 200, "{path}");
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_fallback_model_that_is_not_one_of_the_six_or_is_the_model_itself_is_400() {
    let app = app_with(models()).await;
    let user = app.user().await;
    let id = extracted(&app, &user.key).await;
    for (fallback, says) in [
        (
            json!("gpt-5-turbo"),
            "fallbackModel: 'gpt-5-turbo' is not one of",
        ),
        (json!("gpt-4o-mini"), "is the run's model"),
    ] {
        let body = json!({"bookId": id, "model": "gpt-4o-mini", "fallbackModel": fallback});
        let response = app
            .send_json(Method::POST, "/api/translate", &user.key, body)
            .await;
        let error = assert_error(response, 400, "bad_request").await;
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
    }
    let quote = app
        .get(
            &format!("/api/translate/quote?bookId={id}&fallbackModel=gpt-5-turbo"),
            &user.key,
        )
        .await;
    assert_error(quote, 400, "bad_request").await;
    let book = get_json(&app, &format!("/api/books/{id}"), &user.key).await;
    assert_eq!(book["status"], "EXTRACTED", "nothing started: {book}");
}

#[tokio::test]
async fn the_blocks_the_first_model_refuses_are_translated_by_the_fallback_and_counted() {
    let models = models();
    let fallback = models.fallback_calls.clone();
    let app = app_with(models).await;
    let user = app.user().await;
    let id = extracted(&app, &user.key).await;

    let quote = get_json(
        &app,
        &format!("/api/translate/quote?bookId={id}&model=gpt-4o-mini&fallbackModel=gpt-4o"),
        &user.key,
    )
    .await;
    assert_eq!(quote["fallback"]["model"], "gpt-4o", "{quote}");
    let without = get_json(
        &app,
        &format!("/api/translate/quote?bookId={id}&model=gpt-4o-mini"),
        &user.key,
    )
    .await;
    assert_eq!(without["fallback"], Value::Null, "{without}");
    let share = &quote["fallback"]["usage"];
    assert_eq!(
        quote["total"]["inputTokens"].as_u64(),
        Some(
            without["total"]["inputTokens"].as_u64().unwrap()
                + share["inputTokens"].as_u64().unwrap()
        ),
        "{quote}"
    );

    let body = json!({"bookId": id, "model": "gpt-4o-mini", "fallbackModel": "gpt-4o"});
    let started = app
        .send_json(Method::POST, "/api/translate", &user.key, body)
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let book = get_json(&app, &format!("/api/books/{id}"), &user.key).await;
    assert_eq!(book["status"], "COMPLETED", "{book}");
    assert_eq!(book["fallbackModel"], "gpt-4o", "{book}");
    let status = get_json(
        &app,
        &format!("/api/translate/status?bookId={id}"),
        &user.key,
    )
    .await;
    let summary = &status["quality"];
    assert_eq!(summary["flaggedBlocks"], 0, "{summary}");
    assert_eq!(summary["fallback"]["model"], "gpt-4o", "{summary}");
    assert_eq!(summary["fallback"]["sent"], 1, "{summary}");
    assert_eq!(summary["fallback"]["taken"], 1, "{summary}");
    assert!(
        fallback.calls.translate_calls_with("carpet-bag") >= 1,
        "the fallback was asked for the refused block"
    );
    assert!(
        fallback
            .calls
            .all()
            .iter()
            .all(|call| !call.contains("Ishmael")),
        "only the refused block went to the fallback"
    );
}

#[tokio::test]
async fn a_cost_cap_stops_the_fallback_like_any_pass() {
    // The first model is free; the fallback is priced as gpt-4o.
    let models = models();
    let fallback = models.fallback_calls.clone();
    let app = app_with(models).await;
    let user = app.user().await;
    let id = extracted(&app, &user.key).await;
    // Room for the first model's passes, none for the fallback's.
    let cap = 0.000001;
    let body = json!({"bookId": id, "model": "gpt-4o-mini", "fallbackModel": "gpt-4o",
                      "maxCost": cap});
    let started = app
        .send_json(Method::POST, "/api/translate", &user.key, body)
        .await;
    assert_eq!(started.status(), 200);
    drain(&app).await;
    let status = get_json(
        &app,
        &format!("/api/translate/status?bookId={id}"),
        &user.key,
    )
    .await;
    assert_eq!(status["status"], "PAUSED", "{status}");
    assert!(
        status["pauseReason"].as_str().unwrap().contains("cost cap"),
        "{status}"
    );
    assert!(
        fallback.calls.all().is_empty(),
        "the fallback was never asked"
    );
    let spent = status["cost"]["spent"].as_f64().unwrap();
    assert_eq!(
        spent, 0.0,
        "the first model is free and the fallback never ran"
    );
    // The chapter whose block needs the fallback waits; the others are done.
    let carpet_bag = status["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["title"]
                .as_str()
                .is_some_and(|t| t.contains("Carpet-Bag"))
        })
        .unwrap_or_else(|| panic!("{status}"));
    assert_ne!(carpet_bag["status"], "COMPLETED", "{carpet_bag}");
    assert_eq!(carpet_bag["passesDone"], 3, "{carpet_bag}");
}

/// The book page offers the fallback model (among the plan's): its quote shows the fallback's
/// share, and the start form carries it into the run, which sends it the block the first model refused.
#[tokio::test]
async fn the_book_pages_quote_and_start_name_a_fallback_model() {
    use crate::web_app::{location, Browser};
    let models = models();
    let fallback = models.fallback_calls.clone();
    let app = app_with(models).await;
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
    drain(&app).await;
    let html = owner.html(&page).await;
    assert!(
        html.contains("<label for=\"fallbackModel\">Fallback model</label>"),
        "{html}"
    );
    let quoted = owner
        .html(&format!(
            "{page}?model=gpt-4o-mini&fallbackModel=claude-3-haiku"
        ))
        .await;
    assert!(
        quoted.contains("<dt>Fallback model</dt><dd>claude-3-haiku: "),
        "{quoted}"
    );
    assert!(
        quoted.contains("<input type=\"hidden\" name=\"fallbackModel\" value=\"claude-3-haiku\">"),
        "{quoted}"
    );
    // The model itself as its own fallback is refused where the quote would be, in words.
    let same = owner
        .html(&format!(
            "{page}?model=gpt-4o-mini&fallbackModel=gpt-4o-mini"
        ))
        .await;
    assert!(same.contains("class=\"alert\" role=\"alert\""), "{same}");
    assert!(!same.contains("name=\"fallbackModel\" value="), "{same}");

    let started = owner
        .post_form(
            &format!("{page}/start"),
            &[
                ("csrf", &token),
                ("model", "gpt-4o-mini"),
                ("fallbackModel", "claude-3-haiku"),
            ],
        )
        .await;
    assert_eq!(started.status(), 303);
    drain(&app).await;
    assert!(
        fallback.calls.translate_calls_with("carpet-bag") >= 1,
        "the fallback was asked for the refused block"
    );
}
