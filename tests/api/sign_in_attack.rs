//! Sign-in under attack, against the real `booktr serve`: bursts of wrong passwords are refused
//! once the limits bite, password hashing stays bounded, and the process's memory with it.

use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde_json::json;

use crate::crash::start_with;

/// Resident memory of a process, in MiB (Linux).
fn resident_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib / 1024
}

/// The highest resident memory of a process while it is watched, sampled every 20 ms.
pub(crate) struct PeakMemory {
    peak: std::sync::Arc<std::sync::atomic::AtomicU64>,
    sampler: tokio::task::JoinHandle<()>,
}

impl PeakMemory {
    pub(crate) fn watch(pid: u32) -> PeakMemory {
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let sampler = tokio::spawn({
            let peak = peak.clone();
            async move {
                loop {
                    peak.fetch_max(resident_mib(pid), std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        });
        PeakMemory { peak, sampler }
    }

    /// The peak so far, in MiB.
    pub(crate) fn mib(&self) -> u64 {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for PeakMemory {
    fn drop(&mut self) {
        self.sampler.abort();
    }
}

/// `attempts` wrong sign-ins, `at_once` in flight; `address(n)` is the `X-Forwarded-For` of the
/// n-th. Returns the count of each status, and the peak resident memory seen while they ran.
async fn burst(
    url: &str,
    pid: u32,
    attempts: usize,
    at_once: usize,
    address: impl Fn(usize) -> String,
) -> (std::collections::BTreeMap<u16, usize>, u64) {
    let client = reqwest::Client::new();
    let memory = PeakMemory::watch(pid);
    let statuses: Vec<u16> = stream::iter(0..attempts)
        .map(|n| {
            let request = client
                .post(format!("{url}/api/auth/signin"))
                .header("x-forwarded-for", address(n))
                .json(
                    &json!({"email": format!("guess{n}@example.com"), "password": "not it at all"}),
                );
            async move { request.send().await.unwrap().status().as_u16() }
        })
        .buffer_unordered(at_once)
        .collect()
        .await;
    let mut counts = std::collections::BTreeMap::new();
    for status in statuses {
        *counts.entry(status).or_insert(0) += 1;
    }
    (counts, memory.mib())
}

#[tokio::test]
async fn a_thousand_wrong_passwords_are_refused_and_memory_stays_bounded() {
    let data = tempfile::TempDir::new().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Behind a "proxy": the test chooses the client addresses with X-Forwarded-For.
    let (server, url, _) = start_with(
        data.path(),
        port,
        "http://127.0.0.1:9",
        &[("BOOKTR_TRUST_FORWARDED_FOR", "true")],
    )
    .await;
    let pid = server.id().unwrap();

    // One address, many emails: the address's limit bites after 10.
    let (one_address, peak) = burst(&url, pid, 1000, 64, |_| "203.0.113.7".into()).await;
    // At most 10 get through. Under a concurrent burst a few fewer may: each attempt counts in
    // the minute and the hour window separately, so an attempt early in one window can be late
    // in the other and is refused (refusals err early, never late).
    let through = one_address.get(&401).copied().unwrap_or(0);
    assert!((1..=10).contains(&through), "{one_address:?}");
    assert_eq!(
        through + one_address.get(&429).unwrap_or(&0),
        1000,
        "{one_address:?}"
    );

    assert!(peak < 150, "resident memory reached {peak} MiB");
    eprintln!("one address: peak resident memory {peak} MiB");

    // Many addresses, many emails: nothing throttles, so every attempt reaches the hashers,
    // which check 2 at a time, queue 32 and turn the rest away.
    let (many, peak) = burst(&url, pid, 300, 64, |n| {
        format!("198.51.{}.{}", n / 250, n % 250 + 1)
    })
    .await;
    assert_eq!(
        many.get(&401).unwrap_or(&0) + many.get(&503).unwrap_or(&0),
        300,
        "{many:?}"
    );
    assert!(many.get(&401).unwrap_or(&0) >= &32, "{many:?}");
    assert!(peak < 150, "resident memory reached {peak} MiB");
    eprintln!("many addresses: peak resident memory {peak} MiB");

    // The right password still works, from an address that did not attack.
    let client = reqwest::Client::new();
    let signed_up = client
        .post(format!("{url}/api/auth/signup"))
        .header("x-forwarded-for", "192.0.2.10")
        .json(&json!({"email": "real@example.com", "password": "the right password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_up.status(), 201);
    // Someone else guessing at that account from their machine is stopped there, and does not
    // lock the owner out.
    let mut guesses = Vec::new();
    for _ in 0..6 {
        let guess = client
            .post(format!("{url}/api/auth/signin"))
            .header("x-forwarded-for", "198.18.0.1")
            .json(&json!({"email": "real@example.com", "password": "a wrong guess"}))
            .send()
            .await
            .unwrap();
        guesses.push(guess.status().as_u16());
    }
    assert_eq!(guesses, [401, 401, 401, 401, 401, 429]);
    let signed_in = client
        .post(format!("{url}/api/auth/signin"))
        .header("x-forwarded-for", "192.0.2.10")
        .json(&json!({"email": "real@example.com", "password": "the right password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);
    // Memory falls back once the bursts are over (hashing memory is reused, not kept per
    // attempt; blocking threads are capped).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = resident_mib(pid);
    eprintln!("after the bursts: resident memory {idle} MiB");
    assert!(idle < 120, "resident memory {idle} MiB after the bursts");
}
