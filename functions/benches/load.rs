//! Throughput and latency under concurrent load: the release `booktr serve` (embedded SQLite, its
//! workers running) against a bare axum handler, each in its own process on this machine, driven
//! by the same load generator (C keep-alive connections for D seconds after a 2-second warm-up).
//! Every booktr request carries a DEV user's key, as DEV is never rate-limited, so the figures
//! measure the API rather than the limiter. Prints one table with each route's throughput as a
//! share of the bare handler's; exits non-zero if any request failed (transport error or non-2xx).
//!
//! `LOAD_CONNECTIONS=32 LOAD_SECONDS=10 cargo bench -p booktr-functions --bench load`

use std::io::BufRead;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use reqwest::header::AUTHORIZATION;
use serde_json::Value;

/// Set (to the address to listen on) when the bench re-executes itself as the bare server.
const BARE_ENV: &str = "LOAD_BENCH_BARE";
const WARM_UP: Duration = Duration::from_secs(2);
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A child process killed (and reaped) when dropped, also while a panic unwinds.
struct ChildGuard {
    name: &'static str,
    child: Child,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Err(e) = self.child.kill() {
            eprintln!("could not kill {}: {e}", self.name);
        }
        let _ = self.child.wait();
    }
}

/// One measured endpoint.
struct Target {
    name: &'static str,
    url: String,
    key: Option<String>,
}

#[derive(Default)]
struct Stats {
    /// Latency in microseconds of every successful request in the measured window.
    latencies: Vec<u64>,
    /// Failed requests in the measured window.
    errors: usize,
    /// Failed requests during the warm-up.
    warm_up_errors: usize,
    first_error: Option<String>,
}

impl Stats {
    fn merge(&mut self, other: Stats) {
        self.latencies.extend(other.latencies);
        self.errors += other.errors;
        self.warm_up_errors += other.warm_up_errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

fn main() -> anyhow::Result<()> {
    if let Ok(addr) = std::env::var(BARE_ENV) {
        return serve_bare(&addr);
    }
    let connections = env_number("LOAD_CONNECTIONS", 32)?;
    let seconds = env_number("LOAD_SECONDS", 10)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let failed = runtime.block_on(run(connections, Duration::from_secs(seconds as u64)))?;
    if failed > 0 {
        bail!("{failed} requests failed");
    }
    Ok(())
}

fn env_number(name: &str, default: usize) -> anyhow::Result<usize> {
    match std::env::var(name) {
        Ok(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => bail!("{name}={raw:?}: expected a positive whole number"),
        },
        Err(_) => Ok(default),
    }
}

/// The bare server: one handler answering a small JSON body, on a multi-thread runtime like
/// `booktr serve`'s.
fn serve_bare(addr: &str) -> anyhow::Result<()> {
    let addr: SocketAddr = addr.parse().context("bare server address")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }),
        );
        let listener = tokio::net::TcpListener::bind(addr).await?;
        axum::serve(listener, app).await?;
        anyhow::Ok(())
    })
}

fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

