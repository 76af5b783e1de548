//! Rate limits (per user, per address, sign-in) and plan quotas with `GET /api/usage`.

use booktr_core::jobs::runner;
use booktr_core::ports::Clock;
use booktr_core::types::{Plan, Role};
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{assert_error, sample_txt, TestApp};

fn header(response: &Response, name: &str) -> Option<i64> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

async fn assert_rate_limited(response: Response) -> i64 {
    let retry_after = header(&response, "retry-after").expect("Retry-After on a 429");
    assert_eq!(header(&response, "x-ratelimit-remaining"), Some(0));
    assert_error(response, 429, "rate_limited").await;
    retry_after
}

#[tokio::test]
async fn a_free_users_61st_request_in_a_minute_is_refused_and_the_headers_count_down() {
    let app = TestApp::new().start().await;
    let free = app.user_with(Plan::Free, Role::User).await;
    let mut last_remaining = i64::MAX;
    for _ in 0..60 {
        let response = app.get("/api/user", &free.key).await;
        assert_eq!(response.status(), 200);
        assert_eq!(header(&response, "x-ratelimit-limit"), Some(60));
        let remaining = header(&response, "x-ratelimit-remaining").unwrap();
        assert!(
            remaining < last_remaining,
            "{remaining} after {last_remaining}"
        );
        last_remaining = remaining;
        let reset = header(&response, "x-ratelimit-reset").unwrap();
        let now = app.clock.now().timestamp();
        assert!(reset > now && reset <= now + 60, "{reset} vs {now}");
    }
    assert_eq!(last_remaining, 0);
    let retry_after = assert_rate_limited(app.get("/api/books", &free.key).await).await;
    assert!((1..=60).contains(&retry_after), "{retry_after}");

    // Someone else is not affected, and the next minute opens again.
    let other = app.user_with(Plan::Free, Role::User).await;
    assert_eq!(app.get("/api/user", &other.key).await.status(), 200);
    app.clock.advance(chrono::Duration::seconds(61));
    assert_eq!(app.get("/api/user", &free.key).await.status(), 200);
}

#[tokio::test]
async fn the_hour_window_bites_when_the_minute_window_does_not() {
    let app = TestApp::new().start().await;
    let free = app.user_with(Plan::Free, Role::User).await;
    // Windows are fixed to the clock: start at the top of an hour so that the two minutes
    // below never cross into the next one (the test clock starts at the real time).
    let into_hour = app.clock.now().timestamp().rem_euclid(3600);
    app.clock
        .advance(chrono::Duration::seconds(3600 - into_hour));
    for _ in 0..2 {
        for _ in 0..50 {
            assert_eq!(app.get("/api/user", &free.key).await.status(), 200);
        }
        app.clock.advance(chrono::Duration::seconds(61));
    }
    // 100 this hour, none this minute: the hour's window is the one closest to running out.
    let refused = app.get("/api/user", &free.key).await;
    assert_eq!(header(&refused, "x-ratelimit-limit"), Some(100));
    let retry_after = assert_rate_limited(refused).await;
    assert!(retry_after > 60, "{retry_after}");
}

#[tokio::test]
async fn paid_plans_get_their_own_limits_and_dev_is_never_limited() {
    let app = TestApp::new().start().await;
    let pro = app.user_with(Plan::Pro, Role::User).await;
    let response = app.get("/api/user", &pro.key).await;
    assert_eq!(header(&response, "x-ratelimit-limit"), Some(300));
    let dev = app.user_with(Plan::Free, Role::Dev).await;
    for _ in 0..150 {
        let response = app.get("/api/user", &dev.key).await;
        assert_eq!(response.status(), 200);
        assert!(response.headers().get("x-ratelimit-limit").is_none());
    }
}

#[tokio::test]
async fn public_requests_are_limited_per_address_with_the_free_numbers() {
    let app = TestApp::new().start().await;
    for _ in 0..60 {
        let response = app.get_anonymous("/api/health").await;
        assert_eq!(response.status(), 200);
        assert_eq!(header(&response, "x-ratelimit-limit"), Some(60));
    }
    assert_rate_limited(app.get_anonymous("/api/health").await).await;
    // Unknown API routes and bad credentials count against the address too.
    assert_rate_limited(app.get_anonymous("/api/nowhere").await).await;
    assert_rate_limited(app.get("/api/books", "bt_not-a-key").await).await;
    // A signed-in user is counted as themselves.
    let user = app.user().await;
    assert_eq!(app.get("/api/user", &user.key).await.status(), 200);
}

