use reqwest::Method;

use crate::helpers::{assert_error, spawn_app};

#[tokio::test]
async fn an_unknown_route_is_a_json_404() {
    let app = spawn_app().await;
    let response = app.get_anonymous("/api/nothing-here").await;
    assert_error(response, 404, "not_found").await;
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405() {
    let app = spawn_app().await;
    let response = app
        .anonymous(Method::PUT, "/api/health")
        .send()
        .await
        .unwrap();
    assert_error(response, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn malformed_json_and_wrong_content_types_are_400_with_the_error_shape() {
    let app = spawn_app().await;
    let user = app.user().await;
    let broken = app
        .request(Method::POST, "/api/keys", &user.key)
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    assert_error(broken, 400, "bad_request").await;
    let no_type = app
        .request(Method::POST, "/api/keys", &user.key)
        .body("{\"name\":\"x\"}")
        .send()
        .await
        .unwrap();
    assert_error(no_type, 400, "bad_request").await;
    let wrong_type = app
        .request(Method::PATCH, "/api/user", &user.key)
        .json(&serde_json::json!({"name": 5}))
        .send()
        .await
        .unwrap();
    assert_error(wrong_type, 400, "bad_request").await;
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = spawn_app().await;
    let response = app
        .anonymous(Method::GET, "/api/health")
        .header("x-request-id", "trace-me")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "trace-me");
    let response = app.get_anonymous("/api/health").await;
    assert!(!response.headers()["x-request-id"].is_empty());
}
