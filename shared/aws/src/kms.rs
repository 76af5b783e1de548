//! The secrets port on KMS, by envelope encryption: each seal asks KMS for a fresh AES-256 data
//! key (`GenerateDataKey`), encrypts the secret with it locally (AES-256-GCM) and keeps only the
//! data key as KMS encrypted it; opening asks KMS to decrypt that (`Decrypt`). The master key
//! never leaves KMS, every use of it is in CloudTrail, and rotating it needs no re-encryption.
//!
//! Sealed format (version 1): `1 || len(edk) as u16 BE || edk || nonce || ciphertext || tag`,
//! where `edk` is the encrypted data key. Everything before the nonce is the AES-GCM associated
//! data, so a header cannot be swapped onto another ciphertext.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use async_trait::async_trait;
use aws_sdk_kms::error::ProvideErrorMetadata;
use aws_sdk_kms::primitives::Blob;
use aws_sdk_kms::types::DataKeySpec;
use aws_sdk_kms::Client;
use booktr_ports::secrets::unopenable;
use booktr_ports::{Secrets, StoreError};

use crate::dynamo::aws_error_text;

const VERSION: u8 = 1;

/// AES-GCM's nonce, random per seal (each data key seals one secret).
const NONCE_LEN: usize = 12;

/// Bound to every data key: KMS decrypts it only with the same context, so a data key made for
/// this purpose cannot be replayed through another use of the same KMS key. Not secret (it shows
/// in CloudTrail).
const CONTEXT: (&str, &str) = ("purpose", "booktr-user-secret");

#[derive(Clone)]
pub struct KmsSecrets {
    client: Client,
    key_id: String,
}

impl std::fmt::Debug for KmsSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KmsSecrets")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl KmsSecrets {
    /// `key_id`: the KMS key's id, ARN or alias (`BOOKTR_KMS_KEY_ID`).
    pub fn new(client: Client, key_id: impl Into<String>) -> Self {
        KmsSecrets {
            client,
            key_id: key_id.into(),
        }
    }

    /// Creates a symmetric key and returns its id (for the emulator and development;
    /// production's comes from SAM, with rotation on).
    pub async fn create_key(client: &Client) -> Result<String, StoreError> {
        let created = client
            .create_key()
            .description("booktr user secrets")
            .send()
            .await
            .map_err(unavailable)?;
        created
            .key_metadata()
            .map(|m| m.key_id().to_string())
            .ok_or_else(|| StoreError::Unavailable("KMS created a key without an id".into()))
    }
}

#[async_trait]
impl Secrets for KmsSecrets {
    async fn seal(&self, plaintext: &[u8]) -> Result<Vec<u8>, StoreError> {
        let data_key = self
            .client
            .generate_data_key()
            .key_id(&self.key_id)
            .key_spec(DataKeySpec::Aes256)
            .encryption_context(CONTEXT.0, CONTEXT.1)
            .send()
            .await
            .map_err(unavailable)?;
        let (Some(key), Some(encrypted_key)) = (data_key.plaintext(), data_key.ciphertext_blob())
        else {
            return Err(StoreError::Unavailable(
                "KMS GenerateDataKey answered without a data key".into(),
            ));
        };
        let encrypted_key = encrypted_key.as_ref();
        let len = u16::try_from(encrypted_key.len()).map_err(|_| {
            StoreError::Unavailable("KMS returned an oversized encrypted data key".into())
        })?;
        let mut sealed = vec![VERSION];
        sealed.extend_from_slice(&len.to_be_bytes());
        sealed.extend_from_slice(encrypted_key);
        let body = seal_body(key.as_ref(), &sealed, plaintext)?;
        sealed.extend(body);
        Ok(sealed)
    }

