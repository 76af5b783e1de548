//! Managed-queue mode on the local AWS emulator (moto, started by `scripts/test.sh`): the HTTP
//! API over DynamoDB, SQS and S3, with the workers driven the way Lambda drives them: messages
//! received from the emulator's FIFO queues are handed to the SQS handler as SQS events; and the
//! `infra/events/` fixtures fed through the real handlers in-process.

use std::sync::Arc;
use std::time::Duration;

use aws_lambda_events::sqs::SqsEvent;
use booktr_core::jobs::runner::Worker;
use booktr_core::ports::{Models, QueueName, Received};
use booktr_functions::lambda::{handle_schedule, handle_sqs};
use booktr_outbound::EnvModels;
use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::helpers::{eventually, have, sample_txt, TestApp, Tool};
use crate::stand_ins::{failing_openai_stand_in, StandIn};

/// The app on the emulator with a user, its jobs driven through the Lambda handler.
struct AwsApp {
    app: TestApp,
    key: String,
}

/// Fresh table, queues and bucket on the emulator, the API on a local port, and a user.
async fn spawn_aws(models: Arc<dyn Models>) -> AwsApp {
    let app = TestApp::new().on_aws().with_models(models).start().await;
    let key = app.user().await.key;
    AwsApp { app, key }
}

impl AwsApp {
    /// Uploads the sample book; returns its id.
    async fn upload_sample(&self) -> String {
        self.upload("voyage.txt", sample_txt()).await
    }

    /// Uploads the sample book, waits for its chapters and starts its translation; returns its id.
    async fn start_sample(&self) -> String {
        let id = self.upload_sample().await;
        self.drive_until(&id, "EXTRACTED").await;
        let started = self.post("/api/translate", json!({"bookId": id})).await;
        assert_eq!(started.status(), 200);
        id
    }

    /// Uploads a book; returns its id.
    async fn upload(&self, file_name: &str, bytes: Vec<u8>) -> String {
        let form = Form::new().part("file", Part::bytes(bytes).file_name(file_name.to_string()));
        let uploaded: Value = self
            .app
            .client
            .post(format!("{}/api/upload", self.app.url))
            .bearer_auth(&self.key)
            .multipart(form)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        uploaded["book"]["id"].as_str().unwrap().to_string()
    }

