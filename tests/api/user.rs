use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

#[tokio::test]
async fn the_profile_has_the_spec_fields_and_can_be_renamed() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let profile: Value = app.get("/api/user", &user.key).await.json().await.unwrap();
    for field in [
        "id",
        "name",
        "email",
        "image",
        "role",
        "plan",
        "emailVerified",
        "twoFactorEnabled",
        "createdAt",
    ] {
        assert!(profile.get(field).is_some(), "missing {field}: {profile}");
    }
    assert_eq!(profile["id"], user.id.as_str());
    let body = json!({"name": "  Ana María ", "preferredLanguage": "pt_br"});
    let patched: Value = app
        .send_json(Method::PATCH, "/api/user", &user.key, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(patched["name"], "Ana María");
    assert_eq!(patched["preferredLanguage"], "pt-BR");
    let again: Value = app.get("/api/user", &user.key).await.json().await.unwrap();
    assert_eq!(again["name"], "Ana María");
}

#[tokio::test]
async fn invalid_profile_changes_are_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for body in [
        json!({"preferredLanguage": "klingon!"}),
        json!({"name": ""}),
        json!({"role": "SUPER_ADMIN"}),
    ] {
        assert_error(
            app.send_json(Method::PATCH, "/api/user", &user.key, body)
                .await,
            400,
            "bad_request",
        )
        .await;
    }
}
