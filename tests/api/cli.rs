use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::helpers::TestApp;

const BOOKTR: &str = env!("CARGO_BIN_EXE_booktr");

#[tokio::test]
async fn user_create_prints_the_user_and_a_key_that_works() {
    let app = TestApp::new().with_workers().start().await;
    let output = Command::new(BOOKTR)
        .args([
            "user",
            "create",
            "--email",
            "Writer@Example.com",
            "--name",
            "Writer",
            "--role",
            "DEV",
            "--plan",
            "PRO",
            "--data",
        ])
        .arg(app.data.path())
        .env("BOOKTR_LOG", "warn")
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["user"]["email"], "writer@example.com");
    assert_eq!(
        (
            printed["user"]["role"].as_str(),
            printed["user"]["plan"].as_str()
        ),
        (Some("DEV"), Some("PRO"))
    );
    let key = printed["apiKey"].as_str().unwrap();
    let me: Value = app.get("/api/user", key).await.json().await.unwrap();
    assert_eq!(me["id"], printed["user"]["id"]);
}

#[tokio::test]
async fn user_create_refuses_bad_arguments_with_a_message() {
    let data = tempfile::TempDir::new().unwrap();
    let output = Command::new(BOOKTR)
        .args([
            "user", "create", "--email", "x@y.z", "--role", "KING", "--data",
        ])
        .arg(data.path())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--role"));
}

/// The README's first command: `booktr serve` on an empty directory creates an administrator,
/// prints its key once, serves the API with it, and prints no key on the next start.
#[tokio::test]
async fn serve_prints_an_admin_key_on_first_start_only() {
    let data = tempfile::TempDir::new().unwrap();
    for first in [true, false] {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(BOOKTR)
            .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data"])
            .arg(data.path())
            .env("BOOKTR_LOG", "warn")
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut key = None;
        let ready = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(k) = line.split_whitespace().find(|w| w.starts_with("bt_")) {
                    key.get_or_insert_with(|| k.trim_matches('\'').to_string());
                }
                if line.starts_with("booktr is serving") {
                    return;
                }
            }
        })
        .await;
        assert!(ready.is_ok(), "booktr serve did not report readiness");
        let url = format!("http://127.0.0.1:{port}");
        if first {
            let key = key.expect("a key on the first start");
            let me: Value = reqwest::Client::new()
                .get(format!("{url}/api/user"))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(me["role"], "SUPER_ADMIN");
        } else {
            assert!(key.is_none(), "the key is shown only once");
            let health = reqwest::get(format!("{url}/api/health")).await.unwrap();
            assert_eq!(health.status(), 200);
        }
        // SIGTERM: the server shuts down gracefully and releases the data directory.
        let pid = child.id().unwrap();
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "graceful shutdown exits 0: {status}");
    }
}

#[tokio::test]
async fn a_second_server_on_the_same_data_directory_refuses_to_start() {
    let data = tempfile::TempDir::new().unwrap();
    let _lock = booktr_local::DataDirLock::acquire(data.path()).unwrap();
    let output = Command::new(BOOKTR)
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data.path())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("in use by another booktr process"));
}

#[tokio::test]
async fn serve_on_a_busy_port_fails_before_it_makes_the_administrator_key() {
    let data = tempfile::TempDir::new().unwrap();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let output = Command::new(BOOKTR)
        .args(["serve", "--addr", &addr, "--data"])
        .arg(data.path())
        .env("BOOKTR_LOG", "warn")
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(!output.status.success());
    assert!(stderr.contains("cannot listen on"), "{stderr}");
    assert!(
        !stdout.contains("bt_"),
        "no key is shown for nothing: {stdout}"
    );
    drop(busy);
    // A lost administrator key is replaced the way the README says.
    let again = Command::new(BOOKTR)
        .args([
            "user",
            "create",
            "--email",
            "second@example.com",
            "--role",
            "SUPER_ADMIN",
            "--data",
        ])
        .arg(data.path())
        .output()
        .await
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let printed: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(printed["user"]["role"], "SUPER_ADMIN");
    assert!(printed["apiKey"].as_str().unwrap().starts_with("bt_"));
}

/// The README's translate command, offline: a translated EPUB that epubcheck accepts, with the
/// glossary applied and the cost and quality summary printed. Language identification is said
/// not to apply (the pseudo-translation keeps the source's words), in the summary and in the
/// JSON report, rather than counting 0% of the blocks in the target language.
#[tokio::test]
async fn translate_writes_an_epub_that_epubcheck_accepts_with_the_glossary_applied() {
    let dir = tempfile::TempDir::new().unwrap();
    let glossary = dir.path().join("glossary.csv");
    std::fs::write(&glossary, "source,target\nApril,Abril\n").unwrap();
    let out = dir.path().join("wasteland.es.epub");
    let report = dir.path().join("report.json");
    let corpus = crate::helpers::corpus_path("wasteland.epub");
    let output = Command::new(BOOKTR)
        .args(["translate"])
        .arg(&corpus)
        .args(["--to", "es", "--glossary"])
        .arg(&glossary)
        .arg("--out")
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .env_remove("OPENAI_API_KEY")
        .env("BOOKTR_LOG", "warn")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("offline pseudo-translation"), "{stdout}");
    assert!(
        stdout.contains("Glossary: 1 of 1 uses follow the glossary (100.0%)"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "Language identification: not applicable (offline pseudo-translation)"),
        "{stdout}"
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["offline"], true, "{report}");
    assert!(report["blocks"].as_u64().unwrap() > 0, "{report}");
    for field in [
        "judged",
        "inTarget",
        "inSource",
        "inOther",
        "silentlyInSource",
    ] {
        assert!(report[field].is_null(), "{field}: {report}");
    }
    crate::helpers::epubcheck(&std::fs::read(&out).unwrap());
    let translated = booktr_formats::epub::extract(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(translated.language.as_deref(), Some("es"));
    assert!(translated
        .chapters
        .iter()
        .any(|c| c.plain_text().contains("Abril")));
}

