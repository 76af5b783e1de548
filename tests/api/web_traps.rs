//! The web app as a new user meets it, without the traps of issue 36: the rate limits protect
//! the service, never against its own pages; every error a browser meets is a page with the
//! header of its session; the quote says before Start when the plan cannot cover the book; a
//! file that cannot be read costs none of the month's books; pause and stop say what they do.

use std::time::Duration;

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::helpers::{eventually, sample_txt, TestApp};
use crate::stand_ins::StandIn;
use crate::web_app::{location, Browser};

/// The user signed in on `browser`, by id.
async fn user_id(browser: &Browser<'_>) -> String {
    let user: serde_json::Value = browser.get("/api/user").await.json().await.unwrap();
    user["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{user}"))
        .to_string()
}

/// Waits for a book's status, read from the service: the pages' polls and the API are rate
/// limited, and the test's clock stands still.
async fn settle(app: &TestApp, user_id: &str, id: &str, status: &str) {
    eventually(Duration::from_secs(60), || async {
        let book = app.services.books.get(user_id, id).await.unwrap();
        match book.status.to_string() == status {
            true => Ok(()),
            false => Err(format!("{id} is {}, not {status}", book.status)),
        }
    })
    .await
}

/// A FREE user signed up through the pages, with a book uploaded and read: the browser, the
/// user's id and the book's.
async fn signed_up_with_a_book(app: &TestApp) -> (Browser<'_>, String, String) {
    let mut browser = Browser::new(app);
    browser.sign_up().await;
    let user = user_id(&browser).await;
    let token = browser.token("/dashboard").await;
    let uploaded = browser
        .upload(&token, "voyage.txt", sample_txt(), "The Voyage")
        .await;
    assert_eq!(uploaded.status(), 303);
    let to = location(&uploaded);
    let id = to
        .trim_start_matches("/dashboard/books/")
        .split('?')
        .next()
        .unwrap()
        .to_string();
    settle(app, &user, &id, "EXTRACTED").await;
    (browser, user, id)
}

fn assert_html_page(response: &reqwest::Response, status: u16) {
    assert_eq!(response.status(), status);
    let kind = response.headers()["content-type"].to_str().unwrap();
    assert!(kind.starts_with("text/html"), "{kind}");
}

#[tokio::test]
async fn a_signed_in_persons_hour_of_pages_and_live_updates_never_meets_a_429_while_api_calls_still_do(
) {
    let app = TestApp::new().with_workers().start().await;
    let (browser, _, id) = signed_up_with_a_book(&app).await;
    let book = format!("/dashboard/books/{id}");
    let live = format!("{book}/live");
    let pages = [
        "/dashboard",
        book.as_str(),
        "/dashboard/settings/profile",
        "/dashboard/notifications",
        "/",
        "/comunidad",
    ];
    // An hour, a minute at a time: the book's page open and polling every 3 seconds, six
    // pages viewed (each with its style sheet, script and icon), and the reader's 30 chapters
    // across the hour, i.e. more than a person reads and clicks.
    for minute in 0..60 {
        for _ in 0..20 {
            let polled = browser.get(&live).await;
            assert_eq!(polled.status(), 200, "minute {minute}");
            let body: serde_json::Value = polled.json().await.unwrap();
            assert_eq!(body["status"], "EXTRACTED");
        }
        for path in pages {
            assert_eq!(
                browser.get(path).await.status(),
                200,
                "{path}, minute {minute}"
            );
            for asset in ["/assets/app.css", "/assets/app.js", "/favicon.ico"] {
                let served = browser.get(asset).await;
                assert_eq!(served.status(), 200, "{asset}");
                assert!(served.headers().get("x-ratelimit-limit").is_none());
            }
        }
        if minute % 2 == 0 {
            let chapter = format!("{book}/read?chapter={}", minute / 2 % 4 + 1);
            assert_eq!(browser.get(&chapter).await.status(), 200, "{chapter}");
        }
        app.clock.advance(chrono::Duration::seconds(60));
    }
    // The plan's API limits still hold for API calls, this session's too: 60 a minute on FREE.
    for n in 0..60 {
        assert_eq!(browser.get("/api/books").await.status(), 200, "call {n}");
    }
    let refused = browser.get("/api/books").await;
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().get("retry-after").is_some());
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited");
    // And the pages go on.
    assert_eq!(browser.get("/dashboard").await.status(), 200);
    assert_eq!(browser.get(&live).await.status(), 200);
}

