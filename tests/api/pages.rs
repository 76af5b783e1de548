//! The public website: the home page, the community's list, post, category and tag pages;
//! their head tags; and user writing shown inert.

use booktr_core::types::{Plan, Role};
use reqwest::Method;
use serde_json::{json, Value};

use crate::checkers::{parsed_feed, sitemap_errors};
use crate::helpers::{assert_error, have, TestApp, TestUser, Tool};

async fn page(app: &TestApp, path: &str) -> String {
    let response = app.get_anonymous(path).await;
    assert_eq!(response.status(), 200, "{path}");
    assert_eq!(
        response.headers()["content-type"],
        "text/html; charset=utf-8"
    );
    response.text().await.unwrap()
}

async fn publish(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let response = app
        .send_json(Method::POST, "/api/community/posts", &user.key, body)
        .await;
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["post"].clone()
}

#[tokio::test]
async fn every_page_has_its_title_description_canonical_url_and_open_graph_tags() {
    let app = TestApp::new().with_workers().start().await;
    let boss = app.user_with(Plan::Free, Role::Admin).await;
    let tag = app
        .send_json(
            Method::POST,
            "/api/admin/community/tags",
            &boss.key,
            json!({"name": "Ahab"}),
        )
        .await;
    assert_eq!(tag.status(), 201);
    let author = app.user().await;
    let post = publish(
        &app,
        &author,
        json!({"title": "The <b>Whale</b> & I", "content": "Call me *Ishmael*.",
               "status": "PUBLISHED", "tagSlugs": ["ahab"], "categorySlug": "books",
               "coverImage": "https://example.com/whale.png"}),
    )
    .await;
    let slug = post["slug"].as_str().unwrap();
    let site = app.url.clone();
    for (path, title) in [
        (
            "/".to_string(),
            "booktr — Whole books, translated".to_string(),
        ),
        // In the visitor's language (English when the browser names none we speak).
        ("/comunidad".to_string(), "Community — booktr".to_string()),
        (
            format!("/comunidad/{slug}"),
            "The &lt;b&gt;Whale&lt;/b&gt; &amp; I — booktr".to_string(),
        ),
        (
            "/comunidad/categoria/books".to_string(),
            "Books — booktr".to_string(),
        ),
        (
            "/comunidad/etiqueta/ahab".to_string(),
            "#Ahab — booktr".to_string(),
        ),
    ] {
        let html = page(&app, &path).await;
        assert!(
            html.contains(&format!("<title>{title}</title>")),
            "{path}: {html}"
        );
        assert!(
            html.contains("<meta name=\"description\" content=\""),
            "{path}"
        );
        assert!(
            html.contains(&format!("<link rel=\"canonical\" href=\"{site}{path}\">")),
            "{path}: {html}"
        );
        assert!(html.contains("<meta property=\"og:title\""), "{path}");
        assert!(
            html.contains("The &lt;b&gt;Whale&lt;/b&gt; &amp; I"),
            "{path} lists the post"
        );
    }
    let html = page(&app, &format!("/comunidad/{slug}")).await;
    assert!(html.contains("<em>Ishmael</em>"), "{html}");
    assert!(html.contains("<meta property=\"og:type\" content=\"article\">"));
    assert!(html.contains("<meta property=\"og:image\" content=\"https://example.com/whale.png\">"));

    let draft = publish(&app, &author, json!({"title": "Hidden", "content": "x"})).await;
    for path in [
        format!("/comunidad/{}", draft["slug"].as_str().unwrap()),
        "/comunidad/no-such-post".into(),
        "/comunidad/categoria/nothing".into(),
        "/comunidad/etiqueta/nothing".into(),
        "/comunidad?page=2".into(),
    ] {
        assert_error(app.get_anonymous(&path).await, 404, "not_found").await;
    }
    assert_error(
        app.get_anonymous("/comunidad?page=x").await,
        400,
        "bad_request",
    )
    .await;
}

