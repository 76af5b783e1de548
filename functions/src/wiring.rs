//! The one place that chooses adapters. Nothing else in the code asks which mode it runs in;
//! [`crate::app::Application`] builds the services over what this returns.

use std::path::Path;
use std::sync::Arc;

use booktr_core::config::Config;
use booktr_core::ports::{Clock, HttpOut, HttpOutError, Mailer, Models, StoreError};
use booktr_core::Ports;
use booktr_local::{LocalBlobs, LocalSecrets, SignedLinks, SqliteQueue, SqliteTable};
use booktr_outbound::{LogMailer, OutboxMailer, ReqwestHttp, SmtpMailer};

/// Why the adapters could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WiringError {
    /// A backend could not be opened (the data directory's database, files or keys).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The configuration is missing a setting or holds one that cannot be used.
    #[error("{0}")]
    Config(String),
    /// The webhook deliveries' HTTP client could not be built.
    #[error(transparent)]
    Http(#[from] HttpOutError),
}

/// The embedded backend of worker-queue mode, all under one data directory:
/// `booktr.db` (table), `queue.db` (jobs), `blobs/` (files), `link.key` and `secrets.key`, and
/// `outbox/` (the emails, when no SMTP relay is configured).
pub struct Embedded {
    pub ports: Ports,
    /// Kept concrete for its local-only recovery step (`release_in_flight`).
    pub queue: Arc<SqliteQueue>,
    /// Kept concrete for its local-only sweep of expired items (`purge_expired`).
    pub table: Arc<SqliteTable>,
}

/// `models` is [`booktr_outbound::EnvModels`] in production; tests hand in stand-ins.
pub fn embedded(
    config: &Config,
    clock: Arc<dyn Clock>,
    models: Arc<dyn Models>,
) -> Result<Embedded, WiringError> {
    let data_dir = config.data_dir.as_path();
    let links = SignedLinks::new(&config.public_url, link_secret(data_dir)?, clock.clone());
    let secrets = Arc::new(LocalSecrets::open(&data_dir.join("secrets.key"))?);
    let table = Arc::new(SqliteTable::open(&data_dir.join("booktr.db"))?);
    let queue = Arc::new(SqliteQueue::open(
        &data_dir.join("queue.db"),
        clock.clone(),
    )?);
    let blobs = Arc::new(LocalBlobs::open(&data_dir.join("blobs"))?);
    let ports = Ports {
        table: table.clone(),
        queue: queue.clone(),
        blobs,
        clock,
        http: webhook_http(config)?,
        mailer: mailer(config, Some(&data_dir.join("outbox")))?,
        models,
        links: Arc::new(links),
        secrets,
    };
    Ok(Embedded {
        ports,
        queue,
        table,
    })
}

/// The key download links are signed with: made once per data directory, kept in `link.key`
/// (readable by the owner only), so links stay valid across restarts.
fn link_secret(data_dir: &Path) -> Result<Vec<u8>, StoreError> {
    booktr_local::key_file::load_or_create(
        &data_dir.join("link.key"),
        |secret| secret.len() >= 32,
        || booktr_core::ids::random_hex(32).into_bytes(),
    )
}

/// Webhook deliveries' HTTP client: guarded unless `BOOKTR_WEBHOOK_ALLOW_PRIVATE`.
fn webhook_http(config: &Config) -> Result<Arc<dyn HttpOut>, WiringError> {
    let http = ReqwestHttp::new(config.webhook_allow_private)?;
    Ok(Arc::new(http))
}

