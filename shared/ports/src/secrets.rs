//! The secrets port: sealing small secrets (users' own provider keys) before they are stored, so
//! that the table holds nothing usable without a key kept elsewhere: a key file beside the
//! database in worker-queue mode, a KMS key in managed-queue mode.

use std::fmt;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use async_trait::async_trait;

use super::StoreError;

#[async_trait]
pub trait Secrets: Send + Sync {
    /// Encrypts `plaintext` with authenticated encryption under this store's key. Every call
    /// MUST use a fresh random nonce (or data key), so two seals of the same plaintext differ;
    /// the result MUST NOT contain the plaintext, and SHOULD carry a version so the format can
    /// change. MUST fail with `Unavailable` when a backend it needs (a key service) does not
    /// answer.
    async fn seal(&self, plaintext: &[u8]) -> Result<Vec<u8>, StoreError>;

    /// The plaintext of bytes that `seal` returned, in this process or in an earlier one with the
    /// same key. MUST fail with `Invalid`, and never return other bytes, when the sealed bytes
    /// were altered, cut short, or sealed under another key; `Unavailable` only when a backend
    /// could not be reached, so callers know whether a retry may help.
    async fn open(&self, sealed: &[u8]) -> Result<Vec<u8>, StoreError>;
}

/// AES-256-GCM under one 256-bit key, written once for the adapters. A sealed value is
/// `nonce (12 bytes) || ciphertext || tag (16 bytes)`; the nonce is random per seal, which is
/// safe for far more seals than a key here will ever make (NIST's bound is 2^32 per key).
/// `aad` is authenticated, not encrypted: an envelope's header, so it cannot be swapped.
pub struct AesGcmKey(Aes256Gcm);

impl AesGcmKey {
    pub const KEY_LEN: usize = 32;
    const NONCE_LEN: usize = 12;

    /// MUST be given exactly 32 bytes; anything else is `Invalid`.
    pub fn new(key: &[u8]) -> Result<Self, StoreError> {
        Aes256Gcm::new_from_slice(key)
            .map(AesGcmKey)
            .map_err(|_| StoreError::Invalid(format!("an AES-256 key is {} bytes", Self::KEY_LEN)))
    }

    pub fn seal(&self, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, StoreError> {
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

    pub fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
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

/// The one error for bytes that do not open, whatever the reason: which check failed is of no use
/// to anyone but someone probing the format.
pub fn unopenable() -> StoreError {
    StoreError::Invalid(
        "the sealed secret cannot be opened: altered, or sealed under another key".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
