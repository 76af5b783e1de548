//! The secrets port: sealing small secrets (users' own provider keys) before they are stored, so
//! that the table holds nothing usable without a key kept elsewhere: a key file beside the
//! database in worker-queue mode, a KMS key in managed-queue mode.

use async_trait::async_trait;

use crate::error::StoreError;

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

/// The one error for bytes that do not open, whatever the reason (what `open` MUST answer): which
/// check failed is of no use to anyone but someone probing the format.
pub fn unopenable() -> StoreError {
    StoreError::Invalid(
        "the sealed secret cannot be opened: altered, or sealed under another key".into(),
    )
}