    async fn open(&self, sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let (header, body, encrypted_key) = split(sealed).ok_or_else(unopenable)?;
        let result = self
            .client
            .decrypt()
            // Named, so KMS refuses a data key of another KMS key instead of using it.
            .key_id(&self.key_id)
            .ciphertext_blob(Blob::new(encrypted_key))
            .encryption_context(CONTEXT.0, CONTEXT.1)
            .send()
            .await;
        let decrypted = match result {
            Ok(decrypted) => decrypted,
            // The encrypted data key was altered, or belongs to another KMS key (another stack
            // or account; KMS, like the emulator, may say AccessDenied for a key the blob names
            // but this process may not use). Retrying cannot help; the code is kept for the log.
            Err(e)
                if matches!(
                    e.code(),
                    Some(
                        "InvalidCiphertextException"
                            | "IncorrectKeyException"
                            | "NotFoundException"
                            | "AccessDeniedException"
                    )
                ) =>
            {
                return Err(StoreError::Invalid(format!(
                    "KMS will not decrypt the data key ({}): altered, or sealed under another key",
                    e.code().unwrap_or_default()
                )))
            }
            Err(e) => return Err(unavailable(e)),
        };
        let key = decrypted.plaintext().ok_or_else(|| {
            StoreError::Unavailable("KMS Decrypt answered without a plaintext".into())
        })?;
        open_body(key.as_ref(), header, body)
    }
}

/// (the authenticated header, the nonce and ciphertext, the encrypted data key), or None when
/// the bytes are not a version-1 envelope.
fn split(sealed: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let (&version, rest) = sealed.split_first()?;
    if version != VERSION || rest.len() < 2 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
    let header_len = 3 + len;
    if len == 0 || sealed.len() < header_len {
        return None;
    }
    let (header, body) = sealed.split_at(header_len);
    Some((header, body, &header[3..]))
}

/// `nonce || ciphertext || tag` of `plaintext` under the data key, with `header` authenticated.
fn seal_body(data_key: &[u8], header: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, StoreError> {
    let cipher = Aes256Gcm::new_from_slice(data_key).map_err(|_| {
        StoreError::Unavailable("KMS returned a data key that is not 256 bits".into())
    })?;
    let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
    let payload = Payload {
        msg: plaintext,
        aad: header,
    };
    let ciphertext = cipher
        .encrypt(&nonce, payload)
        // Only fails for inputs of many gigabytes.
        .map_err(|_| StoreError::Invalid("the secret is too large to seal".into()))?;
    let mut body = Vec::with_capacity(NONCE_LEN + ciphertext.len());
    body.extend_from_slice(&nonce);
    body.extend_from_slice(&ciphertext);
    Ok(body)
}

/// The plaintext of a body `seal_body` made under the same data key and header.
fn open_body(data_key: &[u8], header: &[u8], body: &[u8]) -> Result<Vec<u8>, StoreError> {
    let cipher = Aes256Gcm::new_from_slice(data_key).map_err(|_| unopenable())?;
    if body.len() < NONCE_LEN {
        return Err(unopenable());
    }
    let (nonce, ciphertext) = body.split_at(NONCE_LEN);
    let payload = Payload {
        msg: ciphertext,
        aad: header,
    };
    cipher
        .decrypt(Nonce::from_slice(nonce), payload)
        .map_err(|_| unopenable())
}

fn unavailable(e: impl std::error::Error) -> StoreError {
    StoreError::Unavailable(format!("KMS: {}", aws_error_text(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_splits_into_header_body_and_encrypted_key() {
        let sealed = [1, 0, 2, 0xAA, 0xBB, 9, 9, 9];
        let (header, body, key) = split(&sealed).unwrap();
        assert_eq!(header, [1, 0, 2, 0xAA, 0xBB]);
        assert_eq!(key, [0xAA, 0xBB]);
        assert_eq!(body, [9, 9, 9]);
        assert!(
            split(&[1, 0, 5, 0xAA]).is_none(),
            "a key longer than the bytes"
        );
        assert!(split(&[2, 0, 1, 0xAA]).is_none(), "another version");
        assert!(split(&[1, 0, 0, 9]).is_none(), "no key");
        assert!(split(&[]).is_none());
    }

    #[test]
    fn a_body_opens_only_under_its_data_key_and_header() {
        let body = seal_body(&[7u8; 32], b"header", b"secret").unwrap();
        assert_eq!(open_body(&[7u8; 32], b"header", &body).unwrap(), b"secret");
        let refused =
            |result: Result<Vec<u8>, StoreError>| matches!(result, Err(StoreError::Invalid(_)));
        assert!(
            refused(open_body(&[7u8; 32], b"other", &body)),
            "another header"
        );
        assert!(
            refused(open_body(&[8u8; 32], b"header", &body)),
            "another key"
        );
        assert!(
            refused(open_body(&[7u8; 32], b"header", &body[..11])),
            "cut short"
        );
        assert_ne!(
            body,
            seal_body(&[7u8; 32], b"header", b"secret").unwrap(),
            "a fresh nonce"
        );
    }
}
