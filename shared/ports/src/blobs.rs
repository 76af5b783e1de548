//! The blob port: book originals, chapter texts and rendered outputs, by key.

use std::fmt;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::StoreError;

/// A blob key: `/`-separated segments of `[A-Za-z0-9._-]`, none empty, `.` or `..`, at most 512
/// bytes. Valid as an S3 key and as a relative path, so no adapter can be steered outside its root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlobKey(String);

impl BlobKey {
    pub fn parse(raw: &str) -> Result<Self, StoreError> {
        let valid_segment = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        if raw.len() > 512 || !raw.split('/').all(valid_segment) {
            return Err(StoreError::Invalid(format!(
                "'{raw}' is not a valid blob key"
            )));
        }
        Ok(BlobKey(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BlobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[async_trait]
pub trait Blobs: Send + Sync {
    /// Stores the bytes under the key, replacing any blob there. MUST be atomic: a concurrent or
    /// later reader sees the old blob or the whole new one, never a part, even after a crash.
    async fn put(&self, key: &BlobKey, bytes: Bytes) -> Result<(), StoreError>;

    /// The blob's bytes, or None when there is none.
    async fn get(&self, key: &BlobKey) -> Result<Option<Bytes>, StoreError>;

    /// Removes the blob. Removing a missing blob MUST succeed.
    async fn delete(&self, key: &BlobKey) -> Result<(), StoreError>;

    /// Every key that starts with `prefix` (a plain string prefix, `/` included), sorted.
    async fn list(&self, prefix: &str) -> Result<Vec<BlobKey>, StoreError>;

    /// A cheap round trip to the backend, for health checks.
    async fn ping(&self) -> Result<(), StoreError>;
}

/// Removes every blob whose key starts with `prefix`; returns how many. Written once over
/// `list` + `delete` so that every adapter deletes the same way.
pub async fn delete_prefix(blobs: &dyn Blobs, prefix: &str) -> Result<usize, StoreError> {
    let keys = blobs.list(prefix).await?;
    for key in &keys {
        blobs.delete(key).await?;
    }
    Ok(keys.len())
}
