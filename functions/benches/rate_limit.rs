//! The rate limiter's cost per request: `GET /api/books` through the whole served router on the
//! embedded backend, as a BUSINESS user (counted: two atomic counter updates in SQLite) and as a
//! DEV user (never counted, otherwise the same path: same authentication, same handler), one
//! request of each in turn so both see the same machine. Prints p50 and p99 of each.
//!
//! `cargo bench -p booktr-functions --bench rate_limit`

use std::sync::Arc;
use std::time::{Duration, Instant};

use booktr_api::{AppState, Settings};
use booktr_core::accounts::NewUser;
use booktr_core::config::Config;
use booktr_core::ports::{Clock, EnvModels, ManualClock};
use booktr_core::types::{Email, Plan, Role};
use booktr_functions::wiring;

const REQUESTS: usize = 3000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let data = tempfile::TempDir::new()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let data_dir = data.path().to_string_lossy().to_string();
    let config = Config::from_lookup(|name| match name {
        "BOOKTR_DATA_DIR" => Some(data_dir.clone()),
        "BOOKTR_PUBLIC_URL" => Some(url.clone()),
        _ => None,
    })?;
    // A clock the bench moves on, so the counted user stays inside BUSINESS's 1,000 a minute.
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let dyn_clock: Arc<dyn Clock> = clock.clone();
    let app = wiring::embedded(
        &config,
        dyn_clock,
        Arc::new(EnvModels::from_vars(Vec::new())),
    )?;
    let state = AppState::new(
        app.services.clone(),
        Settings {
            public_url: url.clone(),
            trust_forwarded_for: false,
            body_limit: None,
            upload_origin: None,
        },
    );
    let router =
        booktr_api::router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener, router,
    )));

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
        let (p50, p99) = (percentile(t, 0.50), percentile(t, 0.99));
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