#[tokio::test]
async fn the_limits_hold_across_two_servers_sharing_one_table() {
    let app = TestApp::new().start().await;
    let twin = app.twin().await;
    let free = app.user_with(Plan::Free, Role::User).await;
    for n in 0..60 {
        let base = if n % 2 == 0 { &app.url } else { &twin };
        let response = app
            .client
            .get(format!("{base}/api/user"))
            .bearer_auth(&free.key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "request {n}");
    }
    for base in [&app.url, &twin] {
        let response = app
            .client
            .get(format!("{base}/api/user"))
            .bearer_auth(&free.key)
            .send()
            .await
            .unwrap();
        assert_rate_limited(response).await;
    }
}

async fn sign_in(app: &TestApp, email: &str, password: &str) -> Response {
    app.post_anonymous(
        "/api/auth/signin",
        &json!({"email": email, "password": password}),
    )
    .await
}

#[tokio::test]
async fn sign_in_is_limited_per_email_and_per_address_and_works_again_after_the_window() {
    let app = TestApp::new().start().await;
    let email = "victim@example.com";
    let signed_up = app
        .post_anonymous(
            "/api/auth/signup",
            &json!({"email": email, "password": "the right password"}),
        )
        .await;
    assert_eq!(signed_up.status(), 201);
    for _ in 0..5 {
        assert_error(
            sign_in(&app, email, "wrong password").await,
            401,
            "unauthorized",
        )
        .await;
    }
    // The email's limit: even the right password waits for the window.
    let body = assert_error(
        sign_in(&app, email, "the right password").await,
        429,
        "rate_limited",
    )
    .await;
    assert!(
        body["message"].as_str().unwrap().contains("account"),
        "{body}"
    );
    // The address's limit: guesses at other accounts run out too (1 sign-up + 6 so far).
    for n in 0..3 {
        let other = format!("other{n}@example.com");
        assert_error(sign_in(&app, &other, "guess").await, 401, "unauthorized").await;
    }
    let body = assert_error(
        sign_in(&app, "other@example.com", "guess").await,
        429,
        "rate_limited",
    )
    .await;
    assert!(
        body["message"].as_str().unwrap().contains("address"),
        "{body}"
    );

    app.clock.advance(chrono::Duration::minutes(61));
    assert_eq!(
        sign_in(&app, email, "the right password").await.status(),
        200
    );
}