#[tokio::test]
async fn a_limited_page_is_a_page_of_the_app_saying_when_to_come_back() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let mut refused = None;
    for _ in 0..200 {
        let response = browser.get("/dashboard/notifications").await;
        if response.status() == 429 {
            refused = Some(response);
            break;
        }
    }
    let refused = refused.expect("a script's burst of pages is stopped");
    assert_html_page(&refused, 429);
    let wait: i64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let html = refused.text().await.unwrap();
    assert!(html.contains("Too many requests"), "{html}");
    assert!(html.contains("Come back in 1 min."), "{html}");
    assert!(html.contains("/assets/app.css"), "{html}");
    // The header of a signed-in user: the library, not "Sign in".
    assert!(html.contains("href=\"/dashboard\""), "{html}");
    assert!(!html.contains("href=\"/signin\""), "{html}");
    // A minute later the pages answer again.
    app.clock.advance(chrono::Duration::seconds(61));
    assert_eq!(browser.get("/dashboard").await.status(), 200);
}

#[tokio::test]
async fn a_signed_out_brute_force_of_the_sign_in_form_is_stopped_while_a_persons_visit_is_not() {
    let app = TestApp::new().with_workers().start().await;
    let mut person = Browser::new(&app);
    // A visitor reads around, fails a password twice and signs up: never limited.
    for path in [
        "/",
        "/comunidad",
        "/signin",
        "/signup",
        "/forgot",
        "/signin",
    ] {
        assert_eq!(person.get(path).await.status(), 200, "{path}");
    }
    for _ in 0..2 {
        let wrong = person
            .post_form(
                "/signin",
                &[("email", "nobody@example.com"), ("password", "not it")],
            )
            .await;
        assert_html_page(&wrong, 401);
    }
    // Guesses at many accounts from that address: the address's password budget (10 a
    // minute, counting the two above) stops them, as a page.
    let mut statuses = Vec::new();
    for n in 0..12 {
        let email = format!("guess{n}@example.com");
        let guess = person
            .post_form("/signin", &[("email", &email), ("password", "a guess")])
            .await;
        statuses.push(guess.status().as_u16());
        if guess.status() == 429 {
            assert_html_page(&guess, 429);
        }
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        8,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        4,
        "{statuses:?}"
    );
    // The pages themselves still open for that address.
    assert_eq!(person.get("/signup").await.status(), 200);
}

#[tokio::test]
async fn every_error_a_browser_meets_is_a_page_with_the_header_of_its_session() {
    let app = TestApp::new().with_workers().start().await;
    let mut visitor = Browser::new(&app);
    // Signed out: a missing page, a bad share link, the way in.
    let missing = visitor.get("/nowhere").await;
    assert_html_page(&missing, 404);
    let html = missing.text().await.unwrap();
    assert!(
        html.contains("Not found") && html.contains("href=\"/signup\""),
        "{html}"
    );
    assert!(html.contains("href=\"/signin\""), "{html}");
    let share = visitor.get("/shared/not-a-token").await;
    assert_html_page(&share, 404);
    assert!(share
        .text()
        .await
        .unwrap()
        .contains("This link does not open a book"));
    let login = visitor.get("/login?next=/dashboard").await;
    assert_eq!(login.status(), 308);
    assert_eq!(location(&login), "/signin?next=/dashboard");
    // In the visitor's language.
    visitor.language = "es";
    let html = visitor.get("/nowhere").await.text().await.unwrap();
    assert!(
        html.contains("No encontrado") && html.contains("lang=\"es\""),
        "{html}"
    );
    // API callers keep the JSON, browsers or not.
    let api = visitor.get("/api/nowhere").await;
    assert_eq!(api.status(), 404);
    let body: serde_json::Value = api.json().await.unwrap();
    assert_eq!(body["error"], "not_found");
    let plain = app.get_anonymous("/nowhere").await;
    assert_eq!(plain.status(), 404);
    assert!(plain.json::<serde_json::Value>().await.is_ok());

    // Signed in: the library in the header, whatever the error.
    visitor.language = "en";
    visitor.sign_up().await;
    for (path, status) in [
        ("/nowhere", 404),
        ("/dashboard/books/not-a-book", 404),
        ("/shared/not-a-token", 404),
    ] {
        let response = visitor.get(path).await;
        assert_html_page(&response, status);
        let html = response.text().await.unwrap();
        assert!(html.contains("href=\"/dashboard\""), "{path}: {html}");
        assert!(!html.contains("href=\"/signin\""), "{path}: {html}");
    }
    // A form that failed: without its token (403), and the account-closing one.
    let forged = visitor.post_form("/dashboard/books/x/pause", &[]).await;
    assert_html_page(&forged, 403);
    let html = forged.text().await.unwrap();
    assert!(
        html.contains("Not allowed") && html.contains("href=\"/dashboard\""),
        "{html}"
    );
    let token = visitor.token("/dashboard/settings/data").await;
    let refused = visitor
        .post_form(
            "/dashboard/settings/close",
            &[("csrf", &token), ("confirmation", "not the phrase")],
        )
        .await;
    assert_html_page(&refused, 400);
    let html = refused.text().await.unwrap();
    assert!(html.contains("href=\"/dashboard\""), "{html}");
    assert!(!html.contains("href=\"/signin\""), "{html}");
}

