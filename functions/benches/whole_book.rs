//! A whole book through the job system, against a local OpenAI stand-in with a latency profile:
//! the same wiring as `booktr serve` (embedded SQLite queue and store, in-process workers), the
//! book uploaded and translated over HTTP, the stand-in answering like the offline engine after
//! `base + per-token × output tokens`, refusing a share of requests with 429
//! (`Retry-After: 1`) and failing another share with 500, whatever the load. Prints wall time,
//! requests, peak requests in flight, the ideal critical path (the term pass and the slowest
//! chapter, with unlimited parallelism), when half, nine tenths and all but one of the chapters
//! were done, the requests in flight second by second, flagged blocks and glossary compliance;
//! with `--compare`, the same book again with one chapter at a time. `BENCH_LOG` sets the log
//! filter (`warn,booktr_translate::budget=debug` shows the budget's cuts and what it learns).
//!
//! With `--misbehave 0.2`, the book is translated a second time by a stand-in that spoils that
//! share of its answers the ways real models do (`booktr_translate::misbehaving`: chatter,
//! reasoning, fences, echoes, merged or tripled blocks, another language, refusals, answers cut
//! at the token limit ...), and the two books are compared block by block: every block must be
//! the clean run's, or flagged (keeping its source text). It prints the blocks that are neither,
//! and the wall time against the clean run's.
//!
//! `cargo bench -p booktr-functions --bench whole_book -- [--book moby-dick.epub] [--base 0.2]
//!  [--per-token-ms 1] [--limited 0.0] [--failing 0.0] [--window 128] [--compare] [--misbehave 0.2]
//!  [--beside wasteland.epub [--after 3]] [--capacity 40] [--memory]`
//!
//! With `--memory`, the translation memory instead: one user translates the book, then the same
//! book again (the memory supplies every passage: it must ask the model nothing), then a second
//! edition with one paragraph in twenty changed, in passages of ten (it must ask at most a tenth
//! of the first run's requests and output tokens), and another with every twentieth paragraph
//! changed; it prints each run's requests and tokens.
//!
//! With `--beside`, a second book is translated alone, then again by a second user beside the
//! first book, started `--after` seconds into its run: the fair share between books on one
//! provider key, as the second book's time beside the first against its time alone. With
//! `--capacity`, the stand-in answers 429 at once to requests over that many in flight: a key
//! the books must share (without it the budget grows past what one book asks for).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use booktr_core::accounts::NewUser;
use booktr_core::jobs::runner::RunnerConfig;
use booktr_core::ports::SystemClock;
use booktr_core::types::{Email, Plan, Role};
use booktr_functions::app::Tasks;
use booktr_outbound::EnvModels;
use booktr_translate::misbehaving::{Fault, Misbehaving};
use booktr_translate::model::{ChatModel, ChatRequest};
use booktr_translate::offline::OfflineEngine;
use serde_json::{json, Value};
use tokio::sync::Notify;

mod support;

/// The stand-in's latency profile.
#[derive(Debug, Clone, Copy)]
struct Profile {
    base: Duration,
    per_token: Duration,
    /// Share of requests answered 429, and of requests answered 500 (spread evenly over the
    /// run, see [`refusal`]).
    limited: f64,
    failing: f64,
    /// Share of answers spoiled (every n-th answer, each fault in turn).
    misbehave: f64,
    /// Requests the stand-in takes at once; those over it are answered 429 at once (a
    /// provider's real rate limit, which the budget must find).
    capacity: usize,
}

#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    refused: AtomicUsize,
    failed: AtomicUsize,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    /// Requests that carried a close passage from the translation memory (a SIMILAR line).
    similar: AtomicUsize,
    /// The slowest answer to a chapter's request, and to a term-list request.
    longest: Mutex<Duration>,
    longest_terms: Mutex<Duration>,
}

/// What the stand-in does with its `n`th request: 429, 500 or an answer. The n-th point of the
/// golden-ratio sequence spreads each share evenly over the run, whatever the load.
fn refusal(profile: &Profile, n: usize) -> Option<StatusCode> {
    let point = (n as f64 * 0.618_033_988_749_895).fract();
    if point < profile.limited {
        Some(StatusCode::TOO_MANY_REQUESTS)
    } else if point < profile.limited + profile.failing {
        Some(StatusCode::INTERNAL_SERVER_ERROR)
    } else {
        None
    }
}

