//! The administrator's email settings against a local SMTP sink, and the emails the service
//! sends through them: tests, verification messages, BOOK_COMPLETED and the weekly digest.

use booktr_core::ports::Clock;
use booktr_core::types::{Plan, Role};
use chrono::{Datelike, Duration, Timelike};
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{assert_error, on_aws, TestApp, TestUser};
use crate::smtp_sink::SmtpSink;

const FROM: &str = "booktr <noreply@books.example>";

async fn with_sink() -> (TestApp, SmtpSink) {
    let sink = SmtpSink::start().await;
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_SMTP_URL", sink.url.as_str()),
            ("BOOKTR_MAIL_FROM", FROM),
        ])
        .start()
        .await;
    (app, sink)
}

async fn super_admin(app: &TestApp) -> TestUser {
    app.user_with(Plan::Business, Role::SuperAdmin).await
}

async fn json_of(response: Response) -> Value {
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn email_of(app: &TestApp, user: &TestUser) -> String {
    let me = json_of(app.get("/api/user", &user.key).await).await;
    me["user"]["email"]
        .as_str()
        .or(me["email"].as_str())
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn every_admin_email_route_is_for_super_admins_only() {
    let app = TestApp::new().with_workers().start().await;
    let routes = [
        (Method::GET, "/api/admin/emails/config", json!({})),
        (
            Method::PUT,
            "/api/admin/emails/config",
            json!({"senderPrefix": "support"}),
        ),
        (Method::POST, "/api/admin/emails/test", json!({})),
        (
            Method::POST,
            "/api/admin/emails/verify",
            json!({"email": "a@example.com"}),
        ),
        (
            Method::DELETE,
            "/api/admin/emails/verify?email=a@example.com",
            json!({}),
        ),
    ];
    for role in [Role::User, Role::Admin, Role::Dev] {
        let user = app.user_with(Plan::Business, role).await;
        for (method, path, body) in &routes {
            let response = app
                .send_json(method.clone(), path, &user.key, body.clone())
                .await;
            assert_error(response, 403, "forbidden").await;
        }
        // A body that would be a 400 is still a 403: the role is checked first.
        let response = app
            .send_json(
                Method::PUT,
                "/api/admin/emails/config",
                &user.key,
                json!({"senderPrefix": "nobody"}),
            )
            .await;
        assert_error(response, 403, "forbidden").await;
    }
    let response = app
        .anonymous(Method::GET, "/api/admin/emails/config")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn the_config_shows_the_server_and_a_changed_sender_is_used_by_the_next_message() {
    let (app, sink) = with_sink().await;
    let admin = super_admin(&app).await;
    let config = json_of(app.get("/api/admin/emails/config", &admin.key).await).await;
    let port: u16 = sink.url.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(config["configured"], true);
    assert_eq!(config["provider"], "smtp");
    assert_eq!(config["smtpHost"], "127.0.0.1");
    assert_eq!(config["smtpPort"], port);
    assert_eq!(config["senderEmail"], "noreply@books.example");
    assert_eq!(config["senderName"], "booktr");
    assert_eq!(config["connected"], false, "no test yet");
    assert_eq!(config["lastTestAt"], Value::Null);
    assert_eq!(config["lastTestStatus"], Value::Null);
    assert_eq!(config["error"], Value::Null);

    let changed = json_of(
        app.send_json(
            Method::PUT,
            "/api/admin/emails/config",
            &admin.key,
            json!({"senderPrefix": "support", "senderName": "Books Team", "replyToPrefix": "team"}),
        )
        .await,
    )
    .await;
    assert_eq!(
        changed,
        json!({"success": true, "senderEmail": "support@books.example"})
    );
    for bad in [
        json!({"senderPrefix": "admin"}),
        json!({"replyToPrefix": "postmaster"}),
        json!({"senderName": "Books\r\nBcc: everyone@example.com"}),
        json!({"senderName": ""}),
        json!({"colour": "red"}),
    ] {
        let response = app
            .send_json(Method::PUT, "/api/admin/emails/config", &admin.key, bad)
            .await;
        assert_error(response, 400, "bad_request").await;
    }

    // The connection test, then a real test message with the new sender.
    let tested = json_of(
        app.anonymous(Method::POST, "/api/admin/emails/test")
            .bearer_auth(&admin.key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(tested["success"], true, "{tested}");
    let config = json_of(app.get("/api/admin/emails/config", &admin.key).await).await;
    assert_eq!(config["connected"], true);
    assert_eq!(config["lastTestStatus"], "success");
    assert!(config["lastTestAt"].is_string());
    assert_eq!(config["senderName"], "Books Team");
    assert_eq!(config["replyToEmail"], "team@books.example");

    let sent = json_of(
        app.send_json(
            Method::POST,
            "/api/admin/emails/test",
            &admin.key,
            json!({"email": "ops@example.com"}),
        )
        .await,
    )
    .await;
    assert_eq!(sent["success"], true, "{sent}");
    let message = sink
        .wait_for("ops@example.com", "booktr test message")
        .await;
    assert_eq!(message.mail_from, "support@books.example");
    let from = message.header("from").unwrap();
    assert!(
        from.contains("Books Team") && from.contains("<support@books.example>"),
        "{from}"
    );
    assert_eq!(
        message.header("reply-to").as_deref(),
        Some("team@books.example")
    );
    let response = app
        .send_json(
            Method::POST,
            "/api/admin/emails/test",
            &admin.key,
            json!({"email": "not an address"}),
        )
        .await;
    assert_error(response, 400, "bad_request").await;

    // Clearing the reply-to address.
    app.send_json(
        Method::PUT,
        "/api/admin/emails/config",
        &admin.key,
        json!({"replyToPrefix": null}),
    )
    .await;
    let config = json_of(app.get("/api/admin/emails/config", &admin.key).await).await;
    assert_eq!(config["replyToEmail"], Value::Null);
    assert_eq!(config["senderEmail"], "support@books.example");
}

#[tokio::test]
async fn a_server_that_does_not_answer_is_reported_by_the_test() {
    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("smtp://{}", closed.local_addr().unwrap());
    drop(closed);
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_SMTP_URL", url.as_str()),
            ("BOOKTR_MAIL_FROM", FROM),
        ])
        .start()
        .await;
    let admin = super_admin(&app).await;
    let tested = json_of(
        app.send_json(
            Method::POST,
            "/api/admin/emails/test",
            &admin.key,
            json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(tested["success"], false, "{tested}");
    let config = json_of(app.get("/api/admin/emails/config", &admin.key).await).await;
    assert_eq!(config["connected"], false);
    assert_eq!(config["lastTestStatus"], "failure");
    assert!(config["error"].as_str().is_some_and(|e| !e.is_empty()));

    // Without any SMTP server configured, the test says so.
    let local = TestApp::new().with_workers().start().await;
    let admin = super_admin(&local).await;
    let config = json_of(local.get("/api/admin/emails/config", &admin.key).await).await;
    assert_eq!(config["configured"], false);
    // Into the data directory's outbox; on Lambda, which has none, nowhere.
    let provider = if on_aws() { "log" } else { "outbox" };
    assert_eq!(config["provider"], provider);
    let tested = json_of(
        local
            .send_json(
                Method::POST,
                "/api/admin/emails/test",
                &admin.key,
                json!({}),
            )
            .await,
    )
    .await;
    assert_eq!(tested["success"], false);
    assert!(tested["message"]
        .as_str()
        .unwrap()
        .contains("BOOKTR_SMTP_URL"));
}

#[tokio::test]
async fn in_sandbox_mode_only_verified_recipients_get_mail_and_the_removal_is_deprecated() {
    let (app, sink) = with_sink().await;
    let admin = super_admin(&app).await;
    app.send_json(
        Method::PUT,
        "/api/admin/emails/config",
        &admin.key,
        json!({"sandbox": true, "senderName": "Staging"}),
    )
    .await;
    let refused = json_of(
        app.send_json(
            Method::POST,
            "/api/admin/emails/test",
            &admin.key,
            json!({"email": "qa@example.com"}),
        )
        .await,
    )
    .await;
    assert_eq!(refused["success"], false);
    assert!(refused["message"].as_str().unwrap().contains("sandbox"));

    let verified = json_of(
        app.send_json(
            Method::POST,
            "/api/admin/emails/verify",
            &admin.key,
            json!({"email": "qa@example.com"}),
        )
        .await,
    )
    .await;
    assert_eq!(verified["success"], true, "{verified}");
    let message = sink.wait_for("qa@example.com", "verify this address").await;
    assert!(message.header("from").unwrap().contains("Staging"));
    assert!(message.body().contains("sandbox mode"));
    let config = json_of(app.get("/api/admin/emails/config", &admin.key).await).await;
    assert_eq!(config["allowedRecipients"], json!(["qa@example.com"]));
    let sent = json_of(
        app.send_json(
            Method::POST,
            "/api/admin/emails/test",
            &admin.key,
            json!({"email": "qa@example.com"}),
        )
        .await,
    )
    .await;
    assert_eq!(sent["success"], true, "{sent}");
    sink.wait_for("qa@example.com", "booktr test message").await;

    for bad in [json!({}), json!({"email": "nope"})] {
        let response = app
            .send_json(Method::POST, "/api/admin/emails/verify", &admin.key, bad)
            .await;
        assert_error(response, 400, "bad_request").await;
    }
    let missing = app
        .send_json(
            Method::DELETE,
            "/api/admin/emails/verify",
            &admin.key,
            json!({}),
        )
        .await;
    assert_error(missing, 400, "bad_request").await;
    let removed = app
        .send_json(
            Method::DELETE,
            "/api/admin/emails/verify?email=qa@example.com",
            &admin.key,
            json!({}),
        )
        .await;
    assert_eq!(removed.status(), 200);
    assert_eq!(removed.headers()["deprecation"], "@1795392000");
    let body: Value = removed.json().await.unwrap();
    assert_eq!(body["success"], true);
    assert!(body["message"].as_str().unwrap().contains("Deprecated"));
    let config = json_of(app.get("/api/admin/emails/config", &admin.key).await).await;
    assert_eq!(config["allowedRecipients"], json!([]));
}

/// Moves the test clock to the next Monday at 09:00 UTC, when last week's digests are due.
fn to_next_monday_morning(app: &TestApp) {
    let now = app.clock.now();
    let days = 7 - i64::from(now.weekday().num_days_from_monday());
    let monday = (now + Duration::days(days))
        .with_hour(9)
        .and_then(|t| t.with_minute(0))
        .unwrap();
    app.clock.advance(monday - now);
}

#[tokio::test]
async fn the_book_completed_email_and_the_weekly_digest_arrive_with_the_configured_sender() {
    let (app, sink) = with_sink().await;
    // The app queues the digests that are due as it starts, as served: last week's, with nobody
    // subscribed yet. Whichever check comes first does the week, once.
    assert_eq!(app.services.digests.queue_due().await.unwrap(), 0);
    let admin = super_admin(&app).await;
    app.send_json(
        Method::PUT,
        "/api/admin/emails/config",
        &admin.key,
        json!({"senderPrefix": "notifications", "senderName": "booktr news"}),
    )
    .await;
    let reader = app.user().await;
    let address = email_of(&app, &reader).await;
    let opted = app
        .send_json(
            Method::PATCH,
            "/api/settings/notifications",
            &reader.key,
            json!({"emailWeeklyDigest": true}),
        )
        .await;
    assert_eq!(opted.status(), 200);
    let quiet = app.user().await;
    let quiet_address = email_of(&app, &quiet).await;
    app.send_json(
        Method::PATCH,
        "/api/settings/notifications",
        &quiet.key,
        json!({"emailWeeklyDigest": true}),
    )
    .await;
    app.user().await; // not subscribed

    app.translated_sample(&reader.key).await;
    let completed = sink.wait_for(&address, "is translated").await;
    let from = completed.header("from").unwrap();
    assert!(
        from.contains("booktr news") && from.contains("<notifications@books.example>"),
        "{from}"
    );

    // Last week's digests were queued at the start; this week's are due from next Monday.
    assert_eq!(app.services.digests.queue_due().await.unwrap(), 0);
    to_next_monday_morning(&app);
    assert_eq!(app.services.digests.queue_due().await.unwrap(), 2);
    assert_eq!(
        app.services.digests.queue_due().await.unwrap(),
        0,
        "queued once a week"
    );
    let digest = sink.wait_for(&address, "Your week on booktr").await;
    assert!(digest
        .header("from")
        .unwrap()
        .contains("notifications@books.example"));
    assert!(
        digest.body().contains("Books translated (1)"),
        "{}",
        digest.body()
    );
    assert!(digest.body().contains("voyage"), "{}", digest.body());
    let notifications = json_of(app.get("/api/notifications", &reader.key).await).await;
    assert!(
        notifications.to_string().contains("WEEKLY_DIGEST"),
        "{notifications}"
    );
    // A quiet week sends nothing; nor does anyone who did not subscribe.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let digests: Vec<_> = sink
        .received()
        .into_iter()
        .filter(|m| m.header("subject").is_some_and(|s| s.contains("Your week")))
        .collect();
    assert_eq!(digests.len(), 1, "{digests:#?}");
    assert!(!digests[0].rcpt_to.contains(&quiet_address));
}
