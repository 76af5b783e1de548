//! A passage or a chapter translated again with the owner's instruction, as a proposal
//! accepted or discarded; the owner's passages left alone unless asked; a passage changed since
//! the proposal refused; the words charged to the month's quota; a flagged passage kept as it
//! is.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use booktr_core::job::Job;
use booktr_core::jobs::{runner, Outcome};
use booktr_core::ports::{KeyCheckError, Models};
use booktr_translate::misbehaving::{Fault, Misbehaving};
use booktr_translate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use booktr_translate::offline::{pseudo, OfflineEngine};
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

/// What the stand-in's translate pass adds to every block it is told an instruction for.
const FORMAL: &str = " ústéd";

/// Answers like the offline engine, and records every request (system and user parts). Told
/// an owner's instruction, its translate pass ends every block with [`FORMAL`]: a model that
/// follows it.
#[derive(Clone, Default)]
struct Instructed {
    calls: Arc<Mutex<Vec<ChatRequest>>>,
    /// Refuses (for good) every request that carries an instruction.
    refusing: bool,
}

impl Instructed {
    /// The user parts of the requests of task `task` (`translate`, `review`, `polish`) that
    /// carry an instruction.
    fn instructed(&self, task: &str) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.user.starts_with(&format!("TASK: {task}\n")))
            .filter(|r| r.user.contains("\nINSTRUCTION:\n"))
            .map(|r| r.user.clone())
            .collect()
    }
}

#[async_trait]
impl ChatModel for Instructed {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        self.calls.lock().unwrap().push(request.clone());
        if self.refusing && request.user.contains("\nINSTRUCTION:\n") {
            return Err(ChatError::Fatal(
                "the stand-in takes no instructions".into(),
            ));
        }
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: translate\n")
            && request.user.contains("\nINSTRUCTION:\n")
        {
            response.text = response
                .text
                .lines()
                .map(|line| match line.starts_with("[[") {
                    true => format!("{line}{FORMAL}\n"),
                    false => format!("{line}\n"),
                })
                .collect();
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "instructed-stand-in"
    }
}

#[async_trait]
impl Models for Instructed {
    fn model(&self, _: &str, _: Option<String>) -> Result<Arc<dyn ChatModel>, ChatError> {
        Ok(Arc::new(self.clone()))
    }

    async fn check_key(&self, _: Family, _: &str) -> Result<(), KeyCheckError> {
        Ok(())
    }
}

/// A small plain-text book: a preface, a first chapter of three paragraphs, and a second.
fn book() -> Vec<u8> {
    "The Voyage\n\nA preface of seven words stands here.\n\n\
     CHAPTER I. Loomings\n\nCall me Ishmael. Some years ago I went to sea.\n\n\
     It is a way I have of driving off the spleen.\n\n\
     Whenever I find myself growing grim about the mouth, I go to sea.\n\n\
     CHAPTER II. The Carpet-Bag\n\nI stuffed a shirt or two into my old carpet-bag.\n"
        .as_bytes()
        .to_vec()
}

/// The [`book`] uploaded and translated; returns its id.
async fn translated(app: &TestApp, user: &TestUser) -> String {
    let id = app.upload_ok(&user.key, "voyage.txt", book()).await;
    drain(app).await;
    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &user.key,
            json!({"bookId": id}),
        )
        .await;
    assert_eq!(started.status(), 200, "{}", started.text().await.unwrap());
    drain(app).await;
    assert_eq!(app.book(&user.key, &id).await["status"], "COMPLETED");
    id
}

async fn ok(response: reqwest::Response, status: u16) -> Value {
    let got = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(got, status, "{body}");
    body
}

async fn get(app: &TestApp, user: &TestUser, path: &str) -> Value {
    ok(app.get(path, &user.key).await, 200).await
}

async fn post(app: &TestApp, user: &TestUser, path: &str, body: Value) -> reqwest::Response {
    app.send_json(Method::POST, path, &user.key, body).await
}