/// Serves the stand-in on a free port; its base URL (for `OPENAI_BASE_URL`).
async fn stand_in(profile: Profile, seen: Arc<Seen>) -> anyhow::Result<String> {
    let (faults, spoil_every) = if profile.misbehave > 0.0 {
        (
            &Fault::ALL[..],
            (1.0 / profile.misbehave).round().max(1.0) as u32,
        )
    } else {
        (&[][..], 1)
    };
    let model = Arc::new(Misbehaving::new(OfflineEngine, faults, spoil_every));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let (seen, model) = (seen.clone(), model.clone());
            async move {
                let n = seen.requests.fetch_add(1, Ordering::SeqCst) + 1;
                let now = seen.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                seen.peak.fetch_max(now, Ordering::SeqCst);
                let answer = if now > profile.capacity {
                    seen.refused.fetch_add(1, Ordering::SeqCst);
                    (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", "1")],
                        axum::Json(json!({"error": {"message": "too many requests at once", "type": "rate_limit"}})),
                    )
                        .into_response()
                } else if let Some(status) = refusal(&profile, n) {
                    tokio::time::sleep(profile.base).await;
                    if status == StatusCode::TOO_MANY_REQUESTS {
                        seen.refused.fetch_add(1, Ordering::SeqCst);
                        (
                            status,
                            [("retry-after", "1")],
                            axum::Json(
                                json!({"error": {"message": "rate limited", "type": "rate_limit"}}),
                            ),
                        )
                            .into_response()
                    } else {
                        seen.failed.fetch_add(1, Ordering::SeqCst);
                        (
                            status,
                            axum::Json(
                                json!({"error": {"message": "internal error", "type": "server_error"}}),
                            ),
                        )
                            .into_response()
                    }
                } else {
                    let message = |role: &str| {
                        body["messages"]
                            .as_array()
                            .and_then(|m| m.iter().find(|m| m["role"] == role))
                            .and_then(|m| m["content"].as_str())
                            .unwrap_or_default()
                            .to_string()
                    };
                    let request = ChatRequest {
                        system: message("system"),
                        user: message("user"),
                        max_output_tokens: 16_000,
                    };
                    let terms = request.user.contains("\nCONTEXT:\n");
                    if request.user.contains("\nSIMILAR:\n") {
                        seen.similar.fetch_add(1, Ordering::SeqCst);
                    }
                    let Ok(answer) = model.complete(request).await else {
                        seen.in_flight.fetch_sub(1, Ordering::SeqCst);
                        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                    };
                    let took = profile.base + profile.per_token * answer.output_tokens as u32;
                    tokio::time::sleep(took).await;
                    let slot = if terms {
                        &seen.longest_terms
                    } else {
                        &seen.longest
                    };
                    let mut longest = slot.lock().unwrap_or_else(|p| p.into_inner());
                    *longest = (*longest).max(took);
                    axum::Json(json!({
                        "id": "chatcmpl-bench",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [{"index": 0,
                                     "finish_reason": if answer.truncated { "length" } else { "stop" },
                                     "message": {"role": "assistant", "content": answer.text}}],
                        "usage": {"prompt_tokens": answer.input_tokens,
                                  "completion_tokens": answer.output_tokens,
                                  "total_tokens": answer.input_tokens + answer.output_tokens}
                    }))
                    .into_response()
                };
                seen.in_flight.fetch_sub(1, Ordering::SeqCst);
                answer
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener, app,
    )));
    Ok(url)
}

/// What one run measured.
struct Figures {
    wall: Duration,
    requests: usize,
    refused: usize,
    failed: usize,
    peak: usize,
    critical_path: Duration,
    flagged_blocks: u64,
    glossary: (u64, u64),
    chapters: u64,
    /// The quote before the start: tokens in and out, dollars, seconds.
    quoted: (u64, u64, f64, u64),
    /// What the run used: tokens in and out, dollars.
    used: (u64, u64, f64),
    /// Output tokens of each pass (translate, review, polish).
    out_by_pass: [u64; 3],
    /// Every chapter's translated blocks, in order, and the blocks its quality record flags.
    books: Vec<(Vec<String>, BTreeSet<usize>)>,
    /// Blocks repaired on a later rung, summed over the chapters.
    repaired: u64,
    /// When a share of the chapters was done (a half, nine tenths, all but one).
    marks: Vec<(f64, Duration)>,
    /// Requests in flight at each second of the run.
    in_flight: Vec<usize>,
}

