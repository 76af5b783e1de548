//! Developer settings: users' own provider keys, checked with the provider (a local stand-in of
//! the three providers), sealed at rest, and used for their translations.

use std::path::Path;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use booktr_core::ports::{Condition, Item};
use booktr_outbound::EnvModels;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, sample_txt, TestApp};
use crate::stand_ins::Providers;

const OPENAI_KEY: &str = "sk-test-accepted-0123456789abcdefXYZW";
const OTHER_OPENAI_KEY: &str = "sk-test-accepted-second-key-000042";
const ANTHROPIC_KEY: &str = "sk-ant-test-accepted-0123456789abcd";
const GEMINI_KEY: &str = "AIzaSyTestAccepted0123456789abcdefghi";
const REFUSED_KEY: &str = "sk-test-refused-0123456789abcdefABCD";

const SETTINGS: &str = "/api/settings/developer";

/// The service with its workers, its three provider families pointed at `vars`.
async fn spawn(vars: Vec<(String, String)>) -> TestApp {
    TestApp::new()
        .with_workers()
        .with_models(Arc::new(EnvModels::from_vars(vars)))
        .start()
        .await
}

async fn spawn_with_providers() -> (TestApp, Providers) {
    let providers =
        Providers::start(&[OPENAI_KEY, OTHER_OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY]).await;
    (spawn(providers.vars()).await, providers)
}

