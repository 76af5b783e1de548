//! [`TestApp`]: the whole service built as `booktr serve` builds it ([`Application`]), on a
//! random local port, on a temporary data directory and a clock the test controls; and
//! [`eventually`], the one way a test waits for the background work.

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use booktr_core::accounts::NewUser;
use booktr_core::config::Config;
use booktr_core::jobs::runner::RunnerConfig;
use booktr_core::ports::{Clock, ManualClock, Models};
use booktr_core::types::{Email, Plan, Role};
use booktr_core::{Ports, Services};
use booktr_functions::app::{Application, Running, Tasks};
use booktr_functions::wiring;
use booktr_outbound::EnvModels;
use reqwest::multipart::{Form, Part};
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;
use tempfile::TempDir;

pub struct TestApp {
    pub url: String,
    pub client: reqwest::Client,
    pub clock: Arc<ManualClock>,
    /// The assembly itself: its services, ports and configuration.
    pub application: Application,
    pub services: Services,
    pub ports: Ports,
    pub data: TempDir,
    pub router: axum::Router,
    /// The emulator, and the table, bucket, queues and KMS key on it, on the AWS backend.
    pub aws: Option<OnEmulator>,
    _running: Running,
}

/// Where an app on the AWS backend keeps its data: one of the local emulators.
pub struct OnEmulator {
    pub endpoint: String,
    pub clients: booktr_aws::Clients,
    pub resources: wiring::AwsResources,
}

pub struct TestUser {
    pub id: String,
    pub key: String,
}

/// How a [`TestApp`] is made: `TestApp::new()`, what the test needs, then `.start().await`.
/// By default: no queue workers (the test drives the queues itself with `runner::drain`, so
/// retries and timeouts happen exactly when it says), the offline engine for every model (tests
/// never reach a real provider), webhook deliveries allowed to loopback (where the tests'
/// receivers listen), and the backend `BOOKTR_TEST_BACKEND` says.
pub struct TestAppBuilder {
    workers: bool,
    models: Arc<dyn Models>,
    webhook_guard: bool,
    env: Vec<(String, String)>,
    on_aws: bool,
}

impl TestApp {
    #[allow(clippy::new_ret_no_self)] // The builder's start is async.
    pub fn new() -> TestAppBuilder {
        TestAppBuilder {
            workers: false,
            models: Arc::new(EnvModels::from_vars(Vec::new())),
            webhook_guard: false,
            env: Vec::new(),
            on_aws: on_aws(),
        }
    }
}

impl TestAppBuilder {
    /// With the queue workers `booktr serve` runs (one per queue, quick to look again).
    pub fn with_workers(mut self) -> Self {
        self.workers = true;
        self
    }

    /// With the given models, e.g. a stand-in that counts calls or fails on purpose.
    pub fn with_models(mut self, models: Arc<dyn Models>) -> Self {
        self.models = models;
        self
    }

    /// With extra configuration (`BOOKTR_*` variables), e.g. small quotas.
    pub fn with_env(mut self, env: &[(&str, &str)]) -> Self {
        self.env
            .extend(env.iter().map(|(n, v)| (n.to_string(), v.to_string())));
        self
    }

    /// With the SSRF guard of webhook deliveries on, as in production.
    pub fn with_webhook_guard(mut self) -> Self {
        self.webhook_guard = true;
        self
    }

    /// On the AWS adapters (the emulator), whatever `BOOKTR_TEST_BACKEND` says.
    pub fn on_aws(mut self) -> Self {
        self.on_aws = true;
        self
    }

    pub async fn start(self) -> TestApp {
        let data = TempDir::new().unwrap();
        let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let config = test_config(&data, &url, !self.webhook_guard, &self.env);
        let (mut app, aws) = build(config, clock.clone(), self.models, self.on_aws).await;
        if let Some(aws) = &aws {
            // The emulator's S3, where the pages' script posts direct uploads.
            app.settings.upload_origin = Some(aws.endpoint.clone());
        }
        let router = app.router();
        // The serving code of `booktr serve` itself, so what happens before routing is tested too.
        tokio::spawn(booktr_functions::serve::serve_router(
            listener,
            router.clone(),
            std::future::pending(),
        ));
        let tasks = Tasks {
            job_workers: usize::from(self.workers),
            runner: RunnerConfig {
                idle_wait: Duration::from_millis(20),
                ..RunnerConfig::default()
            },
        };
        let running = app.start(tasks).await.unwrap();
        TestApp {
            url,
            client: reqwest::Client::new(),
            clock,
            services: app.services.clone(),
            ports: app.ports.clone(),
            application: app,
            data,
            router,
            aws,
            _running: running,
        }
    }
}

