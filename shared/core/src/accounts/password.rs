//! Password hashing with Argon2id (19 MiB, 2 passes, 1 lane: the crate's defaults, OWASP's
//! first recommendation), on a small fixed pool of threads with memory of their own.
//!
//! Every hash costs 19 MiB for about 30 ms, so hashing is the cheapest way to take a server
//! down: a burst of sign-ins on the blocking pool once grew the process to 4 GB (one thread and
//! one malloc arena per attempt, kept after the burst). Here at most [`HASHERS`] hashes run at
//! once, each hasher reuses one buffer allocated when it starts (a fresh 19 MiB allocation per
//! hash left freed copies stranded in malloc arenas, 300 MiB after a burst), at most [`QUEUE`]
//! more wait, and anything beyond is refused with [`Busy`] at once. Memory is then bounded by
//! `HASHERS × 19 MiB` whatever arrives.

use std::sync::{mpsc, Mutex, OnceLock};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{Output, ParamsString, PasswordHash, Salt, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
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

/// Work for a hasher, given the hasher's own Argon2 memory.
type Task = Box<dyn FnOnce(&mut [Block]) + Send>;

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
                .spawn(move || {
                    let mut memory = vec![Block::default(); Params::DEFAULT.block_count()];
                    loop {
                        let task = match receiver.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => return,
                        };
                        match task {
                            Ok(task) => task(&mut memory),
                            Err(_) => return,
                        }
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
async fn on_pool<T: Send + 'static>(
    work: impl FnOnce(&mut [Block]) -> T + Send + 'static,
) -> Result<T, Busy> {
    let (tx, rx) = oneshot::channel();
    let task: Task = Box::new(move |memory| {
        let _ = tx.send(work(memory));
    });
    pool().ok_or(Busy)?.try_send(task).map_err(|_| Busy)?;
    rx.await.map_err(|_| Busy)
}

/// The PHC string hash of `password` with `salt` (what `PasswordHasher::hash_password` makes),
/// computed in `memory`; a hash asking for more memory than that gets its own buffer.
fn phc_hash<'a>(
    argon: &Argon2<'_>,
    params: &Params,
    password: &[u8],
    salt: Salt<'a>,
    memory: &mut [Block],
) -> argon2::password_hash::Result<PasswordHash<'a>> {
    let mut salt_bytes = [0u8; 64];
    let salt_bytes = salt.decode_b64(&mut salt_bytes)?;
    let output_len = params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN);
    let output = Output::init_with(output_len, |out| {
        if memory.len() >= params.block_count() {
            argon.hash_password_into_with_memory(password, salt_bytes, out, &mut *memory)?;
        } else {
            argon.hash_password_into(password, salt_bytes, out)?;
        }
        Ok(())
    })?;
    Ok(PasswordHash {
        algorithm: Algorithm::default().ident(),
        version: Some(Version::default().into()),
        params: ParamsString::try_from(params)?,
        salt: Some(salt),
        hash: Some(output),
    })
}

/// The PHC string of `password` under a fresh salt. The inner error is argon2's (a parameter
/// or an output length it refuses): a bug, never the password's fault.
pub async fn hash(password: String) -> Result<Result<String, argon2::password_hash::Error>, Busy> {
    on_pool(move |memory| {
        let salt = SaltString::generate(&mut OsRng);
        let params = Params::DEFAULT;
        let argon = Argon2::new(Algorithm::default(), Version::default(), params.clone());
        phc_hash(&argon, &params, password.as_bytes(), salt.as_salt(), memory)
            .map(|h| h.to_string())
    })
    .await
}

/// Whether the password matches the stored hash. A corrupt hash never matches.
pub async fn verify(password: String, stored: String) -> Result<bool, Busy> {
    on_pool(move |memory| verify_now(&password, &stored, memory)).await
}

/// Recomputes the stored hash's Argon2id with its own salt and parameters and compares the
/// outputs (`Output`'s comparison is constant-time). Only Argon2id hashes are ours.
fn verify_now(password: &str, stored: &str, memory: &mut [Block]) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    if parsed.algorithm != Algorithm::Argon2id.ident() {
        return false;
    }
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let version = parsed
        .version
        .map_or(Ok(Version::default()), Version::try_from)
        .unwrap_or(Version::default());
    let argon = Argon2::new(Algorithm::Argon2id, version, params.clone());
    phc_hash(&argon, &params, password.as_bytes(), salt, memory)
        .ok()
        .and_then(|computed| computed.hash)
        .is_some_and(|computed| computed == expected)
}

/// Spends the same time as a real verification, so that sign-in with an unknown email is not
/// measurably faster than with a known one (which would reveal who has an account).
pub async fn verify_against_nothing(password: String) -> Result<(), Busy> {
    on_pool(move |memory| {
        static DUMMY: OnceLock<Option<String>> = OnceLock::new();
        let dummy = DUMMY.get_or_init(|| {
            let salt = SaltString::generate(&mut OsRng);
            let params = Params::DEFAULT;
            let argon = Argon2::new(Algorithm::default(), Version::default(), params.clone());
            phc_hash(
                &argon,
                &params,
                b"not-a-real-password",
                salt.as_salt(),
                memory,
            )
            .map(|h| h.to_string())
            .ok()
        });
        if let Some(dummy) = dummy {
            verify_now(&password, dummy, memory);
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `attempt` until the pool takes it: the burst test below shares the pool and may
    /// fill its queue while these run.
    async fn patiently<T, F: std::future::Future<Output = Result<T, Busy>>>(
        attempt: impl Fn() -> F,
    ) -> T {
        for _ in 0..600 {
            if let Ok(done) = attempt().await {
                return done;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the password pool stayed busy");
    }

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let stored = patiently(|| hash("correct horse".into())).await.unwrap();
        assert!(patiently(|| verify("correct horse".into(), stored.clone())).await);
        assert!(!patiently(|| verify("wrong horse".into(), stored.clone())).await);
        assert!(!patiently(|| verify("x".into(), "not a hash".into())).await);
    }

    #[tokio::test]
    async fn hashes_made_by_the_argon2_crate_directly_still_verify() {
        use argon2::PasswordHasher;
        let salt = SaltString::generate(&mut OsRng);
        let stored = Argon2::default()
            .hash_password(b"an older account", &salt)
            .unwrap()
            .to_string();
        assert!(patiently(|| verify("an older account".into(), stored.clone())).await);
        assert!(!patiently(|| verify("another".into(), stored.clone())).await);
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
        // (Other tests share the pool, so the queue may not be all this test's.)
        assert!(
            results.len() - refused >= HASHERS,
            "what the queue took must be checked"
        );
        // The pool is free again afterwards.
        patiently(|| verify_against_nothing("later".into())).await;
    }
}
