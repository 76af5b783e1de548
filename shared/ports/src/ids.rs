//! Identifiers and random secrets.

use rand::distributions::{Alphanumeric, DistString};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// A new time-ordered identifier (UUID v7, simple form): sortable by creation and unguessable
/// enough for ids (never used as a secret).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// `len` random alphanumeric characters from the OS-seeded CSPRNG (62^len possibilities).
pub fn random_alphanumeric(len: usize) -> String {
    Alphanumeric.sample_string(&mut rand::thread_rng(), len)
}

/// A random token of `bytes` bytes, hex-encoded.
pub fn random_hex(bytes: usize) -> String {
    hex::encode(random_bytes(bytes))
}

/// `len` bytes from the OS-seeded CSPRNG, e.g. a new encryption key.
pub fn random_bytes(len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    rand::thread_rng().fill_bytes(&mut buf);
    buf
}

/// Hex SHA-256, used to store high-entropy secrets (API keys, session tokens) that we only ever
/// compare, never show again. A slow password hash is unnecessary for 238-bit random secrets.
pub fn sha256_hex(input: &str) -> String {
    hex::encode(Sha256::digest(input.as_bytes()))
}