/// SMTP when `BOOKTR_SMTP_URL` and `BOOKTR_MAIL_FROM` are set; else the `outbox` folder when
/// there is one, else a mailer that logs only that a message was not sent.
fn mailer(config: &Config, outbox: Option<&Path>) -> Result<Arc<dyn Mailer>, WiringError> {
    match &config.smtp {
        Some(smtp) => {
            let smtp = SmtpMailer::new(&smtp.url, &smtp.from)
                .map_err(|e| WiringError::Config(format!("BOOKTR_SMTP_URL: {e}")))?;
            Ok(Arc::new(smtp))
        }
        None => {
            // Sender addresses are shown on the site's own host; a site on an address or on
            // localhost (the default) has no mail domain, and `noreply@127.0.0.1` is none.
            let host = url::Url::parse(&config.public_url)
                .ok()
                .and_then(|u| match u.host() {
                    Some(url::Host::Domain(d)) if d.contains('.') => Some(d.to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| "booktr.localhost".into());
            match outbox {
                Some(dir) => {
                    let outbox = OutboxMailer::open(dir, host)
                        .map_err(|e| WiringError::Config(format!("BOOKTR_DATA_DIR: {e}")))?;
                    Ok(Arc::new(outbox))
                }
                None => Ok(Arc::new(LogMailer::new(host))),
            }
        }
    }
}

/// Where the managed-queue resources are (environment variables set by `template.yaml`).
#[cfg(feature = "aws")]
#[derive(Debug, Clone)]
pub struct AwsResources {
    /// `BOOKTR_TABLE`
    pub table: String,
    /// `BOOKTR_BUCKET`
    pub bucket: String,
    /// `BOOKTR_JOBS_QUEUE_URL`, `BOOKTR_JOBS_DLQ_URL`, `BOOKTR_RENDER_QUEUE_URL`,
    /// `BOOKTR_WEBHOOKS_QUEUE_URL`
    pub queues: booktr_aws::QueueUrls,
    /// `BOOKTR_KMS_KEY_ID`: the KMS key users' provider keys are sealed under.
    pub kms_key_id: String,
}

#[cfg(feature = "aws")]
impl AwsResources {
    pub fn from_env() -> Result<AwsResources, WiringError> {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| WiringError::Config(format!("{name} is not set")))
        };
        Ok(AwsResources {
            table: var("BOOKTR_TABLE")?,
            bucket: var("BOOKTR_BUCKET")?,
            queues: booktr_aws::QueueUrls {
                jobs: var("BOOKTR_JOBS_QUEUE_URL")?,
                jobs_dead_letter: var("BOOKTR_JOBS_DLQ_URL")?,
                render: var("BOOKTR_RENDER_QUEUE_URL")?,
                webhooks: var("BOOKTR_WEBHOOKS_QUEUE_URL")?,
            },
            kms_key_id: var("BOOKTR_KMS_KEY_ID")?,
        })
    }

    /// Where the web app's script posts direct uploads: the bucket's virtual-hosted origin in
    /// the function's region (`AWS_REGION`, which Lambda sets).
    pub fn upload_origin(&self) -> Option<String> {
        let region = std::env::var("AWS_REGION").ok()?;
        Some(format!("https://{}.s3.{region}.amazonaws.com", self.bucket))
    }
}

/// The managed-queue backend: DynamoDB, SQS, S3 and KMS through clients built once (a Lambda's
/// cold start); S3 presigns the download links; KMS seals users' secrets.
#[cfg(feature = "aws")]
pub fn managed(
    config: &Config,
    clients: booktr_aws::Clients,
    resources: &AwsResources,
    clock: Arc<dyn Clock>,
    models: Arc<dyn Models>,
) -> Result<Ports, WiringError> {
    let blobs = Arc::new(booktr_aws::S3Blobs::new(&clients, &resources.bucket));
    let ports = Ports {
        table: Arc::new(booktr_aws::DynamoTable::new(
            clients.dynamo,
            &resources.table,
        )),
        // Lambda's event source does the long polling; a receive here never waits.
        queue: Arc::new(booktr_aws::SqsQueue::new(
            clients.sqs,
            resources.queues.clone(),
            std::time::Duration::ZERO,
        )),
        blobs: blobs.clone(),
        clock,
        http: webhook_http(config)?,
        // No data directory on Lambda: without a relay, mail is dropped and only that is logged.
        mailer: mailer(config, None)?,
        models,
        links: blobs,
        secrets: Arc::new(booktr_aws::KmsSecrets::new(
            clients.kms,
            &resources.kms_key_id,
        )),
    };
    Ok(ports)
}