/// `booktr translate book.md --format markdown` writes the translated Markdown beside the book;
/// the same format for an EPUB is refused, saying why.
#[tokio::test]
async fn translate_writes_a_markdown_book_as_markdown_and_refuses_markdown_for_an_epub() {
    let dir = tempfile::TempDir::new().unwrap();
    let book = dir.path().join("voyage.md");
    std::fs::write(&book, crate::helpers::fixture("voyage.md")).unwrap();
    let output = Command::new(BOOKTR)
        .current_dir(dir.path())
        .args([
            "translate",
            "voyage.md",
            "--to",
            "es",
            "--format",
            "markdown",
        ])
        .env_remove("OPENAI_API_KEY")
        .env("BOOKTR_LOG", "warn")
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = std::fs::read(dir.path().join("voyage.es.md")).unwrap();
    let read = booktr_formats::markdown::extract(&written).unwrap();
    assert_eq!(read.language.as_deref(), Some("es"));
    assert_eq!(read.chapters.len(), 4);

    let output = Command::new(BOOKTR)
        .current_dir(dir.path())
        .arg("translate")
        .arg(crate::helpers::corpus_path("wasteland.epub"))
        .args(["--to", "es", "--format", "markdown"])
        .env_remove("OPENAI_API_KEY")
        .env("BOOKTR_LOG", "warn")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("only from a Markdown book"), "{stderr}");
}

/// `booktr translate` against a provider (a local stand-in): the book-wide term pass, chapters
/// in parallel, and `--max-cost` stopping before the cost would pass the cap.
#[tokio::test]
async fn translate_in_parallel_stops_before_passing_its_cost_cap() {
    let (openai, calls) = crate::stand_ins::openai_stand_in(Duration::from_millis(5)).await;
    let dir = tempfile::TempDir::new().unwrap();
    let corpus = crate::helpers::corpus_path("wasteland.epub");
    let translate = |out: &str, extra: &[&str]| {
        let mut command = Command::new(BOOKTR);
        command
            .args(["translate"])
            .arg(&corpus)
            .args(["--to", "es", "--model", "gpt-4o", "--out"])
            .arg(dir.path().join(out))
            .args(extra)
            .env("OPENAI_API_KEY", "sk-stand-in")
            .env("OPENAI_BASE_URL", &openai)
            .env("BOOKTR_LOG", "warn");
        command
    };
    let refused = translate("x.epub", &["--parallel", "0"])
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--parallel"));

    let report = dir.path().join("full.json");
    let report_arg = report.to_str().unwrap();
    let full = translate("full.epub", &["--parallel", "4", "--report", report_arg])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&full.stdout).to_string();
    assert!(full.status.success(), "{stdout}");
    assert!(stdout.contains("names and terms listed"), "{stdout}");
    // A provider's translation is judged by language identification, in the summary and in
    // the report.
    let judged = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Language identification: "))
        .unwrap_or_else(|| panic!("no language identification in {stdout}"));
    assert!(
        judged.contains("blocks long enough to judge are in es"),
        "{stdout}"
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["offline"], false, "{report}");
    assert!(report["judged"].as_u64().unwrap() > 0, "{report}");
    assert!(report["inTarget"].is_u64(), "{report}");
    assert!(calls
        .all()
        .iter()
        .any(|u| crate::stand_ins::is_term_list(u)));
    let cost: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Estimated cost: $"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no cost in {stdout}"));
    assert!(cost > 0.0, "{stdout}");

    let cap = cost / 2.0;
    let capped = translate("capped.epub", &["--max-cost", &format!("{cap}")])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&capped.stdout).to_string();
    let stderr = String::from_utf8_lossy(&capped.stderr).to_string();
    assert!(!capped.status.success(), "{stdout}");
    assert!(
        stderr.contains("stopped before passing --max-cost"),
        "{stderr}"
    );
    let spent: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Estimated cost: $"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no cost in {stdout}"));
    assert!(
        spent > 0.0 && spent <= cap,
        "spent {spent} of a cap of {cap}"
    );
    // What was paid for is kept: the chapters finished are in the file, translated; the
    // others keep their source.
    let read = |path: &std::path::Path| {
        booktr_formats::epub::extract(&std::fs::read(path).unwrap()).unwrap()
    };
    let (source, partial) = (read(&corpus), read(&dir.path().join("capped.epub")));
    let translated = source
        .chapters
        .iter()
        .zip(&partial.chapters)
        .filter(|(s, p)| s.plain_text() != p.plain_text())
        .count();
    assert!(
        translated > 0 && translated < source.chapters.len(),
        "{translated} of {} chapters translated",
        source.chapters.len()
    );
}