#[tokio::test]
async fn usage_counts_a_book_at_upload_and_its_words_at_translation() {
    let app = TestApp::new().with_workers().start().await;
    let free = app.user_with(Plan::Free, Role::User).await;
    let usage: Value = app.get("/api/usage", &free.key).await.json().await.unwrap();
    assert_eq!(usage["plan"], "FREE");
    assert_eq!(usage["planName"], "Free");
    assert_eq!(
        usage["books"],
        json!({"used": 0, "limit": 3, "remaining": 3, "percentage": 0.0})
    );
    assert_eq!(usage["words"]["limit"], 100_000);
    assert_eq!(usage["priority"], false);
    assert_eq!(
        usage["allowedModels"],
        json!(["gpt-4o-mini", "claude-3-haiku", "gemini-2.0-flash"])
    );
    let reset = usage["resetDate"].as_str().unwrap();
    assert!(reset.ends_with("-01T00:00:00Z"), "{reset}");

    let book_id = app.upload_ok(&free.key, "voyage.txt", sample_txt()).await;
    let book = app.wait_for_status(&free.key, &book_id, "EXTRACTED").await;
    let words = book["wordCount"].as_u64().unwrap();
    let usage: Value = app.get("/api/usage", &free.key).await.json().await.unwrap();
    assert_eq!(usage["books"]["used"], 1);
    assert_eq!(usage["words"]["used"], 0);

    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &free.key,
            json!({"bookId": book_id}),
        )
        .await;
    assert_eq!(started.status(), 200);
    let usage: Value = app.get("/api/usage", &free.key).await.json().await.unwrap();
    assert_eq!(usage["words"]["used"], words);
    assert_eq!(usage["words"]["remaining"], 100_000 - words);

    let dev = app.user_with(Plan::Free, Role::Dev).await;
    let usage: Value = app.get("/api/usage", &dev.key).await.json().await.unwrap();
    assert_eq!(usage["books"]["limit"], Value::Null);
    assert_eq!(usage["words"]["remaining"], Value::Null);
    assert_eq!(usage["allowedModels"].as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn an_upload_or_a_start_over_quota_is_refused_and_nothing_is_queued() {
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_QUOTA_FREE_BOOKS", "2"),
            ("BOOKTR_QUOTA_FREE_WORDS", "10"),
        ])
        .start()
        .await;
    let free = app.user_with(Plan::Free, Role::User).await;
    let book_id = app.upload_ok(&free.key, "voyage.txt", sample_txt()).await;
    app.wait_for_status(&free.key, &book_id, "EXTRACTED").await;
    let refused = app
        .send_json(
            Method::POST,
            "/api/translate",
            &free.key,
            json!({"bookId": book_id}),
        )
        .await;
    let body = assert_error(refused, 400, "quota_exceeded").await;
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("words") && message.contains("resets on"),
        "{message}"
    );
    let book: Value = app
        .get(&format!("/api/books/{book_id}"), &free.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(book["status"], "EXTRACTED");
    assert!(book["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["status"] != "TRANSLATING" && c["status"] != "COMPLETED"));
    let usage: Value = app.get("/api/usage", &free.key).await.json().await.unwrap();
    assert_eq!(usage["words"]["used"], 0);

    app.upload_ok(&free.key, "second.txt", sample_txt()).await;
    let third = app.upload(&free.key, "third.txt", sample_txt()).await;
    let body = assert_error(third, 400, "quota_exceeded").await;
    assert!(
        body["message"].as_str().unwrap().contains("books"),
        "{body}"
    );
}

#[tokio::test]
async fn two_concurrent_starts_cannot_both_pass_the_last_unit_of_quota() {
    let app = TestApp::new()
        .with_workers()
        .with_env(&[("BOOKTR_QUOTA_FREE_WORDS", "60")])
        .start()
        .await;
    let free = app.user_with(Plan::Free, Role::User).await;
    let mut books = Vec::new();
    for name in ["a.txt", "b.txt"] {
        let id = app.upload_ok(&free.key, name, sample_txt()).await;
        let book = app.wait_for_status(&free.key, &id, "EXTRACTED").await;
        // Each fits alone, both do not.
        let words = book["wordCount"].as_u64().unwrap();
        assert!(words <= 60 && words * 2 > 60, "{words}");
        books.push(id);
    }
    let starts = books.iter().map(|id| {
        app.send_json(
            Method::POST,
            "/api/translate",
            &free.key,
            json!({"bookId": id}),
        )
    });
    let statuses: Vec<u16> = futures::future::join_all(starts)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    let mut sorted = statuses.clone();
    sorted.sort();
    assert_eq!(sorted, [200, 400], "{statuses:?}");
    let usage: Value = app.get("/api/usage", &free.key).await.json().await.unwrap();
    assert!(usage["words"]["used"].as_u64().unwrap() <= 60, "{usage}");
}

#[tokio::test]
async fn a_stop_gives_back_the_words_of_the_chapters_left_untranslated() {
    let app = TestApp::new().start().await;
    let free = app.user_with(Plan::Free, Role::User).await;
    let book_id = app.upload_ok(&free.key, "voyage.txt", sample_txt()).await;
    runner::drain(app.ports.queue.as_ref(), &app.services.jobs)
        .await
        .unwrap();
    let started = app
        .send_json(
            Method::POST,
            "/api/translate",
            &free.key,
            json!({"bookId": book_id}),
        )
        .await;
    assert_eq!(started.status(), 200);
    let used = |v: Value| v["words"]["used"].as_u64().unwrap();
    let charged = used(app.get("/api/usage", &free.key).await.json().await.unwrap());
    assert!(charged > 0);
    // No worker ran: every chapter is untranslated.
    let stopped = app
        .send_json(
            Method::POST,
            "/api/translate/stop",
            &free.key,
            json!({"bookId": book_id}),
        )
        .await;
    assert_eq!(stopped.status(), 200);
    assert_eq!(
        used(app.get("/api/usage", &free.key).await.json().await.unwrap()),
        0
    );
}
