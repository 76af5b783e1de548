use booktr_core::ports::{Query, Table};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_hidden_from, sample_txt, TestApp};

#[tokio::test]
async fn another_users_book_is_404_on_every_book_route() {
    let app = TestApp::new().with_workers().start().await;
    let alice = app.user().await;
    let bob = app.user().await;
    let book = app.upload_ok(&alice.key, "voyage.txt", sample_txt()).await;
    app.wait_for_status(&alice.key, &book, "EXTRACTED").await;
    let path = format!("/api/books/{book}");

    assert_hidden_from(&app, &path, &bob.key, json!({"title": "mine"})).await;
    let bobs: Value = app.get("/api/books", &bob.key).await.json().await.unwrap();
    assert_eq!(bobs["books"], json!([]));

    // Nothing Bob did touched Alice's book.
    let still: Value = app.get(&path, &alice.key).await.json().await.unwrap();
    assert_eq!(still["title"], "voyage");
}

#[tokio::test]
async fn a_missing_book_is_404() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    assert_error(
        app.get("/api/books/does-not-exist", &user.key).await,
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn books_are_listed_newest_first_with_status_filter_and_limit() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            app.upload_ok(&user.key, &format!("book{i}.txt"), sample_txt())
                .await,
        );
        app.clock.advance(chrono::Duration::seconds(1));
    }
    let failed = app
        .upload_ok(&user.key, "other.pdf", b"%PDF-1.4\n%EOF\n".to_vec())
        .await;
    app.wait_for_status(&user.key, &failed, "ERROR").await;
    for id in &ids {
        app.wait_for_status(&user.key, id, "EXTRACTED").await;
    }

    let all: Value = app.get("/api/books", &user.key).await.json().await.unwrap();
    let listed: Vec<&str> = all["books"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        [
            failed.as_str(),
            ids[2].as_str(),
            ids[1].as_str(),
            ids[0].as_str()
        ]
    );

    let extracted: Value = app
        .get("/api/books?status=EXTRACTED&limit=2", &user.key)
        .await
        .json()
        .await
        .unwrap();
    let listed: Vec<&str> = extracted["books"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str()]);

    let errors: Value = app
        .get("/api/books?status=ERROR", &user.key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(errors["books"].as_array().unwrap().len(), 1);

    for bad in ["?status=DONE", "?limit=0", "?limit=101", "?limit=ten"] {
        assert_error(
            app.get(&format!("/api/books{bad}"), &user.key).await,
            400,
            "bad_request",
        )
        .await;
    }
}

#[tokio::test]
async fn a_book_can_be_renamed_and_its_author_set_and_cleared() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let book = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    let path = format!("/api/books/{book}");
    let patched: Value = app
        .send_json(
            Method::PATCH,
            &path,
            &user.key,
            json!({"title": "Moby-Dick", "author": "Herman Melville"}),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (patched["title"].as_str(), patched["author"].as_str()),
        (Some("Moby-Dick"), Some("Herman Melville"))
    );
    let cleared: Value = app
        .send_json(Method::PATCH, &path, &user.key, json!({"author": ""}))
        .await
        .json()
        .await
        .unwrap();
    assert!(cleared["author"].is_null());
    assert_eq!(cleared["title"], "Moby-Dick");
    assert_error(
        app.send_json(Method::PATCH, &path, &user.key, json!({"title": "  "}))
            .await,
        400,
        "bad_request",
    )
    .await;
}

#[tokio::test]
async fn deleting_a_book_leaves_no_items_and_no_files_behind() {
    let app = TestApp::new().with_workers().start().await;
    let user = app.user().await;
    let book = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    app.wait_for_status(&user.key, &book, "EXTRACTED").await;
    let prefix = format!("books/{book}/");
    assert!(
        app.ports.blobs.list(&prefix).await.unwrap().len() >= 4,
        "original and chapter texts exist"
    );

    let response = app
        .request(Method::DELETE, &format!("/api/books/{book}"), &user.key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"success": true})
    );

    assert_error(
        app.get(&format!("/api/books/{book}"), &user.key).await,
        404,
        "not_found",
    )
    .await;
    let table: &dyn Table = app.ports.table.as_ref();
    assert!(table
        .query(Query::partition(format!("BOOK#{book}")))
        .await
        .unwrap()
        .is_empty());
    assert!(app.ports.blobs.list(&prefix).await.unwrap().is_empty());
    let on_disk = app.data.path().join("blobs/books").join(&book);
    assert!(!on_disk.exists(), "no empty folders are left either");
    let listed: Value = app.get("/api/books", &user.key).await.json().await.unwrap();
    assert_eq!(listed["books"], json!([]));
}
