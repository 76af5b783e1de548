//! Password hashing with Argon2id (19 MiB, 2 passes, 1 lane: the crate's defaults, OWASP's
//! first recommendation), on a small fixed pool of threads.
//!
//! Every hash costs 19 MiB for about 30 ms, so hashing is the cheapest way to take a server
//! down: a burst of sign-ins on the blocking pool once grew the process to 4 GB (one thread and
//! one malloc arena per attempt, kept after the burst). Here at most [`HASHERS`] hashes run at
//! once, on threads made once (so their memory is reused, not multiplied), at most
//! [`QUEUE`] more wait, and anything beyond is refused with [`Busy`] at once. Memory is then
//! bounded by `HASHERS × 19 MiB` whatever arrives.

use std::sync::{mpsc, Mutex, OnceLock};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use tokio::sync::oneshot;

pub const MIN_LEN: usize = 8;
pub const MAX_LEN: usize = 1024;

/// Hashes that run at once.
pub const HASHERS: usize = 2;
/// Hashes that may wait for a hasher; more are refused.
pub const QUEUE: usize = 32;

/// Too many password checks are waiting; the caller should try again shortly.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("too many sign-in attempts are being checked right now; try again in a moment")]
pub struct Busy;

type Task = Box<dyn FnOnce() + Send>;

/// The pool: a bounded queue drained by `HASHERS` threads.
fn pool() -> Option<&'static mpsc::SyncSender<Task>> {
    static POOL: OnceLock<Option<mpsc::SyncSender<Task>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (sender, receiver) = mpsc::sync_channel::<Task>(QUEUE);
        let receiver = std::sync::Arc::new(Mutex::new(receiver));
        for n in 0..HASHERS {
            let receiver = receiver.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("password-{n}"))
                .spawn(move || loop {
                    let task = match receiver.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    match task {
                        Ok(task) => task(),
                        Err(_) => return,
                    }
                });
            if spawned.is_err() {
                tracing::error!("could not start a password-hashing thread");
                return None;
            }
        }
        Some(sender)
    })
    .as_ref()
}

/// Runs `work` on the pool and waits for it without blocking the async runtime.
async fn on_pool<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, Busy> {
    let (tx, rx) = oneshot::channel();
    let task: Task = Box::new(move || {
        let _ = tx.send(work());
    });
    pool().ok_or(Busy)?.try_send(task).map_err(|_| Busy)?;
    rx.await.map_err(|_| Busy)
}

pub async fn hash(password: String) -> Result<Result<String, String>, Busy> {
    on_pool(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| format!("password hashing failed: {e}"))
    })
    .await
}

/// Whether the password matches the stored hash. A corrupt hash never matches.
pub async fn verify(password: String, stored: String) -> Result<bool, Busy> {
    on_pool(move || verify_now(&password, &stored)).await
}

fn verify_now(password: &str, stored: &str) -> bool {
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
pub async fn verify_against_nothing(password: String) -> Result<(), Busy> {
    on_pool(move || {
        static DUMMY: OnceLock<Option<String>> = OnceLock::new();
        let dummy = DUMMY.get_or_init(|| {
            let salt = SaltString::generate(&mut OsRng);
            Argon2::default()
                .hash_password(b"not-a-real-password", &salt)
                .map(|h| h.to_string())
                .ok()
        });
        if let Some(dummy) = dummy {
            verify_now(&password, dummy);
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let stored = hash("correct horse".into()).await.unwrap().unwrap();
        assert!(verify("correct horse".into(), stored.clone())
            .await
            .unwrap());
        assert!(!verify("wrong horse".into(), stored).await.unwrap());
        assert!(!verify("x".into(), "not a hash".into()).await.unwrap());
    }

    #[tokio::test]
    async fn a_burst_beyond_the_queue_is_refused_at_once_and_the_rest_are_checked() {
        let mut attempts = tokio::task::JoinSet::new();
        for _ in 0..(HASHERS + QUEUE) * 3 {
            attempts.spawn(verify_against_nothing("guess".into()));
        }
        let results = attempts.join_all().await;
        let refused = results.iter().filter(|r| r.is_err()).count();
        assert!(
            refused > 0,
            "a burst three times the queue must be refused in part"
        );
        assert!(
            results.len() - refused >= QUEUE,
            "the queue's worth must be checked"
        );
        // The pool is free again afterwards.
        verify_against_nothing("later".into()).await.unwrap();
    }
}
