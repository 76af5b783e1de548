//! Account export and deletion: everything comes out, and then nothing is left.

use std::time::Duration;

use booktr_core::accounts::NewUser;
use booktr_core::ids::sha256_hex;
use booktr_core::types::{Email, Plan, Role};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, eventually, sample_txt, TestApp};
use crate::stand_ins::Providers;
use crate::webhooks::Receiver;

/// The provider key the user of [`user_with_one_of_everything`] brings, and its preview.
const PROVIDER_KEY: &str = "sk-test-everything-0123456789abcdQRST";
const PROVIDER_KEY_PREVIEW: &str = "sk-...QRST";

/// The service, with a stand-in provider that accepts [`PROVIDER_KEY`].
async fn spawn_with_provider() -> (TestApp, Providers) {
    let providers = Providers::start(&[PROVIDER_KEY]).await;
    let models = booktr_outbound::EnvModels::from_vars(providers.vars());
    (
        TestApp::new()
            .with_workers()
            .with_models(std::sync::Arc::new(models))
            .start()
            .await,
        providers,
    )
}

/// A user with one of everything: a password and a session, an API key, a provider key, a
/// community post, a glossary, preferences, a webhook that received `book.completed`, a book translated,
/// generated as PDF and shared, and the notification of its completion.
struct Everything {
    id: String,
    email: String,
    key: String,
    cookie: String,
    book_id: String,
    share_token: String,
    webhook_id: String,
    glossary_id: String,
    post_id: String,
    upload_id: String,
    _receiver: Receiver,
}

