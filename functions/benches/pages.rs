//! The web app's pages under load: `GET /dashboard` (the library) of a user with 100 books,
//! and the settings page and a book's page, through the whole served router on the embedded
//! backend, signed in with the session cookie as a BUSINESS user (counted in the pages' budget
//! like any user; the bench moves its clock on past each hour's allowance). Prints p50, p99 and
//! each page's HTML size; the targets are p99 under 50 ms and pages under 100 KB.
//!
//! `cargo bench -p booktr-functions --bench pages`

use std::sync::Arc;
use std::time::{Duration, Instant};

use booktr_core::accounts::NewUser;
use booktr_core::books::Upload;
use booktr_core::ports::ManualClock;
use booktr_core::types::{Email, Plan, Role};
use booktr_functions::app::Tasks;
use booktr_outbound::EnvModels;

mod support;

const REQUESTS: usize = 1000;
const BOOKS: usize = 100;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let support::Served { app, url, .. } = &support::serve(
        &[],
        clock.clone(),
        Arc::new(EnvModels::from_vars(Vec::new())),
        Tasks::without_workers(),
    )
    .await?;

    let email = format!("{}@example.com", booktr_core::ids::new_id());
    let user = app
        .services
        .accounts
        .create_user(NewUser {
            email: Email::parse(&email)?,
            name: Some("Reader".into()),
            password: Some("a long password".into()),
            role: Role::User,
            plan: Plan::Business,
        })
        .await?;
    // The books stay UPLOADED: no workers run here, and the library lists them the same way.
    let mut book_id = String::new();
    for n in 0..BOOKS {
        let book = app
            .services
            .books
            .upload(
                &user,
                Upload {
                    file_name: format!("book-{n}.txt"),
                    title: Some(format!("A book with a fairly long title, number {n}")),
                    target_lang: Some("fr".into()),
                    bytes: format!("Chapter 1\n\nCall me Ishmael, {n} times.\n").into(),
                },
            )
            .await?;
        book_id = book.id;
    }
    let (_, token) = app
        .services
        .accounts
        .sign_in(&email, "a long password")
        .await?;
    let cookie = format!("auth.session-token={token}");

    let client = reqwest::Client::new();
    println!("The web app's pages, {REQUESTS} requests each after 100 to warm up, embedded backend, {BOOKS} books");
    for path in [
        "/dashboard".to_string(),
        "/dashboard/settings/profile".into(),
        format!("/dashboard/books/{book_id}"),
    ] {
        let mut timings = Vec::new();
        let mut size = 0;
        for n in 0..REQUESTS + 100 {
            // Past the pages' budget of a person (120 a minute, 1,200 an hour) every 100.
            if n % 100 == 0 {
                clock.advance(chrono::Duration::seconds(3601));
            }
            let started = Instant::now();
            let response = client
                .get(format!("{url}{path}"))
                .header("cookie", &cookie)
                .send()
                .await?;
            let status = response.status();
            size = response.bytes().await?.len();
            anyhow::ensure!(status == 200, "{path}: request {n} answered {status}");
            if n >= 100 {
                timings.push(started.elapsed());
            }
        }
        timings.sort();
        println!(
            "  GET {:28} p50 {:>7.3} ms   p99 {:>7.3} ms   {:>6} bytes of HTML",
            if path.starts_with("/dashboard/books/") {
                "/dashboard/books/{id}"
            } else {
                &path
            },
            ms(support::percentile(&timings, 0.50)),
            ms(support::percentile(&timings, 0.99)),
            size
        );
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