    async fn get(&self, path: &str) -> Value {
        self.app
            .client
            .get(format!("{}{path}", self.app.url))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.app
            .client
            .post(format!("{}{path}", self.app.url))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// Receives from the emulator's queue, hands the messages to the Lambda SQS handler as one
    /// event and deletes those it did not report as failed, as Lambda's event source does;
    /// returns the failed ids and how many messages there were.
    async fn lambda_batch(&self, from: QueueName) -> (Vec<String>, usize) {
        let messages = self
            .app
            .ports
            .queue
            .receive(from, 10, Duration::from_secs(5))
            .await
            .unwrap();
        let count = messages.len();
        if count == 0 {
            return (Vec::new(), 0);
        }

        let response = handle_sqs(
            &self.app.application,
            Worker::of(from),
            sqs_event(&messages),
        )
        .await
        .unwrap();
        let failed: Vec<String> = response
            .batch_item_failures
            .into_iter()
            .map(|f| f.item_identifier)
            .collect();
        // As the event source does: the messages not reported as failed are deleted.
        for message in messages.iter().filter(|m| !failed.contains(&m.id)) {
            self.app
                .ports
                .queue
                .ack(from, &message.receipt)
                .await
                .unwrap();
        }
        (failed, count)
    }

    /// Runs the jobs and render queues (and their dead-letter queue) through the Lambda
    /// handlers until the book reaches `status`.
    async fn drive_until(&self, book_id: &str, status: &str) -> Value {
        self.drive_reporting(book_id, status).await.0
    }

    /// [`AwsApp::drive_until`], returning also the ids of the messages the handler reported
    /// as failed, once per report. (Retried messages wait out their delays and the emulator's
    /// visibility timeouts, hence the long budget.)
    async fn drive_reporting(&self, book_id: &str, status: &str) -> (Value, Vec<String>) {
        let reported = std::cell::RefCell::new(Vec::new());
        let book = eventually(Duration::from_secs(600), || async {
            for queue in [QueueName::Jobs, QueueName::Render] {
                let failed = self.lambda_batch(queue).await.0;
                reported.borrow_mut().extend(failed);
            }
            self.lambda_batch(QueueName::JobsDeadLetter).await;
            let book = self.get(&format!("/api/books/{book_id}")).await;
            match book["status"] == status {
                true => Ok(book),
                false => Err(book),
            }
        })
        .await;
        (book, reported.into_inner())
    }
}

/// An SQS event as Lambda's event source builds it from received messages.
fn sqs_event(messages: &[Received]) -> SqsEvent {
    let records: Vec<Value> = messages
        .iter()
        .map(|m| {
            json!({
                "messageId": m.id,
                "receiptHandle": m.receipt,
                "body": m.body,
                "attributes": {
                    "ApproximateReceiveCount": m.receive_count.to_string(),
                    "MessageGroupId": m.group,
                },
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "awsRegion": "us-east-1"
            })
        })
        .collect();
    serde_json::from_value(json!({ "Records": records })).unwrap()
}

#[tokio::test]
async fn on_aws_a_book_goes_from_upload_to_a_presigned_s3_download_through_the_lambda_handlers() {
    if !have(Tool::Emulator) {
        return;
    }
    let app = spawn_aws(Arc::new(EnvModels::from_vars(Vec::new()))).await;
    let health = app.get("/api/health").await;
    assert_eq!(health["queueMode"], "managed-queue", "{health}");
    assert!(health.get("queues").is_none_or(Value::is_null), "{health}");
    assert_eq!(health["checks"]["database"]["status"], "up", "{health}");
    assert_eq!(health["checks"]["queue"]["status"], "up", "{health}");

    let id = app.start_sample().await;
    let book = app.drive_until(&id, "COMPLETED").await;
    assert!(book["completedAt"].is_string());

    let link: Value = app.get(&format!("/api/download/{id}?format=epub")).await;
    let url = link["url"].as_str().unwrap();
    assert!(url.contains("X-Amz-Signature"), "a presigned S3 URL: {url}");
    let epub = reqwest::get(url).await.unwrap().bytes().await.unwrap();
    let translated = booktr_formats::epub::extract(&epub).unwrap();
    assert_eq!(translated.chapters.len(), 4);
    assert!(translated
        .chapters
        .iter()
        .any(|c| c.plain_text().contains("Càll mé Ìshmàél")));
}

/// A job that fails on every receive (here a PDF whose chapter text is gone from the bucket):
/// the SQS handler reports it as a batch item failure each time, the queue's redrive moves it to
/// the dead-letter queue after 4 receives, and the dead-letter handler puts the book in ERROR
/// with the last failure. (The emulator keeps a redriven message invisible for the receive's
/// visibility timeout, hence the wait.)
#[tokio::test]
async fn on_aws_a_job_failing_every_receive_is_reported_per_item_and_redriven_after_four() {
    if !have(Tool::Emulator) {
        return;
    }
    let app = spawn_aws(Arc::new(EnvModels::from_vars(Vec::new()))).await;
    let id = app.start_sample().await;
    app.drive_until(&id, "COMPLETED").await;
    let gone = booktr_core::books::store::translation_key(&id, 2).unwrap();
    app.app.ports.blobs.delete(&gone).await.unwrap();
    let generate = app
        .post("/api/generate", json!({"bookId": id, "format": "pdf"}))
        .await;
    assert_eq!(generate.status(), 200);

    let (book, reported) = app.drive_reporting(&id, "ERROR").await;
    let most = reported
        .iter()
        .map(|id| reported.iter().filter(|other| *other == id).count())
        .max();
    assert_eq!(most, Some(4), "{reported:?}");
    let error = book["error"].as_str().unwrap();
    assert!(
        error.starts_with("generating the file failed after 4 attempts")
            && error.contains("chapter 2 has no translation to render"),
        "{book}"
    );
}

/// A chapter whose model calls always fail ends in ERROR by its own count of failed tries (not
/// the queue's receives: its window made progress with the other chapters), with the real cause.
#[tokio::test]
async fn on_aws_a_failing_chapter_ends_in_error_after_four_tries_with_its_cause() {
    if !have(Tool::Emulator) {
        return;
    }
    let model = StandIn::default().failing_on("carpet-bag");
    let app = spawn_aws(Arc::new(model)).await;
    let id = app.start_sample().await;
    app.drive_until(&id, "ERROR").await;
    let status = app.get(&format!("/api/translate/status?bookId={id}")).await;
    assert_eq!(
        status["errors"][0]["chapterId"],
        format!("{id}-3"),
        "{status}"
    );
    assert_eq!(
        status["errors"][0]["error"],
        "translation failed after 4 attempts: the model is unavailable: stand-in overloaded",
        "{status}"
    );
}

/// What the stack's dashboard and alarms read is what the Lambdas write: a translation on the
/// AWS adapters, through a provider failing 3 requests in 10, recorded through the EMF exporter
/// the Lambdas install, read back as CloudWatch would read the log lines.
#[tokio::test]
async fn on_aws_a_translation_emits_emf_lines_for_the_metrics_the_dashboard_and_alarms_read() {
    if !have(Tool::Emulator) {
        return;
    }
    booktr_functions::metrics::emf::install("test");
    let (openai, _log) = failing_openai_stand_in(Duration::from_millis(1)).await;
    let models = EnvModels::from_vars(vec![
        ("OPENAI_API_KEY".into(), "sk-stand-in".into()),
        ("OPENAI_BASE_URL".into(), openai),
    ]);
    let app = spawn_aws(Arc::new(models)).await;
    let id = app.start_sample().await;
    app.drive_until(&id, "COMPLETED").await;

    let mut lines = Vec::new();
    booktr_functions::metrics::emf::flush_to(&mut lines);
    let mut emitted = std::collections::BTreeSet::new();
    for line in String::from_utf8(lines).unwrap().lines() {
        let document: Value = serde_json::from_str(line).unwrap();
        let directive = &document["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "booktr", "{line}");
        assert!(document["_aws"]["Timestamp"].is_u64(), "{line}");
        for metric in directive["Metrics"].as_array().unwrap() {
            let name = metric["Name"].as_str().unwrap().to_string();
            // Each value sits beside the directive, and each dimension too.
            assert!(document.get(&name).is_some(), "{line}");
            for dimension in directive["Dimensions"][0].as_array().unwrap() {
                assert!(document[dimension.as_str().unwrap()].is_string(), "{line}");
            }
            emitted.insert(name);
        }
    }
    let referenced = crate::metrics::template_metrics();
    let unread: Vec<_> = emitted.difference(&referenced).collect();
    assert!(
        unread.is_empty(),
        "emitted but not on the dashboard: {unread:?}"
    );
    use booktr_core::metrics as m;
    for name in [
        m::BOOKS_STARTED,
        m::BOOKS_COMPLETED,
        m::BOOK_SECONDS,
        m::CHAPTERS_TRANSLATED,
        m::CHAPTER_SECONDS,
        m::PASS_SECONDS,
        m::TOKENS_IN,
        m::TOKENS_OUT,
        m::COST_MICROS,
        m::MODEL_REQUESTS,
        m::MODEL_ERRORS,
    ] {
        assert!(emitted.contains(name), "{name} not emitted: {emitted:?}");
        assert!(referenced.contains(name), "{name} not on the dashboard");
    }
}

/// The `sam local invoke` fixtures, through the real handlers in-process.
#[tokio::test]
async fn the_event_fixtures_run_through_the_real_handlers() {
    if !have(Tool::Emulator) {
        return;
    }
    let app = spawn_aws(Arc::new(EnvModels::from_vars(Vec::new()))).await;
    let fixture = |name: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../infra/events")
                .join(name),
        )
        .unwrap()
    };