#[tokio::test]
async fn the_home_page_offers_a_way_in_in_one_language_and_the_library_once_signed_in() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    let html = browser.html("/").await;
    assert!(
        html.contains("href=\"/signin\"") && html.contains("href=\"/signup\""),
        "{html}"
    );
    assert!(
        html.contains("<html lang=\"en\">") && html.contains(">Community</a>"),
        "{html}"
    );
    assert!(!html.contains("Comunidad<"), "{html}");
    assert!(
        html.contains("/assets/app.css") && html.contains("rel=\"manifest\""),
        "{html}"
    );
    browser.language = "es";
    let html = browser.html("/comunidad").await;
    assert!(
        html.contains("<html lang=\"es\">") && html.contains("Iniciar sesión"),
        "{html}"
    );
    browser.sign_up().await;
    let home = browser.get("/").await;
    assert_eq!(home.headers()["cache-control"], "private, no-store");
    let html = home.text().await.unwrap();
    assert!(html.contains("href=\"/dashboard\""), "{html}");
    assert!(!html.contains("href=\"/signin\""), "{html}");
}

#[tokio::test]
async fn the_favicon_and_the_manifest_are_served_with_cache_headers_and_linked_from_the_pages() {
    let app = TestApp::new().with_workers().start().await;
    let browser = Browser::new(&app);
    for (path, kind) in [
        ("/favicon.ico", "image/svg+xml"),
        ("/assets/icon.svg", "image/svg+xml"),
        ("/manifest.webmanifest", "application/manifest+json"),
    ] {
        let response = browser.get(path).await;
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], kind, "{path}");
        assert_eq!(response.headers()["cache-control"], "public, max-age=86400");
    }
    let manifest: serde_json::Value = browser
        .get("/manifest.webmanifest")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(manifest["start_url"], "/dashboard");
    for path in ["/signin", "/"] {
        let html = browser.html(path).await;
        assert!(html.contains("href=\"/assets/icon.svg\""), "{path}");
        assert!(html.contains("href=\"/manifest.webmanifest\""), "{path}");
    }
    let policy = browser.get("/signin").await.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(policy.contains("manifest-src 'self'"), "{policy}");
}

#[tokio::test]
async fn the_quote_says_before_start_when_the_plan_cannot_cover_the_book_and_offers_no_start() {
    let app = TestApp::new()
        .with_workers()
        .with_env(&[("BOOKTR_QUOTA_FREE_WORDS", "20")])
        .start()
        .await;
    let (browser, _, id) = signed_up_with_a_book(&app).await;
    let html = browser.html(&format!("/dashboard/books/{id}")).await;
    assert!(
        html.contains("Your plan cannot translate this book this month"),
        "{html}"
    );
    assert!(html.contains("Words left this month: 20"), "{html}");
    assert!(html.contains("The PRO plan covers it"), "{html}");
    assert!(
        !html.contains(&format!("/dashboard/books/{id}/start")),
        "{html}"
    );
    let usage: serde_json::Value = browser.get("/api/usage").await.json().await.unwrap();
    assert_eq!(usage["words"]["used"], 0, "{usage}");
}

#[tokio::test]
async fn a_file_that_fails_extraction_costs_none_of_the_months_books() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let user = user_id(&browser).await;
    let token = browser.token("/dashboard").await;
    let uploaded = browser
        .upload(&token, "blank.txt", b"   \n\n  \n".to_vec(), "Blank")
        .await;
    assert_eq!(uploaded.status(), 303);
    let id = location(&uploaded)
        .trim_start_matches("/dashboard/books/")
        .split('?')
        .next()
        .unwrap()
        .to_string();
    settle(&app, &user, &id, "ERROR").await;
    let usage: serde_json::Value = browser.get("/api/usage").await.json().await.unwrap();
    assert_eq!(usage["books"]["used"], 0, "{usage}");
    assert_eq!(usage["books"]["remaining"], 3, "{usage}");
}