/// Chapter 2 ("CHAPTER I. Loomings") as its passages are now.
async fn chapter(app: &TestApp, user: &TestUser, id: &str) -> Vec<Value> {
    let page = get(app, user, &format!("/api/books/{id}/chapters/2/passages")).await;
    page["passages"].as_array().unwrap().clone()
}

/// The passage of chapter 2 that holds `words` of its source.
async fn passage_with(app: &TestApp, user: &TestUser, id: &str, words: &str) -> Value {
    chapter(app, user, id)
        .await
        .into_iter()
        .find(|p| p["source"].as_str().unwrap().contains(words))
        .unwrap_or_else(|| panic!("no passage holds {words:?}"))
}

fn passage_path(id: &str, passage: &Value) -> String {
    format!(
        "/api/books/{id}/chapters/{}/passages/{}",
        passage["chapter"], passage["index"]
    )
}

/// Asks for a re-translation at `path` and runs its job; returns the proposal then.
async fn proposed(app: &TestApp, user: &TestUser, id: &str, path: &str, body: Value) -> Value {
    let asked = ok(post(app, user, path, body).await, 202).await;
    assert_eq!(asked["status"], "pending", "{asked}");
    assert_eq!(asked["passages"], json!([]));
    drain(app).await;
    let proposal = get(
        app,
        user,
        &format!(
            "/api/books/{id}/proposals/{}",
            asked["id"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(proposal["status"], "ready", "{proposal}");
    proposal
}

fn proposal_path(id: &str, proposal: &Value, what: &str) -> String {
    format!(
        "/api/books/{id}/proposals/{}/{what}",
        proposal["id"].as_str().unwrap()
    )
}

async fn words_used(app: &TestApp, user: &TestUser) -> u64 {
    get(app, user, "/api/usage").await["words"]["used"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_passage_translated_again_with_an_instruction_is_a_proposal_whose_every_pass_was_told() {
    let model = Instructed::default();
    let app = TestApp::new()
        .with_models(Arc::new(model.clone()))
        .start()
        .await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let before = passage_with(&app, &user, &id, "Ishmael").await;
    let path = format!("{}/retranslate", passage_path(&id, &before));
    let instruction = "use 'usted'";

    let proposal = proposed(
        &app,
        &user,
        &id,
        &path,
        json!({"instruction": instruction, "model": "claude-3-haiku"}),
    )
    .await;
    for task in ["translate", "review", "polish"] {
        let told = model.instructed(task);
        assert!(
            !told.is_empty(),
            "no {task} request carried the instruction"
        );
        assert!(
            told.iter()
                .all(|u| u.contains("INSTRUCTION:\n\"use 'usted'\"\n")),
            "{told:?}"
        );
    }
    assert_eq!(
        (
            proposal["instruction"].as_str(),
            proposal["model"].as_str(),
            proposal["index"].as_u64(),
            proposal["passageCount"].as_u64()
        ),
        (
            Some(instruction),
            Some("claude-3-haiku"),
            before["index"].as_u64(),
            Some(1)
        )
    );
    assert_eq!(proposal["engine"], "instructed-stand-in");
    assert!(
        proposal["usage"]["requests"].as_u64().unwrap() >= 3,
        "{proposal}"
    );
    let passage = &proposal["passages"][0];
    let source = before["source"].as_str().unwrap();
    assert_eq!(passage["current"], before["text"]);
    assert_eq!(
        passage["proposed"].as_str().unwrap(),
        format!("{}{FORMAL}", pseudo(source, &[]))
    );
    assert_eq!(
        (passage["flags"].clone(), passage["accepted"].clone()),
        (json!([]), json!(false))
    );
    assert_eq!(
        chapter(&app, &user, &id).await[0],
        before,
        "a proposal changes nothing until it is accepted"
    );

    let accepted = ok(
        post(
            &app,
            &user,
            &proposal_path(&id, &proposal, "accept"),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(accepted["passages"][0]["accepted"], true);
    let now = passage_with(&app, &user, &id, "Ishmael").await;
    assert_eq!(now["text"], passage["proposed"]);
    assert_eq!(now["version"], 1);
    let origin = &now["origin"];
    assert_eq!(
        (
            origin["kind"].as_str(),
            origin["instruction"].as_str(),
            origin["model"].as_str(),
            origin["proposal"].as_str(),
            origin["by"].as_str()
        ),
        (
            Some("retranslated"),
            Some(instruction),
            Some("instructed-stand-in"),
            proposal["id"].as_str(),
            Some(user.id.as_str())
        ),
        "{now}"
    );
    assert!(origin["pass"].is_string(), "{now}");
    // Accepted once: the passage has moved on from the version it was made against.
    let again = post(
        &app,
        &user,
        &proposal_path(&id, &proposal, "accept"),
        json!({"passages": [before["index"]]}),
    )
    .await;
    assert_error(again, 409, "version_conflict").await;

    let undone = ok(
        post(
            &app,
            &user,
            &format!("{}/undo", passage_path(&id, &now)),
            json!({"version": 1}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(undone["text"], before["text"]);
    assert_eq!(undone["origin"]["kind"], "model");
}

#[tokio::test]
async fn a_chapter_translated_again_leaves_the_owners_passages_alone_unless_asked() {
    let app = TestApp::new()
        .with_models(Arc::new(Instructed::default()))
        .start()
        .await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let edited = passage_with(&app, &user, &id, "spleen").await;
    let edit = app
        .send_json(
            Method::PUT,
            &passage_path(&id, &edited),
            &user.key,
            json!({"text": "Es mi manera de echar la melancolía.", "version": 0}),
        )
        .await;
    ok(edit, 200).await;
    let path = format!("/api/books/{id}/chapters/2/retranslate");
    let total = chapter(&app, &user, &id).await.len();

    let proposal = proposed(
        &app,
        &user,
        &id,
        &path,
        json!({"instruction": "more formal"}),
    )
    .await;
    assert_eq!(proposal["leftAlone"], json!([edited["index"]]));
    assert_eq!(proposal["index"], Value::Null);
    let indexes: Vec<u64> = proposal["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes.len(), total - 1, "{proposal}");
    assert!(!indexes.contains(&edited["index"].as_u64().unwrap()));
    assert!(proposal["passages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["proposed"].as_str().unwrap().ends_with(FORMAL)));

    let all = proposed(
        &app,
        &user,
        &id,
        &path,
        json!({"instruction": "more formal", "includeEdited": true}),
    )
    .await;
    assert_eq!(all["leftAlone"], json!([]));
    let mine = all["passages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["index"] == edited["index"])
        .unwrap();
    assert_eq!(mine["current"], "Es mi manera de echar la melancolía.");
    assert_eq!(mine["version"], 1);

    // Asked for alone, the owner's passage is theirs unless asked too.
    let alone = post(
        &app,
        &user,
        &format!("{}/retranslate", passage_path(&id, &edited)),
        json!({}),
    )
    .await;
    let body = assert_error(alone, 400, "bad_request").await;
    assert!(
        body["message"].as_str().unwrap().contains("includeEdited"),
        "{body}"
    );

    let list = get(&app, &user, &format!("/api/books/{id}/proposals")).await;
    let ids: Vec<&str> = list["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            all["id"].as_str().unwrap(),
            proposal["id"].as_str().unwrap()
        ],
        "newest first"
    );
}

#[tokio::test]
async fn accepting_after_a_concurrent_edit_answers_409_and_a_discarded_proposal_writes_nothing() {
    let app = TestApp::new()
        .with_models(Arc::new(Instructed::default()))
        .start()
        .await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let path = format!("/api/books/{id}/chapters/2/retranslate");
    let proposal = proposed(
        &app,
        &user,
        &id,
        &path,
        json!({"instruction": "keep the pun"}),
    )
    .await;
    let first = passage_with(&app, &user, &id, "Ishmael").await;
    let edit = app
        .send_json(
            Method::PUT,
            &passage_path(&id, &first),
            &user.key,
            json!({"text": "Llamadme Ismael.", "version": 0}),
        )
        .await;
    ok(edit, 200).await;

    let accept = proposal_path(&id, &proposal, "accept");
    let conflict = assert_error(
        post(&app, &user, &accept, json!({})).await,
        409,
        "version_conflict",
    )
    .await;
    assert_eq!(conflict["passage"]["text"], "Llamadme Ismael.");
    let after = chapter(&app, &user, &id).await;
    assert!(
        after.iter().all(|p| p["origin"]["kind"] != "retranslated"),
        "nothing accepted when a passage changed since: {after:?}"
    );
    // The others are accepted when chosen; the owner's edit stays.
    let others: Vec<Value> = proposal["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].clone())
        .filter(|index| *index != first["index"])
        .collect();
    let accepted = ok(
        post(&app, &user, &accept, json!({"passages": others})).await,
        200,
    )
    .await;
    let now = chapter(&app, &user, &id).await;
    for passage in &now {
        let expected = if passage["index"] == first["index"] {
            "edited"
        } else {
            "retranslated"
        };
        assert_eq!(passage["origin"]["kind"], expected, "{passage}");
    }
    assert_eq!(
        accepted["passages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["accepted"] == true)
            .count(),
        others.len()
    );
    let missing = post(&app, &user, &accept, json!({"passages": [999]})).await;
    assert_error(missing, 400, "bad_request").await;

    let second = proposed(&app, &user, &id, &path, json!({"includeEdited": true})).await;
    let discarded = ok(
        post(
            &app,
            &user,
            &proposal_path(&id, &second, "discard"),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(discarded["status"], "discarded");
    let refused = post(
        &app,
        &user,
        &proposal_path(&id, &second, "accept"),
        json!({}),
    )
    .await;
    assert_error(refused, 409, "proposal_not_ready").await;
    assert_eq!(
        chapter(&app, &user, &id).await,
        now,
        "a discarded proposal writes nothing"
    );
}

#[tokio::test]
async fn a_quote_spends_nothing_a_proposal_is_charged_to_the_quota_and_past_it_is_refused() {
    let app = TestApp::new()
        .with_models(Arc::new(Instructed::default()))
        .with_env(&[("BOOKTR_QUOTA_BUSINESS_WORDS", "80")])
        .start()
        .await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let used = words_used(&app, &user).await;
    let first = passage_with(&app, &user, &id, "Ishmael").await;
    let path = format!("{}/retranslate", passage_path(&id, &first));
    let body = json!({"instruction": "more formal", "model": "gpt-4o-mini"});

    let mut asked = body.clone();
    asked["quote"] = json!(true);
    let quote = ok(post(&app, &user, &path, asked).await, 200).await;
    assert_eq!(quote["passages"], 1);
    assert_eq!(quote["words"], 10, "{quote}");
    assert!(
        quote["passes"]["translate"]["inputTokens"]
            .as_u64()
            .unwrap()
            > 0,
        "{quote}"
    );
    assert!(quote["total"]["requests"].as_u64().unwrap() >= 1);
    assert_eq!(quote["currency"], "USD");
    assert_eq!(
        words_used(&app, &user).await,
        used,
        "a quote spends nothing"
    );
    assert_eq!(
        get(&app, &user, &format!("/api/books/{id}/proposals")).await["proposals"],
        json!([])
    );

    let proposal = proposed(&app, &user, &id, &path, body.clone()).await;
    assert_eq!(proposal["words"], 10);
    assert_eq!(words_used(&app, &user).await, used + 10);

    // The chapter's words do not fit what is left of the month's quota.
    let whole = post(
        &app,
        &user,
        &format!("/api/books/{id}/chapters/2/retranslate"),
        body,
    )
    .await;
    assert_error(whole, 400, "quota_exceeded").await;
    assert_eq!(words_used(&app, &user).await, used + 10);
    let unknown = post(&app, &user, &path, json!({"model": "gpt-99"})).await;
    assert_error(unknown, 400, "bad_request").await;
}

#[tokio::test]
async fn a_bad_request_for_a_retranslation_is_refused_and_another_users_book_has_none() {
    let app = TestApp::new()
        .with_models(Arc::new(Instructed::default()))
        .start()
        .await;
    let owner = app.user().await;
    let other = app.user().await;
    let id = translated(&app, &owner).await;
    let path = format!("/api/books/{id}/chapters/2/passages/0/retranslate");
    let proposal = proposed(&app, &owner, &id, &path, json!({})).await;
    assert_eq!(proposal["instruction"], Value::Null);

    for bad in [
        json!({"instruction": "x".repeat(501)}),
        json!({"instructions": "more formal"}),
        json!({"includeEdited": "yes"}),
    ] {
        assert_error(post(&app, &owner, &path, bad).await, 400, "bad_request").await;
    }
    for missing in [
        format!("/api/books/{id}/chapters/99/retranslate"),
        format!("/api/books/{id}/chapters/2/passages/999/retranslate"),
    ] {
        assert_error(
            post(&app, &owner, &missing, json!({})).await,
            404,
            "not_found",
        )
        .await;
    }
    let nothing = format!("/api/books/{id}/proposals/nope");
    assert_error(app.get(&nothing, &owner.key).await, 404, "not_found").await;

    for path in [
        path.clone(),
        format!("/api/books/{id}/chapters/2/retranslate"),
        proposal_path(&id, &proposal, "accept"),
        proposal_path(&id, &proposal, "discard"),
        format!("/api/books/{id}/chapters/2/passages/0/keep"),
    ] {
        let body = if path.ends_with("keep") {
            json!({"version": 0})
        } else {
            json!({})
        };
        assert_error(post(&app, &other, &path, body).await, 404, "not_found").await;
    }
    for read in [
        format!("/api/books/{id}/proposals"),
        format!(
            "/api/books/{id}/proposals/{}",
            proposal["id"].as_str().unwrap()
        ),
    ] {
        assert_error(app.get(&read, &other.key).await, 404, "not_found").await;
    }
    assert_eq!(
        get(
            &app,
            &owner,
            &format!(
                "/api/books/{id}/proposals/{}",
                proposal["id"].as_str().unwrap()
            )
        )
        .await["status"],
        "ready"
    );
}

/// Every request answered by a model that refuses every block.
struct Refusing;

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
async fn keeping_a_flagged_passage_as_it_is_clears_its_flag_everywhere_until_undone() {
    let app = TestApp::new().with_models(Arc::new(Refusing)).start().await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let status = format!("/api/translate/status?bookId={id}");
    let flagged = get(&app, &user, &status).await["quality"]["flaggedBlocks"]
        .as_u64()
        .unwrap();
    assert!(flagged > 0);
    let model = passage_with(&app, &user, &id, "Ishmael").await;
    assert!(!model["flags"].as_array().unwrap().is_empty(), "{model}");
    let keep = format!("{}/keep", passage_path(&id, &model));

    let kept = ok(post(&app, &user, &keep, json!({"version": 0})).await, 200).await;
    assert_eq!(kept["text"], model["text"], "kept as it is");
    assert_eq!(kept["flags"], json!([]));
    assert_eq!(kept["origin"]["kind"], "kept");
    assert_eq!(kept["origin"]["by"], user.id);
    assert_eq!(
        (kept["version"].as_u64(), kept["undoable"].as_u64()),
        (Some(1), Some(1))
    );
    let quality = &get(&app, &user, &status).await["quality"];
    assert_eq!(
        quality["flaggedBlocks"].as_u64(),
        Some(flagged - 1),
        "{quality}"
    );
    let list = get(&app, &user, &format!("/api/books/{id}/passages/flagged")).await;
    assert_eq!(list["total"].as_u64(), Some(flagged - 1));
    let warnings = app.book(&user.key, &id).await["warnings"].to_string();
    assert!(
        warnings.contains(&format!("Translation: {} block", flagged - 1)),
        "{warnings}"
    );

    let stale = post(&app, &user, &keep, json!({"version": 0})).await;
    assert_error(stale, 409, "version_conflict").await;
    let again = post(&app, &user, &keep, json!({"version": 1})).await;
    let body = assert_error(again, 400, "bad_request").await;
    assert!(
        body["message"].as_str().unwrap().contains("not flagged"),
        "{body}"
    );

    let undone = ok(
        post(
            &app,
            &user,
            &format!("{}/undo", passage_path(&id, &model)),
            json!({"version": 1}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(undone["flags"], model["flags"]);
    let quality = &get(&app, &user, &status).await["quality"];
    assert_eq!(quality["flaggedBlocks"].as_u64(), Some(flagged));
}

#[tokio::test]
async fn a_retranslation_the_model_refuses_fails_with_why_and_gives_its_words_back() {
    let model = Instructed {
        refusing: true,
        ..Instructed::default()
    };
    let app = TestApp::new().with_models(Arc::new(model)).start().await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let used = words_used(&app, &user).await;
    let path = format!("/api/books/{id}/chapters/2/retranslate");

    let asked = ok(
        post(&app, &user, &path, json!({"instruction": "more formal"})).await,
        202,
    )
    .await;
    assert!(asked["words"].as_u64().unwrap() > 0);
    assert_eq!(
        words_used(&app, &user).await,
        used + asked["words"].as_u64().unwrap()
    );
    drain(&app).await;
    let failed = get(
        &app,
        &user,
        &format!(
            "/api/books/{id}/proposals/{}",
            asked["id"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("takes no instructions"),
        "{failed}"
    );
    assert_eq!(failed["passages"], json!([]));
    assert_eq!(
        words_used(&app, &user).await,
        used,
        "its words are given back"
    );
    let refused = post(
        &app,
        &user,
        &proposal_path(&id, &failed, "accept"),
        json!({}),
    )
    .await;
    assert_error(refused, 409, "proposal_not_ready").await;
    assert_eq!(
        app.book(&user.key, &id).await["status"],
        "COMPLETED",
        "the book is as it was"
    );
}

#[tokio::test]
async fn a_proposals_words_are_given_back_once_however_often_its_job_is_delivered() {
    let model = Instructed {
        refusing: true,
        ..Instructed::default()
    };
    let app = TestApp::new().with_models(Arc::new(model)).start().await;
    let user = app.user().await;
    let id = translated(&app, &user).await;
    let used = words_used(&app, &user).await;
    let first = passage_with(&app, &user, &id, "Ishmael").await;
    let path = format!("{}/retranslate", passage_path(&id, &first));
    let job = |proposal: &Value| Job::Retranslate {
        book_id: id.clone(),
        proposal_id: proposal["id"].as_str().unwrap().to_string(),
    };

    // Discarded before its job ran: each delivery of the job finds it so.
    let discarded = ok(
        post(&app, &user, &path, json!({"instruction": "more formal"})).await,
        202,
    )
    .await;
    let words = discarded["words"].as_u64().unwrap();
    assert!(words > 0);
    ok(
        post(
            &app,
            &user,
            &proposal_path(&id, &discarded, "discard"),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    for receive in 1..=3 {
        let outcome = app.services.jobs.process(&job(&discarded), receive).await;
        assert!(matches!(outcome, Outcome::Done), "{outcome:?}");
    }
    drain(&app).await;
    assert_eq!(
        words_used(&app, &user).await,
        used,
        "a discarded proposal's words come back once"
    );

    // Failed by its job (the model refuses instructions), then delivered again.
    let failed = ok(
        post(&app, &user, &path, json!({"instruction": "more formal"})).await,
        202,
    )
    .await;
    drain(&app).await;
    assert_eq!(words_used(&app, &user).await, used);
    for receive in 2..=3 {
        let outcome = app.services.jobs.process(&job(&failed), receive).await;
        assert!(matches!(outcome, Outcome::Done), "{outcome:?}");
    }
    let proposal = get(
        &app,
        &user,
        &format!(
            "/api/books/{id}/proposals/{}",
            failed["id"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(proposal["status"], "failed", "{proposal}");
    assert_eq!(
        words_used(&app, &user).await,
        used,
        "a failed proposal's words come back once"
    );
}
