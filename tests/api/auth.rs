use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

#[tokio::test]
async fn a_request_without_a_credential_is_401_with_an_error_body() {
    let app = TestApp::new().with_workers().start().await;
    let response = app.get_anonymous("/api/books").await;
    assert_error(response, 401, "unauthorized").await;
}

#[tokio::test]
async fn an_unknown_or_malformed_api_key_is_401() {
    let app = TestApp::new().with_workers().start().await;
    for key in ["bt_notARealKeyAtAll", "sk_wrongprefix", ""] {
        assert_error(app.get("/api/user", key).await, 401, "unauthorized").await;
    }
    let basic = app
        .anonymous(Method::GET, "/api/user")
        .header("authorization", "Basic Zm9vOmJhcg==");
    assert_error(basic.send().await.unwrap(), 401, "unauthorized").await;
}

#[tokio::test]
async fn a_revoked_key_stops_working_at_once() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let (secret, id) = used_new_key(&app, &user.key).await;
    let revoked = app
        .request(Method::DELETE, &format!("/api/keys/{id}"), &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_error(app.get("/api/user", &secret).await, 401, "unauthorized").await;
}

#[tokio::test]
async fn a_key_revoked_through_another_process_stops_working_within_a_second() {
    let app = TestApp::new().with_workers().start().await;
    let twin = app.twin().await;
    let user = app.user().await;
    // Used here first, so this process remembers the key.
    let (secret, id) = used_new_key(&app, &user.key).await;
    let revoked = app
        .client
        .delete(format!("{twin}/api/keys/{id}"))
        .bearer_auth(&user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    // How long a process trusts what it read (`key_cache::FRESH_FOR`), and a margin.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    assert_error(app.get("/api/user", &secret).await, 401, "unauthorized").await;
}

/// A new key of the owner of `key`, used once (so the server remembers it): its secret and id.
async fn used_new_key(app: &TestApp, key: &str) -> (String, String) {
    let created: Value = app
        .send_json(Method::POST, "/api/keys", key, json!({"name": "ci"}))
        .await
        .json()
        .await
        .unwrap();
    let secret = created["secretKey"].as_str().unwrap().to_string();
    assert_eq!(app.get("/api/user", &secret).await.status(), 200);
    (secret, created["key"]["id"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn an_expired_key_is_401() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let expires = (Utc::now() + Duration::hours(1)).to_rfc3339();
    let body = json!({"name": "short-lived", "expiresAt": expires});
    let created: Value = app
        .send_json(Method::POST, "/api/keys", &user.key, body)
        .await
        .json()
        .await
        .unwrap();
    let secret = created["secretKey"].as_str().unwrap();
    assert_eq!(app.get("/api/user", secret).await.status(), 200);
    app.clock.advance(Duration::hours(2));
    let body = assert_error(app.get("/api/user", secret).await, 401, "unauthorized").await;
    assert!(body["message"].as_str().unwrap().contains("expired"));
}

#[tokio::test]
async fn a_read_only_key_may_read_but_not_write() {
    let app = TestApp::new().with_workers().start().await;
    let user = app
        .user_with(
            booktr_core::types::Plan::Pro,
            booktr_core::types::Role::User,
        )
        .await;
    let body = json!({"name": "dashboard", "scopes": ["read"]});
    let created: Value = app
        .send_json(Method::POST, "/api/keys", &user.key, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(created["key"]["scopes"], json!(["read"]));
    let read_only = created["secretKey"].as_str().unwrap();
    assert_eq!(app.get("/api/books", read_only).await.status(), 200);
    let head = app
        .request(Method::HEAD, "/api/books", read_only)
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    let write = app
        .send_json(Method::PATCH, "/api/user", read_only, json!({"name": "x"}))
        .await;
    assert_error(write, 403, "forbidden").await;
    let upload = app
        .upload(read_only, "a.txt", b"Chapter 1\n\nText".to_vec())
        .await;
    assert_error(upload, 403, "forbidden").await;
}

async fn sign_up(app: &crate::helpers::TestApp, email: &str) -> reqwest::Response {
    let body = json!({"email": email, "password": "correct horse battery", "name": "Ana"});
    app.post_anonymous("/api/auth/signup", &body).await
}

/// The `name=value` pair of the session cookie a response sets, as a browser sends it back.
fn session_pair(response: &reqwest::Response) -> String {
    session_cookie(response)
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

fn session_cookie(response: &reqwest::Response) -> String {
    let header = response
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(header.starts_with("auth.session-token="), "{header}");
    header
}

#[tokio::test]
async fn sign_up_sets_an_http_only_lax_session_cookie_that_authenticates() {
    let app = TestApp::new().with_workers().start().await;
    let response = sign_up(&app, "ana@example.com").await;
    assert_eq!(response.status(), 201);
    let cookie = session_cookie(&response);
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("Secure"),
        "plain http must not set Secure: {cookie}"
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["user"]["email"], "ana@example.com");
    assert_eq!(body["user"]["role"], "USER");
    assert!(body["user"].get("passwordHash").is_none());

    let pair = cookie.split(';').next().unwrap();
    let me = app
        .anonymous(Method::GET, "/api/user")
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);
    // A session may write too.
    let patched = app
        .anonymous(Method::PATCH, "/api/user")
        .header("cookie", pair)
        .json(&json!({"name": "Ana B"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
}

#[tokio::test]
async fn sign_in_checks_the_password_and_sign_out_ends_the_session() {
    let app = TestApp::new().with_workers().start().await;
    sign_up(&app, "bo@example.com").await;
    let wrong = json!({"email": "bo@example.com", "password": "not the password"});
    let response = app.post_anonymous("/api/auth/signin", &wrong).await;
    assert_error(response, 401, "unauthorized").await;
    let unknown = json!({"email": "nobody@example.com", "password": "whatever123"});
    let response = app.post_anonymous("/api/auth/signin", &unknown).await;
    assert_error(response, 401, "unauthorized").await;

    let right = json!({"email": "BO@example.com", "password": "correct horse battery"});
    let response = app.post_anonymous("/api/auth/signin", &right).await;
    assert_eq!(response.status(), 200);
    let pair = session_pair(&response);
    let out = app
        .anonymous(Method::POST, "/api/auth/signout")
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    assert!(session_cookie(&out).contains("Max-Age=0"));
    let me = app
        .anonymous(Method::GET, "/api/user")
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_error(me, 401, "unauthorized").await;
}

#[tokio::test]
async fn sessions_expire_after_thirty_days() {
    let app = TestApp::new().with_workers().start().await;
    let response = sign_up(&app, "cy@example.com").await;
    let pair = session_pair(&response);
    app.clock.advance(Duration::days(31));
    let me = app
        .anonymous(Method::GET, "/api/user")
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_error(me, 401, "unauthorized").await;
}

#[tokio::test]
async fn the_cookie_is_secure_behind_an_https_proxy() {
    let app = TestApp::new().with_workers().start().await;
    let body = json!({"email": "di@example.com", "password": "correct horse battery"});
    let response = app
        .anonymous(Method::POST, "/api/auth/signup")
        .header("x-forwarded-proto", "https")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(session_cookie(&response).contains("; Secure"));
}

#[tokio::test]
async fn sign_up_refuses_a_taken_email_a_bad_email_and_a_short_password() {
    let app = TestApp::new().with_workers().start().await;
    assert_eq!(sign_up(&app, "ed@example.com").await.status(), 201);
    assert_error(sign_up(&app, "Ed@Example.com").await, 409, "email_taken").await;
    assert_error(sign_up(&app, "not-an-email").await, 400, "bad_request").await;
    let short = json!({"email": "fi@example.com", "password": "short"});
    let response = app.post_anonymous("/api/auth/signup", &short).await;
    assert_error(response, 400, "bad_request").await;
}

#[tokio::test]
async fn a_cross_origin_request_carried_by_the_session_cookie_changes_nothing() {
    let app = TestApp::new().with_workers().start().await;
    let response = sign_up(&app, "cy@example.com").await;
    let pair = session_pair(&response);
    // What another site's page makes a browser send: the cookie, and where it comes from.
    let from = |method: Method, path: &str, site: &str, origin: &str| {
        app.anonymous(method, path)
            .header("cookie", &pair)
            .header("sec-fetch-site", site)
            .header("origin", origin)
    };
    let evil = "https://evil.example";
    let attempts = [
        from(Method::POST, "/api/keys", "cross-site", evil).json(&json!({"name": "stolen"})),
        from(Method::POST, "/api/upload", "cross-site", evil).multipart(
            reqwest::multipart::Form::new().part(
                "file",
                reqwest::multipart::Part::bytes(b"Chapter 1\n\nText".to_vec()).file_name("a.txt"),
            ),
        ),
        from(Method::POST, "/api/notifications/read", "cross-site", evil).json(&json!({})),
        from(Method::DELETE, "/api/user/delete", "same-site", evil)
            .json(&json!({"confirmation": "DELETE MY ACCOUNT"})),
    ];
    for attempt in attempts {
        assert_error(attempt.send().await.unwrap(), 403, "forbidden").await;
    }
    // Browsers without Sec-Fetch-Site are judged by Origin alone.
    let old_browser = app
        .anonymous(Method::POST, "/api/keys")
        .header("cookie", &pair)
        .header("origin", evil)
        .json(&json!({"name": "stolen"}))
        .send()
        .await
        .unwrap();
    assert_error(old_browser, 403, "forbidden").await;
    let signed_in = |path: &str| {
        app.anonymous(Method::GET, path)
            .header("cookie", &pair)
            .send()
    };
    let keys: Value = signed_in("/api/keys").await.unwrap().json().await.unwrap();
    assert!(
        keys["keys"].as_array().is_some_and(|k| k.is_empty()),
        "{keys}"
    );
    let books: Value = signed_in("/api/books").await.unwrap().json().await.unwrap();
    assert_eq!(books["books"], json!([]), "{books}");
    assert_eq!(signed_in("/api/user").await.unwrap().status(), 200);

    // The site's own pages may; so may a client that is no browser page (no Origin at all),
    // and a bearer key from anywhere.
    let own = from(Method::POST, "/api/keys", "same-origin", &app.url)
        .json(&json!({"name": "mine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    let curl = app
        .anonymous(Method::POST, "/api/notifications/read")
        .header("cookie", &pair)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(curl.status(), 200);
    let key = app.user().await.key;
    let keyed = app
        .request(Method::POST, "/api/keys", &key)
        .header("sec-fetch-site", "cross-site")
        .header("origin", evil)
        .json(&json!({"name": "from a script"}))
        .send()
        .await
        .unwrap();
    assert_eq!(keyed.status(), 200);
    // Signing in from another site's page (login CSRF) is refused too.
    let body = json!({"email": "cy@example.com", "password": "correct horse battery"});
    let planted = app
        .anonymous(Method::POST, "/api/auth/signin")
        .header("sec-fetch-site", "cross-site")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_error(planted, 403, "forbidden").await;
}
