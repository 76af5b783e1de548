//! Round trips to the stores, counted: `POST /api/translate` on Moby-Dick reads each thing once
//! and writes the chapters' state in batches, not one call per chapter.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_core::ports::{
    BlobKey, Blobs, Condition, Index, Item, Outgoing, Query, Queue, QueueName, QueueStats,
    Received, StoreError, Table, Update, WriteOp,
};
use booktr_core::Services;
use bytes::Bytes;
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::helpers::{corpus, spawn_app};

/// Every call made through the wrapped ports, by port and method (`table.get`...).
#[derive(Default)]
struct Calls(std::sync::Mutex<Vec<&'static str>>);

impl Calls {
    fn record(&self, call: &'static str) {
        self.0.lock().unwrap().push(call);
    }

    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

struct CountingTable(Arc<dyn Table>, Arc<Calls>);
struct CountingBlobs(Arc<dyn Blobs>, Arc<Calls>);
struct CountingQueue(Arc<dyn Queue>, Arc<Calls>);

#[async_trait]
impl Table for CountingTable {
    async fn get(&self, pk: &str, sk: &str) -> Result<Option<Item>, StoreError> {
        self.1.record("table.get");
        self.0.get(pk, sk).await
    }
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        self.1.record("table.put");
        self.0.put(item, condition).await
    }
    async fn update(
        &self,
        pk: &str,
        sk: &str,
        update: Update,
        condition: Condition,
    ) -> Result<Item, StoreError> {
        self.1.record("table.update");
        self.0.update(pk, sk, update, condition).await
    }
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<(), StoreError> {
        self.1.record("table.delete");
        self.0.delete(pk, sk, condition).await
    }
    async fn query(&self, query: Query) -> Result<Vec<Item>, StoreError> {
        self.1.record("table.query");
        self.0.query(query).await
    }
    async fn query_index(&self, index: Index, query: Query) -> Result<Vec<Item>, StoreError> {
        self.1.record("table.query_index");
        self.0.query_index(index, query).await
    }
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        self.1.record("table.transact");
        self.0.transact(ops).await
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.0.ping().await
    }
}

#[async_trait]
impl Blobs for CountingBlobs {
    async fn put(&self, key: &BlobKey, bytes: Bytes) -> Result<(), StoreError> {
        self.1.record("blobs.put");
        self.0.put(key, bytes).await
    }
    async fn get(&self, key: &BlobKey) -> Result<Option<Bytes>, StoreError> {
        self.1.record("blobs.get");
        self.0.get(key).await
    }
    async fn delete(&self, key: &BlobKey) -> Result<(), StoreError> {
        self.1.record("blobs.delete");
        self.0.delete(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<BlobKey>, StoreError> {
        self.1.record("blobs.list");
        self.0.list(prefix).await
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.0.ping().await
    }
}

#[async_trait]
impl Queue for CountingQueue {
    async fn send(&self, queue: QueueName, message: Outgoing) -> Result<String, StoreError> {
        self.1.record("queue.send");
        self.0.send(queue, message).await
    }
    async fn receive(
        &self,
        queue: QueueName,
        max: usize,
        visibility: Duration,
    ) -> Result<Vec<Received>, StoreError> {
        self.0.receive(queue, max, visibility).await
    }
    async fn ack(&self, queue: QueueName, receipt: &str) -> Result<(), StoreError> {
        self.0.ack(queue, receipt).await
    }
    async fn release(
        &self,
        queue: QueueName,
        receipt: &str,
        delay: Duration,
    ) -> Result<(), StoreError> {
        self.0.release(queue, receipt, delay).await
    }
    async fn stats(&self, queue: QueueName) -> Result<QueueStats, StoreError> {
        self.0.stats(queue).await
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.0.ping().await
    }
}

#[tokio::test]
async fn starting_moby_dick_reads_each_thing_once_and_writes_its_chapters_in_batches() {
    let app = spawn_app().await;
    let key = app.user().await.key;
    let id = app
        .upload_ok(&key, "moby-dick.epub", corpus("moby-dick.epub"))
        .await;
    app.wait_for_status(&key, &id, "EXTRACTED").await;
    let chapters = app.services.books.chapters(&id).await.unwrap().len();
    assert!(chapters > 100, "{chapters} chapters");

    // The same service over the same stores, every call counted.
    let calls = Arc::new(Calls::default());
    let mut ports = app.ports.clone();
    ports.table = Arc::new(CountingTable(ports.table.clone(), calls.clone()));
    ports.blobs = Arc::new(CountingBlobs(ports.blobs.clone(), calls.clone()));
    ports.queue = Arc::new(CountingQueue(ports.queue.clone(), calls.clone()));
    let services = Services::new(
        ports,
        booktr_core::health::QueueMode::WorkerQueue,
        booktr_core::usage::Quotas::default(),
        booktr_core::translation::DEFAULT_WINDOW,
        booktr_formats::Budget::default(),
        Default::default(),
        "http://127.0.0.1:8080",
    );
    let router = booktr_api::router(booktr_api::AppState::new(
        services,
        booktr_api::Settings {
            public_url: app.url.clone(),
            trust_forwarded_for: false,
            body_limit: None,
            upload_origin: None,
        },
    ));
    let request = axum::http::Request::post("/api/translate")
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            json!({"bookId": id, "targetLang": "es"}).to_string(),
        ))
        .unwrap();
    let started = std::time::Instant::now();
    let response = router.oneshot(request).await.unwrap();
    let took = started.elapsed();
    assert_eq!(response.status(), 200);
    let calls = calls.take();
    let body: Value = serde_json::from_slice(
        &axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap(),
    )
    .unwrap();
    let mut by_kind = std::collections::BTreeMap::new();
    for call in &calls {
        *by_kind.entry(*call).or_insert(0) += 1;
    }
    eprintln!(
        "POST /api/translate on {chapters} chapters: {} store calls in {took:?}: {by_kind:?}; {body}",
        calls.len()
    );
    // A small constant (the key, the user, the book, preferences, usage, the run's writes,
    // the queued windows) plus the chapters' writes: nothing per chapter. The bound allows a
    // batch per 25 chapters; the start writes one transaction per 100.
    let per_chapter_batches = chapters.div_ceil(25);
    assert!(
        calls.len() <= 20 + per_chapter_batches,
        "{} calls: {by_kind:?}",
        calls.len()
    );
    assert_eq!(
        by_kind.get("blobs.get"),
        None,
        "no stored translation read on a first run"
    );
}