/// The service as `booktr serve` runs it, with its own stand-in.
struct Service {
    served: support::Served,
    seen: Arc<Seen>,
}

impl Service {
    async fn start(profile: Profile, window: usize) -> anyhow::Result<Service> {
        let seen = Arc::new(Seen::default());
        let openai = stand_in(profile, seen.clone()).await?;
        let models = EnvModels::from_vars(vec![
            ("OPENAI_API_KEY".into(), "sk-bench".into()),
            ("OPENAI_BASE_URL".into(), openai),
        ]);
        let served = support::serve(
            &[
                ("BOOKTR_CHAPTER_WINDOW", window.to_string()),
                // The stand-in plays a hosted model, whose latency profile it has; on its local
                // address it would be asked as a small model, one block a request.
                ("BOOKTR_MODEL_PROFILE", "hosted".into()),
                // A whole novel in one month, on a plan without priority (so the window is
                // exact).
                ("BOOKTR_QUOTA_FREE_WORDS", "unlimited".into()),
                ("BOOKTR_QUOTA_FREE_BOOKS", "unlimited".into()),
            ],
            Arc::new(SystemClock),
            Arc::new(models),
            Tasks {
                job_workers: 2,
                runner: RunnerConfig {
                    idle_wait: Duration::from_millis(20),
                    ..RunnerConfig::default()
                },
            },
        )
        .await?;
        Ok(Service { served, seen })
    }

    async fn stop(self) {
        self.served.running.stop().await;
    }
}

async fn translate_once(book: &[u8], profile: Profile, window: usize) -> anyhow::Result<Figures> {
    let service = Service::start(profile, window).await?;
    let figures = translate(&service, book, std::future::ready(()), &Notify::new()).await;
    service.stop().await;
    figures
}

/// `book` and `beside` translated by one service, as two users: `beside` starts when `book` has
/// been translating for `after`.
async fn side_by_side(
    book: &[u8],
    beside: &[u8],
    after: Duration,
    profile: Profile,
    window: usize,
) -> anyhow::Result<(Figures, Figures)> {
    let service = Service::start(profile, window).await?;
    let (started, unheard) = (Notify::new(), Notify::new());
    let later = async {
        started.notified().await;
        tokio::time::sleep(after).await;
    };
    let both = tokio::join!(
        translate(&service, book, std::future::ready(()), &started),
        translate(&service, beside, later, &unheard),
    );
    service.stop().await;
    Ok((both.0?, both.1?))
}

/// A new user of the service and their API key.
async fn new_user(service: &Service) -> anyhow::Result<(String, String)> {
    let app = &service.served.app;
    let user = app
        .services
        .accounts
        .create_user(NewUser {
            email: Email::parse(&format!("{}@example.com", booktr_core::ids::new_id()))?,
            name: None,
            password: None,
            role: Role::User,
            plan: Plan::Free,
        })
        .await?;
    let key = app
        .services
        .accounts
        .create_key(&user, "bench", None, None)
        .await?
        .secret;
    Ok((user.id, key))
}

/// Translates `book` as a new user, its run started once `ready` is (and `started` told).
async fn translate(
    service: &Service,
    book: &[u8],
    ready: impl std::future::Future<Output = ()>,
    started_run: &Notify,
) -> anyhow::Result<Figures> {
    let user = new_user(service).await?;
    translate_as(service, &user, book, ready, started_run).await
}

