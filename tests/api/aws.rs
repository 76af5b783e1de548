//! Managed-queue mode on the local AWS emulator (moto, started by `scripts/test.sh`): the HTTP
//! API over DynamoDB, SQS and S3, with the worker driven the way Lambda drives it: messages
//! received from the emulator's FIFO queue are handed to the SQS handler as SQS events; and the
//! `infra/events/` fixtures fed through the real handlers in-process.

use std::sync::Arc;
use std::time::Duration;

use aws_lambda_events::sqs::SqsEvent;
use booktr_api::{AppState, Settings};
use booktr_aws::Clients;
use booktr_core::accounts::NewUser;
use booktr_core::config::Config;
use booktr_core::jobs::runner::Worker;
use booktr_core::ports::{Models, QueueName, Received, SystemClock};
use booktr_core::types::{Email, Plan, Role};
use booktr_functions::lambda::{handle_schedule, handle_sqs};
use booktr_functions::wiring::{self, AwsResources, Managed};
use booktr_outbound::EnvModels;
use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::helpers::{aws_resources, sample_txt};
use crate::stand_ins::{failing_openai_stand_in, StandIn};

struct AwsApp {
    managed: Managed,
    resources: AwsResources,
    url: String,
    key: String,
    client: reqwest::Client,
}

/// Fresh table, queues and bucket on the emulator, the API on a local port, and a user.
async fn spawn_aws(models: Arc<dyn Models>) -> AwsApp {
    let clients = Clients::from_env().await;
    let resources = aws_resources(&clients).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let public = url.clone();
    let config = Config::from_lookup(|name| match name {
        "BOOKTR_PUBLIC_URL" => Some(public.clone()),
        "BOOKTR_WEBHOOK_ALLOW_PRIVATE" => Some("true".into()),
        _ => None,
    })
    .unwrap();
    let managed =
        wiring::managed(&config, clients, &resources, Arc::new(SystemClock), models).unwrap();

    let state = AppState::new(
        managed.services.clone(),
        Settings {
            public_url: url.clone(),
            trust_forwarded_for: false,
            body_limit: Some(booktr_api::LAMBDA_BODY_LIMIT),
            upload_origin: None,
        },
    );
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener,
        booktr_api::router(state),
    )));
    let accounts = &managed.services.accounts;
    let user = accounts
        .create_user(NewUser {
            email: Email::parse(&format!("{}@example.com", booktr_core::ids::new_id())).unwrap(),
            name: None,
            password: None,
            role: Role::User,
            plan: Plan::Business,
        })
        .await
        .unwrap();
    let key = accounts.create_key(&user, "t", None, None).await.unwrap();
    AwsApp {
        managed,
        resources,
        url,
        key: key.secret,
        client: reqwest::Client::new(),
    }
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
            .client
            .post(format!("{}/api/upload", self.url))
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
        self.client
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.client
            .post(format!("{}{path}", self.url))
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
            .managed
            .ports
            .queue
            .receive(from, 10, Duration::from_secs(5))
            .await
            .unwrap();
        let count = messages.len();
        if count == 0 {
            return (Vec::new(), 0);
        }

        let response = handle_sqs(&self.managed, Worker::of(from), sqs_event(&messages))
            .await
            .unwrap();
        let failed: Vec<String> = response
            .batch_item_failures
            .into_iter()
            .map(|f| f.item_identifier)
            .collect();
        // As the event source does: the messages not reported as failed are deleted.
        for message in messages.iter().filter(|m| !failed.contains(&m.id)) {
            self.managed
                .ports
                .queue
                .ack(from, &message.receipt)
                .await
                .unwrap();
        }
        (failed, count)
    }

    /// Runs the jobs queue (and its dead-letter queue) through the Lambda handler until the
    /// book reaches `status`.
    async fn drive_until(&self, book_id: &str, status: &str) -> Value {
        self.drive_reporting(book_id, status).await.0
    }

    /// [`AwsApp::drive_until`], returning also the ids of the messages the handler reported
    /// as failed, once per report. (Retried messages wait out their delays and the emulator's
    /// visibility timeouts, hence the long budget.)
    async fn drive_reporting(&self, book_id: &str, status: &str) -> (Value, Vec<String>) {
        let mut book = Value::Null;
        let mut reported = Vec::new();
        for _ in 0..1000 {
            reported.extend(self.lambda_batch(QueueName::Jobs).await.0);
            self.lambda_batch(QueueName::JobsDeadLetter).await;
            book = self.get(&format!("/api/books/{book_id}")).await;
            if book["status"] == status {
                return (book, reported);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("book never reached {status}: {book}");
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
    let app = spawn_aws(Arc::new(EnvModels::from_vars(Vec::new()))).await;
    let id = app.start_sample().await;
    app.drive_until(&id, "COMPLETED").await;
    let gone = booktr_core::books::store::translation_key(&id, 2).unwrap();
    app.managed.ports.blobs.delete(&gone).await.unwrap();
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
    let response = handle_sqs(&app.managed, Worker::JOBS, event).await.unwrap();
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
    let state = AppState::new(
        app.managed.services.clone(),
        Settings {
            public_url: app.url.clone(),
            trust_forwarded_for: false,
            body_limit: Some(booktr_api::LAMBDA_BODY_LIMIT),
            upload_origin: None,
        },
    );
    let health = booktr_functions::lambda::http_app(booktr_api::health::router(), state.clone());
    let request = lambda_http::request::from_str(&fixture("http-health.json")).unwrap();
    let response = health.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let books = booktr_functions::lambda::http_app(booktr_api::books::router(), state.clone());
    let request = lambda_http::request::from_str(&fixture("http-books-unauthorized.json")).unwrap();
    let response = books.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 401);
    // The pages' function sends a visitor without a session to sign in, and back afterwards.
    let pages = booktr_functions::lambda::http_app(booktr_api::web::app::router(), state);
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
    let answer = handle_schedule(&app.managed).await.unwrap();
    assert_eq!(answer, json!({"queued": 0}));
}

/// The first administrator of an AWS stack comes from `booktr user create --aws`.
#[tokio::test]
async fn user_create_with_aws_makes_a_user_in_the_managed_deployment() {
    let app = spawn_aws(Arc::new(EnvModels::from_vars(Vec::new()))).await;
    let queues = &app.resources.queues;
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
        .env("BOOKTR_TABLE", &app.resources.table)
        .env("BOOKTR_BUCKET", &app.resources.bucket)
        .env("BOOKTR_JOBS_QUEUE_URL", &queues.jobs)
        .env("BOOKTR_JOBS_DLQ_URL", &queues.jobs_dead_letter)
        .env("BOOKTR_WEBHOOKS_QUEUE_URL", &queues.webhooks)
        .env("BOOKTR_KMS_KEY_ID", &app.resources.kms_key_id)
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
        .client
        .get(format!("{}/api/user", app.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["role"], "SUPER_ADMIN", "{me}");
}
