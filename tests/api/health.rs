use std::time::Duration;

use serde_json::Value;

use crate::helpers::{eventually, sample_txt, TestApp};

#[tokio::test]
async fn health_reports_worker_queue_mode_with_counts_from_the_real_queue() {
    let app = TestApp::new().with_workers().start().await;
    let response = app.get_anonymous("/api/health").await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "healthy");
    assert_eq!(body["queueMode"], "worker-queue");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert!(body["uptime"].is_u64() && body["timestamp"].is_string());
    for check in ["database", "broker", "queue"] {
        assert_eq!(body["checks"][check]["status"], "up", "{check}");
        assert!(body["checks"][check]["latency"].is_u64());
        assert!(body["checks"][check]["error"].is_null());
    }
    assert_eq!(body["queues"]["translate"]["completed"], 0);

    let user = app.user().await;
    let book = app.upload_ok(&user.key, "voyage.txt", sample_txt()).await;
    app.wait_for_status(&user.key, &book, "EXTRACTED").await;
    let body: Value = app.get_anonymous("/api/health").await.json().await.unwrap();
    let counts = &body["queues"]["translate"];
    assert_eq!(
        counts["completed"], 1,
        "the extract job was counted: {counts}"
    );
    assert_eq!(
        (
            counts["active"].as_u64(),
            counts["waiting"].as_u64(),
            counts["failed"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );

    // The book's file is made from the render queue, listed beside the jobs queue.
    let started = app
        .send_json(
            reqwest::Method::POST,
            "/api/translate",
            &user.key,
            serde_json::json!({"bookId": book}),
        )
        .await;
    assert_eq!(started.status(), 200);
    app.wait_for_status(&user.key, &book, "COMPLETED").await;
    // The message is acknowledged just after the job that completed the book returns.
    let render = eventually(Duration::from_secs(10), || async {
        let body: Value = app.get_anonymous("/api/health").await.json().await.unwrap();
        let render = body["queues"]["render"].clone();
        match render["completed"] == 1 {
            true => Ok(render),
            false => Err(format!("the generate job not counted yet: {body}")),
        }
    })
    .await;
    assert_eq!(
        (
            render["active"].as_u64(),
            render["waiting"].as_u64(),
            render["failed"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
}

#[tokio::test]
async fn health_is_503_with_the_same_body_when_storage_is_gone() {
    let app = TestApp::new().with_workers().start().await;
    // Make the data directory unusable under the running service.
    let blobs = app.data.path().join("blobs");
    std::fs::remove_dir_all(&blobs).unwrap();
    let response = app.get_anonymous("/api/health").await;
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "unhealthy");
    assert_eq!(body["checks"]["storage"]["status"], "down");
    assert!(body["checks"]["storage"]["error"].is_string());
    assert_eq!(body["queueMode"], "worker-queue");
}