#[tokio::test]
async fn the_community_pages_through_its_posts() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    for n in 0..12 {
        publish(
            &app,
            &author,
            json!({"title": format!("Entry {n}"), "content": "x", "status": "PUBLISHED"}),
        )
        .await;
    }
    let first = page(&app, "/comunidad").await;
    assert!(first.contains("Entry 11") && !first.contains("Entry 1<"));
    assert!(first.contains("<a rel=\"next\" href=\"/comunidad?page=2\">"));
    let second = page(&app, "/comunidad?page=2").await;
    assert!(second.contains("Entry 1<") && second.contains("Entry 0<"));
    assert!(second.contains("<a rel=\"prev\" href=\"/comunidad\">"));
    assert!(second.contains("Page 2 of 2"));
}

/// Stored cross-site scripting: hostile Markdown in a post and a comment renders inert on the
/// pages, while the JSON returns the Markdown as written.
#[tokio::test]
async fn script_event_handlers_javascript_links_and_raw_html_render_inert() {
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let hostile = "Hello <script>alert('post')</script>\n\n<img src=x onerror=alert(1)>\n\n\
                   [click me](javascript:alert(2)) <a href=\"javascript:alert(3)\">raw</a>\n\n\
                   <div onclick=\"alert(4)\" style=\"position:fixed\">raw html</div>\n\n[fine](https://example.com)";
    let post = publish(
        &app,
        &author,
        json!({"title": "<script>alert('title')</script>", "content": hostile, "status": "PUBLISHED"}),
    )
    .await;
    let comment = app
        .send_json(
            Method::POST,
            "/api/community/comments",
            &author.key,
            json!({"postId": post["id"], "content": hostile}),
        )
        .await;
    assert_eq!(comment.status(), 201);

    let html = page(
        &app,
        &format!("/comunidad/{}", post["slug"].as_str().unwrap()),
    )
    .await;
    for bad in [
        "<script",
        "onerror",
        "javascript:",
        "onclick",
        "position:fixed",
    ] {
        assert!(!html.contains(bad), "{bad} in the page:\n{html}");
    }
    assert!(
        html.contains("&lt;script&gt;alert("),
        "the title shows as text"
    );
    assert!(
        html.contains("<a href=\"https://example.com\" rel=\"nofollow ugc noopener\">fine</a>"),
        "{html}"
    );
    let json = app
        .get_anonymous(&format!(
            "/api/community/posts/{}",
            post["id"].as_str().unwrap()
        ))
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(
        json["post"]["content"], hostile,
        "the API returns the Markdown as written"
    );
    let comments = app
        .get_anonymous(&format!(
            "/api/community/comments?postId={}",
            post["id"].as_str().unwrap()
        ))
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(comments["comments"][0]["content"], hostile);
}

#[tokio::test]
async fn robots_txt_is_the_specs() {
    let app = TestApp::new().with_workers().start().await;
    let response = app.get_anonymous("/robots.txt").await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        response.text().await.unwrap(),
        format!(
            "User-agent: *\nAllow: /\nDisallow: /dashboard/\nDisallow: /admin/\nDisallow: /api/\n\nSitemap: {}/sitemap.xml\n",
            app.url
        )
    );
}

/// The `<loc>`s of a sitemap, unescaped.
fn locations(xml: &str) -> Vec<String> {
    xml.split("<loc>")
        .skip(1)
        .filter_map(|rest| rest.split("</loc>").next())
        .map(|loc| loc.replace("&amp;", "&"))
        .collect()
}

