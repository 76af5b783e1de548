//! The web app in a real browser: Debian's Chromium driven through WebDriver (`chromedriver`,
//! installed by `scripts/test.sh`), with the scripts of the pages running. A new user's walk,
//! every page checked by axe-core (pinned, from npm, injected into the page) for WCAG 2.1 A and
//! AA, and screenshots at desktop and phone widths under `target/screenshots/web-app/`.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::helpers::{corpus, epubcheck, spawn_app};

const DESKTOP: (u32, u32) = (1200, 900);
const PHONE: (u32, u32) = (390, 844);

/// One browser, through a chromedriver of its own.
struct Browser {
    http: reqwest::Client,
    session: String,
    driver: Child,
}

impl Browser {
    async fn start() -> Browser {
        let port = {
            let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            socket.local_addr().unwrap().port()
        };
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is installed by scripts/test.sh (Debian's chromium-driver)");
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        for _ in 0..100 {
            if http.get(format!("{base}/status")).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                // As root in a container: no sandbox, no reliance on a small /dev/shm. Loopback
                // bypasses the proxy; anything else (a CDN) would fail to load.
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--proxy-server=http://127.0.0.1:9", "--hide-scrollbars"]
            }
        }}});
        let created: Value = http
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"));
        Browser {
            http,
            session: format!("{base}/session/{session}"),
            driver,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        if answer["value"]["error"].is_string() {
            panic!("WebDriver {path}: {}", answer["value"]);
        }
        answer["value"].clone()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn go(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await;
    }

    async fn url(&self) -> String {
        let url = self.call(reqwest::Method::GET, "/url", None).await;
        url.as_str().unwrap().to_string()
    }

    async fn element(&self, css: &str) -> String {
        let found = self
            .post("/element", json!({ "using": "css selector", "value": css }))
            .await;
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    }

    /// Replaces the field's value (file inputs take a path).
    async fn fill(&self, css: &str, text: &str) {
        let id = self.element(css).await;
        if !css.contains("file") {
            self.post(&format!("/element/{id}/clear"), json!({})).await;
        }
        self.post(&format!("/element/{id}/value"), json!({ "text": text }))
            .await;
    }

    async fn click(&self, css: &str) {
        let id = self.element(css).await;
        self.post(&format!("/element/{id}/click"), json!({})).await;
    }

    async fn script(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": [] }))
            .await
    }

    async fn page_text(&self) -> String {
        let text = self.script("return document.body.innerText;").await;
        text.as_str().unwrap_or_default().to_string()
    }

    /// Waits up to a minute for the page (reloaded by its own script) to show `text`.
    async fn wait_for_text(&self, text: &str) {
        for _ in 0..600 {
            if self.page_text().await.contains(text) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the page never showed {text:?}: {}", self.page_text().await);
    }

    /// Waits up to a minute for the book page's own status (not a chapter's, which reads the
    /// same words earlier) to be `status`.
    async fn wait_for_book_status(&self, status: &str) {
        let read = "return document.querySelector('#state + p [data-field=status]')?.textContent;";
        for _ in 0..600 {
            if self.script(read).await.as_str() == Some(status) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the book never was {status}: {}", self.page_text().await);
    }

    /// Waits up to ten seconds for the browser to be at `url`, fragment aside (a form's answer
    /// is loading).
    async fn wait_for_url(&self, url: &str) {
        for _ in 0..100 {
            if self.url().await.split('#').next() == Some(url) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the browser never reached {url}: {}", self.url().await);
    }

    async fn session_cookie(&self) -> String {
        let cookie = self
            .call(reqwest::Method::GET, "/cookie/auth.session-token", None)
            .await;
        format!("auth.session-token={}", cookie["value"].as_str().unwrap())
    }

    async fn resize(&self, (width, height): (u32, u32)) {
        self.post("/window/rect", json!({ "width": width, "height": height }))
            .await;
    }

    /// axe-core's WCAG 2.0 and 2.1 A and AA violations on this page, at desktop and phone
    /// widths, with a screenshot of each.
    async fn check_page(&self, name: &str) {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
        std::fs::create_dir_all(&dir).unwrap();
        let axe =
            std::fs::read_to_string(axe_path()).expect("axe-core is installed by scripts/test.sh");
        let html = self
            .script("return document.documentElement.outerHTML.length;")
            .await;
        assert!(
            html.as_u64().unwrap() < 100_000,
            "{name}: {html} characters of HTML"
        );
        for (size, label) in [(DESKTOP, "desktop"), (PHONE, "phone")] {
            self.resize(size).await;
            self.script(&axe).await;
            let violations = self
                .post(
                    "/execute/async",
                    json!({ "script": "const done = arguments[arguments.length - 1]; \
                        axe.run(document, { runOnly: { type: 'tag', values: \
                        ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }) \
                        .then(r => done(r.violations.map(v => ({ id: v.id, nodes: \
                        v.nodes.map(n => n.target.join(' ')) }))));", "args": [] }),
                )
                .await;
            assert_eq!(violations, json!([]), "{name} at {label} width");
            let shot = self.call(reqwest::Method::GET, "/screenshot", None).await;
            let png = base64::engine::general_purpose::STANDARD
                .decode(shot.as_str().unwrap())
                .unwrap();
            std::fs::write(dir.join(format!("{name}-{label}.png")), png).unwrap();
        }
        self.resize(DESKTOP).await;
    }
}

impl Drop for Browser {
    /// Ends the WebDriver session first, so chromedriver closes Chromium: killed alone, the
    /// driver would leave the browser's processes running after the test, passed or failed.
    fn drop(&mut self) {
        end_session(&self.session);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// `DELETE` on the session's address (`http://127.0.0.1:PORT/session/ID`), blocking: a drop
/// cannot wait on the async client. Best effort, within a few seconds.
fn end_session(session: &str) {
    use std::io::{Read, Write};
    let Some((host, path)) = session
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once('/'))
    else {
        return;
    };
    let Ok(mut stream) = std::net::TcpStream::connect(host) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let request = format!(
        "DELETE /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_ok() {
        let _ = stream.read_to_end(&mut Vec::new());
    }
}

fn axe_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/axe/node_modules/axe-core/axe.min.js")
}

#[tokio::test]
async fn a_new_user_walks_the_web_app_in_a_real_browser_with_no_accessibility_violation() {
    let app = spawn_app().await;
    let receiver = crate::webhooks::Receiver::start(200).await;
    let browser = Browser::start().await;
    let site = &app.url;

    // Signs up.
    browser.go(&format!("{site}/signup")).await;
    browser.check_page("signup").await;
    browser.fill("#email", "walker@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    browser.check_page("library-empty").await;

    // Uploads a corpus book (the page's script sends it straight to storage).
    let dir = tempfile::TempDir::new().unwrap();
    let book = dir.path().join("wasteland.epub");
    std::fs::write(&book, corpus("wasteland.epub")).unwrap();
    browser.fill("#file", book.to_str().unwrap()).await;
    browser.fill("#targetLang", "fr").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    let page = browser.url().await;
    assert!(
        page.starts_with(&format!("{site}/dashboard/books/")),
        "{page}"
    );
    browser.check_page("book-extracted").await;

    // Sees the quote, starts, and the page follows the run to COMPLETED.
    assert!(browser.page_text().await.contains("offline-pseudo"));
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    browser.check_page("book-completed").await;

    // Shares it and opens the reader.
    browser
        .click("form[action$='/share'] button[type=submit]")
        .await;
    browser.wait_for_text("Anyone with this link").await;
    let link = browser
        .script("return document.getElementById('share-url').href;")
        .await;
    browser.go(link.as_str().unwrap()).await;
    browser.wait_for_text("The Waste Land").await;
    browser.check_page("reader").await;

    // The owner's own reader.
    browser.go(&format!("{page}/read?chapter=2")).await;
    browser.wait_for_text("THE BURIAL OF THE DEAD").await;
    browser.check_page("owner-reader").await;

    // Downloads the EPUB through the page's link, as the signed-in browser.
    browser.go(&page).await;
    let href = browser
        .script("return document.querySelector('a[href$=\"format=epub\"]').href;")
        .await;
    let cookie = browser.session_cookie().await;
    let epub = reqwest::Client::new()
        .get(href.as_str().unwrap())
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(epub.status(), 200);
    epubcheck(&epub.bytes().await.unwrap());
    browser.go(&format!("{site}/dashboard")).await;
    browser.check_page("library").await;

    // Makes an API key, uses it, revokes it.
    browser.go(&format!("{site}/dashboard/settings")).await;
    browser.check_page("settings").await;
    browser.fill("#key-name", "walk").await;
    browser
        .click("form[action='/dashboard/settings/keys'] button[type=submit]")
        .await;
    browser.wait_for_text("it is shown this once").await;
    let secret = browser
        .script("return document.getElementById('new-key').textContent;")
        .await;
    let secret = secret.as_str().unwrap().to_string();
    browser.check_page("settings-new-key").await;
    assert_eq!(app.get("/api/user", &secret).await.status(), 200);
    browser
        .click("form[action$='/revoke'] button[type=submit]")
        .await;
    browser.wait_for_text("No API keys.").await;
    assert_eq!(app.get("/api/user", &secret).await.status(), 401);

    // Adds a webhook and sends a test.
    browser.fill("#webhook-url", &receiver.url).await;
    browser
        .click("form[action='/dashboard/settings/webhooks'] button[type=submit]")
        .await;
    browser.wait_for_text("whsec_").await;
    browser
        .click("form[action$='/test'] button[type=submit]")
        .await;
    browser.wait_for_text("Test delivered").await;
    assert_eq!(receiver.hits().len(), 1);

    // The other pages of the app.
    for (path, name) in [
        ("/dashboard/notifications", "notifications"),
        ("/dashboard/glossaries", "glossaries"),
        ("/dashboard/posts", "posts"),
        ("/dashboard/posts/new", "post-new"),
        ("/forgot", "forgot"),
        ("/reset?token=a.b", "reset"),
    ] {
        browser.go(&format!("{site}{path}")).await;
        browser.check_page(name).await;
    }

    // Exports, then closes the account.
    let export = reqwest::Client::new()
        .get(format!("{site}/api/user/export"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), 200);
    let export: Value = export.json().await.unwrap();
    assert_eq!(export["books"].as_array().unwrap().len(), 1);
    browser.go(&format!("{site}/dashboard/settings")).await;
    browser.fill("#confirmation", "DELETE MY ACCOUNT").await;
    browser
        .click("form[action='/dashboard/settings/close'] button[type=submit]")
        .await;
    browser.wait_for_url(&format!("{site}/")).await;
    browser.go(&format!("{site}/dashboard")).await;
    assert!(browser.url().await.starts_with(&format!("{site}/signin")));
    browser.check_page("signin").await;
}

#[tokio::test]
async fn the_community_and_administration_pages_have_no_accessibility_violation() {
    use booktr_core::types::{Email, Plan, Role};
    let app = spawn_app().await;
    app.services
        .accounts
        .create_user(booktr_core::accounts::NewUser {
            email: Email::parse("root@example.com").unwrap(),
            name: Some("Root".into()),
            password: Some("a long password".into()),
            role: Role::SuperAdmin,
            plan: Plan::Business,
        })
        .await
        .unwrap();
    let browser = Browser::start().await;
    let site = &app.url;
    browser.go(&format!("{site}/signin")).await;
    browser.fill("#email", "root@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;

    browser.go(&format!("{site}/dashboard/posts/new")).await;
    browser.fill("#p-title", "Rendered whales").await;
    browser
        .fill("#p-content", "Some *Markdown*, previewed.")
        .await;
    browser.click("button[value=preview]").await;
    browser.wait_for_text("previewed.").await;
    browser.check_page("post-preview").await;
    browser.click("button[value=publish]").await;
    let public = format!("{site}/comunidad/rendered-whales");
    for _ in 0..100 {
        if reqwest::get(&public).await.unwrap().status() == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    browser
        .go(&format!("{site}/dashboard/community/rendered-whales"))
        .await;
    browser.check_page("discussion").await;
    browser
        .fill("#new-comment", "A comment waiting for a moderator.")
        .await;
    browser.click("form.card button[type=submit]").await;
    browser
        .wait_for_url(&format!("{site}/dashboard/community/rendered-whales"))
        .await;
    // An administrator's comment needs no moderation; a new reader's waits for it.
    browser.wait_for_text("A comment waiting").await;
    let reader = app.user_with(Plan::Free, Role::User).await;
    let reader = app.services.accounts.user(&reader.id).await.unwrap();
    app.services
        .community
        .add_comment(
            &reader,
            booktr_core::community::NewComment {
                content: "A reader's comment to moderate.".into(),
                post_id: None,
                post_slug: Some("rendered-whales".into()),
                parent_id: None,
                mood: None,
            },
        )
        .await
        .unwrap();
    browser.go(&format!("{site}/admin")).await;
    browser.wait_for_text("A reader's comment").await;
    browser.check_page("moderation").await;
    browser.go(&format!("{site}/admin/email")).await;
    browser.check_page("email-settings").await;
}

#[tokio::test]
async fn a_return_address_to_another_site_keeps_a_real_browser_on_this_site() {
    use booktr_core::types::{Email, Plan, Role};
    let app = spawn_app().await;
    app.services
        .accounts
        .create_user(booktr_core::accounts::NewUser {
            email: Email::parse("traveller@example.com").unwrap(),
            name: None,
            password: Some("a long password".into()),
            role: Role::User,
            plan: Plan::Free,
        })
        .await
        .unwrap();
    let browser = Browser::start().await;
    let site = &app.url;
    // Chromium drops the tab of `/\t/evil.example` and reads a backslash as a slash: either
    // address, followed as sent, leads to evil.example (which the browser's dead proxy shows as
    // an error page there).
    for back in [
        "/%09/evil.example",
        "/%5Cevil.example",
        "/%0A/evil.example",
        "%2F%2Fevil.example",
        "/..//evil.example",
    ] {
        browser
            .go(&format!("{site}/language?to=en&back={back}"))
            .await;
        // The dashboard, which sends a visitor to sign in.
        assert_eq!(
            browser.url().await,
            format!("{site}/signin?next=%2Fdashboard"),
            "{back}"
        );
    }

    browser
        .go(&format!("{site}/signin?next=/%09/evil.example"))
        .await;
    browser.fill("#email", "traveller@example.com").await;
    browser.fill("#password", "a long password").await;
    let next = "return document.querySelector('input[name=next]').value;";
    assert_eq!(browser.script(next).await, json!("/dashboard"));
    // A forged form carries the hostile address itself.
    browser
        .script("document.querySelector('input[name=next]').value = '/\\t/evil.example';")
        .await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
}
