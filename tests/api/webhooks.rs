//! Webhooks: registration, the signed test event, the SSRF guard, deliveries of emitted events
//! and their retry schedule (driven with the manual clock and `runner::drain`).

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use booktr_core::events::{EventKind, Occurrence};
use booktr_core::jobs::runner;
use booktr_core::ports::Clock;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::{assert_error, TestApp, TestUser};

/// One request a receiver got.
#[derive(Clone)]
pub(crate) struct Hit {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// A local webhook receiver answering `status` (changeable) and keeping what it got.
pub(crate) struct Receiver {
    pub(crate) url: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    status: Arc<AtomicU16>,
}

impl Receiver {
    pub(crate) async fn start(status: u16) -> Receiver {
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let status = Arc::new(AtomicU16::new(status));
        let (h, s) = (hits.clone(), status.clone());
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (hits, status) = (h.clone(), s.clone());
                async move {
                    hits.lock().unwrap().push(Hit { headers, body });
                    let code = StatusCode::from_u16(status.load(Ordering::SeqCst)).unwrap();
                    (code, "receiver says hi")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, hits, status }
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }
}

pub(crate) fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn header<'a>(hit: &'a Hit, name: &str) -> &'a str {
    hit.headers.get(name).unwrap().to_str().unwrap()
}

