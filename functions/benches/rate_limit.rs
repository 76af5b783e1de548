//! The rate limiter's cost per request: `GET /api/books` through the whole served router on the
//! embedded backend, as a BUSINESS user (counted: two atomic counter updates in SQLite) and as a
//! DEV user (never counted, otherwise the same path: same authentication, same handler), one
//! request of each in turn so both see the same machine. Prints p50 and p99 of each.
//!
//! `cargo bench -p booktr-functions --bench rate_limit`

use std::sync::Arc;
use std::time::{Duration, Instant};

use booktr_core::accounts::NewUser;
use booktr_core::ports::ManualClock;
use booktr_core::types::{Email, Plan, Role};
use booktr_functions::app::Tasks;
use booktr_outbound::EnvModels;

mod support;

const REQUESTS: usize = 3000;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // A clock the bench moves on, so the counted user stays inside BUSINESS's 1,000 a minute.
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let support::Served { app, url, .. } = &support::serve(
        &[],
        clock.clone(),
        Arc::new(EnvModels::from_vars(Vec::new())),
        Tasks::without_workers(),
    )
    .await?;

    let mut keys = Vec::new();
    for (plan, role) in [(Plan::Business, Role::User), (Plan::Business, Role::Dev)] {
        let user = app
            .services
            .accounts
            .create_user(NewUser {
                email: Email::parse(&format!("{}@example.com", booktr_core::ids::new_id()))?,
                name: None,
                password: None,
                role,
                plan,
            })
            .await?;
        keys.push(
            app.services
                .accounts
                .create_key(&user, "bench", None, None)
                .await?
                .secret,
        );
    }
    let client = reqwest::Client::new();
    let mut timings = [Vec::new(), Vec::new()];
    for n in 0..REQUESTS + 200 {
        if n % 500 == 0 {
            clock.advance(chrono::Duration::seconds(61));
        }
        for (which, key) in keys.iter().enumerate() {
            let started = Instant::now();
            let response = client
                .get(format!("{url}/api/books"))
                .bearer_auth(key)
                .send()
                .await?;
            let status = response.status();
            response.bytes().await?;
            anyhow::ensure!(status == 200, "request {n} answered {status}");
            // The first 200 warm the connection pool and SQLite's caches.
            if n >= 200 {
                timings[which].push(started.elapsed());
            }
        }
    }
    println!(
        "GET /api/books, {REQUESTS} requests each, embedded backend (SQLite, synchronous=FULL)"
    );
    let mut p50s = Vec::new();
    for (label, t) in [
        "with the rate limiter (BUSINESS)",
        "without (DEV, never counted)",
    ]
    .iter()
    .zip(timings.iter_mut())
    {
        t.sort();
        let (p50, p99) = (support::percentile(t, 0.50), support::percentile(t, 0.99));
        p50s.push(p50);
        println!(
            "  {label:34} p50 {:>8.3} ms   p99 {:>8.3} ms",
            ms(p50),
            ms(p99)
        );
    }
    println!(
        "  overhead of the limiter at p50: {:.3} ms",
        ms(p50s[0]) - ms(p50s[1])
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
