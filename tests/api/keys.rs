use booktr_core::types::{Plan, Role};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

#[tokio::test]
async fn a_created_key_is_shown_once_and_listed_by_its_prefix_only() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let response = app
        .send_json(
            Method::POST,
            "/api/keys",
            &user.key,
            json!({"name": "laptop"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let created: Value = response.json().await.unwrap();
    let secret = created["secretKey"].as_str().unwrap();
    assert!(secret.starts_with("bt_") && secret.len() > 30, "{secret}");
    assert_eq!(created["key"]["scopes"], json!(["read", "write"]));
    assert!(secret.starts_with(created["key"]["prefix"].as_str().unwrap()));

    let listed: Value = app.get("/api/keys", &user.key).await.json().await.unwrap();
    let keys = listed["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0]["name"], "laptop", "newest first");
    assert!(
        !listed.to_string().contains(secret),
        "the full key never appears in a listing"
    );
    for field in [
        "id",
        "name",
        "prefix",
        "scopes",
        "lastUsedAt",
        "expiresAt",
        "createdAt",
    ] {
        assert!(keys[0].get(field).is_some(), "missing {field}");
    }
}

#[tokio::test]
async fn the_free_plan_allows_two_keys_and_dev_has_no_limit() {
    let app = TestApp::new().with_workers().start().await;
    let free = app.user_with(Plan::Free, Role::User).await; // holds one key already
    let second = app
        .send_json(Method::POST, "/api/keys", &free.key, json!({"name": "two"}))
        .await;
    assert_eq!(second.status(), 200);
    let third = app
        .send_json(
            Method::POST,
            "/api/keys",
            &free.key,
            json!({"name": "three"}),
        )
        .await;
    let body = assert_error(third, 400, "key_limit_reached").await;
    assert!(body["message"].as_str().unwrap().contains('2'));

    let dev = app.user_with(Plan::Free, Role::Dev).await;
    for i in 0..5 {
        let response = app
            .send_json(
                Method::POST,
                "/api/keys",
                &dev.key,
                json!({"name": format!("k{i}")}),
            )
            .await;
        assert_eq!(response.status(), 200);
    }
}

#[tokio::test]
async fn last_used_at_is_recorded_when_a_key_is_used() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let stored = app.services.accounts.list_keys(&user.id).await.unwrap();
    assert_eq!(stored[0].last_used_at, None, "a new key has not been used");
    // The listing authenticates with the key, so it already shows the use.
    let first: Value = app.get("/api/keys", &user.key).await.json().await.unwrap();
    let first_use = first["keys"][0]["lastUsedAt"].as_str().unwrap().to_string();
    // Written at most once a minute: a request soon after leaves it, a later one moves it.
    app.clock.advance(chrono::Duration::seconds(10));
    let soon: Value = app.get("/api/keys", &user.key).await.json().await.unwrap();
    assert_eq!(soon["keys"][0]["lastUsedAt"], first_use.as_str());
    app.clock.advance(chrono::Duration::minutes(2));
    let later: Value = app.get("/api/keys", &user.key).await.json().await.unwrap();
    assert_ne!(later["keys"][0]["lastUsedAt"], first_use.as_str());
}

#[tokio::test]
async fn keys_of_another_user_are_invisible() {
    let app = TestApp::new().with_workers().start().await;
    let alice = app.user().await;
    let bob = app.user().await;
    let listed: Value = app.get("/api/keys", &alice.key).await.json().await.unwrap();
    let alice_key_id = listed["keys"][0]["id"].as_str().unwrap();
    let response = app
        .request(
            Method::DELETE,
            &format!("/api/keys/{alice_key_id}"),
            &bob.key,
        )
        .send()
        .await
        .unwrap();
    assert_error(response, 404, "not_found").await;
    assert_eq!(app.get("/api/user", &alice.key).await.status(), 200);
    let bobs: Value = app.get("/api/keys", &bob.key).await.json().await.unwrap();
    assert_eq!(bobs["keys"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn invalid_key_requests_are_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user_with(Plan::Pro, Role::User).await;
    for body in [
        json!({}),
        json!({"name": ""}),
        json!({"name": "x", "scopes": ["admin"]}),
        json!({"name": "x", "scopes": []}),
        json!({"name": "x", "expiresAt": "2001-01-01T00:00:00Z"}),
        json!({"name": "x", "expiresAt": "tomorrow"}),
    ] {
        let response = app
            .send_json(Method::POST, "/api/keys", &user.key, body.clone())
            .await;
        assert_error(response, 400, "bad_request").await;
    }
}