/// The configuration of a test's app: its data directory and address, and `env`.
fn test_config(data: &TempDir, url: &str, allow_private: bool, env: &[(String, String)]) -> Config {
    let data_dir = data.path().to_string_lossy().to_string();
    Config::from_lookup(|name| match name {
        "BOOKTR_DATA_DIR" => Some(data_dir.clone()),
        "BOOKTR_PUBLIC_URL" => Some(url.to_string()),
        "BOOKTR_WEBHOOK_ALLOW_PRIVATE" => Some(allow_private.to_string()),
        other => env
            .iter()
            .find(|(name, _)| name == other)
            .map(|(_, value)| value.clone()),
    })
    .unwrap()
}

impl TestApp {
    /// A second server, without workers, on the same table, queues and files: another
    /// process of a fleet (another Lambda). Returns its base URL.
    pub async fn twin(&self) -> String {
        let clock: Arc<dyn Clock> = self.clock.clone();
        let models: Arc<dyn Models> = Arc::new(EnvModels::from_vars(Vec::new()));
        let builder = Application::builder(self.application.config.clone())
            .clock(clock)
            .models(models);
        let mut twin = match &self.aws {
            None => builder.embedded().unwrap(),
            Some(aws) => builder
                .managed(aws.clients.clone(), &aws.resources)
                .unwrap(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        twin.settings.public_url = url.clone();
        twin.settings.upload_origin = None;
        tokio::spawn(booktr_functions::serve::serve_router(
            listener,
            twin.router(),
            std::future::pending(),
        ));
        url
    }
}

/// Polls `probe` every 25 ms until it answers `Ok`, and returns that; fails the test once
/// `timeout` has passed, with the probe's last `Err` (what it last saw).
pub async fn eventually<T, E, F, Fut>(timeout: Duration, mut probe: F) -> T
where
    E: Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last = match probe().await {
            Ok(done) => return done,
            Err(last) => last,
        };
        if tokio::time::Instant::now() >= deadline {
            panic!("not so after {timeout:?}; last seen: {last}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The app on the adapters the suite runs on: the embedded ones, or on AWS (`BOOKTR_TEST_BACKEND=aws`,
/// which `scripts/test.sh` sets for its second run, or [`TestAppBuilder::on_aws`]) DynamoDB,
/// SQS, S3 and KMS on the local emulator, with a fresh table, bucket, queues and KMS key per test.
async fn build(
    config: Config,
    clock: Arc<dyn Clock>,
    models: Arc<dyn Models>,
    on_aws: bool,
) -> (Application, Option<OnEmulator>) {
    let public_url = config.public_url.clone();
    let builder = Application::builder(config).clock(clock).models(models);
    if !on_aws {
        return (builder.embedded().unwrap(), None);
    }
    let endpoint = next_emulator();
    let clients = booktr_aws::Clients::at_endpoint(&endpoint).await;
    let resources = aws_resources(&clients).await;
    // As the template's bucket: the site's pages may post direct uploads to it.
    let rule = aws_sdk_s3::types::CorsRule::builder()
        .allowed_methods("POST")
        .allowed_origins(&public_url)
        .allowed_headers("*")
        .build()
        .unwrap();
    clients
        .s3
        .put_bucket_cors()
        .bucket(&resources.bucket)
        .cors_configuration(
            aws_sdk_s3::types::CorsConfiguration::builder()
                .cors_rules(rule)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let app = builder.managed(clients.clone(), &resources).unwrap();
    let aws = OnEmulator {
        endpoint,
        clients,
        resources,
    };
    (app, Some(aws))
}

/// One of the local emulators, in turn: `BOOKTR_TEST_EMULATORS` (their URLs, space-separated,
/// which `scripts/test.sh` starts one per core), else `AWS_ENDPOINT_URL`. An emulator serves one
/// request at a time and is what the suite on the AWS backend waits on, so the tests spread over
/// several.
fn next_emulator() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let listed = std::env::var("BOOKTR_TEST_EMULATORS").unwrap_or_default();
    let emulators: Vec<&str> = listed.split_whitespace().collect();
    if emulators.is_empty() {
        return std::env::var("AWS_ENDPOINT_URL").expect(
            "AWS_ENDPOINT_URL must point at the local emulator: run the suite with scripts/test.sh",
        );
    }
    let turn = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    emulators[turn % emulators.len()].to_string()
}

/// A fresh table, bucket, queues and KMS key on the emulator, under unique names.
pub async fn aws_resources(clients: &booktr_aws::Clients) -> wiring::AwsResources {
    let name = |prefix: &str| format!("{prefix}-{}", booktr_core::ids::new_id());
    let resources = wiring::AwsResources {
        table: name("table"),
        bucket: name("bucket"),
        queues: booktr_aws::SqsQueue::create(&clients.sqs, &name("q"))
            .await
            .unwrap(),
        kms_key_id: booktr_aws::KmsSecrets::create_key(&clients.kms)
            .await
            .unwrap(),
    };
    booktr_aws::DynamoTable::create(&clients.dynamo, &resources.table)
        .await
        .unwrap();
    booktr_aws::S3Blobs::create(&clients.s3, &resources.bucket)
        .await
        .unwrap();
    resources
}

/// Whether this run of the suite is on the AWS adapters.
pub fn on_aws() -> bool {
    std::env::var("BOOKTR_TEST_BACKEND").is_ok_and(|b| b == "aws")
}

impl TestApp {
    /// A user with one API key (read and write), created as `booktr user create` does.
    pub async fn user_with(&self, plan: Plan, role: Role) -> TestUser {
        let email = Email::parse(&format!("{}@example.com", booktr_core::ids::new_id())).unwrap();
        let accounts = &self.services.accounts;
        let user = accounts
            .create_user(NewUser {
                email,
                name: Some("Test".into()),
                password: None,
                role,
                plan,
            })
            .await
            .unwrap();
        let key = accounts
            .create_key(&user, "test", None, None)
            .await
            .unwrap();
        TestUser {
            id: user.id,
            key: key.secret,
        }
    }

    /// A user on the BUSINESS plan: the suite polls and uploads more than a FREE user's
    /// rate limits and quotas allow in one (manual-clock) minute; the tests of those limits
    /// make FREE users themselves.
    pub async fn user(&self) -> TestUser {
        self.user_with(Plan::Business, Role::User).await
    }

    /// A request with no credential.
    pub fn anonymous(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.url))
    }

    pub async fn get_anonymous(&self, path: &str) -> Response {
        self.anonymous(Method::GET, path).send().await.unwrap()
    }

    pub async fn post_anonymous(&self, path: &str, body: &Value) -> Response {
        self.anonymous(Method::POST, path)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    pub fn request(&self, method: Method, path: &str, key: &str) -> RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(key)
    }

    pub async fn get(&self, path: &str, key: &str) -> Response {
        self.request(Method::GET, path, key).send().await.unwrap()
    }

    pub async fn send_json(&self, method: Method, path: &str, key: &str, body: Value) -> Response {
        self.request(method, path, key)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn upload(&self, key: &str, file_name: &str, bytes: Vec<u8>) -> Response {
        // On the AWS backend (a Lambda's limits) a file larger than a function takes goes
        // straight to storage, as the refusal tells clients to.
        if self.aws.is_some() && bytes.len() as u64 > booktr_api::LAMBDA_BODY_LIMIT - 64 * 1024 {
            return self.upload_direct(key, file_name, bytes).await;
        }
        let form = Form::new().part("file", Part::bytes(bytes).file_name(file_name.to_string()));
        self.post_upload_form(key, form).await
    }

    /// `POST /api/upload` with `form` as it is (the multipart endpoint itself, whatever the size).
    pub async fn post_upload_form(&self, key: &str, form: Form) -> Response {
        self.request(Method::POST, "/api/upload", key)
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// Uploads through the direct flow: the form, the file posted with it, the confirm (whose
    /// answer is `POST /api/upload`'s).
    pub async fn upload_direct(&self, key: &str, file_name: &str, bytes: Vec<u8>) -> Response {
        let offered = self
            .send_json(
                Method::POST,
                "/api/uploads",
                key,
                serde_json::json!({ "fileName": file_name, "size": bytes.len() }),
            )
            .await;
        assert_eq!(offered.status(), 201);
        let offered: Value = offered.json().await.unwrap();
        let sent = crate::direct_upload::send(&offered, file_name, bytes).await;
        assert!(sent.status().is_success(), "{}", sent.status());
        self.request(Method::POST, offered["confirmPath"].as_str().unwrap(), key)
            .send()
            .await
            .unwrap()
    }

    /// Uploads and returns the new book's id, asserting success.
    pub async fn upload_ok(&self, key: &str, file_name: &str, bytes: Vec<u8>) -> String {
        let response = self.upload(key, file_name, bytes).await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        body["book"]["id"].as_str().unwrap().to_string()
    }

    /// Sleeps `by` and moves the app's clock on as much. The queues read that clock, so a job
    /// retried after its back-off (2, 4, 8 s) comes due while a test waits, as it would in
    /// production; without this it stays hidden for good.
    pub async fn pass_time(&self, by: Duration) {
        tokio::time::sleep(by).await;
        self.clock
            .advance(chrono::Duration::from_std(by).expect("a short wait"));
    }

    /// Polls the book until it reaches `status` (the workers run in the background); returns it.
    /// The wait is generous (it only lasts that long when the test fails): on the AWS backend a
    /// large book's chapters are written to an emulator that other tests share.
    pub async fn wait_for_status(&self, key: &str, book_id: &str, status: &str) -> Value {
        eventually(Duration::from_secs(90), || async {
            let book = self.book(key, book_id).await;
            if book["status"] == status {
                Ok(book)
            } else {
                Err(format!("book {book_id} not {status}: {book}"))
            }
        })
        .await
    }

    /// `GET /api/books/{id}` as JSON.
    pub async fn book(&self, key: &str, book_id: &str) -> Value {
        self.get(&format!("/api/books/{book_id}"), key)
            .await
            .json()
            .await
            .unwrap()
    }

    /// Starts a translation of an EXTRACTED book (`body` is the request without `bookId`) and
    /// waits up to two minutes for it to end (COMPLETED or ERROR); returns the book as it ended.
    pub async fn translate_to_end(&self, key: &str, book_id: &str, mut body: Value) -> Value {
        body["bookId"] = Value::from(book_id);
        let started = self
            .send_json(Method::POST, "/api/translate", key, body)
            .await;
        assert_eq!(started.status(), 200);
        eventually(Duration::from_secs(120), || async {
            let book = self.book(key, book_id).await;
            if book["status"] == "COMPLETED" || book["status"] == "ERROR" {
                Ok(book)
            } else {
                Err(format!("book {book_id} still translating: {book}"))
            }
        })
        .await
    }

    /// The sample book uploaded, extracted and translated (COMPLETED); returns its id.
    pub async fn translated_sample(&self, key: &str) -> String {
        let id = self.upload_ok(key, "voyage.txt", sample_txt()).await;
        self.wait_for_status(key, &id, "EXTRACTED").await;
        let book = self.translate_to_end(key, &id, serde_json::json!({})).await;
        assert_eq!(book["status"], "COMPLETED", "{book}");
        id
    }

    /// Shares a book publicly; returns the link's token.
    pub async fn share(&self, key: &str, book_id: &str) -> String {
        let shared: Value = self
            .send_json(
                Method::POST,
                &format!("/api/books/{book_id}/share"),
                key,
                serde_json::json!({}),
            )
            .await
            .json()
            .await
            .unwrap();
        shared["shareToken"].as_str().unwrap().to_string()
    }
}

/// Asserts that `key`'s owner gets 404 on GET, PATCH (with `patch`) and DELETE of `path`: another
/// tenant's resource is invisible, not forbidden.
pub async fn assert_hidden_from(app: &TestApp, path: &str, key: &str, patch: Value) {
    assert_error(app.get(path, key).await, 404, "not_found").await;
    assert_error(
        app.send_json(Method::PATCH, path, key, patch).await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        app.request(Method::DELETE, path, key).send().await.unwrap(),
        404,
        "not_found",
    )
    .await;
}

/// Asserts the status and the `{error, message}` shape; returns the body.
pub async fn assert_error(response: Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status(), status);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], code, "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    body
}

/// A small plain-text book with a preface and three chapters.
pub fn sample_txt() -> Vec<u8> {
    "The Voyage\n\nA preface of seven words stands here.\n\n\
     CHAPTER I. Loomings\n\nCall me Ishmael. Some years ago I went to sea.\n\n\
     CHAPTER II. The Carpet-Bag\n\nI stuffed a shirt or two into my old carpet-bag.\n\n\
     CHAPTER III. The Spouter-Inn\n\nEntering that gable-ended Spouter-Inn, you found yourself in a wide, low entry.\n"
        .as_bytes()
        .to_vec()
}

/// Where a book of the test corpus is (`corpus/` at the repository's root).
pub fn corpus_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(name)
}

/// A book of the test corpus.
pub fn corpus(name: &str) -> Vec<u8> {
    let path = corpus_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A file made from the corpus by pandoc or LibreOffice (`tests/fixtures/`).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl TestApp {
    /// Everything stored: each table item as text, and each blob's key and bytes. On the
    /// embedded backend the rows of the SQLite table and the files of the blob folder; on AWS
    /// a scan of the table and every object of the bucket.
    pub async fn everything_stored(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        match &self.aws {
            None => {
                // Every row of every table of both databases: the items, and the job queue's
                // messages, deduplication records and counts.
                for file in ["booktr.db", "queue.db"] {
                    out.extend(every_row(&self.data.path().join(file)));
                }
                let mut dirs = vec![self.data.path().join("blobs")];
                while let Some(dir) = dirs.pop() {
                    let Ok(entries) = std::fs::read_dir(&dir) else {
                        continue;
                    };
                    for entry in entries {
                        let path = entry.unwrap().path();
                        if path.is_dir() {
                            dirs.push(path);
                        } else {
                            out.push(path.to_string_lossy().into_owned().into_bytes());
                            out.push(std::fs::read(&path).unwrap());
                        }
                    }
                }
            }
            Some(OnEmulator {
                clients, resources, ..
            }) => {
                let mut start = None;
                loop {
                    let page = clients
                        .dynamo
                        .scan()
                        .table_name(&resources.table)
                        .set_exclusive_start_key(start)
                        .send()
                        .await
                        .unwrap();
                    for item in page.items() {
                        out.push(format!("{item:?}").into_bytes());
                    }
                    start = page.last_evaluated_key().cloned();
                    if start.is_none() {
                        break;
                    }
                }
                let objects = clients
                    .s3
                    .list_objects_v2()
                    .bucket(&resources.bucket)
                    .send()
                    .await
                    .unwrap();
                for object in objects.contents() {
                    let key = object.key().unwrap_or_default().to_string();
                    let object = clients
                        .s3
                        .get_object()
                        .bucket(&resources.bucket)
                        .key(&key)
                        .send()
                        .await;
                    let object = match object {
                        Ok(object) => object,
                        // Deleted between the listing and now (a purge at work).
                        Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key()) => {
                            continue
                        }
                        Err(e) => panic!("reading {key}: {e:?}"),
                    };
                    let body = object.body.collect().await.unwrap().into_bytes();
                    out.push(key.into_bytes());
                    out.push(body.to_vec());
                }
            }
        }
        out
    }

    /// The stored things (see [`TestApp::everything_stored`]) that contain any of `needles`.
    pub async fn stored_mentions(&self, needles: &[&str]) -> Vec<String> {
        self.everything_stored()
            .await
            .into_iter()
            .filter(|bytes| {
                needles
                    .iter()
                    .any(|n| bytes.windows(n.len()).any(|w| w == n.as_bytes()))
            })
            .map(|bytes| String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned())
            .collect()
    }
}

/// Each row of each table of a SQLite database, its values joined as text.
fn every_row(path: &std::path::Path) -> Vec<Vec<u8>> {
    let db = rusqlite::Connection::open(path).unwrap();
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = Vec::new();
    for table in tables {
        let mut statement = db.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = statement.column_count();
        let rows = statement
            .query_map([], |r| {
                let mut row = Vec::new();
                for i in 0..columns {
                    match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                            row.extend_from_slice(t)
                        }
                        other => row.extend_from_slice(format!("{other:?}").as_bytes()),
                    }
                    row.push(b'|');
                }
                Ok(row)
            })
            .unwrap();
        for row in rows {
            out.push(row.unwrap());
        }
    }
    out
}