/// Creates a webhook and returns the answer's body (`{webhook, secret}`).
pub(crate) async fn create(app: &TestApp, user: &TestUser, url: &str, events: &[&str]) -> Value {
    let response = app
        .send_json(
            Method::POST,
            "/api/webhooks",
            &user.key,
            json!({ "url": url, "events": events }),
        )
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn deliveries(app: &TestApp, user: &TestUser, webhook_id: &str) -> Vec<Value> {
    let response = app
        .get(&format!("/api/webhooks/{webhook_id}/deliveries"), &user.key)
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["deliveries"].as_array().unwrap().clone()
}

async fn send_test(app: &TestApp, user: &TestUser, webhook_id: &str) -> Value {
    let response = app
        .request(
            Method::POST,
            &format!("/api/webhooks/{webhook_id}"),
            &user.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

fn completed(user: &TestUser, book_id: &str, key: &str) -> Occurrence {
    Occurrence {
        key: key.to_string(),
        user_id: user.id.clone(),
        book_id: book_id.to_string(),
        title: "The Voyage".into(),
        status: "COMPLETED".into(),
        kind: EventKind::BookCompleted {
            download_path: format!("/api/download/{book_id}?format=epub"),
            flagged: Default::default(),
        },
    }
}

async fn drain(app: &TestApp) {
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_webhook_is_created_listed_and_deleted_and_its_secret_is_shown_only_once() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let created = create(
        &app,
        &user,
        "https://hooks.example.com/booktr",
        &["book.completed"],
    )
    .await;
    let secret = created["secret"].as_str().unwrap();
    assert!(
        secret.starts_with("whsec_") && secret.len() == 6 + 32,
        "{secret}"
    );
    let webhook = &created["webhook"];
    assert_eq!(webhook["url"], "https://hooks.example.com/booktr");
    assert_eq!(webhook["events"], json!(["book.completed"]));
    assert_eq!(webhook["isActive"], true);
    assert!(webhook["createdAt"].is_string());
    assert!(webhook.get("secret").is_none());

    let listed: Value = app
        .get("/api/webhooks", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["webhooks"], json!([webhook.clone()]));
    assert!(!listed.to_string().contains(secret));

    let id = webhook["id"].as_str().unwrap();
    let path = format!("/api/webhooks/{id}");
    let deleted = app
        .request(Method::DELETE, &path, &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(
        deleted.json::<Value>().await.unwrap(),
        json!({ "success": true })
    );
    let listed: Value = app
        .get("/api/webhooks", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["webhooks"], json!([]));
    let again = app
        .request(Method::DELETE, &path, &user.key)
        .send()
        .await
        .unwrap();
    assert_error(again, 404, "not_found").await;
}

#[tokio::test]
async fn invalid_webhooks_are_refused_with_400() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    for body in [
        json!({ "events": ["book.completed"] }),
        json!({ "url": "https://example.com/h" }),
        json!({ "url": "not a url", "events": ["book.completed"] }),
        json!({ "url": "ftp://example.com/h", "events": ["book.completed"] }),
        json!({ "url": "https://", "events": ["book.completed"] }),
        json!({ "url": "https://example.com/h", "events": [] }),
        json!({ "url": "https://example.com/h", "events": ["book.deleted"] }),
        json!({ "url": "https://example.com/h", "events": "book.completed" }),
        json!({ "url": "https://example.com/h", "events": ["book.completed"], "active": true }),
    ] {
        let response = app
            .send_json(Method::POST, "/api/webhooks", &user.key, body.clone())
            .await;
        assert_error(response, 400, "bad_request").await;
    }
    let listed: Value = app
        .get("/api/webhooks", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["webhooks"], json!([]));
}

#[tokio::test]
async fn a_user_has_at_most_twenty_webhooks() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    for n in 0..20 {
        create(
            &app,
            &user,
            &format!("https://example.com/{n}"),
            &["translation.error"],
        )
        .await;
    }
    let response = app
        .send_json(
            Method::POST,
            "/api/webhooks",
            &user.key,
            json!({ "url": "https://example.com/21", "events": ["book.completed"] }),
        )
        .await;
    let body = assert_error(response, 400, "bad_request").await;
    assert!(body["message"].as_str().unwrap().contains("20"), "{body}");
}

#[tokio::test]
async fn another_users_webhook_is_not_found() {
    let app = TestApp::new().start().await;
    let (owner, other) = (app.user().await, app.user().await);
    let created = create(&app, &owner, "https://example.com/h", &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    let path = format!("/api/webhooks/{id}");
    for method in [Method::DELETE, Method::POST] {
        let response = app.request(method, &path, &other.key).send().await.unwrap();
        assert_error(response, 404, "not_found").await;
    }
    let history = app.get(&format!("{path}/deliveries"), &other.key).await;
    assert_error(history, 404, "not_found").await;
    let theirs: Value = app
        .get("/api/webhooks", &other.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["webhooks"], json!([]));
    let mine: Value = app
        .get("/api/webhooks", &owner.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(mine["webhooks"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_test_event_reaches_the_receiver_signed_over_the_exact_body() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(200).await;
    let created = create(&app, &user, &receiver.url, &["book.completed"]).await;
    let (id, secret) = (
        created["webhook"]["id"].as_str().unwrap(),
        created["secret"].as_str().unwrap(),
    );

    let answer = send_test(&app, &user, id).await;
    assert_eq!(
        answer,
        json!({ "success": true, "statusCode": 200, "response": "receiver says hi" })
    );
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(
        header(hit, "x-webhook-signature"),
        hmac_hex(secret, &hit.body)
    );
    assert_eq!(header(hit, "x-webhook-event"), "test");
    assert_eq!(header(hit, "content-type"), "application/json");
    let payload: Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(payload["event"], "test");
    assert!(payload["timestamp"].is_string());
    assert_eq!(
        payload["data"],
        json!({ "webhookId": id, "message": "This is a test event from booktr." })
    );

    let history = deliveries(&app, &user, id).await;
    assert_eq!(history.len(), 1);
    let delivery = &history[0];
    assert_eq!(header(hit, "x-webhook-delivery"), delivery["id"]);
    assert_eq!(delivery["event"], "test");
    assert_eq!(delivery["status"], "DELIVERED");
    assert_eq!(delivery["attempts"], 1);
    assert_eq!(delivery["lastStatusCode"], 200);
    assert_eq!(delivery["lastError"], Value::Null);
    assert_eq!(delivery["nextAttemptAt"], Value::Null);
}

#[tokio::test]
async fn a_test_event_reports_a_failing_or_unreachable_receiver() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(503).await;
    let created = create(&app, &user, &receiver.url, &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    let answer = send_test(&app, &user, id).await;
    assert_eq!(answer["success"], false);
    assert_eq!(answer["statusCode"], 503);
    let history = deliveries(&app, &user, id).await;
    assert_eq!(history[0]["status"], "FAILED");
    assert_eq!(history[0]["lastStatusCode"], 503);

    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}/hook", listener.local_addr().unwrap());
    drop(listener);
    let created = create(&app, &user, &closed, &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    let answer = send_test(&app, &user, id).await;
    assert_eq!(answer["success"], false);
    assert_eq!(answer["statusCode"], 0);
    assert!(!answer["response"].as_str().unwrap().is_empty(), "{answer}");
}

#[tokio::test]
async fn with_the_guard_on_private_destinations_are_refused() {
    let app = TestApp::new().with_webhook_guard().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(200).await;
    let plain = app
        .send_json(
            Method::POST,
            "/api/webhooks",
            &user.key,
            json!({ "url": receiver.url, "events": ["book.completed"] }),
        )
        .await;
    assert_error(plain, 400, "bad_request").await;

    let local_https = receiver.url.replace("http://", "https://");
    let by_name = local_https.replace("127.0.0.1", "localhost");
    for url in [
        "https://127.0.0.1/hook",
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        local_https.as_str(),
        by_name.as_str(),
    ] {
        let created = create(&app, &user, url, &["book.completed"]).await;
        let id = created["webhook"]["id"].as_str().unwrap();
        let answer = send_test(&app, &user, id).await;
        assert_eq!(answer["success"], false, "{url}: {answer}");
        assert_eq!(answer["statusCode"], 0, "{url}: {answer}");
        let why = answer["response"].as_str().unwrap();
        assert!(why.contains("not a public address"), "{url}: {why}");
        let history = deliveries(&app, &user, id).await;
        assert_eq!(history[0]["status"], "FAILED");
    }
    assert!(receiver.hits().is_empty());
}

#[tokio::test]
async fn an_event_is_delivered_to_the_webhooks_subscribed_to_it_only() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let (wanted, unwanted) = (Receiver::start(200).await, Receiver::start(200).await);
    let created = create(
        &app,
        &user,
        &wanted.url,
        &["book.completed", "translation.error"],
    )
    .await;
    create(&app, &user, &unwanted.url, &["translation.error"]).await;
    let secret = created["secret"].as_str().unwrap();
    let id = created["webhook"]["id"].as_str().unwrap();

    let occurrence = completed(&user, "book1", "book.completed:book1:1:epub");
    app.services.events.emit(&occurrence).await.unwrap();
    let pending = deliveries(&app, &user, id).await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["status"], "PENDING");
    assert_eq!(pending[0]["attempts"], 0);
    drain(&app).await;

    assert!(unwanted.hits().is_empty());
    let hits = wanted.hits();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(
        header(hit, "x-webhook-signature"),
        hmac_hex(secret, &hit.body)
    );
    assert_eq!(header(hit, "x-webhook-event"), "book.completed");
    let payload: Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(payload["event"], "book.completed");
    assert!(payload["timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        payload["data"],
        json!({
            "bookId": "book1",
            "title": "The Voyage",
            "status": "COMPLETED",
            "downloadUrl": "/api/download/book1?format=epub",
            "quality": {"flaggedBlocks": 0, "flagged": {}},
        })
    );
    let history = deliveries(&app, &user, id).await;
    assert_eq!(history[0]["status"], "DELIVERED");
    assert_eq!(history[0]["event"], "book.completed");
    assert_eq!(history[0]["attempts"], 1);

    // The same occurrence again (a redelivered job): nothing new is sent.
    app.services.events.emit(&occurrence).await.unwrap();
    drain(&app).await;
    assert_eq!(wanted.hits().len(), 1);
    assert_eq!(deliveries(&app, &user, id).await.len(), 1);
}

#[tokio::test]
async fn a_translation_error_carries_the_error_and_the_chapter() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(204).await;
    create(&app, &user, &receiver.url, &["translation.error"]).await;
    let occurrence = Occurrence {
        key: "translation.error:b2:1:3".into(),
        user_id: user.id.clone(),
        book_id: "b2".into(),
        title: "Dune".into(),
        status: "ERROR".into(),
        kind: EventKind::TranslationError {
            error: "the model refused".into(),
            chapter_index: 3,
        },
    };
    app.services.events.emit(&occurrence).await.unwrap();
    drain(&app).await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    let payload: Value = serde_json::from_slice(&hits[0].body).unwrap();
    assert_eq!(payload["event"], "translation.error");
    assert_eq!(
        payload["data"],
        json!({ "bookId": "b2", "title": "Dune", "error": "the model refused", "chapterIndex": 3 })
    );
}

#[tokio::test]
async fn a_failing_receiver_is_retried_after_1_5_and_30_minutes_and_then_the_delivery_fails() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(500).await;
    let created = create(&app, &user, &receiver.url, &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    app.services
        .events
        .emit(&completed(&user, "b", "book.completed:b:1:epub"))
        .await
        .unwrap();

    let start = app.clock.now();
    let mut expected_hits = 0;
    // (minutes to wait before the attempt, the delivery's state after it)
    for (wait, status, attempts) in [
        (0, "RETRYING", 1),
        (1, "RETRYING", 2),
        (5, "RETRYING", 3),
        (30, "FAILED", 4),
    ] {
        if wait > 0 {
            // A second early: not yet.
            app.clock
                .advance(chrono::Duration::minutes(wait) - chrono::Duration::seconds(1));
            drain(&app).await;
            assert_eq!(
                receiver.hits().len(),
                expected_hits,
                "before the {wait} min retry"
            );
            app.clock.advance(chrono::Duration::seconds(1));
        }
        drain(&app).await;
        expected_hits += 1;
        assert_eq!(receiver.hits().len(), expected_hits);
        let delivery = &deliveries(&app, &user, id).await[0];
        assert_eq!(delivery["status"], status, "{delivery}");
        assert_eq!(delivery["attempts"], attempts);
        assert_eq!(delivery["lastStatusCode"], 500);
        assert!(delivery["lastError"].as_str().unwrap().contains("500"));
        let now = booktr_core::items::time_text(app.clock.now());
        assert_eq!(delivery["lastAttemptAt"], now);
        if status == "RETRYING" {
            let next_wait = [1, 5, 30][attempts - 1];
            let next = app.clock.now() + chrono::Duration::minutes(next_wait);
            assert_eq!(
                delivery["nextAttemptAt"],
                booktr_core::items::time_text(next)
            );
        } else {
            assert_eq!(delivery["nextAttemptAt"], Value::Null);
        }
    }
    assert_eq!(app.clock.now() - start, chrono::Duration::minutes(36));
    // Failed for good: no fifth attempt however long we wait.
    app.clock.advance(chrono::Duration::hours(3));
    drain(&app).await;
    assert_eq!(receiver.hits().len(), 4);
}

#[tokio::test]
async fn a_receiver_that_recovers_stops_the_retries() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(502).await;
    let created = create(&app, &user, &receiver.url, &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    app.services
        .events
        .emit(&completed(&user, "b", "book.completed:b:1:pdf"))
        .await
        .unwrap();
    drain(&app).await;
    receiver.status.store(200, Ordering::SeqCst);
    app.clock.advance(chrono::Duration::minutes(1));
    drain(&app).await;
    let delivery = &deliveries(&app, &user, id).await[0];
    assert_eq!(delivery["status"], "DELIVERED");
    assert_eq!(delivery["attempts"], 2);
    assert_eq!(delivery["lastStatusCode"], 200);
    assert_eq!(delivery["lastError"], Value::Null);
    assert_eq!(delivery["nextAttemptAt"], Value::Null);
    app.clock.advance(chrono::Duration::hours(1));
    drain(&app).await;
    assert_eq!(receiver.hits().len(), 2);
    // Both attempts carried the same delivery id and the same bytes.
    let hits = receiver.hits();
    assert_eq!(hits[0].body, hits[1].body);
    assert_eq!(
        header(&hits[0], "x-webhook-delivery"),
        header(&hits[1], "x-webhook-delivery")
    );
}

#[tokio::test]
async fn deleting_a_webhook_drops_its_queued_deliveries() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(200).await;
    let created = create(&app, &user, &receiver.url, &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    app.services
        .events
        .emit(&completed(&user, "b", "book.completed:b:2:epub"))
        .await
        .unwrap();
    let path = format!("/api/webhooks/{id}");
    let deleted = app
        .request(Method::DELETE, &path, &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    drain(&app).await;
    assert!(receiver.hits().is_empty());
    let history = app.get(&format!("{path}/deliveries"), &user.key).await;
    assert_error(history, 404, "not_found").await;
}

#[tokio::test]
async fn the_history_lists_newest_first() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let receiver = Receiver::start(200).await;
    let created = create(&app, &user, &receiver.url, &["book.completed"]).await;
    let id = created["webhook"]["id"].as_str().unwrap();
    send_test(&app, &user, id).await;
    app.services
        .events
        .emit(&completed(&user, "b", "book.completed:b:3:epub"))
        .await
        .unwrap();
    let history = deliveries(&app, &user, id).await;
    let events: Vec<&str> = history
        .iter()
        .map(|d| d["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["book.completed", "test"]);
    assert_eq!(history[0]["status"], "PENDING");
    for field in [
        "id",
        "event",
        "status",
        "attempts",
        "lastStatusCode",
        "lastError",
        "createdAt",
        "lastAttemptAt",
        "nextAttemptAt",
    ] {
        assert!(history[0].get(field).is_some(), "{field} missing");
    }
}
