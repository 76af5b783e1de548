//! The link port: a URL that lets whoever holds it fetch one stored file for a limited time, and
//! a form that lets whoever holds it send one file straight to storage (a direct upload, which
//! never passes through a function). S3 presigns both (`booktr-aws`); worker-queue mode signs URLs
//! of this server with HMAC-SHA256 (`booktr_local::SignedLinks`).

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::blobs::BlobKey;
use crate::error::StoreError;

#[async_trait]
pub trait Links: Send + Sync {
    /// A URL that serves the blob, as an attachment named `file_name`, until `ttl` from now.
    /// MUST NOT be guessable or alterable into a link to another blob or a later expiry.
    async fn download_url(
        &self,
        key: &BlobKey,
        file_name: &str,
        ttl: Duration,
    ) -> Result<String, StoreError>;

    /// Checks a link of this service (`GET /files/{key}?expires=&name=&signature=`). Adapters
    /// whose links point elsewhere (S3) MUST answer `Invalid`.
    fn verify(&self, key: &str, name: &str, expires: i64, signature: &str) -> LinkCheck;

    /// A form that stores one file under `key` when posted (`multipart/form-data`: the `fields`
    /// in order, then the file as the part named `file`) until `ttl` from now. The store MUST
    /// refuse a file over `max_bytes` and one sent after the expiry, and MUST NOT let the form
    /// store under another key.
    async fn upload_form(
        &self,
        key: &BlobKey,
        max_bytes: u64,
        ttl: Duration,
    ) -> Result<UploadForm, StoreError>;

    /// Checks an upload form of this service (`POST /uploads`). Adapters whose forms post
    /// elsewhere (S3) MUST answer `Invalid`.
    fn verify_upload(&self, key: &str, max_bytes: u64, expires: i64, signature: &str) -> LinkCheck;
}

/// Where and how to post one file straight to storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadForm {
    /// The URL the form is posted to.
    pub url: String,
    /// The form's fields, sent in this order before the file.
    pub fields: Vec<(String, String)>,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkCheck {
    Valid,
    Expired,
    Invalid,
}