#[tokio::test]
async fn pausing_says_the_chapters_in_progress_finish_first_and_a_pause_they_finish_shows_the_book_translated(
) {
    let gate = Arc::new(Semaphore::new(0));
    let entered = Arc::new(Semaphore::new(0));
    let model = StandIn {
        gate: Some(gate.clone()),
        entered: Some(entered.clone()),
        ..StandIn::default()
    };
    // Every chapter of the book in flight at once.
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(model))
        .with_env(&[("BOOKTR_CHAPTER_WINDOW", "8")])
        .start()
        .await;
    let (mut browser, user, id) = signed_up_with_a_book(&app).await;
    let page = format!("/dashboard/books/{id}");
    let token = browser.token(&page).await;
    let started = browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    // The four chapters are held at their first model call.
    entered.acquire_many(4).await.unwrap().forget();
    let paused = browser
        .post_form(&format!("{page}/pause"), &[("csrf", &token)])
        .await;
    assert_eq!(paused.status(), 303);
    let html = browser.html(&page).await;
    assert!(
        html.contains("Pausing: the chapters in progress finish first."),
        "{html}"
    );
    let live: serde_json::Value = browser
        .get(&format!("{page}/live"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(live["pausing"], true, "{live}");
    // They finish, and they were the whole book: translated, not "PAUSED · 100%".
    gate.add_permits(1000);
    settle(&app, &user, &id, "COMPLETED").await;
    let html = browser.html(&page).await;
    assert!(
        !html.contains("data-status=\"PAUSED\"") && !html.contains("Pausing"),
        "{html}"
    );
    assert!(
        html.contains("data-status=\"COMPLETED\">translated<"),
        "{html}"
    );
    // What the run cost (nothing, on the offline engine), and no stale quote of nothing to
    // translate.
    assert!(html.contains("What the last run cost: free"), "{html}");
    assert!(!html.contains("~0 min"), "{html}");
}

#[tokio::test]
async fn stop_asks_first_saying_what_is_kept_and_works_without_javascript() {
    let gate = Arc::new(Semaphore::new(0));
    let entered = Arc::new(Semaphore::new(0));
    let model = StandIn {
        gate: Some(gate.clone()),
        entered: Some(entered.clone()),
        ..StandIn::default()
    };
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(model))
        .with_env(&[("BOOKTR_CHAPTER_WINDOW", "1")])
        .start()
        .await;
    let (mut browser, user, id) = signed_up_with_a_book(&app).await;
    let page = format!("/dashboard/books/{id}");
    let token = browser.token(&page).await;
    browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    entered.acquire_many(1).await.unwrap().forget();
    // The Stop button is a plain form that asks first.
    let html = browser.html(&page).await;
    assert!(html.contains("name=\"stop\" value=\"confirm\""), "{html}");
    let asked = browser.html(&format!("{page}?stop=confirm")).await;
    assert!(asked.contains("Stop the translation?"), "{asked}");
    assert!(
        asked.contains("Chapters already translated are kept"),
        "{asked}"
    );
    assert!(asked.contains("name=\"confirm\" value=\"yes\""), "{asked}");
    // A stop posted without the confirmation changes nothing and asks.
    let unconfirmed = browser
        .post_form(&format!("{page}/stop"), &[("csrf", &token)])
        .await;
    assert_eq!(unconfirmed.status(), 303);
    assert_eq!(location(&unconfirmed), format!("{page}?stop=confirm"));
    let book = app.services.books.get(&user, &id).await.unwrap();
    assert_eq!(book.status.to_string(), "TRANSLATING");
    let stopped = browser
        .post_form(
            &format!("{page}/stop"),
            &[("csrf", &token), ("confirm", "yes")],
        )
        .await;
    assert_eq!(stopped.status(), 303);
    assert_eq!(location(&stopped), format!("{page}?stop=done"));
    gate.add_permits(1000);
    settle(&app, &user, &id, "EXTRACTED").await;
    let html = browser.html(&location(&stopped)).await;
    assert!(
        html.contains("Stopped. The chapters translated so far are kept"),
        "{html}"
    );
}

#[tokio::test]
async fn a_share_page_offers_the_library_to_a_signed_in_reader_and_a_way_in_to_anyone_else() {
    let app = TestApp::new().with_workers().start().await;
    let (mut owner, user, id) = signed_up_with_a_book(&app).await;
    let page = format!("/dashboard/books/{id}");
    let token = owner.token(&page).await;
    owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    settle(&app, &user, &id, "COMPLETED").await;
    let shared = owner
        .post_form(&format!("{page}/share"), &[("csrf", &token)])
        .await;
    assert_eq!(shared.status(), 303);
    let html = owner.html(&page).await;
    let at = html.find("/shared/").expect("the share link");
    let path: String = html[at..].chars().take_while(|c| *c != '"').collect();
    let read = owner.html(&path).await;
    assert!(read.contains("href=\"/dashboard\""), "{read}");
    assert!(!read.contains("href=\"/signin\""), "{read}");
    let anyone = Browser::new(&app).html(&path).await;
    assert!(anyone.contains("href=\"/signin\"") && anyone.contains("href=\"/signup\""));
    assert!(!anyone.contains("href=\"/dashboard\""), "{anyone}");
}