#[tokio::test]
async fn the_sitemap_lists_what_the_public_can_open_and_every_url_answers_200() {
    if !have(Tool::Checkers) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let boss = app.user_with(Plan::Free, Role::Admin).await;
    let tag = app
        .send_json(
            Method::POST,
            "/api/admin/community/tags",
            &boss.key,
            json!({"name": "Melville"}),
        )
        .await;
    assert_eq!(tag.status(), 201);
    let author = app.user().await;
    let post = publish(
        &app,
        &author,
        json!({"title": "Listed", "content": "x", "status": "PUBLISHED", "tagSlugs": ["melville"]}),
    )
    .await;
    publish(
        &app,
        &author,
        json!({"title": "Unlisted draft", "content": "x"}),
    )
    .await;
    // Translated books shared publicly, unlisted (the default), and publicly then unshared.
    let mut tokens = Vec::new();
    for public in [json!(true), json!(null), json!(true)] {
        let id = app.translated_sample(&author.key).await;
        let shared: Value = app
            .send_json(
                Method::POST,
                &format!("/api/books/{id}/share"),
                &author.key,
                json!({"public": public}),
            )
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(shared["public"], public == json!(true), "{shared}");
        tokens.push((id, shared["shareToken"].as_str().unwrap().to_string()));
    }
    let unshared = app
        .send_json(
            Method::DELETE,
            &format!("/api/books/{}/share", tokens[2].0),
            &author.key,
            json!({}),
        )
        .await;
    assert_eq!(unshared.status(), 200);

    let response = app.get_anonymous("/sitemap.xml").await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/xml; charset=utf-8"
    );
    let xml = response.text().await.unwrap();
    assert!(xml.contains("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"));
    let urls = locations(&xml);
    let site = app.url.clone();
    for expected in [
        format!("{site}/"),
        format!("{site}/comunidad"),
        format!("{site}/comunidad/{}", post["slug"].as_str().unwrap()),
        format!("{site}/comunidad/categoria/general"),
        format!("{site}/comunidad/etiqueta/melville"),
        format!("{site}/shared/{}", tokens[0].1),
    ] {
        assert!(
            urls.contains(&expected),
            "{expected} missing from {urls:#?}"
        );
    }
    assert!(!xml.contains("unlisted-draft"));
    assert!(
        !xml.contains(&tokens[1].1),
        "an unlisted link is not listed"
    );
    assert!(!xml.contains(&tokens[2].1), "a revoked link is not listed");
    assert!(xml.contains("<lastmod>"));
    assert_eq!(sitemap_errors(&xml), Vec::<String>::new());
    for url in &urls {
        let path = url.strip_prefix(&site).unwrap();
        assert_eq!(app.get_anonymous(path).await.status(), 200, "{url}");
    }
}

#[tokio::test]
async fn a_feed_description_is_the_excerpt_as_text_never_as_markup() {
    if !have(Tool::Checkers) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    publish(
        &app,
        &author,
        json!({"title": "Hostile", "content": "Body.", "excerpt": "<script>alert(1)</script> & <b>bold</b>", "status": "PUBLISHED"}),
    )
    .await;
    let bytes = app
        .get_anonymous("/comunidad/feed.xml")
        .await
        .bytes()
        .await
        .unwrap();
    let channel = rss::Channel::read_from(&bytes[..]).expect("a valid RSS 2.0 document");
    // What a feed reader renders as HTML: the characters, escaped.
    assert_eq!(
        channel.items()[0].description(),
        Some("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;")
    );
    // A real feed reader's parser sees HTML that shows the characters, with no element in it.
    let feed = parsed_feed(&bytes);
    let summary = feed["entries"][0]["summary"].as_str().unwrap();
    assert!(!summary.contains('<'), "{summary}");
    assert!(summary.starts_with("&lt;script&gt;"), "{summary}");
}

