//! Password hashing with Argon2id (the crate's default parameters: 19 MiB, 2 passes).

use std::sync::OnceLock;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

pub const MIN_LEN: usize = 8;
pub const MAX_LEN: usize = 1024;

pub fn hash(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("password hashing failed: {e}"))
}

/// Whether the password matches the stored hash. A corrupt hash never matches.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// Spends the same time as a real verification, so that sign-in with an unknown email is not
/// measurably faster than with a known one (which would reveal who has an account).
pub fn verify_against_nothing(password: &str) {
    static DUMMY: OnceLock<Option<String>> = OnceLock::new();
    if let Some(dummy) = DUMMY.get_or_init(|| hash("not-a-real-password").ok()) {
        verify(password, dummy);
    }
}
