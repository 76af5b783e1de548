//! The web app in a real browser: Debian's Chromium driven through WebDriver (`chromedriver`,
//! installed by `scripts/test.sh`), with the scripts of the pages running. A new user's walk,
//! every page checked by axe-core (pinned, from npm, injected into the page) for WCAG 2.1 A and
//! AA and for an element wider than the window (no sideways scrolling), at desktop (1280 px) and
//! phone (360 px) widths, with a screenshot of the whole page at each under
//! `target/screenshots/web-app/`.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::helpers::{corpus, epubcheck, eventually, have, TestApp, Tool};

const DESKTOP: (u32, u32) = (1280, 900);
const PHONE: (u32, u32) = (360, 800);
/// The tallest screenshot taken of a page, in CSS pixels.
const SHOT_HEIGHT: u32 = 6000;

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
        eventually(Duration::from_secs(5), || async {
            http.get(format!("{base}/status")).send().await.map(drop)
        })
        .await;
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
        eventually(Duration::from_secs(60), || async {
            let page = self.page_text().await;
            match page.contains(text) {
                true => Ok(()),
                false => Err(format!("the page does not show {text:?}: {page}")),
            }
        })
        .await
    }

    /// Waits up to a minute for the book page's own status (not a chapter's, which reads the
    /// same words earlier) to be `status` (the state's code; the page says it in words).
    async fn wait_for_book_status(&self, status: &str) {
        let read = "return document.querySelector('#state + p [data-field=status]')\
            ?.getAttribute('data-status');";
        // Generous, as `wait_for_status`: it only lasts that long when the test fails.
        eventually(Duration::from_secs(120), || async {
            // The page's polls until it reloads itself (a document just loading has none).
            let polled = self.statuses().await;
            assert_eq!(
                polled["refused"],
                json!([]),
                "the book's page: refused with 429"
            );
            if self.script(read).await.as_str() == Some(status) {
                return Ok(());
            }
            Err(format!(
                "the book is not {status}: {}",
                self.page_text().await
            ))
        })
        .await
    }

    /// Waits up to ten seconds for the browser to be at `url`, fragment aside (a form's answer
    /// is loading).
    async fn wait_for_url(&self, url: &str) {
        eventually(Duration::from_secs(10), || async {
            let at = self.url().await;
            match at.split('#').next() == Some(url) {
                true => Ok(()),
                false => Err(format!("the browser is at {at}, not {url}")),
            }
        })
        .await
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
        self.assert_no_429(name).await;
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
            if violations != json!([]) {
                let text = self.page_text().await;
                let start: String = text.chars().take(300).collect();
                panic!("{name} at {label} width: {violations}\nthe page reads: {start}");
            }
            self.assert_fits(&format!("{name} at {label} width")).await;
            self.photograph(&dir.join(format!("{name}-{label}.png")), size)
                .await;
        }
        self.resize(DESKTOP).await;
    }

    /// The whole page in one picture at `size`'s width: the window as tall as the page, then
    /// `size` again.
    async fn photograph(&self, path: &std::path::Path, size: (u32, u32)) {
        self.resize(size).await;
        let height = self
            .script("return document.documentElement.scrollHeight;")
            .await
            .as_u64()
            .unwrap_or(u64::from(size.1)) as u32;
        self.resize((size.0, height.clamp(size.1, SHOT_HEIGHT)))
            .await;
        let shot = self.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
        self.resize(size).await;
    }

    /// Presses `keys` (WebDriver's codes for Enter, Tab, Control...) in the element that has the
    /// focus, as a person at the keyboard would.
    async fn press(&self, keys: &str) {
        let active = self
            .call(reqwest::Method::GET, "/element/active", None)
            .await;
        let id = active
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        self.post(&format!("/element/{id}/value"), json!({ "text": keys }))
            .await;
    }

    /// What has the focus: its tag, its `value` or `href`, and whether its outline shows.
    async fn focused(&self) -> Value {
        self.script(
            "const e = document.activeElement; const s = getComputedStyle(e); \
             return { tag: e.tagName.toLowerCase(), value: e.value ?? null, \
                      href: e.getAttribute('href'), \
                      outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 };",
        )
        .await
    }

    /// Not one response this document has had (the page itself, its style sheet, script and
    /// icon, its script's live polls) was refused with 429: Chromium keeps each one's status in
    /// the Performance API. A page's own status must be among them, or the check proves nothing.
    async fn assert_no_429(&self, what: &str) {
        let seen = self.statuses().await;
        assert!(
            seen["statuses"].as_u64() > Some(0),
            "{what}: no response status to check: {seen}"
        );
        assert_eq!(seen["refused"], json!([]), "{what}: refused with 429");
    }

    /// How many of this document's responses have a status, and those refused with 429.
    async fn statuses(&self) -> Value {
        self.script(
            "const all = performance.getEntries().filter(e => e.responseStatus > 0); \
             return { statuses: all.length, \
                      refused: all.filter(e => e.responseStatus === 429).map(e => e.name) };",
        )
        .await
    }

    /// Nothing on the page is wider than the window: the page does not scroll sideways, and
    /// no element reaches past the window's right edge unless a box that scrolls or clips
    /// holds it.
    async fn assert_fits(&self, what: &str) {
        let found = self
            .script(
                "const w = document.documentElement.clientWidth; const wide = []; \
                 for (const el of document.querySelectorAll('body *')) { \
                   const r = el.getBoundingClientRect(); \
                   if ((r.width === 0 && r.height === 0) || r.right <= w + 1) continue; \
                   let held = false; \
                   for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) { \
                     if (getComputedStyle(p).overflowX !== 'visible' \
                         && p.getBoundingClientRect().right <= w + 1) { held = true; break; } } \
                   if (!held) wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') \
                     + (typeof el.className === 'string' && el.className \
                        ? '.' + el.className.trim().split(/\\s+/).join('.') : '') \
                     + ' ' + Math.round(r.right) + 'px'); } \
                 return { window: w, page: document.documentElement.scrollWidth, \
                          wide: wide.slice(0, 8) };",
            )
            .await;
        assert!(
            found["page"].as_u64() <= found["window"].as_u64()
                && found["wide"].as_array().is_some_and(Vec::is_empty),
            "{what}: wider than the window: {found}"
        );
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
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
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
    // The book's page, without the choices the upload carried to its quote.
    let page = browser.url().await.split('?').next().unwrap().to_string();
    assert!(
        page.starts_with(&format!("{site}/dashboard/books/")),
        "{page}"
    );
    browser.check_page("book-extracted").await;

    // Sees the quote, starts, and the page follows the run to COMPLETED.
    assert!(browser.page_text().await.contains("offline demo engine"));
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
    let glued = browser
        .script("return document.querySelector('.row.line .lnum')?.textContent;")
        .await;
    assert!(glued.is_string(), "a verse line's number is set apart");
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
    browser.go(&format!("{site}/dashboard/settings/keys")).await;
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
    browser
        .go(&format!("{site}/dashboard/settings/webhooks"))
        .await;
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
    browser.go(&format!("{site}/dashboard/settings/data")).await;
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
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    use booktr_core::types::{Email, Plan, Role};
    let app = TestApp::new().with_workers().start().await;
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
    eventually(Duration::from_secs(10), || async {
        match reqwest::get(&public).await.unwrap().status() {
            reqwest::StatusCode::OK => Ok(()),
            other => Err(format!("{public} answers {other}")),
        }
    })
    .await;
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
    if !have(Tool::ChromeDriver) {
        return;
    }
    use booktr_core::types::{Email, Plan, Role};
    let app = TestApp::new().with_workers().start().await;
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

/// Moby-Dick up to its chapter `last`: the corpus book with the later chapters taken out of its
/// reading order (their files stay, unread), so a FREE plan's 100,000 words cover it.
fn moby_dick_to_chapter(last: u32) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(corpus("moby-dick.epub"))).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let name = archive.by_index_raw(i).unwrap().name().to_string();
        if !name.ends_with(".opf") {
            out.raw_copy_file(archive.by_index_raw(i).unwrap()).unwrap();
            continue;
        }
        let mut opf = String::new();
        archive
            .by_index(i)
            .unwrap()
            .read_to_string(&mut opf)
            .unwrap();
        let kept: Vec<&str> = opf
            .lines()
            .filter(|line| {
                let Some(at) = line.find("idref=\"xchapter_") else {
                    return true;
                };
                let number = &line[at + 16..at + 19];
                number.parse::<u32>().is_ok_and(|n| n <= last)
            })
            .collect();
        let options = zip::write::SimpleFileOptions::default();
        out.start_file(name, options).unwrap();
        out.write_all(kept.join("\n").as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// The chapter the reader's address shows (`?chapter=N`, 1 without it).
fn chapter_of(url: &str) -> u32 {
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("chapter="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// The issue's walk of a new reader on the FREE plan, at phone and desktop widths: signs up,
/// uploads a long book, watches it translate, reads thirty chapters (on a phone, by the next
/// links, the view switched to the translation alone and remembered), continues from the
/// book's page, opens the share link as a phone would, goes through every section of the
/// settings (a key and a webhook made, the password changed), and signs out. Every page is
/// checked by axe-core and for sideways scrolling at both widths, and photographed.
///
/// The walk keeps a person's pace on the app's clock (the rate limits read it): a minute on a
/// page of the library or the book, fifty seconds a page read, half a minute a settings
/// section; about fifty minutes in all, from the top of an hour, so it is one hour of a
/// person's use, not a burst no one makes. Its pages count in the pages' budget of a person
/// (120 a minute, 1,200 an hour) and the pages' polls in the live budget, never in the FREE
/// plan's API limits (60 a minute, 100 an hour); every response the browser had (each page,
/// its assets, its polls) is checked: not one 429 in the hour.
#[tokio::test]
async fn a_new_free_reader_reads_thirty_chapters_and_walks_the_settings_at_phone_and_desktop_widths(
) {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let receiver = crate::webhooks::Receiver::start(200).await;
    let browser = Browser::start().await;
    let site = &app.url;
    let spends = |seconds: i64| app.clock.advance(chrono::Duration::seconds(seconds));
    // The walk starts at the top of an hour, so that its fifty minutes are one window of the
    // hourly limits (which are counted in clock hours), not the ends of two.
    let now = booktr_core::ports::Clock::now(app.clock.as_ref()).timestamp();
    spends(3600 - now.rem_euclid(3600));

    browser.go(&format!("{site}/signup")).await;
    browser.check_page("walk-signup").await;
    browser.fill("#email", "reader@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    browser.check_page("walk-library-empty").await;
    spends(60);

    // Uploads the book, into Spanish picked by its name's code.
    let dir = tempfile::TempDir::new().unwrap();
    let book = dir.path().join("moby-dick-1-40.epub");
    std::fs::write(&book, moby_dick_to_chapter(40)).unwrap();
    browser.fill("#file", book.to_str().unwrap()).await;
    browser.fill("#targetLang", "es").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    // The book's page, without the choices the upload carried to its quote.
    let page = browser.url().await.split('?').next().unwrap().to_string();
    let text = browser.page_text().await;
    assert!(
        text.contains("Translate into: Spanish") && text.contains("offline demo engine"),
        "{text}"
    );
    assert!(
        !text.contains("0.0 USD") && !text.contains(": und"),
        "{text}"
    );
    browser.check_page("walk-book-quote").await;
    spends(60);

    // Watches it translate, then reads from the top of the book's page.
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.check_page("walk-book-translating").await;
    browser.wait_for_book_status("COMPLETED").await;
    let lead = browser
        .script("return document.querySelector('main h2').textContent;")
        .await;
    assert_eq!(
        lead, "Your translation",
        "a finished book leads with its reading"
    );
    browser.check_page("walk-book-translated").await;
    spends(60);
    browser.go(&format!("{page}/read")).await;
    browser.check_page("walk-reader-first").await;

    // Reads thirty chapters on a phone, by the next links.
    browser.resize(PHONE).await;
    let mut turned = 0;
    while chapter_of(&browser.url().await) < 31 {
        let at = browser.url().await;
        browser.assert_fits(&at).await;
        browser.assert_no_429(&at).await;
        spends(50);
        browser.click("nav.pager a[rel=next]").await;
        turned += 1;
        assert!(turned < 120, "thirty chapters within 120 pages");
    }
    browser.resize(DESKTOP).await;
    browser.check_page("walk-reader-chapter-31").await;
    browser.click(".views a[href$='view=translation']").await;
    browser.wait_for_text("Translation only").await;
    browser.check_page("walk-reader-translation-only").await;
    browser.click("nav.pager a[rel=prev]").await;
    let remembered = browser
        .script("return document.querySelector('.reader').className;")
        .await;
    assert_eq!(
        remembered, "reader view-translation",
        "the view is remembered"
    );

    // The book's page offers to continue where the reading stopped.
    browser.click(".back a").await;
    browser.wait_for_text("Continue reading").await;
    let offer = browser
        .script("return document.querySelector('a.primary').getAttribute('href');")
        .await;
    assert!(offer.as_str().unwrap().contains("read?chapter="), "{offer}");
    browser.check_page("walk-book-continue").await;
    spends(60);

    // Shares it and opens the link as a phone would.
    browser
        .click("form[action$='/share'] button[type=submit]")
        .await;
    browser.wait_for_text("Anyone with this link").await;
    let link = browser
        .script("return document.getElementById('share-url').href;")
        .await;
    browser
        .go(&format!("{}?chapter=9", link.as_str().unwrap()))
        .await;
    browser.check_page("walk-shared-reader").await;
    spends(60);
    browser.go(&format!("{site}/dashboard")).await;
    browser.check_page("walk-library").await;
    spends(60);

    // Every section of the settings.
    for section in [
        "profile",
        "preferences",
        "notifications",
        "usage",
        "keys",
        "webhooks",
        "developer",
        "data",
    ] {
        browser
            .go(&format!("{site}/dashboard/settings/{section}"))
            .await;
        browser
            .check_page(&format!("walk-settings-{section}"))
            .await;
        spends(30);
    }
    // A new key's secret is at the top of the page that made it.
    browser.go(&format!("{site}/dashboard/settings/keys")).await;
    browser.fill("#key-name", "phone").await;
    browser
        .click("form[action='/dashboard/settings/keys'] button[type=submit]")
        .await;
    browser.wait_for_text("it is shown this once").await;
    let top = browser
        .script("return document.querySelector('.secret').getBoundingClientRect().top;")
        .await;
    assert!(
        top.as_f64().unwrap() < 400.0,
        "the secret is at the top: {top}"
    );
    browser.check_page("walk-settings-key-made").await;
    spends(30);
    browser
        .go(&format!("{site}/dashboard/settings/webhooks"))
        .await;
    browser.fill("#webhook-url", &receiver.url).await;
    browser
        .click("form[action='/dashboard/settings/webhooks'] button[type=submit]")
        .await;
    browser.wait_for_text("whsec_").await;
    browser.check_page("walk-settings-webhook-made").await;
    spends(30);
    // The password, on a phone 390 pixels wide: a wrong current one is summarised at the top
    // of the form, which the page opens at, with the focus; the right one changes it.
    browser.resize((390, 800)).await;
    browser
        .go(&format!("{site}/dashboard/settings/profile"))
        .await;
    browser.fill("#pw-current", "not my password").await;
    browser.fill("#pw-new", "another long password").await;
    browser
        .click("form[action^='/dashboard/settings/password'] button[type=submit]")
        .await;
    browser
        .wait_for_text("The current password is not right")
        .await;
    let summary = browser
        .script(
            "const s = document.querySelector('[data-error-summary]'); \
             const r = s.getBoundingClientRect(); \
             return { top: r.top, bottom: r.bottom, height: window.innerHeight, \
                      focused: document.activeElement === s };",
        )
        .await;
    assert!(
        summary["top"].as_f64().unwrap() >= 0.0
            && summary["bottom"].as_f64() <= summary["height"].as_f64()
            && summary["focused"] == true,
        "the summary is in view and has the focus: {summary}"
    );
    browser.check_page("walk-settings-password-wrong").await;
    spends(30);
    browser.fill("#pw-current", "a long password").await;
    browser.fill("#pw-new", "another long password").await;
    browser
        .click("form[action^='/dashboard/settings/password'] button[type=submit]")
        .await;
    browser.wait_for_text("Your password is changed").await;
    browser.check_page("walk-settings-password-changed").await;

    // Signs out: the sign-in page says so.
    browser
        .click("form[action='/signout'] button[type=submit]")
        .await;
    browser
        .wait_for_url(&format!("{site}/signin?signed_out=yes"))
        .await;
    browser.wait_for_text("You are signed out.").await;
    browser.check_page("walk-signed-out").await;
    browser.go(&format!("{site}/")).await;
    browser.check_page("walk-home-signed-out").await;
    browser.go(&format!("{site}/no-such-page")).await;
    browser
        .wait_for_text("There is no page at this address")
        .await;
    browser.check_page("walk-error-not-found").await;
    browser.go(&format!("{site}/dashboard")).await;
    assert!(browser.url().await.starts_with(&format!("{site}/signin")));
}

/// WebDriver's key codes.
const ENTER: &str = "\u{E007}";
const TAB: &str = "\u{E004}";
const CONTROL: &str = "\u{E009}";
/// Lets go of the modifier keys held.
const RELEASE: &str = "\u{E000}";

/// The issue's walk of an owner fixing what the checks flagged: signs up, uploads a book that a
/// misbehaving model translates (it refuses every answer, so every passage is flagged), opens
/// the reader, goes to the next flagged passage, fixes it by keyboard alone (the field has the
/// focus, its text selected and typed over, Ctrl+Enter saves without reloading the page), and
/// downloads the book: the EPUB holds the fix. The editor is checked by axe-core at desktop and
/// phone widths, fits a 375-pixel phone with touch-sized controls, and is photographed at 375
/// and 1280 pixels.
#[tokio::test]
async fn an_owner_fixes_a_flagged_passage_by_keyboard_and_downloads_the_corrected_book() {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new()
        .with_workers()
        .with_models(std::sync::Arc::new(crate::passages::Refusing))
        .start()
        .await;
    let browser = Browser::start().await;
    let site = &app.url;

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "editor@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("voyage.txt");
    std::fs::write(&file, crate::passages::book()).unwrap();
    browser.fill("#file", file.to_str().unwrap()).await;
    browser.fill("#targetLang", "es").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    let page = browser.url().await.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    assert!(browser.page_text().await.contains("passages flagged"));

    // The reader, then the next flagged passage, by keyboard.
    browser.go(&format!("{page}/read")).await;
    browser.wait_for_text("Next flagged passage").await;
    browser.check_page("editor-reader").await;
    let cookie = browser.session_cookie().await;
    let list = format!("{site}/api/books/{id}/passages/flagged");
    let flagged = || async {
        let list: Value = reqwest::Client::new()
            .get(&list)
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        list
    };
    let before = flagged().await;
    let first = before["passages"][0].clone();
    let index = first["index"].as_u64().unwrap();
    browser
        .script("document.querySelector('a.next-flagged').focus();")
        .await;
    assert!(
        browser.focused().await["outline"].as_bool().unwrap(),
        "a visible focus"
    );
    browser.press(ENTER).await;
    eventually(Duration::from_secs(10), || async {
        let focused = browser.focused().await;
        match focused["tag"] == "textarea" {
            true => Ok(()),
            false => Err(format!(
                "the field has not the focus at {}: {focused}",
                browser.url().await
            )),
        }
    })
    .await;
    assert!(browser.url().await.ends_with(&format!("#p-{index}")));
    let shown = browser.page_text().await;
    assert!(shown.contains("Flagged: the model refused"), "{shown}");
    browser.check_page("editor").await;

    // A phone 375 pixels wide: nothing wider than the window, every control of the editor
    // at least 44 pixels tall. Photographed there and at 1280.
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
    browser.resize((375, 800)).await;
    browser.assert_fits("the editor at 375 pixels").await;
    let small = browser
        .script(
            "return [...document.querySelectorAll('.editing button:not([hidden]), .editing a')] \
               .map(e => [e.textContent, Math.round(e.getBoundingClientRect().height)]) \
               .filter(([, h]) => h < 44);",
        )
        .await;
    assert_eq!(small, json!([]), "controls too small to touch");
    browser
        .photograph(&shots.join("editor-375.png"), (375, 800))
        .await;
    browser
        .photograph(&shots.join("editor-1280.png"), DESKTOP)
        .await;

    // Fixes it by keyboard: the field has the focus again, its text is selected and typed
    // over, and Ctrl+Enter saves in place (the page is not reloaded).
    browser
        .script("document.querySelector('.editing textarea').focus(); window.stayed = true;")
        .await;
    assert!(browser.focused().await["outline"].as_bool().unwrap());
    let fix = "Texto corregido a mano.";
    browser.press(&format!("{CONTROL}a{RELEASE}{fix}")).await;
    browser.press(&format!("{CONTROL}{ENTER}{RELEASE}")).await;
    browser.wait_for_text("Saved: the book").await;
    assert_eq!(
        browser.script("return window.stayed === true;").await,
        json!(true)
    );
    assert_eq!(
        browser.focused().await["tag"],
        "textarea",
        "the focus stays in the field"
    );
    // The focus moves on to the editor's buttons: Save first.
    browser.press(TAB).await;
    assert_eq!(browser.focused().await["value"], "save");
    let after = flagged().await;
    let open = before["total"].as_u64().unwrap() - 1;
    assert_eq!(after["total"].as_u64(), Some(open), "{after}");
    let shown = browser
        .script("return document.querySelector('strong[data-open-flagged]').textContent;")
        .await;
    assert_eq!(shown, json!(open.to_string()), "the reader's count follows");
    browser.check_page("editor-saved").await;

    // Downloads the book through the reader's link, as the signed-in browser: the fix is in it.
    let href = browser
        .script("return document.querySelector('a[href$=\"format=epub\"]').href;")
        .await;
    let epub = reqwest::Client::new()
        .get(href.as_str().unwrap())
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(epub.status(), 200);
    let epub = epub.bytes().await.unwrap();
    epubcheck(&epub);
    let text: String = booktr_formats::epub::extract(&epub)
        .unwrap()
        .chapters
        .iter()
        .map(|c| c.plain_text())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains(fix), "{text}");

    // Asks for the passage again with an instruction: the proposal's page, then discarded.
    browser
        .fill(".editing input[name=instruction]", "more formal")
        .await;
    browser
        .click(".editing form.retranslate button[type=submit]")
        .await;
    browser.wait_for_text("A new translation to review").await;
    browser.wait_for_text("Discard").await;
    browser.check_page("proposal").await;
    browser
        .click("form[action$='/discard'] button[type=submit]")
        .await;
    browser.wait_for_text("Edit this passage").await;
}

/// The words and places a new user met in issue 48 (item 5), in Chromium with the scripts
/// running: the phone's header in two rows; a language typed by its name in the upload form
/// (an unknown one said at once); the flag summary; a flagged verse line's text clear of its
/// flag's bar; the editor's label of a kept source; a wrong current password summarised in
/// view with the focus on a phone; and sign-out said. Each page is checked by axe-core at
/// desktop and phone widths, fits a 390-pixel phone, and is photographed at 390 and 1280
/// pixels (`words-*-390.png`, `words-*-1280.png`).
#[tokio::test]
async fn a_new_users_words_and_places_read_right_at_390_and_1280_pixels_in_a_real_browser() {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new()
        .with_workers()
        .with_models(std::sync::Arc::new(crate::passages::Refusing))
        .start()
        .await;
    let browser = Browser::start().await;
    let site = &app.url;
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
    let photos = |name: &'static str| {
        let browser = &browser;
        let shots = &shots;
        async move {
            browser.check_page(&format!("words-{name}")).await;
            browser.resize((390, 800)).await;
            browser.assert_fits(&format!("{name} at 390 pixels")).await;
            browser
                .photograph(&shots.join(format!("words-{name}-390.png")), (390, 800))
                .await;
            browser
                .photograph(&shots.join(format!("words-{name}-1280.png")), DESKTOP)
                .await;
        }
    };

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "words@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;

    // The phone's header: the name, the unread count, sign-out and the language in one row,
    // the pages in another, which scrolls sideways rather than wrap.
    browser.resize((390, 800)).await;
    let header = browser
        .script(
            "const bar = document.querySelector('header.bar'); \
             const tops = [...bar.querySelectorAll('nav a')].map(a => Math.round(a.getBoundingClientRect().top)); \
             return { height: bar.getBoundingClientRect().height, rows: new Set(tops).size };",
        )
        .await;
    assert!(
        header["height"].as_f64().unwrap() < 100.0 && header["rows"] == 1,
        "a compact header: {header}"
    );
    photos("library").await;

    // A language by its name: one it does not know is said at once, by the form.
    let dir = tempfile::TempDir::new().unwrap();
    let book = dir.path().join("wasteland.epub");
    std::fs::write(&book, corpus("wasteland.epub")).unwrap();
    browser.fill("#file", book.to_str().unwrap()).await;
    browser.fill("#targetLang", "Klingon").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser
        .wait_for_text("\u{201c}Klingon\u{201d} is not a language we know")
        .await;
    assert!(browser.url().await.ends_with("/dashboard"));
    browser.fill("#targetLang", "français").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    let page = browser.url().await.split('?').next().unwrap().to_string();
    let language = browser
        .script(
            "return document.querySelector('form[action$=\"/start\"] [name=targetLang]').value;",
        )
        .await;
    assert_eq!(language, json!("fr"), "the name was sent as its code");
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    let text = browser.page_text().await;
    assert!(text.contains("passages flagged ("), "{text}");
    photos("book").await;

    // A flagged verse line: its text starts right of the flag's bar, its wrapped lines
    // hanging further in.
    let mut verse = None;
    for chapter in 1..=8 {
        browser
            .go(&format!("{page}/read?chapter={chapter}&view=both"))
            .await;
        let found = browser
            .script("return !!document.querySelector('.row.line.flagged > .translation');")
            .await;
        if found == true {
            verse = Some(chapter);
            break;
        }
    }
    let chapter = verse.expect("a chapter of verse");
    for width in [390, 1280] {
        browser.resize((width, 800)).await;
        let clear = browser
            .script(
                "return [...document.querySelectorAll('.row.line.flagged > .translation')].map(d => { \
                   const text = [...d.childNodes].find(n => n.nodeType === 3 && n.textContent.trim()); \
                   const range = document.createRange(); range.selectNodeContents(text); \
                   const first = range.getClientRects()[0]; \
                   const box = d.getBoundingClientRect(); \
                   return first.left - (box.left + parseFloat(getComputedStyle(d).borderLeftWidth)); \
                 }).filter(gap => gap < 4);",
            )
            .await;
        assert_eq!(
            clear,
            json!([]),
            "verse text over the flag's bar at {width}"
        );
    }
    photos("reader-verse").await;
    browser
        .go(&format!("{page}/read?chapter={chapter}&view=translation"))
        .await;
    browser
        .wait_for_text("Side by side, every passage has an Edit link")
        .await;
    photos("reader-translation").await;

    // The editor of a passage that kept its source.
    browser.click("a.next-flagged").await;
    browser.wait_for_text("The original text, kept").await;

    // A wrong current password on a phone: the summary in view, with the focus.
    browser.resize((390, 800)).await;
    browser
        .go(&format!("{site}/dashboard/settings/profile"))
        .await;
    browser.fill("#pw-current", "not my password").await;
    browser.fill("#pw-new", "another long password").await;
    browser
        .click("form[action^='/dashboard/settings/password'] button[type=submit]")
        .await;
    browser.wait_for_text("There is a problem").await;
    let summary = browser
        .script(
            "const s = document.querySelector('[data-error-summary]'); \
             const r = s.getBoundingClientRect(); \
             return { top: r.top, bottom: r.bottom, height: window.innerHeight, \
                      focused: document.activeElement === s };",
        )
        .await;
    assert!(
        summary["top"].as_f64().unwrap() >= 0.0
            && summary["bottom"].as_f64() <= summary["height"].as_f64()
            && summary["focused"] == true,
        "the summary is in view and has the focus: {summary}"
    );
    photos("password-wrong").await;

    // Signs out: said.
    browser
        .click("form[action='/signout'] button[type=submit]")
        .await;
    browser.wait_for_text("You are signed out.").await;
    photos("signed-out").await;
}

/// An owner starts a translation that stops at its term list, follows the book page's way to
/// the list, changes a rendering there and continues the run, in Chromium with the scripts
/// running. The book's page paused there and the list are checked by axe-core at desktop and
/// phone widths; the list fits a 390-pixel phone and is photographed at 390 and 1280 pixels.
#[tokio::test]
async fn an_owner_checks_the_term_list_of_a_run_paused_at_it_and_continues_in_a_real_browser() {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let browser = Browser::start().await;
    let site = &app.url;

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "terms@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("names.txt");
    std::fs::write(&file, crate::web_terms::names()).unwrap();
    browser.fill("#file", file.to_str().unwrap()).await;
    browser.fill("#targetLang", "es").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;

    // Starts to stop at the term list: the page follows the run there by itself.
    browser.click("#pauseAtTerms").await;
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("PAUSED").await;
    browser.wait_for_text("Check the term list").await;
    browser.check_page("book-paused-at-terms").await;

    browser.click("a.primary[href$='/terms']").await;
    browser
        .wait_for_text("The translation is waiting for you")
        .await;
    browser.check_page("terms").await;
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
    browser.resize((390, 800)).await;
    browser.assert_fits("the term list at 390 pixels").await;
    browser
        .photograph(&shots.join("terms-390.png"), (390, 800))
        .await;
    browser
        .photograph(&shots.join("terms-1280.png"), DESKTOP)
        .await;

    // Renames a term, saves, and continues the run.
    browser
        .fill("input[aria-label='Rendering of Queequeg']", "Kwikweg")
        .await;
    browser
        .click("form[action$='/terms'] button[type=submit]")
        .await;
    browser.wait_for_text("Saved: the chapters").await;
    assert!(browser.page_text().await.contains("Set by you"));
    browser
        .click("form[action$='/resume'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    browser.wait_for_text("The book's term list").await;
}

/// An owner renames a term in one passage of the editor (the script saving in place), is
/// offered the change in the whole book, looks at its preview and applies it, in Chromium. The
/// editor with the offer, the preview and its answer are checked by axe-core at desktop and
/// phone widths; the preview fits a 390-pixel phone and is photographed at 390 and 1280 pixels.
#[tokio::test]
async fn an_owner_renames_a_term_in_the_whole_book_from_the_editor_in_a_real_browser() {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let browser = Browser::start().await;
    let site = &app.url;

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "renamer@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("names.txt");
    std::fs::write(&file, crate::web_terms::names()).unwrap();
    browser.fill("#file", file.to_str().unwrap()).await;
    browser.fill("#targetLang", "es").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    let page = browser.url().await.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;

    // The first passage with the model's rendering of Queequeg, opened in the editor.
    let cookie = browser.session_cookie().await;
    let api = |path: String| {
        let cookie = cookie.clone();
        async move {
            let answer: Value = reqwest::Client::new()
                .get(format!("{site}{path}"))
                .header("cookie", cookie)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            answer
        }
    };
    let list = api(format!("/api/translate/terms?bookId={id}")).await;
    let from = list["terms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["source"] == "Queequeg")
        .unwrap()["target"]
        .as_str()
        .unwrap()
        .to_string();
    let chapter = api(format!("/api/books/{id}/chapters/2/passages")).await;
    let first = chapter["passages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["text"].as_str().unwrap_or_default().contains(&from))
        .unwrap()
        .clone();
    let index = first["index"].as_u64().unwrap();
    browser
        .go(&format!("{page}/read?chapter=2&edit={index}#p-{index}"))
        .await;
    browser.wait_for_text("Edit this passage").await;
    let renamed = first["text"].as_str().unwrap().replace(&from, "Kwikweg");
    browser.fill(".editing textarea", &renamed).await;
    browser
        .script("document.querySelector('.editing textarea').focus();")
        .await;
    browser.press(&format!("{CONTROL}{ENTER}{RELEASE}")).await;
    browser
        .wait_for_text("This edit renames a term of the book")
        .await;
    browser.check_page("editor-rename-offer").await;

    browser.click("form.rename-offer button[type=submit]").await;
    browser
        .wait_for_text("Rename a term in the whole book")
        .await;
    browser
        .wait_for_text("Passages with the model's text")
        .await;
    browser.check_page("term-rename").await;
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
    browser.resize((390, 800)).await;
    browser
        .assert_fits("the rename's preview at 390 pixels")
        .await;
    browser
        .photograph(&shots.join("term-rename-390.png"), (390, 800))
        .await;
    browser
        .photograph(&shots.join("term-rename-1280.png"), DESKTOP)
        .await;

    browser
        .click("form[action$='/rename/apply'] button[type=submit]")
        .await;
    browser.wait_for_text("Renamed in").await;
    browser.check_page("term-rename-applied").await;
    let chapter = api(format!("/api/books/{id}/chapters/3/passages")).await;
    assert!(chapter.to_string().contains("Kwikweg"), "{chapter}");
    assert!(!chapter.to_string().contains(&from), "{chapter}");
}

/// An owner reviews a book in Chromium with the scripts running: the book's page leads to the
/// review, where the passages that need a look come lowest confidence first; one is kept by its
/// own button, the rest ticked and kept at once, and the reviewed ones listed. The review is
/// checked by axe-core at desktop and phone widths, fits a 390-pixel phone and is photographed
/// at 390 and 1280 pixels.
#[tokio::test]
async fn an_owner_reviews_the_passages_that_need_a_look_in_a_real_browser() {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new()
        .with_workers()
        .with_models(std::sync::Arc::new(crate::web_review::StandIn(|| {
            crate::web_review::Uneven
        })))
        .start()
        .await;
    let browser = Browser::start().await;
    let site = &app.url;

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "reviewer@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("voyage.txt");
    std::fs::write(&file, crate::passages::book()).unwrap();
    browser.fill("#file", file.to_str().unwrap()).await;
    browser.fill("#targetLang", "es").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    browser
        .wait_for_text("Review the passages that need a look")
        .await;
    browser.check_page("book-to-review").await;

    browser.click("p > a[href$='/review']").await;
    browser.wait_for_text("Passages to review").await;
    browser.check_page("review").await;
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
    browser.resize((390, 800)).await;
    browser.assert_fits("the review at 390 pixels").await;
    browser
        .photograph(&shots.join("review-390.png"), (390, 800))
        .await;
    browser
        .photograph(&shots.join("review-1280.png"), DESKTOP)
        .await;
    let confidences = browser
        .script(
            "return [...document.querySelectorAll('[data-confidence]')]\
             .map(e => Number(e.dataset.confidence));",
        )
        .await;
    let confidences: Vec<u64> = confidences
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert!(confidences.len() >= 2, "{confidences:?}");
    assert!(
        confidences.windows(2).all(|w| w[0] <= w[1]),
        "{confidences:?}"
    );

    // One kept by its own button; the rest ticked and kept at once.
    browser.click("button[name=one][value^='keep:']").await;
    browser.wait_for_text("Passages kept as they are: 1.").await;
    browser.check_page("review-kept").await;
    browser
        .script(
            "document.querySelectorAll('input[name=selected]').forEach(b => b.click()); \
             return true;",
        )
        .await;
    browser.click("button[name=action][value=keep]").await;
    browser.wait_for_text("No passage here needs a look.").await;
    browser
        .go(&format!(
            "{}?status=done",
            browser.url().await.split('?').next().unwrap()
        ))
        .await;
    browser
        .wait_for_text("The model's text, kept as it is")
        .await;
    browser.check_page("review-done").await;
}

/// The lines of The Waste Land whose translation [`FlagsSomeLines`] never gives back, each with
/// its line number: words of each line's source.
const UNANSWERED_LINES: [&str; 6] = [
    "handful of dust",
    "lady of situations",
    "golden Cupidon",
    "Nothing again nothing",
    "expected guest",
    "Red sails",
];

/// A stand-in that misbehaves on a share of its answers: like the offline engine, but the
/// lines of [`UNANSWERED_LINES`] are left out of every answer in the block protocol, and a
/// request for one of them alone is refused, so those passages end flagged (their source kept).
/// Told an owner's instruction, it answers every line.
struct FlagsSomeLines;

#[async_trait::async_trait]
impl booktr_translate::model::ChatModel for FlagsSomeLines {
    async fn complete(
        &self,
        request: booktr_translate::model::ChatRequest,
    ) -> Result<booktr_translate::model::ChatResponse, booktr_translate::model::ChatError> {
        let mut response = booktr_translate::offline::OfflineEngine
            .complete(request.clone())
            .await?;
        let instructed = request.user.contains("\nINSTRUCTION:\n")
            || request
                .system
                .contains("The book's owner asks of this text");
        let unanswered = |text: &str| UNANSWERED_LINES.iter().any(|words| text.contains(words));
        if instructed {
            return Ok(response);
        }
        if request.user.starts_with("TASK: ") {
            let blocks = request.user.split("BLOCKS:\n").nth(1).unwrap_or_default();
            let left_out: Vec<String> = blocks
                .lines()
                .filter(|l| l.starts_with("[[") && unanswered(l))
                .filter_map(|l| l.split_once("]] ").map(|(m, _)| format!("{m}]] ")))
                .collect();
            response.text = response
                .text
                .lines()
                .filter(|l| !left_out.iter().any(|m| l.starts_with(m.as_str())))
                .map(|l| format!("{l}\n"))
                .collect();
        } else if unanswered(&request.user) {
            response.text = "I'm sorry, but I can't help with translating this text.".into();
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "flags-some-lines"
    }
}

/// Every passage of the book as the API tells it to the browser's session.
async fn every_passage(site: &str, cookie: &str, id: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for chapter in 1.. {
        let page = reqwest::Client::new()
            .get(format!(
                "{site}/api/books/{id}/chapters/{chapter}/passages?limit=200"
            ))
            .header("cookie", cookie)
            .send()
            .await
            .unwrap();
        if page.status() == 404 {
            break;
        }
        let page: Value = page.json().await.unwrap();
        all.extend(page["passages"].as_array().unwrap().iter().cloned());
    }
    all
}

/// A download of the book through the book page's link `format`, as the signed-in browser.
async fn downloaded(browser: &Browser, cookie: &str, format: &str) -> Vec<u8> {
    let href = browser
        .script(&format!(
            "return document.querySelector('a[href$=\"format={format}\"]').href;"
        ))
        .await;
    let file = reqwest::Client::new()
        .get(href.as_str().unwrap())
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), 200, "{format}");
    file.bytes().await.unwrap().to_vec()
}

/// The issue's walk of the review (issue 48): The Waste Land translated into French by a
/// stand-in that leaves six of its numbered lines unanswered, so they are flagged; from the
/// book's page to its review, one passage fixed by each way there is: edited in place in the
/// editor, kept as it is, translated again with an instruction and the new translation
/// accepted, and the last ones ticked and kept at once; then a term renamed in one passage of
/// the editor, previewed and applied in the whole book. The EPUB and the PDF downloaded hold
/// every change, and every one of the poem's 43 line numbers: a `span` of class `lnum` in the
/// EPUB, apart from its verse's last word in the PDF's text. Every page of the walk is checked
/// by axe-core at desktop and phone widths; the review and the editor fit a 390-pixel phone and
/// are photographed at 390 and 1280 pixels.
#[tokio::test]
async fn an_owner_fixes_a_flagged_poem_by_every_way_of_the_review_and_downloads_every_change_with_its_line_numbers(
) {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) || !have(Tool::Pdftotext) {
        return;
    }
    let app = TestApp::new()
        .with_workers()
        .with_models(std::sync::Arc::new(crate::web_review::StandIn(|| {
            FlagsSomeLines
        })))
        .start()
        .await;
    let browser = Browser::start().await;
    let site = &app.url;
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/web-app");
    let at_390 = |name: &'static str| {
        let (browser, shots) = (&browser, &shots);
        async move {
            browser.resize((390, 800)).await;
            browser.assert_fits(&format!("{name} at 390 pixels")).await;
            browser
                .photograph(&shots.join(format!("{name}-390.png")), (390, 800))
                .await;
            browser
                .photograph(&shots.join(format!("{name}-1280.png")), DESKTOP)
                .await;
        }
    };

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "poet@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("wasteland.epub");
    let source = corpus("wasteland.epub");
    std::fs::write(&file, &source).unwrap();
    browser.fill("#file", file.to_str().unwrap()).await;
    browser.fill("#targetLang", "fr").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    let page = browser.url().await.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    browser
        .wait_for_text("Review the passages that need a look")
        .await;
    browser.check_page("poem-book-to-review").await;

    // The review: the six unanswered lines, each with its line number.
    let review = format!("{page}/review");
    browser.click("p > a[href$='/review']").await;
    browser.wait_for_url(&review).await;
    browser.wait_for_text("Passages: 6").await;
    let listed = browser
        .script(
            "return [...document.querySelectorAll('[data-passage]')].map(e => e.dataset.passage);",
        )
        .await;
    assert_eq!(
        listed,
        json!(["2:30", "2:50", "3:4", "3:44", "4:58", "4:98"]),
        "the lines left unanswered, in reading order (all of confidence 0)"
    );
    // Each line's number set apart from its verse, as the reader sets it.
    let number = browser
        .script(
            "return [...document.querySelectorAll(\"li[data-passage='2:30'] .text .lnum\")]\
             .map(e => [e.textContent, getComputedStyle(e).float]);",
        )
        .await;
    assert_eq!(number, json!([["30", "right"], ["30", "right"]]));
    // Each line named as the reader shows it, its chapter's title and its first words, linked
    // to it in the reader; no "Passage 31", which matches nothing the reader shows.
    let named = browser
        .script(
            "const h = document.querySelector(\"li[data-passage='2:30'] .item-title\"); \
             return [h.textContent, h.querySelector('a').getAttribute('href')];",
        )
        .await;
    let (name, href) = (named[0].as_str().unwrap(), named[1].as_str().unwrap());
    assert!(name.contains(" · “") && name.ends_with('”'), "{name}");
    assert!(!name.contains("Passage"), "{name}");
    assert!(href.ends_with("read?chapter=2&near=30#p-30"), "{href}");
    browser.check_page("poem-review").await;
    at_390("poem-review").await;
    let cookie = browser.session_cookie().await;
    let at = |passages: &[Value], chapter: u64, index: u64| -> Value {
        passages
            .iter()
            .find(|p| p["chapter"] == chapter && p["index"] == index)
            .unwrap()
            .clone()
    };

    // (1) Edited in place: the review's link opens the passage's editor in the reader, where
    // the new text is typed with the line's number kept as the mark it is.
    browser
        .click("li[data-passage='2:30'] a[href*='edit=30']")
        .await;
    browser.wait_for_text("Edit this passage").await;
    assert!(browser.url().await.contains("chapter=2&edit=30"));
    let number_30 = r#"<num class="lnum" text="30"/>"#;
    let field = browser
        .script("return document.querySelector('.editing textarea').value;")
        .await;
    assert!(
        field.as_str().unwrap().ends_with(number_30),
        "the field holds the number as a mark: {field}"
    );
    let preview = browser
        .script("return document.querySelector('.editing .preview .lnum')?.textContent;")
        .await;
    assert_eq!(preview, json!("30"), "the preview sets the number apart");
    browser.check_page("poem-editor").await;
    // At a phone's width, each mark to keep stays whole on its line.
    browser.resize((390, 800)).await;
    let marks = browser
        .script(
            "return [...document.querySelectorAll('.editing .marks code')].map(c => { \
               const r = document.createRange(); r.selectNodeContents(c); \
               return [c.textContent, r.getClientRects().length]; });",
        )
        .await;
    let marks = marks.as_array().unwrap();
    assert!(!marks.is_empty());
    for mark in marks {
        assert_eq!(mark[1], json!(1), "a mark broken across lines: {mark}");
    }
    at_390("poem-editor").await;
    let edited = "Je te montrerai la peur dans une poignée de poussière.";
    browser
        .fill(".editing textarea", &format!("{edited}{number_30}"))
        .await;
    // The preview follows the typing, the number apart from the verse there too.
    let preview = browser
        .script(
            "const p = document.querySelector('.editing .preview'); \
             return [p.textContent, p.querySelector('.lnum')?.textContent];",
        )
        .await;
    assert_eq!(preview, json!([format!("{edited}30"), "30"]));
    browser
        .script("document.querySelector('.editing textarea').focus();")
        .await;
    browser.press(&format!("{CONTROL}{ENTER}{RELEASE}")).await;
    browser.wait_for_text("Saved: the book").await;
    browser.check_page("poem-editor-saved").await;
    // Back to the review by the reader's own link: one fewer to review.
    browser
        .click("a[href$='/review']:not([href*='look'])")
        .await;
    browser.wait_for_text("Passages: 5").await;

    // (2) Kept as it is, by its own button.
    browser
        .click("li[data-passage='2:50'] button[name=one][value^='keep:']")
        .await;
    browser.wait_for_text("Passages kept as they are: 1.").await;

    // (3) Translated again with an instruction: the new translation, when ready, is accepted
    // from the review.
    browser
        .fill(
            "li[data-passage='3:4'] input[name=instruction]",
            "plus soutenu",
        )
        .await;
    browser
        .click("li[data-passage='3:4'] .retranslate-row button")
        .await;
    browser.wait_for_text("A new translation to review").await;
    browser.wait_for_text("Discard").await;
    let shown = browser.page_text().await;
    assert!(
        !shown.contains("<num"),
        "the texts shown, not their markup: {shown}"
    );
    browser.check_page("poem-proposal").await;
    browser.go(&format!("{review}?look=proposal")).await;
    browser.wait_for_text("New translation waiting").await;
    browser.check_page("poem-review-proposal").await;
    at_390("poem-review-proposal").await;
    let accept = "li[data-passage='3:4'] button[name=one][value^='accept:']";
    let plain = browser
        .script(&format!(
            "return document.querySelector(\"{accept}\").textContent;"
        ))
        .await;
    // The stand-in answers every line it is told an instruction for: no check failed.
    assert_eq!(plain, json!("Accept"));
    browser.click(accept).await;
    browser.wait_for_text("New translations accepted: 1.").await;
    let accepted = at(&every_passage(site, &cookie, &id).await, 3, 4);
    assert_eq!(accepted["origin"]["kind"], "retranslated", "{accepted}");
    let accepted_text = accepted["text"].as_str().unwrap().to_string();
    assert!(
        accepted_text.ends_with(r#"<num class="lnum" text="80"/>"#),
        "{accepted}"
    );

    // (4) The last three ticked and kept at once.
    browser.go(&review).await;
    browser.wait_for_text("Passages: 3").await;
    browser
        .script(
            "document.querySelectorAll('input[name=selected]').forEach(b => b.click()); \
             return true;",
        )
        .await;
    browser.click("button[name=action][value=keep]").await;
    browser.wait_for_text("Passages kept as they are: 3.").await;
    browser.wait_for_text("No passage here needs a look.").await;
    browser.go(&format!("{review}?status=done")).await;
    browser.wait_for_text("Passages: 6").await;
    // The lines kept held their source: each says the original was kept. The edited one is
    // the owner's text: no confidence (the model's) is said of any of them.
    let done = browser.page_text().await;
    assert_eq!(
        done.matches("The original text, kept as it is").count(),
        4,
        "{done}"
    );
    assert!(!done.contains("The model's text"), "{done}");
    assert!(!done.contains("Confidence"), "{done}");
    browser.check_page("poem-review-done").await;
    at_390("poem-review-done").await;

    // (5) A term renamed in one passage of the editor, then in the whole book.
    let passages = every_passage(site, &cookie, &id).await;
    let model = "Tìrésìàs";
    let mine = "Tirésias";
    let holding: Vec<&Value> = passages
        .iter()
        .filter(|p| p["text"].as_str().is_some_and(|t| t.contains(model)))
        .collect();
    assert!(holding.len() >= 3, "{holding:#?}");
    let first = holding[0];
    let (chapter, index) = (first["chapter"].clone(), first["index"].clone());
    browser
        .go(&format!(
            "{page}/read?chapter={chapter}&edit={index}#p-{index}"
        ))
        .await;
    browser.wait_for_text("Edit this passage").await;
    let renamed = first["text"].as_str().unwrap().replace(model, mine);
    browser.fill(".editing textarea", &renamed).await;
    browser
        .script("document.querySelector('.editing textarea').focus();")
        .await;
    browser.press(&format!("{CONTROL}{ENTER}{RELEASE}")).await;
    browser
        .wait_for_text("This edit renames a term of the book")
        .await;
    browser.check_page("poem-editor-rename-offer").await;
    browser.click("form.rename-offer button[type=submit]").await;
    browser
        .wait_for_text("Rename a term in the whole book")
        .await;
    let ticked = browser
        .script("return [...document.querySelectorAll('input[name=p]:checked')].map(b => b.value);")
        .await;
    let ticked: Vec<(u64, u64)> = ticked
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let mut parts = v.as_str().unwrap().split('.');
            let mut next = || parts.next().unwrap().parse::<u64>().unwrap();
            (next(), next())
        })
        .collect();
    assert_eq!(ticked.len(), holding.len() - 1, "{ticked:?}");
    browser.check_page("poem-term-rename").await;
    browser
        .click("form[action$='/rename/apply'] button[type=submit]")
        .await;
    browser.wait_for_text("Renamed in").await;
    browser.check_page("poem-term-rename-applied").await;
    let passages = every_passage(site, &cookie, &id).await;
    for (chapter, index) in ticked {
        let now = at(&passages, chapter, index);
        let text = now["text"].as_str().unwrap();
        assert!(text.contains(mine) && !text.contains(model), "{now}");
    }

    // The EPUB and the PDF hold every change, and every line number.
    browser.go(&page).await;
    let epub = downloaded(&browser, &cookie, "epub").await;
    epubcheck(&epub);
    let book = booktr_formats::epub::extract(&epub).unwrap();
    let text: String = book
        .chapters
        .iter()
        .map(|c| c.plain_text())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains(edited), "the edit: {text}");
    let accepted_plain = booktr_formats::markup::plain_text(&accepted_text);
    let accepted_words = accepted_plain.trim_end_matches(char::is_numeric);
    assert!(text.contains(accepted_words), "{accepted_words:?}: {text}");
    for kept in [
        "The lady of situations.",
        "Nothing again nothing.",
        "Red sails",
    ] {
        assert!(text.contains(kept), "{kept}: {text}");
    }
    assert_eq!(text.matches(mine).count(), 6, "{text}");
    assert!(!text.contains(model), "{text}");
    let lnum = ("span".to_string(), "lnum".to_string());
    let inline = booktr_formats::structure::count_inline_epub(&epub).unwrap();
    assert_eq!(inline.get(&lnum), Some(&43), "{inline:?}");
    let numbered = crate::book_marks::numbered_lines(&book);
    let numbers: Vec<&String> = numbered.iter().map(|(_, n)| n).collect();
    let original = booktr_formats::epub::extract(&source).unwrap();
    let expected = crate::book_marks::numbered_lines(&original);
    assert_eq!(
        numbers,
        expected.iter().map(|(_, n)| n).collect::<Vec<_>>(),
        "every line number, in order"
    );
    assert!(numbered
        .iter()
        .any(|(last, n)| last == "poussière." && n == "30"));

    let pdf = downloaded(&browser, &cookie, "pdf").await;
    let plain = crate::book_marks::pdftotext(&pdf, false);
    let layout = crate::book_marks::pdftotext(&pdf, true);
    assert!(plain.contains(edited), "the edit: {plain}");
    assert_eq!(plain.matches(mine).count(), 6, "{plain}");
    for (last, number) in &numbered {
        assert!(
            !plain.contains(&format!("{last}{number}")),
            "{number} glued to {last:?}"
        );
        let ends_apart = |line: &str| {
            line.trim_end()
                .strip_suffix(number.as_str())
                .is_some_and(|rest| {
                    rest.len() > rest.trim_end().len() && rest.trim_end().ends_with(last.as_str())
                })
        };
        assert!(
            layout.lines().any(ends_apart),
            "no line of the PDF ends with {last:?} and then {number}"
        );
    }
}