/// An outside program some tests check the service's output with, or run against.
/// `scripts/test.sh` installs them all; without one, what needs it is skipped and says so.
#[derive(Clone, Copy, Debug)]
pub enum Tool {
    /// The local AWS emulator (moto) at `AWS_ENDPOINT_URL`, which `scripts/test.sh` starts.
    Emulator,
    /// Chromium, headless, for screenshots and the pages' DOM.
    Chromium,
    /// Chromium's WebDriver, for the tests that walk the web app.
    ChromeDriver,
    /// axe-core under `target/axe`, injected into the pages.
    Axe,
    /// epubcheck (Java) at `/usr/share/java/epubcheck.jar`.
    Epubcheck,
    /// poppler's `pdftotext`.
    Pdftotext,
    /// The Python checkers (feed, sitemap, OpenAPI, Prometheus) under `target/venv-checks`.
    Checkers,
    /// translate-toolkit, the translation tools' XLIFF and TMX library, under `target/venv-translate`.
    TranslateToolkit,
    /// pandoc, which reads the Markdown the service writes.
    Pandoc,
}

impl Tool {
    fn is_here(self) -> bool {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        match self {
            Tool::Emulator => std::env::var_os("AWS_ENDPOINT_URL").is_some(),
            Tool::Chromium => on_path("chromium"),
            Tool::ChromeDriver => on_path("chromedriver") && on_path("chromium"),
            Tool::Axe => repo
                .join("target/axe/node_modules/axe-core/axe.min.js")
                .is_file(),
            Tool::Epubcheck => on_path("java") && std::path::Path::new(EPUBCHECK_JAR).is_file(),
            Tool::Pdftotext => on_path("pdftotext"),
            Tool::Checkers => repo.join("target/venv-checks/bin/python").is_file(),
            Tool::TranslateToolkit => repo.join("target/venv-translate/bin/python").is_file(),
            Tool::Pandoc => on_path("pandoc"),
        }
    }
}