#[tokio::test]
async fn the_feed_is_rss_2_with_the_50_latest_published_posts() {
    if !have(Tool::Checkers) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    for n in 0..60 {
        publish(
            &app,
            &author,
            json!({"title": format!("Feed post {n}"), "content": format!("Body {n}."), "status": "PUBLISHED"}),
        )
        .await;
    }
    let response = app.get_anonymous("/comunidad/feed.xml").await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/rss+xml; charset=utf-8"
    );
    let bytes = response.bytes().await.unwrap();
    let feed = parsed_feed(&bytes);
    assert_eq!(feed["version"], "rss20");
    assert_eq!(feed["bozo"], false, "{feed}");
    let entries = feed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 50);
    let link = format!("{}/comunidad/feed-post-59", app.url);
    assert_eq!(entries[0]["title"], "Feed post 59");
    assert_eq!(entries[0]["summary"], "Body 59.");
    assert_eq!(entries[0]["link"], link.as_str());
    assert_eq!(entries[0]["id"], link.as_str());
    assert_eq!(entries[0]["author"], "Test");
    assert!(entries[0]["published"].is_string(), "{}", entries[0]);
    assert_eq!(entries[49]["title"], "Feed post 10");

    // And as the `rss` crate reads it, with the author as Dublin Core's creator.
    let channel = rss::Channel::read_from(&bytes[..]).expect("a valid RSS 2.0 document");
    assert_eq!(channel.items().len(), 50);
    let newest = &channel.items()[0];
    assert_eq!(newest.guid().map(|g| g.value()), Some(link.as_str()));
    assert_eq!(
        newest.dublin_core_ext().map(|dc| dc.creators().to_vec()),
        Some(vec!["Test".to_string()])
    );
}

/// Runs headless Chromium (Debian's, installed by `scripts/test.sh`) on `url`: the DOM after
/// rendering (scripts included), and a screenshot under `target/screenshots/` to look at.
/// Offline: every request beyond the test server goes to a proxy that is not there. Fails on
/// any message the page writes to the console (a script error, a resource the page's policy
/// refused).
pub fn chromium(url: &str, screenshot: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let profile = tempfile::TempDir::new().unwrap();
    let run = |extra: &[String]| {
        let output = std::process::Command::new("chromium")
            // As root in a container: no sandbox, and no reliance on a small /dev/shm.
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                // Loopback bypasses a proxy; anything else (a CDN) would fail to load.
                "--proxy-server=http://127.0.0.1:9",
                "--virtual-time-budget=10000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(url)
            .output()
            .expect("chromium is installed by scripts/test.sh");
        let log = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{log}");
        let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(
            console.is_empty(),
            "{url} wrote to the console: {console:#?}"
        );
        String::from_utf8(output.stdout).unwrap()
    };
    run(&[
        format!("--screenshot={}", dir.join(screenshot).display()),
        "--window-size=1200,900".into(),
    ]);
    run(&[
        "--dump-dom".into(),
        "--enable-logging=stderr".into(),
        "--v=0".into(),
    ])
}

#[tokio::test]
async fn the_pages_and_the_share_reader_render_in_a_real_browser() {
    if !have(Tool::Chromium) {
        return;
    }
    let app = TestApp::new().with_workers().start().await;
    let author = app.user().await;
    let post = publish(
        &app,
        &author,
        json!({"title": "Rendered in Chromium", "content": "A *real* browser.", "status": "PUBLISHED"}),
    )
    .await;
    let commented = app
        .send_json(
            Method::POST,
            "/api/community/comments",
            &author.key,
            json!({"postId": post["id"], "content": "A comment the browser shows."}),
        )
        .await;
    assert_eq!(commented.status(), 201);
    let id = app.translated_sample(&author.key).await;
    let token = app.share(&author.key, &id).await;
    let site = app.url.clone();
    let slug = post["slug"].as_str().unwrap();
    let pages = [
        (format!("{site}/"), "home.png", "Rendered in Chromium"),
        (
            format!("{site}/comunidad"),
            "comunidad.png",
            "Rendered in Chromium",
        ),
        (
            format!("{site}/comunidad/{slug}"),
            "post.png",
            "A comment the browser shows.",
        ),
        (format!("{site}/shared/{token}"), "share.png", "Translation"),
    ];
    for (url, screenshot, expected) in pages {
        let url = url.clone();
        let dom = tokio::task::spawn_blocking(move || chromium(&url, screenshot))
            .await
            .unwrap();
        assert!(dom.contains(expected), "{screenshot}: {dom}");
        // One layout for all of them, the share reader included, with the app's header.
        assert!(
            dom.contains("<header class=\"bar\">") && dom.contains("rel=\"canonical\""),
            "{screenshot}: {dom}"
        );
    }
}