/// An owner hands the book to a translator's tool and takes its file back (issue 50, item 1):
/// the book's page offers the XLIFF, the file downloaded through its link has a target changed
/// as a tool would, and the upload form, filled and sent in the browser, answers the import's
/// report. The book's page and the report are checked by axe-core at desktop and phone widths.
#[tokio::test]
async fn an_owner_takes_a_translators_xliff_back_from_the_book_page_in_a_real_browser() {
    if !have(Tool::ChromeDriver) || !have(Tool::Axe) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let browser = Browser::start().await;
    let site = &app.url;

    browser.go(&format!("{site}/signup")).await;
    browser.fill("#email", "owner@example.com").await;
    browser.fill("#password", "a long password").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for_url(&format!("{site}/dashboard")).await;
    let dir = tempfile::TempDir::new().unwrap();
    let book = dir.path().join("voyage.txt");
    std::fs::write(&book, crate::passages::book()).unwrap();
    browser.fill("#file", book.to_str().unwrap()).await;
    browser.fill("#targetLang", "es").await;
    browser.click("form[data-upload] button[type=submit]").await;
    browser.wait_for_text("Expected cost").await;
    browser
        .click("form[action$='/start'] button[type=submit]")
        .await;
    browser.wait_for_book_status("COMPLETED").await;
    browser.wait_for_text("Translation tools (XLIFF)").await;
    browser.check_page("book-with-xliff").await;

    let href = browser
        .script("return document.querySelector('a[href$=\"/xliff\"]').href;")
        .await;
    let cookie = browser.session_cookie().await;
    let file = reqwest::Client::new()
        .get(href.as_str().unwrap())
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), 200);
    let exported = file.text().await.unwrap();
    let start = exported.find("<target state=\"").unwrap();
    let open_end = start + exported[start..].find('>').unwrap() + 1;
    let close = open_end + exported[open_end..].find("</target>").unwrap();
    let changed = format!(
        "{}Un prefacio de siete palabras &amp; más.{}",
        &exported[..open_end],
        &exported[close..]
    );
    let xliff = dir.path().join("voyage.xlf");
    std::fs::write(&xliff, changed).unwrap();
    browser.fill("#xliff-file", xliff.to_str().unwrap()).await;
    browser
        .click("form[action$='/xliff'][method=post] button[type=submit]")
        .await;
    browser.wait_for_text("Passages changed: 1.").await;
    browser.check_page("xliff-report").await;
    let id = href
        .as_str()
        .unwrap()
        .rsplit('/')
        .nth(1)
        .unwrap()
        .to_string();
    let passages = every_passage(site, &cookie, &id).await;
    assert!(
        passages
            .iter()
            .any(|p| p["text"] == "Un prefacio de siete palabras &amp; más."),
        "{passages:?}"
    );
}
