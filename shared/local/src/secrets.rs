//! The secrets port in worker-queue mode: AES-256-GCM under a 32-byte key kept in the data
//! directory's `secrets.key` (made on the first start, 0600). The key sits beside the database,
//! so it protects against a leaked or backed-up database file, not against someone who can read
//! the whole directory; docs/operations.md says to keep the two apart in backups.

use std::path::Path;

use async_trait::async_trait;
use booktr_ports::secrets::unopenable;
use booktr_ports::{AesGcmKey, Secrets, StoreError};

/// The format's first byte, authenticated with the rest: `1 || nonce || ciphertext || tag`.
const VERSION: u8 = 1;

#[derive(Debug)]
pub struct LocalSecrets {
    key: AesGcmKey,
}

impl LocalSecrets {
    /// Opens the key in `path`, making it when there is none.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let key = crate::key_file::load_or_create(
            path,
            |key| key.len() == AesGcmKey::KEY_LEN,
            || booktr_ports::ids::random_bytes(AesGcmKey::KEY_LEN),
        )?;
        Ok(LocalSecrets {
            key: AesGcmKey::new(&key)?,
        })
    }
}

#[async_trait]
impl Secrets for LocalSecrets {
    async fn seal(&self, plaintext: &[u8]) -> Result<Vec<u8>, StoreError> {
        let mut sealed = vec![VERSION];
        sealed.extend(self.key.seal(&[VERSION], plaintext)?);
        Ok(sealed)
    }

    async fn open(&self, sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
        match sealed.split_first() {
            Some((&VERSION, rest)) => self.key.open(&[VERSION], rest),
            _ => Err(unopenable()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_seal_opens_after_a_restart_and_not_under_another_data_directory() {
        let dir = tempfile::TempDir::new().unwrap();
        let other = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("secrets.key");
        let sealed = LocalSecrets::open(&path)
            .unwrap()
            .seal(b"sk-key")
            .await
            .unwrap();
        let restarted = LocalSecrets::open(&path).unwrap();
        assert_eq!(restarted.open(&sealed).await.unwrap(), b"sk-key");
        let elsewhere = LocalSecrets::open(&other.path().join("secrets.key")).unwrap();
        assert!(matches!(
            elsewhere.open(&sealed).await,
            Err(StoreError::Invalid(_))
        ));
        assert_eq!(std::fs::read(&path).unwrap().len(), 32);
    }

    #[test]
    fn the_key_is_never_printed() {
        let dir = tempfile::TempDir::new().unwrap();
        let secrets = LocalSecrets::open(&dir.path().join("secrets.key")).unwrap();
        assert_eq!(
            format!("{secrets:?}"),
            "LocalSecrets { key: AesGcmKey(<redacted>) }"
        );
    }
}