async fn settings(app: &TestApp, key: &str) -> Value {
    let response = app.get(SETTINGS, key).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn patch(app: &TestApp, key: &str, body: Value) -> reqwest::Response {
    app.send_json(Method::PATCH, SETTINGS, key, body).await
}

fn none_set() -> Value {
    json!({"hasKeyOne": false, "hasKeyTwo": false, "hasKeyThree": false,
           "keyOnePreview": null, "keyTwoPreview": null, "keyThreePreview": null})
}

#[tokio::test]
async fn a_key_the_provider_accepts_is_saved_and_shown_only_as_a_preview() {
    let (app, providers) = spawn_with_providers().await;
    let user = app.user().await;
    assert_eq!(settings(&app, &user.key).await, none_set());

    let response = patch(&app, &user.key, json!({"keyOne": OPENAI_KEY})).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["success"], true, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("keyOne"),
        "{body}"
    );
    assert!(!body.to_string().contains(OPENAI_KEY));

    let shown = settings(&app, &user.key).await;
    assert_eq!(
        shown,
        json!({"hasKeyOne": true, "hasKeyTwo": false, "hasKeyThree": false,
               "keyOnePreview": "sk-...XYZW", "keyTwoPreview": null, "keyThreePreview": null})
    );
    assert_eq!(
        providers.key_checks.lock().unwrap().clone(),
        [("/openai/v1/models".to_string(), OPENAI_KEY.to_string())],
        "one model-list call, where the chat calls go"
    );

    // All three at once, each checked with its own provider.
    let response = patch(
        &app,
        &user.key,
        json!({"keyOne": OTHER_OPENAI_KEY, "keyTwo": ANTHROPIC_KEY, "keyThree": GEMINI_KEY}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let shown = settings(&app, &user.key).await;
    assert_eq!(shown["keyOnePreview"], "sk-...0042");
    assert_eq!(shown["keyTwoPreview"], "sk-...abcd");
    assert_eq!(shown["keyThreePreview"], "AIz...fghi");
    assert_eq!(shown["hasKeyTwo"], true);
    assert_eq!(shown["hasKeyThree"], true);
}

#[tokio::test]
async fn a_key_the_provider_refuses_is_a_400_naming_it_and_nothing_changes() {
    let (app, _providers) = spawn_with_providers().await;
    let user = app.user().await;
    assert_eq!(
        patch(&app, &user.key, json!({"keyOne": OPENAI_KEY}))
            .await
            .status(),
        200
    );
    let before = settings(&app, &user.key).await;

    let body = assert_error(
        patch(&app, &user.key, json!({"keyOne": REFUSED_KEY})).await,
        400,
        "invalid_key",
    )
    .await;
    assert!(
        body["message"].as_str().unwrap().contains("keyOne"),
        "{body}"
    );
    assert!(!body.to_string().contains(REFUSED_KEY), "{body}");
    assert_eq!(settings(&app, &user.key).await, before);

    // One refused key among several: none of them is saved, and the message names the one.
    let body = assert_error(
        patch(
            &app,
            &user.key,
            json!({"keyOne": OTHER_OPENAI_KEY, "keyTwo": REFUSED_KEY, "keyThree": GEMINI_KEY}),
        )
        .await,
        400,
        "invalid_key",
    )
    .await;
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("keyTwo") && !message.contains("keyOne"),
        "{body}"
    );
    assert_eq!(settings(&app, &user.key).await, before);
}

#[tokio::test]
async fn a_provider_that_cannot_be_reached_is_a_503_and_nothing_is_saved() {
    let providers = Providers::start(&[OPENAI_KEY, ANTHROPIC_KEY]).await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let mut vars = providers.vars();
    vars.retain(|(name, _)| name != "ANTHROPIC_BASE_URL");
    vars.push(("ANTHROPIC_BASE_URL".into(), closed));
    let app = spawn(vars).await;
    let user = app.user().await;

    let body = assert_error(
        patch(
            &app,
            &user.key,
            json!({"keyOne": OPENAI_KEY, "keyTwo": ANTHROPIC_KEY}),
        )
        .await,
        503,
        "provider_unavailable",
    )
    .await;
    assert!(
        body["message"].as_str().unwrap().contains("keyTwo"),
        "{body}"
    );
    assert!(!body.to_string().contains(ANTHROPIC_KEY), "{body}");
    assert_eq!(
        settings(&app, &user.key).await,
        none_set(),
        "the key that passed is not saved either"
    );
}

#[tokio::test]
async fn null_removes_a_key_and_a_field_left_out_keeps_its_key() {
    let (app, _providers) = spawn_with_providers().await;
    let user = app.user().await;
    let response = patch(
        &app,
        &user.key,
        json!({"keyOne": OPENAI_KEY, "keyThree": GEMINI_KEY}),
    )
    .await;
    assert_eq!(response.status(), 200);

    let response = patch(&app, &user.key, json!({"keyOne": null})).await;
    assert_eq!(response.status(), 200);
    let shown = settings(&app, &user.key).await;
    assert_eq!(shown["hasKeyOne"], false);
    assert_eq!(shown["keyOnePreview"], Value::Null);
    assert_eq!(shown["hasKeyThree"], true);
    assert_eq!(shown["keyThreePreview"], "AIz...fghi");

    // Removing a key that is not set, and an empty patch, change nothing and succeed.
    assert_eq!(
        patch(&app, &user.key, json!({"keyTwo": null}))
            .await
            .status(),
        200
    );
    let response = patch(&app, &user.key, json!({})).await;
    assert_eq!(response.status(), 200);
    assert_eq!(settings(&app, &user.key).await, shown);
}

#[tokio::test]
async fn unknown_fields_wrong_types_and_malformed_keys_are_refused_before_any_provider_call() {
    let (app, providers) = spawn_with_providers().await;
    let user = app.user().await;
    for body in [
        json!({"keyFour": OPENAI_KEY}),
        json!({"keyOne": 5}),
        json!({"keyOne": [OPENAI_KEY]}),
        json!([OPENAI_KEY]),
    ] {
        let error = assert_error(patch(&app, &user.key, body).await, 400, "bad_request").await;
        assert!(!error.to_string().contains(OPENAI_KEY), "{error}");
    }
    for malformed in ["", "   ", "sk-short", "sk-has a space-0123456789abcdef"] {
        let body = assert_error(
            patch(&app, &user.key, json!({"keyTwo": malformed})).await,
            400,
            "invalid_key",
        )
        .await;
        assert!(
            body["message"].as_str().unwrap().contains("keyTwo"),
            "{body}"
        );
    }
    assert!(
        providers.key_checks.lock().unwrap().is_empty(),
        "nothing malformed reaches a provider"
    );
    assert_eq!(settings(&app, &user.key).await, none_set());
    let anonymous = app.anonymous(Method::GET, SETTINGS).send().await.unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
}

#[tokio::test]
async fn one_users_keys_are_invisible_and_untouchable_to_another() {
    let (app, _providers) = spawn_with_providers().await;
    let ana = app.user().await;
    let bo = app.user().await;
    assert_eq!(
        patch(&app, &ana.key, json!({"keyOne": OPENAI_KEY}))
            .await
            .status(),
        200
    );
    let anas = settings(&app, &ana.key).await;

    assert_eq!(settings(&app, &bo.key).await, none_set());
    assert_eq!(
        patch(&app, &bo.key, json!({"keyOne": null})).await.status(),
        200
    );
    assert_eq!(
        patch(&app, &bo.key, json!({"keyOne": OTHER_OPENAI_KEY}))
            .await
            .status(),
        200
    );
    assert_eq!(settings(&app, &ana.key).await, anas);
    assert_eq!(settings(&app, &bo.key).await["keyOnePreview"], "sk-...0042");
}

#[tokio::test]
async fn a_saved_key_is_nowhere_in_clear_in_the_stored_data() {
    let (app, _providers) = spawn_with_providers().await;
    let user = app.user().await;
    let response = patch(
        &app,
        &user.key,
        json!({"keyOne": OPENAI_KEY, "keyThree": GEMINI_KEY}),
    )
    .await;
    assert_eq!(response.status(), 200);

    let stored = stored_data(&app).await;
    // The scan reads where the settings live: their previews are in it.
    assert!(contains(&stored, b"sk-...XYZW"), "the scan missed the data");
    for key in [OPENAI_KEY, GEMINI_KEY] {
        assert!(
            !contains(&stored, key.as_bytes()),
            "{key} is stored in clear"
        );
        let base64 = BASE64.encode(key);
        assert!(
            !contains(&stored, base64.as_bytes()),
            "{key} is stored as base64"
        );
    }
}

#[tokio::test]
async fn a_translation_runs_on_its_owners_key() {
    let (app, providers) = spawn_with_providers().await;
    let user = app.user().await;
    assert_eq!(
        patch(&app, &user.key, json!({"keyOne": OPENAI_KEY}))
            .await
            .status(),
        200
    );
    let book = app.upload_ok(&user.key, "book.txt", sample_txt()).await;
    app.wait_for_status(&user.key, &book, "EXTRACTED").await;
    let response = app
        .send_json(
            Method::POST,
            "/api/translate",
            &user.key,
            json!({"bookId": book, "model": "gpt-4o-mini"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    app.wait_for_status(&user.key, &book, "COMPLETED").await;

    let credentials = providers.chat_credentials.lock().unwrap().clone();
    assert!(!credentials.is_empty(), "the provider was called");
    assert!(
        credentials
            .iter()
            .all(|c| *c == format!("Bearer {OPENAI_KEY}")),
        "{credentials:?}"
    );

    // Someone without a key of their own (and a server without one) gets the offline engine.
    let other = app.user().await;
    let book = app.upload_ok(&other.key, "book.txt", sample_txt()).await;
    app.wait_for_status(&other.key, &book, "EXTRACTED").await;
    let response = app
        .send_json(
            Method::POST,
            "/api/translate",
            &other.key,
            json!({"bookId": book, "model": "gpt-4o-mini"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    app.wait_for_status(&other.key, &book, "COMPLETED").await;
    assert_eq!(
        providers.chat_credentials.lock().unwrap().len(),
        credentials.len()
    );
}

#[tokio::test]
async fn a_stored_key_that_no_longer_opens_fails_the_chapter_with_a_reason() {
    let (app, providers) = spawn_with_providers().await;
    let user = app.user().await;
    assert_eq!(
        patch(&app, &user.key, json!({"keyOne": OPENAI_KEY}))
            .await
            .status(),
        200
    );
    // As if the item had been altered, or the key file or KMS key had changed.
    let table = &app.ports.table;
    let item = table
        .get(&format!("USER#{}", user.id), "DEVKEY#ONE")
        .await
        .unwrap()
        .unwrap();
    let mut sealed = BASE64.decode(item.str("sealed").unwrap()).unwrap();
    let last = sealed.len() - 1;
    sealed[last] ^= 0x01;
    let mut altered = Item::new(item.pk.clone(), item.sk.clone());
    altered.attrs = item.attrs.clone();
    altered
        .attrs
        .insert("sealed".into(), Value::from(BASE64.encode(&sealed)));
    table.put(altered, Condition::Always).await.unwrap();

    let book = app.upload_ok(&user.key, "book.txt", sample_txt()).await;
    app.wait_for_status(&user.key, &book, "EXTRACTED").await;
    let response = app
        .send_json(
            Method::POST,
            "/api/translate",
            &user.key,
            json!({"bookId": book, "model": "gpt-4o-mini"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let failed = app.wait_for_status(&user.key, &book, "ERROR").await;
    let error = failed["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("could not be read; set it again") && error.contains("keyOne"),
        "{failed}"
    );
    assert!(
        providers.chat_credentials.lock().unwrap().is_empty(),
        "no fallback to another key"
    );
}

/// A sealed key is bound to its owner and slot: copied into another account, it does not open
/// there, and nobody's key is spent for someone else.
#[tokio::test]
async fn a_sealed_key_copied_into_another_account_does_not_open_there() {
    let (app, providers) = spawn_with_providers().await;
    let owner = app.user().await;
    let thief = app.user().await;
    assert_eq!(
        patch(&app, &owner.key, json!({"keyOne": OPENAI_KEY}))
            .await
            .status(),
        200
    );
    let table = &app.ports.table;
    let item = table
        .get(&format!("USER#{}", owner.id), "DEVKEY#ONE")
        .await
        .unwrap()
        .unwrap();
    let mut copied = Item::new(format!("USER#{}", thief.id), item.sk.clone());
    copied.attrs = item.attrs.clone();
    table.put(copied, Condition::Always).await.unwrap();

    let book = app.upload_ok(&thief.key, "book.txt", sample_txt()).await;
    app.wait_for_status(&thief.key, &book, "EXTRACTED").await;
    let response = app
        .send_json(
            Method::POST,
            "/api/translate",
            &thief.key,
            json!({"bookId": book, "model": "gpt-4o-mini"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let failed = app.wait_for_status(&thief.key, &book, "ERROR").await;
    assert!(
        failed["error"]
            .as_str()
            .unwrap_or_default()
            .contains("could not be read"),
        "{failed}"
    );
    assert!(
        providers.chat_credentials.lock().unwrap().is_empty(),
        "the owner's key was spent for someone else"
    );
}

fn contains(haystack: &[Vec<u8>], needle: &[u8]) -> bool {
    haystack
        .iter()
        .any(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
}

/// Every byte the service stored: each file under the data directory (database, its write-ahead
/// log, queue, blobs, key files) and, on the AWS backend, every table item and bucket object.
async fn stored_data(app: &TestApp) -> Vec<Vec<u8>> {
    fn files(dir: &Path, into: &mut Vec<Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, into);
            } else {
                into.push(std::fs::read(&path).unwrap());
            }
        }
    }
    let mut stored = Vec::new();
    files(app.data.path(), &mut stored);
    if let Some(aws) = &app.aws {
        let (clients, resources) = (&aws.clients, &aws.resources);
        let scan = clients
            .dynamo
            .scan()
            .table_name(&resources.table)
            .send()
            .await
            .unwrap();
        assert!(
            scan.last_evaluated_key().is_none(),
            "one page holds the table"
        );
        stored.push(format!("{:?}", scan.items()).into_bytes());
        let objects = clients
            .s3
            .list_objects_v2()
            .bucket(&resources.bucket)
            .send()
            .await
            .unwrap();
        for object in objects.contents() {
            let body = clients
                .s3
                .get_object()
                .bucket(&resources.bucket)
                .key(object.key().unwrap())
                .send()
                .await
                .unwrap()
                .body
                .collect()
                .await
                .unwrap();
            stored.push(body.into_bytes().to_vec());
        }
    }
    stored
}