    // SQS: two jobs for books that no longer exist are done; the unreadable message between
    // them fails, and so does everything after it in the FIFO batch.
    let event: SqsEvent = serde_json::from_str(&fixture("sqs-jobs.json")).unwrap();
    let response = handle_sqs(&app.app.application, Worker::JOBS, event)
        .await
        .unwrap();
    let failed: Vec<String> = response
        .batch_item_failures
        .into_iter()
        .map(|f| f.item_identifier)
        .collect();
    assert_eq!(
        failed,
        [
            "5c1a3d2e-0000-4000-8000-000000000002",
            "5c1a3d2e-0000-4000-8000-000000000003"
        ]
    );

    // HTTP: API Gateway v2 events through the health and books routers.
    let group = |routes| booktr_functions::lambda::http_app(app.app.application.group(routes));
    let health = group(booktr_api::health::router());
    let request = lambda_http::request::from_str(&fixture("http-health.json")).unwrap();
    let response = health.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let books = group(booktr_api::books::router());
    let request = lambda_http::request::from_str(&fixture("http-books-unauthorized.json")).unwrap();
    let response = books.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 401);
    // The pages' function sends a visitor without a session to sign in, and back afterwards.
    let pages = group(booktr_api::web::app::router());
    let request = lambda_http::request::from_str(&fixture("http-pages-signed-out.json")).unwrap();
    let response = pages.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(
        response.headers()["location"],
        "/signin?next=%2Fdashboard%2Fbooks%2Fb1"
    );

    // EventBridge: the digest schedule queues last week's digests once (nobody subscribed
    // here), whatever the event says.
    let _: Value = serde_json::from_str(&fixture("schedule-digest.json")).unwrap();
    let answer = handle_schedule(&app.app.application).await.unwrap();
    assert_eq!(answer, json!({"queued": 0}));
}

