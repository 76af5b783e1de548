//! The `booktr serve` process killed (SIGKILL) at random points of a translation, several times:
//! the book still completes, no chapter is missing, and no finished pass is paid for twice.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::stand_ins::{failing_openai_stand_in, is_term_list, openai_stand_in, Seen};

use crate::helpers::eventually;

const BOOKTR: &str = env!("CARGO_BIN_EXE_booktr");
const CHAPTERS: usize = 8;
/// Each kill can interrupt the chapters job in hand, which counts a receive of it; a job in hand
/// at `CRASH_RECEIVES` deaths is given up as one that stops the service, so one kill fewer leaves
/// even a job hit every time to finish.
const KILLS: usize = booktr_local::CRASH_RECEIVES as usize - 1;

/// A book of `chapters` chapters, each with a word found nowhere else (`Marker<n>`).
pub(crate) fn book(chapters: usize) -> Vec<u8> {
    let mut text = String::from("The Crash Book\n\n");
    for n in 1..=chapters {
        text.push_str(&format!("Chapter {n}\n\n"));
        for p in 1..=3 {
            text.push_str(&format!(
                "Paragraph {p} of Marker{n} tells of ships, harbours and the long grey sea.\n\n"
            ));
        }
    }
    text.into_bytes()
}

/// Starts the server on `data`; returns it, its URL and, on the first start, the admin key.
pub(crate) async fn start(data: &Path, port: u16, openai: &str) -> (Child, String, Option<String>) {
    start_with(data, port, openai, &[]).await
}

/// [`start`] with extra environment variables.
pub(crate) async fn start_with(
    data: &Path,
    port: u16,
    openai: &str,
    env: &[(&str, &str)],
) -> (Child, String, Option<String>) {
    start_logging(data, port, openai, env, None).await
}

/// The server's log lines (its standard error), each with the instant the test read it.
type LogLines = Arc<Mutex<Vec<(Instant, String)>>>;

/// [`start_with`], the server's log lines added to `log` when one is given (and left to the
/// test's standard error otherwise).
async fn start_logging(
    data: &Path,
    port: u16,
    openai: &str,
    env: &[(&str, &str)],
    log: Option<LogLines>,
) -> (Child, String, Option<String>) {
    let mut child = Command::new(BOOKTR)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data"])
        .arg(data)
        .env("BOOKTR_LOG", "warn")
        .envs(env.iter().copied())
        .env("OPENAI_API_KEY", "sk-stand-in")
        .env("OPENAI_BASE_URL", openai)
        // The stand-in plays a hosted model, a chapter's pass in one request, which is what
        // the kills are timed against; on its local address it would be asked as a small model.
        .env("BOOKTR_MODEL_PROFILE", "hosted")
        .stdout(Stdio::piped())
        .stderr(match log {
            Some(_) => Stdio::piped(),
            None => Stdio::inherit(),
        })
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    if let (Some(log), Some(stderr)) = (log, child.stderr.take()) {
        let mut lines = BufReader::new(stderr).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                log.lock().unwrap().push((Instant::now(), line));
            }
        });
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut key = None;
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(k) = line.split_whitespace().find(|w| w.starts_with("bt_")) {
                key.get_or_insert_with(|| k.trim_matches('\'').to_string());
            }
            if line.starts_with("booktr is serving") {
                return;
            }
        }
    })
    .await
    .expect("booktr serve did not report readiness");
    // Keep reading so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, format!("http://127.0.0.1:{port}"), key)
}

/// A pseudo-random delay from the clock's nanoseconds (no seed to keep; every run differs).
fn random_millis(low: u64, high: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    low + nanos % (high - low)
}

