//! In-app notifications (made by `services.events.emit`, as the job code does) and the
//! notification settings. Emails are checked on a local SMTP sink.

use booktr_core::events::{EventKind, Occurrence};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp, TestUser};
use crate::smtp_sink::SmtpSink;

fn occurrence(user: &TestUser, n: usize, kind: EventKind) -> Occurrence {
    Occurrence {
        key: format!("{}:book{n}:1", kind.name()),
        user_id: user.id.clone(),
        book_id: format!("book{n}"),
        title: format!("Book {n}"),
        status: "COMPLETED".into(),
        kind,
    }
}

fn done(n: usize) -> EventKind {
    EventKind::BookCompleted {
        download_path: format!("/api/download/book{n}?format=epub"),
        flagged: Default::default(),
    }
}

/// Emits `count` book.completed events for the user, book0 first.
async fn emit_completed(app: &TestApp, user: &TestUser, count: usize) {
    for n in 0..count {
        app.services
            .events
            .emit(&occurrence(user, n, done(n)))
            .await
            .unwrap();
    }
}

async fn list(app: &TestApp, user: &TestUser, query: &str) -> Value {
    let response = app
        .get(&format!("/api/notifications{query}"), &user.key)
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn unread_count(app: &TestApp, user: &TestUser) -> Value {
    let response = app.get("/api/notifications/unread-count", &user.key).await;
    assert_eq!(response.status(), 200);
    response.json::<Value>().await.unwrap()["count"].clone()
}

async fn mark(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let response = app
        .send_json(Method::POST, "/api/notifications/read", &user.key, body)
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

fn ids(page: &Value) -> Vec<String> {
    page["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn notifications_are_listed_newest_first_in_pages() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    emit_completed(&app, &user, 25).await;

    let first = list(&app, &user, "").await;
    assert_eq!(
        first["pagination"],
        json!({ "page": 1, "limit": 20, "total": 25, "totalPages": 2 })
    );
    let notifications = first["notifications"].as_array().unwrap();
    assert_eq!(notifications.len(), 20);
    let newest = &notifications[0];
    assert_eq!(newest["type"], "BOOK_COMPLETED");
    // Absolute, so that it opens from an email or another app too.
    assert_eq!(
        newest["link"],
        format!("{}/dashboard/books/book24", app.url)
    );
    assert_eq!(newest["read"], false);
    assert!(newest["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(newest["message"].as_str().unwrap().contains("Book 24"));
    assert!(newest["createdAt"].is_string());

    let second = list(&app, &user, "?page=2").await;
    assert_eq!(second["notifications"].as_array().unwrap().len(), 5);
    assert_eq!(
        second["notifications"][4]["link"],
        format!("{}/dashboard/books/book0", app.url)
    );
    let small = list(&app, &user, "?page=3&limit=10").await;
    assert_eq!(
        small["pagination"],
        json!({ "page": 3, "limit": 10, "total": 25, "totalPages": 3 })
    );
    assert_eq!(small["notifications"].as_array().unwrap().len(), 5);
    let beyond = list(&app, &user, "?page=9").await;
    assert_eq!(beyond["notifications"], json!([]));
}

#[tokio::test]
async fn a_new_user_has_no_notifications() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let page = list(&app, &user, "").await;
    assert_eq!(
        page,
        json!({ "notifications": [], "pagination": { "page": 1, "limit": 20, "total": 0, "totalPages": 0 } })
    );
    assert_eq!(unread_count(&app, &user).await, 0);
}

#[tokio::test]
async fn marking_read_changes_the_unread_filter_and_count() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    emit_completed(&app, &user, 4).await;
    assert_eq!(unread_count(&app, &user).await, 4);
    let all = ids(&list(&app, &user, "").await);

    let marked = mark(
        &app,
        &user,
        json!({ "notificationIds": [all[0], all[1], all[1]] }),
    )
    .await;
    assert_eq!(marked, json!({ "success": true, "markedCount": 2 }));
    // Already read: not counted again.
    let again = mark(&app, &user, json!({ "notificationIds": [all[0]] })).await;
    assert_eq!(again["markedCount"], 0);
    assert_eq!(unread_count(&app, &user).await, 2);

    let unread = list(&app, &user, "?unread=true").await;
    assert_eq!(ids(&unread), all[2..].to_vec());
    assert_eq!(unread["pagination"]["total"], 2);
    let everything = list(&app, &user, "?unread=false").await;
    assert_eq!(everything["pagination"]["total"], 4);
    assert_eq!(everything["notifications"][0]["read"], true);

    let none = mark(&app, &user, json!({ "notificationIds": [] })).await;
    assert_eq!(none["markedCount"], 0);
    let read_all = app
        .request(Method::POST, "/api/notifications/read-all", &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(read_all.status(), 200);
    assert_eq!(
        read_all.json::<Value>().await.unwrap(),
        json!({ "success": true, "markedCount": 2 })
    );
    assert_eq!(unread_count(&app, &user).await, 0);
}

#[tokio::test]
async fn mark_read_without_ids_marks_every_notification() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    emit_completed(&app, &user, 3).await;
    let marked = mark(&app, &user, json!({})).await;
    assert_eq!(marked["markedCount"], 3);
    emit_completed(&app, &user, 0).await;
    let empty_body = app
        .request(Method::POST, "/api/notifications/read", &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(empty_body.status(), 200);
    assert_eq!(empty_body.json::<Value>().await.unwrap()["markedCount"], 0);
}

#[tokio::test]
async fn another_users_notifications_can_be_neither_seen_nor_marked() {
    let app = TestApp::new().start().await;
    let (owner, other) = (app.user().await, app.user().await);
    emit_completed(&app, &owner, 2).await;
    let theirs = ids(&list(&app, &owner, "").await);

    assert_eq!(list(&app, &other, "").await["pagination"]["total"], 0);
    let marked = mark(&app, &other, json!({ "notificationIds": theirs })).await;
    assert_eq!(marked["markedCount"], 0);
    let read_all = app
        .request(Method::POST, "/api/notifications/read-all", &other.key)
        .send()
        .await
        .unwrap();
    assert_eq!(read_all.json::<Value>().await.unwrap()["markedCount"], 0);
    assert_eq!(unread_count(&app, &owner).await, 2);
}

#[tokio::test]
async fn invalid_list_parameters_and_bodies_are_400() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    for query in [
        "?page=0",
        "?page=-1",
        "?page=abc",
        "?limit=0",
        "?limit=101",
        "?limit=ten",
        "?unread=yes",
    ] {
        let response = app
            .get(&format!("/api/notifications{query}"), &user.key)
            .await;
        assert_error(response, 400, "bad_request").await;
    }
    assert_eq!(
        list(&app, &user, "?limit=100").await["pagination"]["limit"],
        100
    );
    for body in [
        json!({ "notificationIds": "abc" }),
        json!({ "notificationIds": [1, 2] }),
        json!({ "ids": [] }),
    ] {
        let response = app
            .send_json(Method::POST, "/api/notifications/read", &user.key, body)
            .await;
        assert_error(response, 400, "bad_request").await;
    }
}

#[tokio::test]
async fn a_translation_error_makes_a_translation_error_notification() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let kind = EventKind::TranslationError {
        error: "the model timed out".into(),
        chapter_index: 7,
    };
    app.services
        .events
        .emit(&occurrence(&user, 1, kind))
        .await
        .unwrap();
    let page = list(&app, &user, "").await;
    let n = &page["notifications"][0];
    assert_eq!(n["type"], "TRANSLATION_ERROR");
    assert_eq!(n["link"], format!("{}/dashboard/books/book1", app.url));
    let message = n["message"].as_str().unwrap();
    assert!(
        message.contains("the model timed out") && message.contains('7'),
        "{message}"
    );
}

#[tokio::test]
async fn emitting_the_same_occurrence_twice_notifies_once() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    emit_completed(&app, &user, 1).await;
    emit_completed(&app, &user, 1).await;
    assert_eq!(unread_count(&app, &user).await, 1);
}

#[tokio::test]
async fn notification_settings_default_and_accept_any_subset_of_the_booleans() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let defaults: Value = app
        .get("/api/settings/notifications", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        defaults,
        json!({
            "emailBookCompleted": true,
            "emailTranslationError": true,
            "emailWeeklyDigest": false,
            "emailNewsletter": false,
            "pushEnabled": false,
            "inAppEnabled": true,
        })
    );
    let response = app
        .send_json(
            Method::PATCH,
            "/api/settings/notifications",
            &user.key,
            json!({ "inAppEnabled": false, "emailNewsletter": true }),
        )
        .await;
    assert_eq!(response.status(), 200);
    let changed: Value = response.json().await.unwrap();
    assert_eq!(changed["inAppEnabled"], false);
    assert_eq!(changed["emailNewsletter"], true);
    assert_eq!(changed["emailBookCompleted"], true);
    let read_back: Value = app
        .get("/api/settings/notifications", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(read_back, changed);

    for body in [json!({ "inAppEnabled": "no" }), json!({ "sms": true })] {
        let response = app
            .send_json(
                Method::PATCH,
                "/api/settings/notifications",
                &user.key,
                body,
            )
            .await;
        assert_error(response, 400, "bad_request").await;
    }

    // With in-app notifications off, an event makes none.
    emit_completed(&app, &user, 1).await;
    assert_eq!(unread_count(&app, &user).await, 0);
}

#[tokio::test]
async fn emails_follow_the_email_settings() {
    let sink = SmtpSink::start().await;
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_SMTP_URL", sink.url.as_str()),
            ("BOOKTR_MAIL_FROM", "booktr <noreply@books.example>"),
        ])
        .start()
        .await;
    let user = app.user().await;
    let email = app.services.accounts.user(&user.id).await.unwrap().email;
    let to = email.to_string();

    emit_completed(&app, &user, 2).await;
    let sent = sink.wait_for(&to, "\"Book 1\" is translated").await;
    for link in [
        format!("{}/dashboard/books/book1", app.url),
        format!("{}/api/download/book1?format=epub", app.url),
    ] {
        assert!(sent.body().contains(&link), "{}", sent.body());
    }

    app.send_json(
        Method::PATCH,
        "/api/settings/notifications",
        &user.key,
        json!({ "emailBookCompleted": false }),
    )
    .await;
    app.services
        .events
        .emit(&occurrence(&user, 3, done(3)))
        .await
        .unwrap();
    let kind = EventKind::TranslationError {
        error: "boom".into(),
        chapter_index: 2,
    };
    app.services
        .events
        .emit(&occurrence(&user, 4, kind))
        .await
        .unwrap();
    let failed = sink.wait_for(&to, "Translating \"Book 4\" failed").await;
    assert!(failed.body().contains("boom"));
    // Emails go out as the event is emitted: by now the third one would have arrived.
    assert_eq!(sink.received().len(), 3, "{:#?}", sink.received());
}

#[tokio::test]
async fn a_mail_failure_does_not_fail_the_event() {
    // A relay nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("smtp://{}", closed.local_addr().unwrap());
    drop(closed);
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_SMTP_URL", url.as_str()),
            ("BOOKTR_MAIL_FROM", "noreply@books.example"),
        ])
        .start()
        .await;
    let user = app.user().await;
    app.services
        .events
        .emit(&occurrence(&user, 1, done(1)))
        .await
        .unwrap();
    assert_eq!(unread_count(&app, &user).await, 1);
}