/// Whether `tool` is here. If not, says so on the terminal (past the test harness's capture,
/// so that a skip is seen in a passing run) with the test's name (its thread's): the test then
/// skips what needs the tool.
pub fn have(tool: Tool) -> bool {
    if tool.is_here() {
        return true;
    }
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(
        std::io::stderr(),
        "skipped in {test}: {tool:?} is not here (bash scripts/test.sh installs it)"
    );
    false
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

const EPUBCHECK_JAR: &str = "/usr/share/java/epubcheck.jar";

/// Asserts that epubcheck finds nothing wrong with the EPUB (skipped, saying so, without it).
pub fn epubcheck(bytes: &[u8]) {
    if !have(Tool::Epubcheck) {
        return;
    }
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("book.epub");
    std::fs::write(&path, bytes).unwrap();
    // Java's quick compiler alone and its serial collector: a check lasts seconds, too short for
    // the optimising compiler's work to pay back, and so takes half the CPU time.
    let check = std::process::Command::new("java")
        .args([
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-jar",
            EPUBCHECK_JAR,
            "-q",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

/// The PDF's text in reading order, as poppler's `pdftotext` reads it. Tests calling it check
/// [`Tool::Pdftotext`] first.
pub fn pdftotext(bytes: &[u8]) -> String {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("book.pdf");
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