/// The first administrator of an AWS stack comes from `booktr user create --aws`.
#[tokio::test]
async fn user_create_with_aws_makes_a_user_in_the_managed_deployment() {
    if !have(Tool::Emulator) {
        return;
    }
    let app = spawn_aws(Arc::new(EnvModels::from_vars(Vec::new()))).await;
    let aws = app.app.aws.as_ref().unwrap();
    let (resources, queues) = (&aws.resources, &aws.resources.queues);
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .args([
            "user",
            "create",
            "--aws",
            "--email",
            "root@example.com",
            "--role",
            "SUPER_ADMIN",
        ])
        .env("BOOKTR_LOG", "warn")
        .env("AWS_ENDPOINT_URL", &aws.endpoint)
        .env("BOOKTR_TABLE", &resources.table)
        .env("BOOKTR_BUCKET", &resources.bucket)
        .env("BOOKTR_JOBS_QUEUE_URL", &queues.jobs)
        .env("BOOKTR_JOBS_DLQ_URL", &queues.jobs_dead_letter)
        .env("BOOKTR_RENDER_QUEUE_URL", &queues.render)
        .env("BOOKTR_WEBHOOKS_QUEUE_URL", &queues.webhooks)
        .env("BOOKTR_KMS_KEY_ID", &resources.kms_key_id)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let key = printed["apiKey"].as_str().unwrap();
    let me: Value = app
        .app
        .client
        .get(format!("{}/api/user", app.app.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["role"], "SUPER_ADMIN", "{me}");
}