#[tokio::test]
async fn a_translation_killed_repeatedly_completes_with_every_chapter_translated_once() {
    // Each model call takes 30 ms, so a chapter's three passes take about 100 ms and the kills
    // land inside chapters as well as between them.
    let (openai, calls) = openai_stand_in(Duration::from_millis(30)).await;
    let data = tempfile::TempDir::new().unwrap();
    let port = free_port();
    let (mut server, url, key) = start(data.path(), port, &openai).await;
    let key = key.expect("an admin key on the first start");
    let client = reqwest::Client::new();
    let id = upload_and_start(&client, &url, &key, book(CHAPTERS)).await;

    for _ in 0..KILLS {
        tokio::time::sleep(Duration::from_millis(random_millis(60, 260))).await;
        server.start_kill().unwrap(); // SIGKILL
        server.wait().await.unwrap();
        (server, _, _) = start(data.path(), port, &openai).await;
    }

    let last = eventually(Duration::from_secs(30), || async {
        let last = book_status(&client, &url, &key, &id)
            .await
            .unwrap_or(Value::Null);
        match last["status"] == "COMPLETED" {
            true => Ok(last),
            false => Err(last),
        }
    })
    .await;
    assert_eq!(last["chaptersCompleted"], last["chaptersTotal"], "{last}");
    let total = last["chaptersTotal"].as_u64().unwrap() as usize;
    assert!(total >= CHAPTERS, "{last}");

    // Every chapter was translated. The chapters in flight at a kill start again (all 8 are in
    // flight together here), so each is started at most once per kill.
    for n in 1..=CHAPTERS {
        let times = calls.translate_calls_with(&format!("Marker{n} "));
        assert!(times >= 1, "chapter {n} was never translated");
        assert!(
            times <= 1 + KILLS,
            "chapter {n} was translated {times} times after {KILLS} kills"
        );
    }

    // The file has every chapter, translated.
    let link: Value = client
        .get(format!("{url}/api/download/{id}?format=epub"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let epub = reqwest::get(link["url"].as_str().unwrap())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let translated = booktr_formats::epub::extract(&epub).unwrap();
    assert_eq!(translated.chapters.len(), total);
    for n in 1..=CHAPTERS {
        let chapter = translated
            .chapters
            .iter()
            .find(|c| c.plain_text().contains(&format!("Màrkér{n}")))
            .unwrap_or_else(|| panic!("chapter {n} is missing or untranslated"));
        assert!(!chapter.plain_text().contains(&format!("Marker{n}")));
    }
    server.start_kill().unwrap();
}

/// The crash loop of a job that takes the server down: a chapter whose model request never
/// ends, the server killed (SIGKILL) each time the request is in flight. Three deaths with the
/// job in hand, and the fourth start gives it up instead of running it again: the book ends in
/// ERROR saying why, and the model is asked no fourth time.
#[tokio::test]
async fn a_job_in_hand_at_three_deaths_of_the_server_is_given_up_at_the_fourth_start() {
    let (openai, calls) = openai_stand_in(Duration::from_secs(3600)).await;
    let data = tempfile::TempDir::new().unwrap();
    let port = free_port();
    let (mut server, url, key) = start(data.path(), port, &openai).await;
    let key = key.expect("an admin key on the first start");
    let client = reqwest::Client::new();
    // Lower-case prose: no names for the term pass to ask the model about, so the job in hand
    // at each death is the chapter's.
    let text = "chapter 1\n\nthe long grey sea was calm and the ships were slow.\n\n";
    let id = upload_and_start(&client, &url, &key, text.as_bytes().to_vec()).await;
    let chapter_calls = || calls.all().iter().filter(|u| !is_term_list(u)).count();

    for death in 1..=3 {
        eventually(Duration::from_secs(30), || async {
            match chapter_calls() >= death {
                true => Ok(()),
                false => Err(format!("life {death}: the chapter has not asked the model")),
            }
        })
        .await;
        server.start_kill().unwrap(); // SIGKILL
        server.wait().await.unwrap();
        (server, _, _) = start(data.path(), port, &openai).await;
    }

    eventually(Duration::from_secs(30), || async {
        let status = book_status(&client, &url, &key, &id)
            .await
            .unwrap_or(Value::Null);
        match status["status"] == "ERROR" {
            true => Ok(()),
            false => Err(status),
        }
    })
    .await;
    let book: Value = client
        .get(format!("{url}/api/books/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let error = book["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("stopped the service each time"),
        "the book does not say why: {book}"
    );
    assert_eq!(
        chapter_calls(),
        3,
        "the job ran again after its third death"
    );
    server.start_kill().unwrap();
}

/// A chapter's pass the server logged as stored, and when the test read the line.
struct StoredPass {
    chapter: u64,
    /// 1 for the translate pass, 2 for the review, 3 for the polish.
    pass: u64,
    at: Instant,
}

/// The passes the server's log says it stored (in JSON, the chapter jobs' events at debug): a
/// checkpoint after each pass but the last, the chapter's translation after the last. Only lines
/// logged after `since` are read.
fn stored_passes(log: &LogLines, since: Instant) -> Vec<StoredPass> {
    let lines = log.lock().unwrap();
    lines
        .iter()
        .filter(|(at, _)| *at > since)
        .filter_map(|(at, line)| {
            let event: Value = serde_json::from_str(line).ok()?;
            let pass = match event["message"].as_str()? {
                "the pass is stored" => event["passes_done"].as_u64()?,
                "the chapter's translation is stored" => 3,
                _ => return None,
            };
            Some(StoredPass {
                chapter: event["span"]["number"].as_u64()?,
                pass,
                at: *at,
            })
        })
        .collect()
}

/// A free local port for a server the test starts (and restarts on the same port).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Uploads `bytes` as a text book, waits for its chapters and starts its translation into
/// French; returns the book's id.
pub(crate) async fn upload_and_start(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    bytes: Vec<u8>,
) -> String {
    let form = Form::new().part("file", Part::bytes(bytes).file_name("crash.txt"));
    let uploaded: Value = client
        .post(format!("{url}/api/upload"))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = uploaded["book"]["id"].as_str().unwrap().to_string();
    eventually(Duration::from_secs(10), || async {
        let status = book_status(client, url, key, &id).await;
        match status.as_ref().map(|s| &s["status"]) == Some(&json!("EXTRACTED")) {
            true => Ok(()),
            false => Err(format!("{status:?}")),
        }
    })
    .await;
    let started = client
        .post(format!("{url}/api/translate"))
        .bearer_auth(key)
        .json(&json!({"bookId": id, "targetLang": "fr"}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 200);
    id
}

/// The translation status, or None while the server is down.
pub(crate) async fn book_status(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    id: &str,
) -> Option<Value> {
    let response = client
        .get(format!("{url}/api/translate/status?bookId={id}"))
        .bearer_auth(key)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    response.json().await.ok()
}

/// Chapters of the book under kills and failures: with four chapters in flight, each given
/// the place of the one before as soon as it finishes, enough work that every kill lands while
/// model requests are in flight (here the twenty lives translate about 60 chapters).
const FAILING_CHAPTERS: usize = 150;
const FAILING_KILLS: usize = 20;

/// The crash test: SIGKILL while chapters are in flight, restart, 20 times,
/// with a provider failing 30% of requests (500 and 429). The book completes with every chapter
/// translated; a chapter's pass is paid for twice only when a kill cut it short (a kill after
/// its first request arrived and before the server logged the pass stored); progress never
/// goes back.
#[tokio::test]
async fn a_book_killed_twenty_times_under_failing_requests_pays_no_finished_pass_twice() {
    let started = Instant::now();
    let (openai, log) = failing_openai_stand_in(Duration::from_millis(150)).await;
    let data = tempfile::TempDir::new().unwrap();
    let port = free_port();
    // Two chapters in flight (four with the admin's priority). The log keeps the chapter jobs'
    // events, which say when each pass is stored, and errors; the retries' warnings would
    // fill it.
    let logging = [
        ("BOOKTR_LOG", "error,booktr_core::jobs::chapter=debug"),
        ("BOOKTR_LOG_FORMAT", "json"),
    ];
    let env = [logging[0], logging[1], ("BOOKTR_CHAPTER_WINDOW", "2")];
    let last_env = [logging[0], logging[1], ("BOOKTR_CHAPTER_WINDOW", "32")];
    let server_log = LogLines::default();
    let (mut server, url, key) =
        start_logging(data.path(), port, &openai, &env, Some(server_log.clone())).await;
    let key = key.expect("an admin key on the first start");
    let client = reqwest::Client::new();
    let id = upload_and_start(&client, &url, &key, book(FAILING_CHAPTERS)).await;

    // Progress as seen from outside, all along.
    let watching = tokio::spawn({
        let (client, url, key, id) = (client.clone(), url.clone(), key.clone(), id.clone());
        async move {
            let mut seen: Vec<(u64, u64)> = Vec::new();
            loop {
                if let Some(status) = book_status(&client, &url, &key, &id).await {
                    let progress = status["progress"].as_u64().unwrap_or(0);
                    let completed = status["chaptersCompleted"].as_u64().unwrap_or(0);
                    seen.push((progress, completed));
                    if status["status"] == "COMPLETED" || status["status"] == "ERROR" {
                        return (seen, status);
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });

    let mut kills = Vec::new();
    let mut life = Instant::now();
    while kills.len() < FAILING_KILLS {
        // Wait for model requests in flight (chapters being translated), then kill a little
        // later, anywhere in the passes.
        let waited = tokio::time::timeout(Duration::from_secs(30), async {
            while log.lock().unwrap().in_flight == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        if waited.is_err() {
            let now = book_status(&client, &url, &key, &id).await;
            let summary = now.map(|s| (s["status"].clone(), s["errors"][0].clone()));
            panic!(
                "no request in flight after {} kills: the book ran out of work too soon: \
                 {summary:?}",
                kills.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(random_millis(400, 1200))).await;
        // A chapters job with no finished pass in four lives in a row is taken for one that
        // crashes its worker (and dead-lettered), so each life stores one pass at least (its
        // checkpoint and its count) before its kill, which comes a little later. The random
        // delay alone hit one window four times running, under retries and backoff.
        let stored = tokio::time::timeout(Duration::from_secs(30), async {
            while stored_passes(&server_log, life).is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(stored.is_ok(), "no pass stored in a life of 30 s");
        tokio::time::sleep(Duration::from_millis(random_millis(0, 300))).await;
        server.start_kill().unwrap(); // SIGKILL
        kills.push(Instant::now());
        server.wait().await.unwrap();
        // The last life finishes the book with many chapters in flight (the rest of a book
        // sized for twenty kills would take minutes at four), which also changes the width of
        // the job it takes over.
        let env = if kills.len() == FAILING_KILLS {
            &last_env
        } else {
            &env
        };
        (server, _, _) =
            start_logging(data.path(), port, &openai, env, Some(server_log.clone())).await;
        life = Instant::now();
    }

    let Ok(watched) = tokio::time::timeout(Duration::from_secs(180), watching).await else {
        let now = book_status(&client, &url, &key, &id).await;
        let summary = now.map(|s| {
            (
                s["status"].clone(),
                s["chaptersCompleted"].clone(),
                s["errors"].clone(),
            )
        });
        let in_flight = log.lock().unwrap().in_flight;
        panic!(
            "the book did not complete within 3 minutes of the last kill: {summary:?}, \
             {in_flight} requests in flight"
        );
    };
    let (seen, last) = watched.unwrap();
    assert_eq!(last["status"], "COMPLETED", "{last}");
    assert_eq!(last["chaptersCompleted"], last["chaptersTotal"], "{last}");
    assert_eq!(last["errors"], json!([]), "{last}");
    for pair in seen.windows(2) {
        assert!(
            pair[1].0 >= pair[0].0 && pair[1].1 >= pair[0].1,
            "progress went back: {:?} then {:?}",
            pair[0],
            pair[1]
        );
    }

    // Every pass of every chapter was paid for; twice only across a kill.
    let requests = log.lock().unwrap().requests.clone();
    let failed = requests.iter().filter(|r| r.status != 200).count();
    assert!(
        failed * 5 >= requests.len(),
        "{failed} of {} failed",
        requests.len()
    );
    let stored = stored_passes(&server_log, started);
    for n in 1..=FAILING_CHAPTERS {
        // The review and polish passes see the chapter's draft, translated.
        let markers = [format!("Marker{n} "), format!("Màrkér{n} ")];
        // The book's first chapter is the text before "Chapter 1", its title.
        let chapter = n as u64 + 1;
        for (pass, task) in (1..).zip(["translate", "review", "polish"]) {
            let paid: Vec<&Seen> = requests
                .iter()
                .filter(|r| {
                    r.status == 200
                        && !is_term_list(&r.user)
                        && r.user.starts_with(&format!("TASK: {task}\n"))
                        && markers.iter().any(|m| r.user.contains(m))
                })
                .collect();
            assert!(
                !paid.is_empty(),
                "chapter {n}: the {task} pass was never paid for"
            );
            // Paid again only if the earlier request was cut short by a kill: its server gone
            // before the answer (a request sent just before a kill can reach the stand-in
            // after it), or killed after it arrived and before the server logged the pass
            // stored.
            for pair in paid.windows(2) {
                let stored_before = |kill: &Instant| {
                    stored.iter().any(|p| {
                        p.chapter == chapter
                            && p.pass == pass
                            && p.at > pair[0].arrived
                            && p.at < *kill
                    })
                };
                let ms = |at: &Instant| at.saturating_duration_since(started).as_millis();
                assert!(
                    pair[0].answered.is_none()
                        || kills
                            .iter()
                            .any(|k| *k > pair[0].arrived && !stored_before(k)),
                    "chapter {n}: the {task} pass was paid for twice, and no kill came while \
                     the first was in flight (in ms since the start: paid at {:?}, logged \
                     stored at {:?}, kills at {:?})",
                    paid.iter().map(|r| ms(&r.arrived)).collect::<Vec<_>>(),
                    stored
                        .iter()
                        .filter(|p| p.chapter == chapter && p.pass == pass)
                        .map(|p| ms(&p.at))
                        .collect::<Vec<_>>(),
                    kills.iter().map(ms).collect::<Vec<_>>(),
                );
            }
        }
    }
    server.start_kill().unwrap();
}