async fn run(connections: usize, duration: Duration) -> anyhow::Result<usize> {
    let booktr = env!("CARGO_BIN_EXE_booktr");
    let data = tempfile::TempDir::new()?;
    let data_dir = data.path().join("data");
    let log_path = data.path().join("serve.log");

    // The user, made before the server starts (the CLI opens the data directory itself).
    let created = Command::new(booktr)
        .args(["user", "create", "--email", "load@example.com"])
        .args(["--role", "DEV", "--plan", "BUSINESS", "--data"])
        .arg(&data_dir)
        .env("BOOKTR_LOG", "warn")
        .stderr(Stdio::inherit())
        .output()
        .context("running booktr user create")?;
    if !created.status.success() {
        bail!("booktr user create failed: {}", created.status);
    }
    let key = created
        .stdout
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .find_map(|v| v["apiKey"].as_str().map(str::to_string))
        .context("no apiKey in the output of booktr user create")?;

    let booktr_addr = free_port()?;
    let booktr_url = format!("http://{booktr_addr}");
    let log = std::fs::File::create(&log_path)?;
    let _serve = ChildGuard {
        name: "booktr serve",
        child: Command::new(booktr)
            .arg("serve")
            .env("BOOKTR_DATA_DIR", &data_dir)
            .env("BOOKTR_ADDR", booktr_addr.to_string())
            .env("BOOKTR_PUBLIC_URL", &booktr_url)
            .env("BOOKTR_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting booktr serve")?,
    };
    let bare_addr = free_port()?;
    let bare_url = format!("http://{bare_addr}/");
    let _bare = ChildGuard {
        name: "bare server",
        child: Command::new(std::env::current_exe()?)
            .env(BARE_ENV, bare_addr.to_string())
            .stdin(Stdio::null())
            .spawn()
            .context("starting the bare server")?,
    };

    let client = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(connections * 2)
        .timeout(Duration::from_secs(30))
        .build()?;
    let health = format!("{booktr_url}/api/health");
    wait_ready(&client, &health, Some(&key), &log_path).await?;
    wait_ready(&client, &bare_url, None, &log_path).await?;
    let book_id = upload_book(&client, &booktr_url, &key).await?;

    let targets = [
        Target {
            name: "bare axum GET /",
            url: bare_url,
            key: None,
        },
        Target {
            name: "GET /api/health",
            url: health,
            key: Some(key.clone()),
        },
        Target {
            name: "GET /api/books",
            url: format!("{booktr_url}/api/books"),
            key: Some(key.clone()),
        },
        Target {
            name: "GET /api/translate/status",
            url: format!("{booktr_url}/api/translate/status?bookId={book_id}"),
            key: Some(key.clone()),
        },
    ];

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "load: {cores} cores (shared by the servers and the load generator), {connections} \
         connections, {}s per target after a {}s warm-up",
        duration.as_secs(),
        WARM_UP.as_secs()
    );
    let mut rows = Vec::new();
    for target in &targets {
        let stats = measure(&client, target, connections, duration).await;
        rows.push((target.name, stats));
    }

    println!();
    println!(
        "{:<28} {:>9} {:>10} {:>9} {:>9} {:>7} {:>8}",
        "target", "requests", "req/s", "p50 ms", "p99 ms", "errors", "vs bare"
    );
    let bare_rate = rows.first().map_or(0.0, |(_, s)| {
        s.latencies.len() as f64 / duration.as_secs_f64()
    });
    let mut failed = 0;
    for (i, (name, stats)) in rows.iter_mut().enumerate() {
        stats.latencies.sort_unstable();
        let rate = stats.latencies.len() as f64 / duration.as_secs_f64();
        let ratio = if i == 0 || bare_rate == 0.0 {
            "-".to_string()
        } else {
            format!("{:.2}", rate / bare_rate)
        };
        println!(
            "{:<28} {:>9} {:>10.0} {:>9.2} {:>9.2} {:>7} {:>8}",
            name,
            stats.latencies.len() + stats.errors,
            rate,
            percentile_ms(&stats.latencies, 0.50),
            percentile_ms(&stats.latencies, 0.99),
            stats.errors,
            ratio
        );
        failed += stats.errors + stats.warm_up_errors;
    }
    for (name, stats) in &rows {
        if stats.warm_up_errors > 0 {
            println!("{name}: {} failed during the warm-up", stats.warm_up_errors);
        }
        if let Some(error) = &stats.first_error {
            println!("{name}: first failure: {error}");
        }
    }
    if failed > 0 {
        println!("(booktr's log: {})", log_path.display());
        // Keep the log for a look: the temporary directory would otherwise go with it.
        let _ = data.keep();
    }
    Ok(failed)
}

fn percentile_ms(sorted_micros: &[u64], p: f64) -> f64 {
    if sorted_micros.is_empty() {
        return 0.0;
    }
    let index = ((sorted_micros.len() as f64 - 1.0) * p).round() as usize;
    sorted_micros
        .get(index.min(sorted_micros.len() - 1))
        .map_or(0.0, |&us| us as f64 / 1000.0)
}