async fn user_with_one_of_everything(app: &TestApp) -> Everything {
    let email = format!("{}@example.com", booktr_core::ids::new_id());
    let user = app
        .services
        .accounts
        .create_user(NewUser {
            email: Email::parse(&email).unwrap(),
            name: Some("Everything".into()),
            password: Some("a long password".into()),
            role: Role::User,
            plan: Plan::Business,
        })
        .await
        .unwrap();
    let signed_in = app
        .post_anonymous(
            "/api/auth/signin",
            &json!({"email": email, "password": "a long password"}),
        )
        .await;
    assert_eq!(signed_in.status(), 200);
    let cookie = signed_in
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let created: Value = app
        .client
        .post(format!("{}/api/keys", app.url))
        .header("cookie", &cookie)
        .json(&json!({"name": "laptop"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let key = created["secretKey"].as_str().unwrap().to_string();

    let glossary: Value = app
        .send_json(
            Method::POST,
            "/api/glossary",
            &key,
            json!({"name": "Sea", "entries": [{"source": "Ishmael", "target": "Ismael"}]}),
        )
        .await
        .json()
        .await
        .unwrap();
    let glossary_id = glossary["glossary"]["id"].as_str().unwrap().to_string();
    let patched = app
        .send_json(
            Method::PATCH,
            "/api/settings/preferences",
            &key,
            json!({"defaultGlossaryId": glossary_id, "defaultTargetLanguage": "fr"}),
        )
        .await;
    assert_eq!(patched.status(), 200);
    let developer = app
        .send_json(
            Method::PATCH,
            "/api/settings/developer",
            &key,
            json!({"keyOne": PROVIDER_KEY}),
        )
        .await;
    assert_eq!(developer.status(), 200);
    let post = app
        .send_json(
            Method::POST,
            "/api/community/posts",
            &key,
            json!({"title": "Everything I have", "content": "A post.", "status": "PUBLISHED"}),
        )
        .await;
    assert_eq!(post.status(), 201);
    let post_id = post.json::<Value>().await.unwrap()["post"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let receiver = Receiver::start(200).await;
    let webhook = crate::webhooks::create(
        app,
        &crate::helpers::TestUser {
            id: user.id.clone(),
            key: key.clone(),
        },
        &receiver.url,
        &["book.completed"],
    )
    .await;
    let webhook_id = webhook["webhook"]["id"].as_str().unwrap().to_string();

    let book_id = app.translated_sample(&key).await;
    let pdf = app
        .get(&format!("/api/download/{book_id}?format=pdf"), &key)
        .await;
    assert_eq!(pdf.status(), 200);
    let share_token = app.share(&key, &book_id).await;
    // A direct upload sent and never confirmed: its record and file are the account's too.
    let upload_id = crate::direct_upload::sent_unconfirmed(app, &key).await;
    // The completion reaches the webhook (a delivery in its history) and the notifications.
    eventually(Duration::from_secs(5), || async {
        match receiver.hits().is_empty() {
            false => Ok(()),
            true => Err("book.completed has not arrived"),
        }
    })
    .await;
    Everything {
        id: user.id,
        email,
        key,
        cookie,
        book_id,
        share_token,
        webhook_id,
        glossary_id,
        post_id,
        upload_id,
        _receiver: receiver,
    }
}

#[tokio::test]
async fn the_export_holds_every_record_of_the_account_and_no_secret() {
    let (app, _providers) = spawn_with_provider().await;
    let everything = user_with_one_of_everything(&app).await;
    let response = app.get("/api/user/export", &everything.key).await;
    assert_eq!(response.status(), 200);
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        disposition.starts_with("attachment; filename=\"booktr-export-"),
        "{disposition}"
    );
    let text = response.text().await.unwrap();
    assert!(
        !text.contains(&everything.key),
        "the API key itself is exported"
    );
    assert!(!text.contains("whsec_"), "a webhook secret is exported");
    assert!(!text.contains(PROVIDER_KEY), "a provider key is exported");
    let export: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(export["user"]["id"], everything.id.as_str());
    assert_eq!(export["user"]["email"], everything.email.as_str());
    assert_eq!(export["books"][0]["id"], everything.book_id.as_str());
    assert_eq!(export["books"][0]["status"], "COMPLETED");
    assert_eq!(export["books"][0]["chapters"].as_array().unwrap().len(), 4);
    let keys = export["apiKeys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["name"], "laptop");
    assert_eq!(export["webhooks"][0]["id"], everything.webhook_id.as_str());
    assert_eq!(
        export["glossaries"][0]["id"],
        everything.glossary_id.as_str()
    );
    assert_eq!(export["glossaries"][0]["entries"][0]["target"], "Ismael");
    assert_eq!(export["preferences"]["defaultTargetLanguage"], "fr");
    assert_eq!(export["notificationSettings"]["inAppEnabled"], true);
    assert_eq!(export["notifications"][0]["type"], "BOOK_COMPLETED");
    let deliveries = &export["webhookDeliveries"][everything.webhook_id.as_str()];
    assert_eq!(deliveries[0]["event"], "book.completed");
    assert_eq!(
        export["usage"]["books"]["used"], 2,
        "the book, and the one the open direct upload reserved"
    );
    assert_eq!(
        export["developerSettings"]["keyOnePreview"],
        PROVIDER_KEY_PREVIEW
    );
    assert_eq!(export["posts"][0]["id"], everything.post_id.as_str());
    assert!(export["exportedAt"].as_str().is_some());
}

#[tokio::test]
async fn deletion_needs_the_exact_confirmation() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for wrong in [json!({"confirmation": "delete my account"}), json!({})] {
        let response = app
            .send_json(Method::DELETE, "/api/user/delete", &user.key, wrong)
            .await;
        assert_error(response, 400, "bad_request").await;
    }
    assert_eq!(app.get("/api/user", &user.key).await.status(), 200);
}

#[tokio::test]
async fn a_deleted_account_is_unusable_at_once_and_leaves_nothing_behind() {
    let (app, _providers) = spawn_with_provider().await;
    let everything = user_with_one_of_everything(&app).await;
    let bystander = app.user().await;
    let kept_book = app
        .upload_ok(&bystander.key, "kept.txt", sample_txt())
        .await;
    app.wait_for_status(&bystander.key, &kept_book, "EXTRACTED")
        .await;

    let response = app
        .send_json(
            Method::DELETE,
            "/api/user/delete",
            &everything.key,
            json!({"confirmation": "DELETE MY ACCOUNT", "reason": "moving on"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let deleted: Value = response.json().await.unwrap();
    assert_eq!(deleted["success"], true);
    assert!(deleted["deletedAt"].as_str().is_some());

    // At once: the key, the session and the share link are dead.
    assert_eq!(app.get("/api/user", &everything.key).await.status(), 401);
    let by_cookie = app
        .client
        .get(format!("{}/api/user", app.url))
        .header("cookie", &everything.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(by_cookie.status(), 401);
    let page = app
        .get_anonymous(&format!("/shared/{}", everything.share_token))
        .await;
    assert_eq!(page.status(), 404);

    // Then the purge removes every trace.
    let key_hash = sha256_hex(&everything.key);
    let needles = [
        everything.id.as_str(),
        everything.email.as_str(),
        everything.book_id.as_str(),
        everything.share_token.as_str(),
        everything.webhook_id.as_str(),
        everything.glossary_id.as_str(),
        key_hash.as_str(),
        PROVIDER_KEY_PREVIEW,
        everything.post_id.as_str(),
        everything.upload_id.as_str(),
        "everything-i-have",
    ];
    // With the clock moving on: the purge is a queued job, and a try that ran before the
    // account closed, or found the store busy, is retried after 2, 4 and 8 s.
    eventually(Duration::from_secs(40), || async {
        let left = app.stored_mentions(&needles).await;
        if left.is_empty() {
            return Ok(());
        }
        app.pass_time(Duration::from_millis(25)).await;
        Err(format!("left behind: {left:#?}"))
    })
    .await;

    // Nobody else's data went with it, and the email may sign up again.
    let kept = app
        .get(&format!("/api/books/{kept_book}"), &bystander.key)
        .await;
    assert_eq!(kept.status(), 200);
    let again = app
        .post_anonymous(
            "/api/auth/signup",
            &json!({"email": everything.email, "password": "another long password"}),
        )
        .await;
    assert_eq!(again.status(), 201);
}

#[tokio::test]
async fn deletion_racing_translation_starts_gives_no_5xx_and_leaves_nothing() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let mut books = Vec::new();
    for n in 0..30 {
        books.push(
            app.upload_ok(&user.key, &format!("book{n}.txt"), sample_txt())
                .await,
        );
    }
    for id in &books {
        app.wait_for_status(&user.key, id, "EXTRACTED").await;
    }
    let pairs = books.iter().map(|id| {
        let app = &app;
        let key = &user.key;
        async move {
            let (deleted, started) = tokio::join!(
                app.request(Method::DELETE, &format!("/api/books/{id}"), key)
                    .send(),
                app.send_json(Method::POST, "/api/translate", key, json!({"bookId": id})),
            );
            (
                deleted.unwrap().status().as_u16(),
                started.status().as_u16(),
            )
        }
    });
    for (deleted, started) in futures::future::join_all(pairs).await {
        assert_eq!(deleted, 200);
        assert!(
            [200, 400, 404].contains(&started),
            "a start racing a deletion answered {started}"
        );
    }
    let needles: Vec<&str> = books.iter().map(String::as_str).collect();
    // With the clock moving on: the purge is a queued job, and a try that ran before the
    // account closed, or found the store busy, is retried after 2, 4 and 8 s.
    eventually(Duration::from_secs(40), || async {
        let left = app.stored_mentions(&needles).await;
        if left.is_empty() {
            return Ok(());
        }
        app.pass_time(Duration::from_millis(25)).await;
        Err(format!("left behind: {left:#?}"))
    })
    .await;
}
