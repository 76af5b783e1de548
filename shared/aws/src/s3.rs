//! The blob port on S3 (originals, chapter texts, outputs), download links as presigned GETs and
//! direct-upload forms as signed POST policies.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_s3::config::{ProvideCredentials, SharedCredentialsProvider};
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::Client;
use booktr_ports::{BlobKey, Blobs, LinkCheck, Links, StoreError, UploadForm};
use bytes::Bytes;

use crate::dynamo::aws_error_text;

#[derive(Clone)]
pub struct S3Blobs {
    client: Client,
    bucket: String,
    credentials: Option<SharedCredentialsProvider>,
}

impl S3Blobs {
    pub fn new(clients: &crate::Clients, bucket: impl Into<String>) -> Self {
        S3Blobs {
            client: clients.s3.clone(),
            bucket: bucket.into(),
            credentials: clients.credentials.clone(),
        }
    }

    /// Creates the bucket (for the emulator and development; production's comes from SAM).
    pub async fn create(client: &Client, bucket: &str) -> Result<(), StoreError> {
        client
            .create_bucket()
            .bucket(bucket)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}

#[async_trait]
impl Blobs for S3Blobs {
    async fn put(&self, key: &BlobKey, bytes: Bytes) -> Result<(), StoreError> {
        // One PUT: S3 makes the object visible whole or not at all.
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn get(&self, key: &BlobKey) -> Result<Option<Bytes>, StoreError> {
        let result = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .send()
            .await;
        match result {
            Ok(output) => {
                let body = output
                    .body
                    .collect()
                    .await
                    .map_err(|e| StoreError::Unavailable(format!("S3 read of {key}: {e}")))?;
                Ok(Some(body.into_bytes()))
            }
            Err(e) if e.code() == Some("NoSuchKey") => Ok(None),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn delete(&self, key: &BlobKey) -> Result<(), StoreError> {
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<BlobKey>, StoreError> {
        let mut keys = Vec::new();
        let mut pages = self
            .client
            .list_objects_v2()
            .bucket(&self.bucket)
            .prefix(prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(unavailable)?;
            for object in page.contents.unwrap_or_default() {
                if let Some(key) = object.key {
                    keys.push(BlobKey::parse(&key)?);
                }
            }
        }
        keys.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        Ok(keys)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.client
            .head_bucket()
            .bucket(&self.bucket)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}

/// Download links as S3 presigned GETs, named for the browser by `response-content-disposition`.
#[async_trait]
impl Links for S3Blobs {
    async fn download_url(
        &self,
        key: &BlobKey,
        file_name: &str,
        ttl: Duration,
    ) -> Result<String, StoreError> {
        let config = PresigningConfig::expires_in(ttl)
            .map_err(|e| StoreError::Invalid(format!("link lifetime: {e}")))?;
        let safe_name: String = file_name
            .chars()
            .filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\')
            .collect();
        let request = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .response_content_disposition(format!("attachment; filename=\"{safe_name}\""))
            .response_content_type(media_type(file_name))
            .presigned(config)
            .await
            .map_err(unavailable)?;
        Ok(request.uri().to_string())
    }

    /// Links point at S3, never at this service.
    fn verify(&self, _key: &str, _name: &str, _expires: i64, _signature: &str) -> LinkCheck {
        LinkCheck::Invalid
    }

    /// A POST policy for the bucket: S3 itself refuses another key, a file outside 1..=max
    /// bytes and a post after the expiry.
    async fn upload_form(
        &self,
        key: &BlobKey,
        max_bytes: u64,
        ttl: Duration,
    ) -> Result<UploadForm, StoreError> {
        let config = self.client.config();
        let credentials = self
            .credentials
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("S3: no credentials to sign with".into()))?
            .provide_credentials()
            .await
            .map_err(|e| StoreError::Unavailable(format!("S3 credentials: {e}")))?;
        let region = config
            .region()
            .map(|r| r.to_string())
            .ok_or_else(|| StoreError::Unavailable("S3: no region to sign for".into()))?;
        let now = chrono::Utc::now();
        let expires_at = now
            + chrono::Duration::from_std(ttl)
                .map_err(|e| StoreError::Invalid(format!("form lifetime: {e}")))?;
        let signer = crate::s3_post::Signer {
            access_key_id: credentials.access_key_id(),
            secret_access_key: credentials.secret_access_key(),
            session_token: credentials.session_token(),
            region: &region,
        };
        let fields = crate::s3_post::fields(
            &signer,
            &self.bucket,
            key.as_str(),
            max_bytes,
            now,
            expires_at,
        );
        Ok(UploadForm {
            url: self.bucket_url(key).await?,
            fields,
            expires_at,
        })
    }

    /// Forms post to S3, never to this service.
    fn verify_upload(&self, _key: &str, _max: u64, _expires: i64, _signature: &str) -> LinkCheck {
        LinkCheck::Invalid
    }
}

impl S3Blobs {
    /// The bucket's URL as the client addresses it (virtual-hosted on AWS, path-style on an
    /// emulator): a presigned request's URL for the key, without the key and the query.
    async fn bucket_url(&self, key: &BlobKey) -> Result<String, StoreError> {
        let config = PresigningConfig::expires_in(Duration::from_secs(60))
            .map_err(|e| StoreError::Invalid(format!("link lifetime: {e}")))?;
        let request = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .presigned(config)
            .await
            .map_err(unavailable)?;
        let object_url = request.uri().split('?').next().unwrap_or_default();
        object_url
            .strip_suffix(&format!("/{}", key.as_str()))
            .map(str::to_string)
            .ok_or_else(|| {
                StoreError::Unavailable(format!("S3: unexpected object URL {object_url}"))
            })
    }
}

/// What the browser is told the file is (objects are stored without a type).
fn media_type(file_name: &str) -> &'static str {
    match file_name.rsplit('.').next() {
        Some("epub") => "application/epub+zip",
        Some("pdf") => "application/pdf",
        Some("md") => "text/markdown; charset=utf-8",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn unavailable(e: impl std::error::Error) -> StoreError {
    StoreError::Unavailable(format!("S3: {}", aws_error_text(&e)))
}