/// Polls `url` until it answers 2xx.
async fn wait_ready(
    client: &reqwest::Client,
    url: &str,
    key: Option<&str>,
    log: &Path,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let mut request = client.get(url);
        if let Some(key) = key {
            request = request.header(AUTHORIZATION, format!("Bearer {key}"));
        }
        if let Ok(response) = request.send().await {
            if response.status().is_success() {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            let tail = std::fs::read_to_string(log).unwrap_or_default();
            bail!("{url} not ready after {READY_TIMEOUT:?}; booktr's log:\n{tail}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Uploads a small TXT book and waits for its extraction; the book's id.
async fn upload_book(client: &reqwest::Client, base: &str, key: &str) -> anyhow::Result<String> {
    let text = "The Voyage\n\nA preface of seven words stands here.\n\n\
        CHAPTER I. Loomings\n\nCall me Ishmael. Some years ago I went to sea.\n\n\
        CHAPTER II. The Carpet-Bag\n\nI stuffed a shirt or two into my old carpet-bag.\n";
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name("book.txt"),
    );
    let response = client
        .post(format!("{base}/api/upload"))
        .header(AUTHORIZATION, format!("Bearer {key}"))
        .multipart(form)
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await?;
    if !status.is_success() {
        bail!("upload answered {status}: {body}");
    }
    let id = body["book"]["id"]
        .as_str()
        .context("no book id in the upload's answer")?
        .to_string();
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let book: Value = client
            .get(format!("{base}/api/books/{id}"))
            .header(AUTHORIZATION, format!("Bearer {key}"))
            .send()
            .await?
            .json()
            .await?;
        match book["status"].as_str() {
            Some("UPLOADED" | "EXTRACTING") => {}
            Some("ERROR") => bail!("the book's extraction failed: {book}"),
            Some(_) => return Ok(id),
            None => bail!("no status in the book: {book}"),
        }
        if Instant::now() > deadline {
            bail!("the book was not extracted after {READY_TIMEOUT:?}: {book}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `connections` loops of keep-alive requests: a warm-up, then `duration` measured.
async fn measure(
    client: &reqwest::Client,
    target: &Target,
    connections: usize,
    duration: Duration,
) -> Stats {
    let start = Instant::now();
    let measured_from = start + WARM_UP;
    let end = measured_from + duration;
    let auth = target.key.as_ref().map(|key| format!("Bearer {key}"));
    let url: Arc<str> = target.url.as_str().into();
    let mut tasks = Vec::with_capacity(connections);
    for _ in 0..connections {
        let client = client.clone();
        let url = url.clone();
        let auth = auth.clone();
        tasks.push(tokio::spawn(async move {
            let mut stats = Stats::default();
            loop {
                let sent = Instant::now();
                if sent >= end {
                    break;
                }
                let mut request = client.get(&*url);
                if let Some(auth) = &auth {
                    request = request.header(AUTHORIZATION, auth);
                }
                let outcome = match request.send().await {
                    Ok(response) => {
                        let status = response.status();
                        match response.bytes().await {
                            Ok(_) if status.is_success() => Ok(()),
                            Ok(body) => Err(format!(
                                "{status}: {}",
                                String::from_utf8_lossy(&body[..body.len().min(300)])
                            )),
                            Err(e) => Err(format!("reading the body: {e}")),
                        }
                    }
                    Err(e) => Err(format!("{e}")),
                };
                let elapsed = sent.elapsed();
                let in_window = sent >= measured_from;
                match outcome {
                    Ok(()) if in_window => stats.latencies.push(elapsed.as_micros() as u64),
                    Ok(()) => {}
                    Err(error) => {
                        if in_window {
                            stats.errors += 1;
                        } else {
                            stats.warm_up_errors += 1;
                        }
                        stats.first_error.get_or_insert(error);
                    }
                }
            }
            stats
        }));
    }
    let mut total = Stats::default();
    for task in tasks {
        match task.await {
            Ok(stats) => total.merge(stats),
            Err(e) => {
                total.errors += 1;
                total.first_error.get_or_insert(format!("load task: {e}"));
            }
        }
    }
    total
}