/// Translates `book` as `user` (their id and key), its run started once `ready` is.
async fn translate_as(
    service: &Service,
    (user_id, key): &(String, String),
    book: &[u8],
    ready: impl std::future::Future<Output = ()>,
    started_run: &Notify,
) -> anyhow::Result<Figures> {
    let Service { served, seen, .. } = service;
    let support::Served { app, url, .. } = served;
    let client = reqwest::Client::new();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(book.to_vec()).file_name("book.epub"),
    );
    let uploaded: Value = client
        .post(format!("{url}/api/upload"))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await?
        .json()
        .await?;
    let id = uploaded["book"]["id"]
        .as_str()
        .context("upload answered without a book")?
        .to_string();
    // Read in-process, not over HTTP: a poll every 100 ms would spend the user's rate limit.
    let translations = app.services.translations.clone();
    let user_id = user_id.clone();
    let status = |_: ()| {
        let (translations, user_id, id) = (translations.clone(), user_id.clone(), id.clone());
        async move {
            let now = translations
                .status(&user_id, &id)
                .await
                .map_err(|e| anyhow::anyhow!("status: {e}"))?;
            // As the API answers it.
            let now = booktr_api::wire::translation::TranslationStatus::from(now);
            anyhow::Ok(serde_json::to_value(now)?)
        }
    };
    loop {
        let now = status(()).await?;
        match now["status"].as_str() {
            Some("EXTRACTED") => break,
            Some("UPLOADED" | "EXTRACTING") => tokio::time::sleep(Duration::from_millis(50)).await,
            _ => anyhow::bail!("extraction: {now}"),
        }
    }

    let quote: Value = client
        .get(format!(
            "{url}/api/translate/quote?bookId={id}&model=gpt-4o-mini&targetLang=es"
        ))
        .bearer_auth(key)
        .send()
        .await?
        .json()
        .await?;
    ready.await;
    let started = Instant::now();
    // Requests in flight at each second of the run (the stand-in's, every book's).
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = tokio::spawn({
        let (seen, sampling) = (seen.clone(), sampling.clone());
        async move {
            let mut timeline = Vec::new();
            while sampling.load(Ordering::SeqCst) {
                timeline.push(seen.in_flight.load(Ordering::SeqCst));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            timeline
        }
    });
    let answer = client
        .post(format!("{url}/api/translate"))
        .bearer_auth(key)
        .json(&json!({"bookId": id, "model": "gpt-4o-mini", "targetLang": "es"}))
        .send()
        .await?;
    anyhow::ensure!(
        answer.status().is_success(),
        "start: {}",
        answer.text().await?
    );
    started_run.notify_one();
    // When half, nine tenths and all but the last chapter were done: the tail after them is
    // the run's slowest chapters (their retries, on a failing provider), not its throughput.
    let mut marks = Vec::new();
    let done = loop {
        let now = status(()).await?;
        let (completed, total) = (
            now["chaptersCompleted"].as_u64().unwrap_or(0),
            now["chaptersTotal"].as_u64().unwrap_or(0).max(1),
        );
        for (mark, reached) in [
            (0.5, completed * 2 >= total),
            (0.9, completed * 10 >= total * 9),
            (1.0, completed + 1 >= total),
        ] {
            if reached && !marks.iter().any(|(m, _)| *m == mark) {
                marks.push((mark, started.elapsed()));
            }
        }
        match now["status"].as_str() {
            Some("COMPLETED") => break now,
            Some("ERROR") => anyhow::bail!("the book failed: {now}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    let wall = started.elapsed();
    sampling.store(false, Ordering::SeqCst);
    let in_flight = sampler.await?;
    let mut books = Vec::new();
    for chapter in done["chapters"].as_array().into_iter().flatten() {
        let number = chapter["number"]
            .as_u64()
            .context("a chapter without a number")? as u32;
        let stored = translations
            .stored_chapter(&id, number)
            .await?
            .context("a completed chapter without its translation")?;
        books.push((
            stored.blocks.into_iter().map(|b| b.text).collect(),
            stored.quality.flagged_blocks(),
        ));
    }
    let mut flagged_blocks = 0;
    let mut repaired = 0;
    let mut glossary = (0, 0);
    let tokens = |usage: &Value, name: &str| usage[name].as_u64().unwrap_or(0);
    let mut used = (
        tokens(&done["terms"]["usage"], "inputTokens"),
        tokens(&done["terms"]["usage"], "outputTokens"),
        done["cost"]["spent"].as_f64().unwrap_or(0.0),
    );
    let mut out_by_pass = [0; 3];
    for chapter in done["chapters"].as_array().into_iter().flatten() {
        let quality = &chapter["quality"];
        for (at, pass) in ["translate", "review", "polish"].into_iter().enumerate() {
            used.0 += tokens(&quality[pass], "inputTokens");
            used.1 += tokens(&quality[pass], "outputTokens");
            out_by_pass[at] += tokens(&quality[pass], "outputTokens");
        }
        flagged_blocks += quality["flagged"]
            .as_object()
            .into_iter()
            .flat_map(|kinds| kinds.values())
            .flat_map(|blocks| blocks.as_array().into_iter().flatten())
            .filter_map(Value::as_u64)
            .collect::<BTreeSet<_>>()
            .len() as u64;
        repaired += ["halves", "singles", "simple"]
            .iter()
            .map(|rung| quality["repaired"][rung].as_u64().unwrap_or(0))
            .sum::<u64>();
        glossary.0 += quality["glossarySatisfied"].as_u64().unwrap_or(0);
        glossary.1 += quality["glossaryChecked"].as_u64().unwrap_or(0);
    }
    // With unlimited parallelism: the term pass, then the slowest chapter's three passes (its
    // passes answer about as many tokens each, so about three of the slowest answer).
    let longest = *seen.longest.lock().unwrap_or_else(|p| p.into_inner()) * 3
        + *seen.longest_terms.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Figures {
        wall,
        requests: seen.requests.load(Ordering::SeqCst),
        refused: seen.refused.load(Ordering::SeqCst),
        failed: seen.failed.load(Ordering::SeqCst),
        peak: seen.peak.load(Ordering::SeqCst),
        critical_path: longest,
        flagged_blocks,
        glossary,
        chapters: done["chaptersTotal"].as_u64().unwrap_or(0),
        quoted: (
            tokens(&quote["total"], "inputTokens"),
            tokens(&quote["total"], "outputTokens"),
            quote["estimatedCost"].as_f64().unwrap_or(0.0),
            quote["estimatedSeconds"].as_u64().unwrap_or(0),
        ),
        used,
        out_by_pass,
        books,
        repaired,
        marks,
        in_flight,
    })
}

/// The misbehaving run's book against the clean run's, block by block.
fn compare(clean: &Figures, spoiled: &Figures) {
    let (mut same, mut flagged, mut added, mut neighbour, mut other) = (0, 0, 0, 0, 0);
    for ((clean, _), (spoiled, flags)) in clean.books.iter().zip(&spoiled.books) {
        for (i, (want, got)) in clean.iter().zip(spoiled).enumerate() {
            if want == got {
                same += 1;
            } else if flags.contains(&i) {
                flagged += 1;
            } else if clean
                .iter()
                .enumerate()
                .any(|(j, other)| j != i && other.len() > 8 && got.contains(other.as_str()))
            {
                neighbour += 1;
                println!("  holds a neighbour's text: {got:.200}");
            } else if got.contains(want.as_str()) {
                added += 1;
                println!("  text added around the block: {got:.600}\n   clean: {want:.600}");
            } else {
                other += 1;
                println!("  differs: {got:.200}\n   clean: {want:.200}");
            }
        }
    }
    println!(
        "  against the clean run: {same} blocks the same, {flagged} flagged (keeping their source), \
         {added} with text added, {neighbour} holding a neighbour's text, {other} otherwise different; \
         {} blocks repaired on a later rung; wall time {:.2}x the clean run's",
        spoiled.repaired,
        spoiled.wall.as_secs_f64() / clean.wall.as_secs_f64()
    );
}

fn print(label: &str, f: &Figures) {
    let compliance = if f.glossary.1 == 0 {
        100.0
    } else {
        f.glossary.0 as f64 * 100.0 / f.glossary.1 as f64
    };
    println!(
        "{label}: {} chapters in {:.1} s; {} requests ({} answered 429, {} answered 500), peak {} in flight; \
         ideal critical path {:.1} s; {} flagged blocks; glossary {compliance:.1}% ({}/{})",
        f.chapters,
        f.wall.as_secs_f64(),
        f.requests,
        f.refused,
        f.failed,
        f.peak,
        f.critical_path.as_secs_f64(),
        f.flagged_blocks,
        f.glossary.0,
        f.glossary.1,
    );
    let marks: Vec<String> = f
        .marks
        .iter()
        .map(|(mark, at)| match mark {
            1.0 => format!("all but one at {:.1} s", at.as_secs_f64()),
            _ => format!("{:.0}% at {:.1} s", mark * 100.0, at.as_secs_f64()),
        })
        .collect();
    println!("  chapters done: {}", marks.join(", "));
    let [translate, review, polish] = f.out_by_pass;
    println!(
        "  output tokens by pass: translate {translate}, review {review}, polish {polish} \
         (review and polish {:.0}% of the translate pass's)",
        (review + polish) as f64 * 100.0 / translate.max(1) as f64
    );
    println!("  requests in flight, second by second: {:?}", f.in_flight);
    let off = |quoted: f64, used: f64| (quoted - used) * 100.0 / used.max(1e-9);
    println!(
        "  quote: {} tokens in ({:+.1}% of the {} used), {} out ({:+.1}% of {}), ${:.4} \
         ({:+.1}% of ${:.4}); {} s expected at a hosted model's pace (2 s + 10 ms per token)",
        f.quoted.0,
        off(f.quoted.0 as f64, f.used.0 as f64),
        f.used.0,
        f.quoted.1,
        off(f.quoted.1 as f64, f.used.1 as f64),
        f.used.1,
        f.quoted.2,
        off(f.quoted.2, f.used.2),
        f.used.2,
        f.quoted.3,
    );
}

/// A second edition: one run of `run` paragraphs in every `every` runs of the EPUB's chapters
/// (paragraphs of 80 characters or more, counted across the book) with a sentence added at the
/// end of each. Returns the book and how many paragraphs changed.
fn second_edition(book: &[u8], every: usize, run: usize) -> anyhow::Result<(Vec<u8>, usize)> {
    use std::io::{Read, Write};
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(book))?;
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let (mut seen, mut changed) = (0, 0);
    for i in 0..zip.len() {
        let mut file = zip.by_index(i)?;
        let name = file.name().to_string();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        if name.ends_with(".xhtml") || name.ends_with(".html") {
            let text = String::from_utf8(bytes)?;
            let mut edited = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(end) = rest.find("</p>") {
                let paragraph = &rest[..end];
                let start = paragraph.rfind("<p").unwrap_or(0);
                edited.push_str(paragraph);
                if paragraph.len() - start >= 80 {
                    seen += 1;
                    if (seen / run) % every == every - 1 {
                        edited.push_str(" So it was told in the first edition.");
                        changed += 1;
                    }
                }
                edited.push_str("</p>");
                rest = &rest[end + 4..];
            }
            edited.push_str(rest);
            bytes = edited.into_bytes();
        }
        let method = if name == "mimetype" {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        out.start_file(name, options)?;
        out.write_all(&bytes)?;
    }
    Ok((out.finish()?.into_inner(), changed))
}

/// The translation memory's scenario: `book` translated by one user, then the same book again
/// (the memory supplies every passage: no model request for them), then two second editions of
/// it, each with one paragraph in twenty changed (only those go to the model): revised in
/// passages of ten paragraphs, and here and there (every twentieth paragraph, so that nearly
/// every chapter has one, and each such chapter its three passes' requests).
async fn memory_scenario(book: &[u8], profile: Profile, window: usize) -> anyhow::Result<()> {
    let service = Service::start(profile, window).await?;
    let user = new_user(&service).await?;
    let seen = service.seen.clone();
    let requests = || seen.requests.load(Ordering::SeqCst);
    let mut runs = Vec::new();
    let (revised, changed) = second_edition(book, 20, 10)?;
    let (scattered, scattered_changed) = second_edition(book, 20, 1)?;
    for (label, bytes) in [
        ("first translation", book.to_vec()),
        ("the same book again", book.to_vec()),
        ("a second edition, revised in passages", revised),
        ("a second edition, revised here and there", scattered),
    ] {
        let (before, similar) = (requests(), seen.similar.load(Ordering::SeqCst));
        let figures = translate_as(
            &service,
            &user,
            &bytes,
            std::future::ready(()),
            &Notify::new(),
        )
        .await?;
        let asked = requests() - before;
        let close = seen.similar.load(Ordering::SeqCst) - similar;
        println!(
            "{label}: {} chapters in {:.1} s; {asked} model requests ({close} with a close passage \
             beside a block), {} output tokens, {} tokens in; quote: {} tokens out, ${:.4}; {} \
             flagged blocks",
            figures.chapters,
            figures.wall.as_secs_f64(),
            figures.used.1,
            figures.used.0,
            figures.quoted.1,
            figures.quoted.2,
            figures.flagged_blocks,
        );
        runs.push((asked, figures.used.1));
    }
    service.stop().await;
    let share = |a: usize, b: usize| a as f64 * 100.0 / b.max(1) as f64;
    println!(
        "again: {} requests, {} output tokens; second edition revised in passages ({changed} \
         paragraphs changed): {:.1}% of the first run's requests, {:.1}% of its output tokens; \
         here and there ({scattered_changed} paragraphs): {:.1}% and {:.1}%",
        runs[1].0,
        runs[1].1,
        share(runs[2].0, runs[0].0),
        share(runs[2].1 as usize, runs[0].1 as usize),
        share(runs[3].0, runs[0].0),
        share(runs[3].1 as usize, runs[0].1 as usize),
    );
    anyhow::ensure!(runs[1].0 == 0, "the same book again asked the model");
    anyhow::ensure!(
        runs[2].0 * 10 <= runs[0].0 && runs[2].1 * 10 <= runs[0].1,
        "the second edition asked more than a tenth of the first run"
    );
    Ok(())
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    booktr_functions::telemetry::init(
        &std::env::var("BENCH_LOG").unwrap_or("warn".into()),
        booktr_core::config::LogFormat::Pretty,
    );
    let args: Vec<String> = std::env::args().collect();
    let book_name = arg(&args, "--book").unwrap_or_else(|| "moby-dick.epub".into());
    let seconds = |name: &str, default: f64| -> anyhow::Result<f64> {
        arg(&args, name).map_or(Ok(default), |v| v.parse().context(name.to_string()))
    };
    let profile = Profile {
        base: Duration::from_secs_f64(seconds("--base", 0.2)?),
        per_token: Duration::from_secs_f64(seconds("--per-token-ms", 1.0)? / 1000.0),
        limited: seconds("--limited", 0.0)?,
        failing: seconds("--failing", 0.0)?,
        misbehave: 0.0,
        capacity: arg(&args, "--capacity").map_or(Ok(usize::MAX), |c| c.parse())?,
    };
    let misbehave = seconds("--misbehave", 0.0)?;
    let window: usize = arg(&args, "--window")
        .map_or(Ok(booktr_core::translation::DEFAULT_WINDOW), |w| w.parse())?;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(&book_name);
    let book = std::fs::read(&path).with_context(|| path.display().to_string())?;
    println!(
        "{book_name}: stand-in answers in {:.2} s + {:.1} ms per output token, {:.0}% answered 429, \
         {:.0}% answered 500",
        profile.base.as_secs_f64(),
        profile.per_token.as_secs_f64() * 1000.0,
        profile.limited * 100.0,
        profile.failing * 100.0
    );
    if args.iter().any(|a| a == "--memory") {
        return memory_scenario(&book, profile, window).await;
    }
    let parallel = translate_once(&book, profile, window).await?;
    print(&format!("window {window}"), &parallel);
    if misbehave > 0.0 {
        let spoiled = translate_once(
            &book,
            Profile {
                misbehave,
                ..profile
            },
            window,
        )
        .await?;
        print(
            &format!(
                "window {window}, {:.0}% of answers spoiled",
                misbehave * 100.0
            ),
            &spoiled,
        );
        compare(&parallel, &spoiled);
    }
    if let Some(other) = arg(&args, "--beside") {
        let path = path.with_file_name(&other);
        let beside = std::fs::read(&path).with_context(|| path.display().to_string())?;
        let after = Duration::from_secs_f64(seconds("--after", 3.0)?);
        let alone = translate_once(&beside, profile, window).await?;
        print(&format!("{other} alone"), &alone);
        let (first, second) = side_by_side(&book, &beside, after, profile, window).await?;
        print(&format!("{book_name}, {other} beside it"), &first);
        print(
            &format!(
                "{other}, started {:.0} s into {book_name}",
                after.as_secs_f64()
            ),
            &second,
        );
        println!(
            "{other}: {:.1} s beside {book_name}, {:.1} s alone ({:.2}x)",
            second.wall.as_secs_f64(),
            alone.wall.as_secs_f64(),
            second.wall.as_secs_f64() / alone.wall.as_secs_f64()
        );
    }
    if args.iter().any(|a| a == "--compare") {
        let one = translate_once(&book, profile, 1).await?;
        print("one chapter at a time", &one);
    }
    Ok(())
}
