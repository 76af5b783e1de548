//! The secrets port in worker-queue mode: AES-256-GCM under a 32-byte key kept in the data
//! directory's `secrets.key` (made on the first start, 0600). The key sits beside the database,
//! so it protects against a leaked or backed-up database file, not against someone who can read
//! the whole directory; docs/operations.md says to keep the two apart in backups.

use std::fmt;
use std::path::Path;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use async_trait::async_trait;
use booktr_ports::secrets::unopenable;
use booktr_ports::{Secrets, StoreError};

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

/// AES-256-GCM under the data directory's key. A sealed body is
/// `nonce (12 bytes) || ciphertext || tag (16 bytes)`; the nonce is random per seal, which is
/// safe for far more seals than a key here will ever make (NIST's bound is 2^32 per key).
/// `aad` is authenticated, not encrypted: the format's version byte, so it cannot be swapped.
struct AesGcmKey(Aes256Gcm);

impl AesGcmKey {
    const KEY_LEN: usize = 32;
    const NONCE_LEN: usize = 12;

    /// MUST be given exactly 32 bytes; anything else is `Invalid`.
    fn new(key: &[u8]) -> Result<Self, StoreError> {
        Aes256Gcm::new_from_slice(key)
            .map(AesGcmKey)
            .map_err(|_| StoreError::Invalid(format!("an AES-256 key is {} bytes", Self::KEY_LEN)))
    }

    fn seal(&self, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, StoreError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let ciphertext = self
            .0
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext,
                    aad,
                },
            )
            // Only fails for inputs of many gigabytes.
            .map_err(|_| StoreError::Invalid("the secret is too large to seal".into()))?;
        let mut sealed = Vec::with_capacity(Self::NONCE_LEN + ciphertext.len());
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        Ok(sealed)
    }

    fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
        if sealed.len() < Self::NONCE_LEN {
            return Err(unopenable());
        }
        let (nonce, ciphertext) = sealed.split_at(Self::NONCE_LEN);
        self.0
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad,
                },
            )
            .map_err(|_| unopenable())
    }
}

/// Never the key, whatever is logged.
impl fmt::Debug for AesGcmKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AesGcmKey(<redacted>)")
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

    #[test]
    fn the_header_is_bound_to_the_ciphertext() {
        let key = AesGcmKey::new(&[7u8; 32]).unwrap();
        let sealed = key.seal(b"v1", b"secret").unwrap();
        assert_eq!(key.open(b"v1", &sealed).unwrap(), b"secret");
        assert!(matches!(
            key.open(b"v2", &sealed),
            Err(StoreError::Invalid(_))
        ));
    }

    #[test]
    fn keys_of_the_wrong_length_are_refused_and_never_printed() {
        assert!(AesGcmKey::new(&[1u8; 16]).is_err());
        let key = AesGcmKey::new(&[42u8; 32]).unwrap();
        assert_eq!(format!("{key:?}"), "AesGcmKey(<redacted>)");
    }
}
