//! The managed-queue adapters of the ports: DynamoDB (table), SQS (job and webhook queues), S3
//! (blobs and presigned download links), KMS (sealing users' secrets). SDK clients are built once per process (a Lambda's cold
//! start) from the standard AWS configuration; `AWS_ENDPOINT_URL` points them at a local
//! emulator.

pub mod dynamo;
pub mod kms;
pub mod s3;
mod s3_post;
pub mod sqs;

pub use dynamo::DynamoTable;
pub use kms::KmsSecrets;
pub use s3::S3Blobs;
pub use sqs::{QueueUrls, SqsQueue};

use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

/// The AWS clients of one process.
#[derive(Clone)]
pub struct Clients {
    pub dynamo: aws_sdk_dynamodb::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub s3: aws_sdk_s3::Client,
    pub kms: aws_sdk_kms::Client,
    /// What the clients sign with, for what the SDK does not sign itself (S3 POST policies).
    pub credentials: Option<aws_sdk_s3::config::SharedCredentialsProvider>,
}

impl Clients {
    /// From the environment (region, credentials, `AWS_ENDPOINT_URL`), over HTTPS on rustls with
    /// ring. S3 uses path-style addressing when an endpoint is given, as emulators expect.
    pub async fn from_env() -> Clients {
        Self::load(None).await
    }

    /// As [`Clients::from_env`], but every service at `endpoint` whatever `AWS_ENDPOINT_URL`
    /// says: one of several local emulators.
    pub async fn at_endpoint(endpoint: &str) -> Clients {
        Self::load(Some(endpoint)).await
    }

    async fn load(endpoint: Option<&str>) -> Clients {
        let https = aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::Ring))
            .build_https();
        let mut loader =
            aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(https);
        if let Some(endpoint) = endpoint {
            loader = loader.endpoint_url(endpoint);
        }
        let config = loader.load().await;
        let s3_config = aws_sdk_s3::config::Builder::from(&config)
            .force_path_style(endpoint.is_some() || std::env::var_os("AWS_ENDPOINT_URL").is_some())
            .build();
        Clients {
            dynamo: aws_sdk_dynamodb::Client::new(&config),
            sqs: aws_sdk_sqs::Client::new(&config),
            s3: aws_sdk_s3::Client::from_conf(s3_config),
            kms: aws_sdk_kms::Client::new(&config),
            credentials: config.credentials_provider(),
        }
    }
}
