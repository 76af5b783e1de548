use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_hidden_from, TestApp};

fn whale_glossary() -> Value {
    json!({"name": "Moby-Dick", "description": "Names and sea terms", "entries": [
        {"source": "whale", "target": "ballena", "context": "the animal"},
        {"source": "Ahab", "target": "Acab"},
    ]})
}

#[tokio::test]
async fn a_glossary_is_created_listed_read_changed_and_deleted() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let response = app
        .send_json(Method::POST, "/api/glossary", &user.key, whale_glossary())
        .await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    let glossary = &created["glossary"];
    assert_eq!(glossary["entryCount"], 2);
    assert_eq!(glossary["entries"][0]["context"], "the animal");
    assert!(glossary["entries"][1]["context"].is_null());
    let id = glossary["id"].as_str().unwrap();
    let whale_id = glossary["entries"][0]["id"].as_str().unwrap();

    let listed: Value = app
        .get("/api/glossary", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["glossaries"].as_array().unwrap().len(), 1);

    let patch = json!({"name": "Moby-Dick terms", "description": null,
                       "entries": [{"id": whale_id, "target": "Ballena"}, {"source": "harpoon", "target": "arpón"}]});
    let patched: Value = app
        .send_json(
            Method::PATCH,
            &format!("/api/glossary/{id}"),
            &user.key,
            patch,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(patched["name"], "Moby-Dick terms");
    assert!(patched["description"].is_null());
    assert_eq!(
        patched["entryCount"], 2,
        "the list given replaces the old one"
    );
    assert_eq!(
        patched["entries"][0]["id"], whale_id,
        "an entry named by id keeps it"
    );
    assert_eq!(
        (
            patched["entries"][0]["source"].as_str(),
            patched["entries"][0]["target"].as_str()
        ),
        (Some("whale"), Some("Ballena"))
    );
    assert_eq!(patched["entries"][0]["context"], "the animal");

    let fetched: Value = app
        .get(&format!("/api/glossary/{id}"), &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(fetched, patched);
    let deleted = app
        .request(Method::DELETE, &format!("/api/glossary/{id}"), &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        deleted.json::<Value>().await.unwrap(),
        json!({"success": true})
    );
    assert_error(
        app.get(&format!("/api/glossary/{id}"), &user.key).await,
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn invalid_glossaries_are_400() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    for body in [
        json!({"name": "x"}),
        json!({"name": "", "entries": []}),
        json!({"name": "x", "entries": [{"source": "", "target": "y"}]}),
        json!({"name": "x", "entries": [{"source": "a", "target": "  "}]}),
        json!({"name": "x", "entries": [{"source": "Whale", "target": "a"}, {"source": "whale", "target": "b"}]}),
    ] {
        assert_error(
            app.send_json(Method::POST, "/api/glossary", &user.key, body)
                .await,
            400,
            "bad_request",
        )
        .await;
    }
}

#[tokio::test]
async fn another_users_glossary_is_404_on_every_route() {
    let app = TestApp::new().with_workers().start().await;
    let alice = app.user().await;
    let bob = app.user().await;
    let created: Value = app
        .send_json(Method::POST, "/api/glossary", &alice.key, whale_glossary())
        .await
        .json()
        .await
        .unwrap();
    let path = format!(
        "/api/glossary/{}",
        created["glossary"]["id"].as_str().unwrap()
    );
    assert_hidden_from(&app, &path, &bob.key, json!({"name": "mine"})).await;
    let bobs: Value = app
        .get("/api/glossary", &bob.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(bobs["glossaries"], json!([]));
    assert_eq!(app.get(&path, &alice.key).await.status(), 200);
}
