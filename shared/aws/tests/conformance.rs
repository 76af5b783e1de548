//! The port conformance suites against the AWS adapters on a local emulator (moto server, which
//! `scripts/test.sh` installs and starts, exporting `AWS_ENDPOINT_URL`). Each case gets its own
//! table, queues, bucket or KMS key. Without the emulator (a plain `cargo test --workspace`)
//! every case says so and skips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_aws::{Clients, DynamoTable, KmsSecrets, QueueUrls, S3Blobs, SqsQueue};
use booktr_ports::conformance::queue::QueueHarness;
use booktr_ports::conformance::Fixture;
use booktr_ports::{Blobs, Queue, Secrets, StoreError, Table};

/// Whether the emulator is here; if not, says so past the harness's capture, with the case's
/// name, so that a skip is seen in a passing run.
fn emulator_here() -> bool {
    if std::env::var_os("AWS_ENDPOINT_URL").is_some() {
        return true;
    }
    use std::io::Write;
    let case = std::thread::current().name().unwrap_or("?").to_string();
    // Straight to stderr: the harness captures `eprintln!`.
    let _ = writeln!(
        std::io::stderr(),
        "skipped {case}: no AWS emulator (AWS_ENDPOINT_URL is unset; scripts/test.sh starts one)"
    );
    false
}

async fn clients() -> Clients {
    Clients::from_env().await
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::now_v7().simple())
}

async fn dynamo_table() -> Fixture<dyn Table> {
    let clients = clients().await;
    let name = unique("table");
    DynamoTable::create(&clients.dynamo, &name).await.unwrap();
    Fixture {
        port: Arc::new(DynamoTable::new(clients.dynamo, name)),
        keep_alive: Box::new(()),
    }
}

async fn s3_blobs() -> Fixture<dyn Blobs> {
    let clients = clients().await;
    let bucket = unique("bucket");
    S3Blobs::create(&clients.s3, &bucket).await.unwrap();
    Fixture {
        port: Arc::new(S3Blobs::new(&clients, bucket)),
        keep_alive: Box::new(()),
    }
}

async fn kms_secrets() -> Fixture<dyn Secrets> {
    let clients = clients().await;
    let key_id = KmsSecrets::create_key(&clients.kms).await.unwrap();
    Fixture {
        port: Arc::new(KmsSecrets::new(clients.kms, key_id)),
        keep_alive: Box::new(()),
    }
}

/// SQS keeps time itself: the harness waits for real.
struct SqsHarness {
    clients: Clients,
    urls: QueueUrls,
    queue: Arc<SqsQueue>,
}

async fn sqs_queue() -> SqsHarness {
    let clients = clients().await;
    let urls = SqsQueue::create(&clients.sqs, &unique("q")).await.unwrap();
    let queue = Arc::new(SqsQueue::new(
        clients.sqs.clone(),
        urls.clone(),
        Duration::ZERO,
    ));
    SqsHarness {
        clients,
        urls,
        queue,
    }
}

#[async_trait]
impl QueueHarness for SqsHarness {
    fn queue(&self) -> Arc<dyn Queue> {
        self.queue.clone()
    }

    async fn pass(&self, by: Duration) {
        // Visibility is counted in whole seconds; a little more so the edge is past.
        tokio::time::sleep(by + Duration::from_millis(300)).await;
    }

    async fn restart(&mut self) {
        self.queue = Arc::new(SqsQueue::new(
            self.clients.sqs.clone(),
            self.urls.clone(),
            Duration::ZERO,
        ));
    }
}

mod table {
    use super::*;
    booktr_ports::table_conformance!(dynamo_table, when = emulator_here);
}

mod queue {
    use super::*;
    booktr_ports::queue_conformance!(sqs_queue, when = emulator_here);
}

mod blobs {
    use super::*;
    booktr_ports::blobs_conformance!(s3_blobs, when = emulator_here);
}

mod secrets {
    use super::*;
    booktr_ports::secrets_conformance!(kms_secrets, when = emulator_here);

    /// Beyond the port's cases: the data key names its KMS key, and KMS will not open it for
    /// another (a restored table under another stack's key reads as unopenable, not as garbage).
    #[tokio::test]
    async fn a_seal_made_under_another_kms_key_does_not_open() {
        if !emulator_here() {
            return;
        }
        let clients = clients().await;
        let ours = KmsSecrets::new(
            clients.kms.clone(),
            KmsSecrets::create_key(&clients.kms).await.unwrap(),
        );
        let theirs = KmsSecrets::new(
            clients.kms.clone(),
            KmsSecrets::create_key(&clients.kms).await.unwrap(),
        );
        let sealed = theirs.seal(b"sk-their-key").await.unwrap();
        assert!(matches!(
            ours.open(&sealed).await,
            Err(StoreError::Invalid(_))
        ));
        assert_eq!(theirs.open(&sealed).await.unwrap(), b"sk-their-key");
    }
}
