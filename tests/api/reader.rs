//! The readers (the owner's `/dashboard/books/{id}/read` and the share's `/shared/{token}`) on a
//! book with one very long chapter: each page is bounded, and the pages walk the chapter.

use reqwest::redirect::Policy;
use reqwest::{Client, Response};

use crate::helpers::TestApp;

/// Paragraphs in the long chapter.
const PARAGRAPHS: usize = 5_000;
/// Rows on a full page (`booktr_api::web::reader::PAGE_BLOCKS`).
const PAGE_ROWS: usize = 200;
/// A page's bytes are far below this whatever the book (a few MB at most); this one is small.
const PAGE_BYTES: usize = 512 * 1024;

/// A plain-text book: a short chapter, one of [`PARAGRAPHS`] paragraphs, a short one.
fn long_book() -> Vec<u8> {
    let mut text = String::from("CHAPTER I. Short\n\nA short first chapter.\n\n");
    text.push_str("CHAPTER II. Endless\n\n");
    for i in 0..PARAGRAPHS {
        text.push_str(&format!("Paragraph {i:05} goes on.\n\n"));
    }
    text.push_str("CHAPTER III. After\n\nThe end of the book.\n");
    text.into_bytes()
}

/// A client with the session cookie of a new account (signed in through the page).
pub(crate) async fn signed_in(app: &TestApp) -> (Client, String, crate::helpers::TestUser) {
    use booktr_core::accounts::NewUser;
    use booktr_core::types::{Email, Plan, Role};
    let email = format!("{}@example.com", booktr_core::ids::new_id());
    let user = app
        .services
        .accounts
        .create_user(NewUser {
            email: Email::parse(&email).unwrap(),
            name: None,
            password: Some("a long password".into()),
            role: Role::User,
            plan: Plan::Business,
        })
        .await
        .unwrap();
    let key = app
        .services
        .accounts
        .create_key(&user, "test", None, None)
        .await
        .unwrap();
    let client = Client::builder().redirect(Policy::none()).build().unwrap();
    let response = client
        .post(format!("{}/signin", app.url))
        .form(&[("email", email.as_str()), ("password", "a long password")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let user = crate::helpers::TestUser {
        id: user.id,
        key: key.secret,
    };
    (client, cookie, user)
}

/// The originals of a reader page's rows (side by side), and whether each has its translation.
fn rows(html: &str) -> Vec<(String, bool)> {
    html.split("<div class=\"row ")
        .skip(1)
        .map(|row| {
            let original = row
                .split("<div class=\"original\"")
                .nth(1)
                .unwrap()
                .split_once('>')
                .unwrap()
                .1
                .split('<')
                .next()
                .unwrap();
            (original.to_string(), !row.contains("not translated yet"))
        })
        .collect()
}

/// The `href` of the link with `rel` on the page, unescaped.
fn link(html: &str, rel: &str) -> Option<String> {
    let start = format!("<a rel=\"{rel}\" href=\"");
    let at = html.find(&start)? + start.len();
    Some(html[at..].split('"').next()?.replace("&amp;", "&"))
}

type Get<'a> = Box<dyn Fn(String) -> futures::future::BoxFuture<'static, Response> + 'a>;

/// Walks chapter 2 from `first` (a path) by its next links, then back by its previous ones;
/// returns the rows seen going forward. Every page is bounded; the walk ends at chapter 3.
async fn walk(get: Get<'_>, first: String) -> Vec<(String, bool)> {
    let mut seen = Vec::new();
    let mut pages = vec![first.clone()];
    let mut at = first;
    loop {
        let response = get(at.clone()).await;
        assert_eq!(response.status(), 200, "{at}");
        let html = response.text().await.unwrap();
        assert!(html.len() < PAGE_BYTES, "{at} is {} bytes", html.len());
        let here = rows(&html);
        assert!(here.len() <= PAGE_ROWS, "{at} has {} rows", here.len());
        seen.extend(here);
        match link(&html, "next") {
            Some(next) if next.contains("page=") => {
                pages.push(next.clone());
                at = next;
            }
            Some(next) => {
                assert!(next.ends_with("?chapter=3"), "{next}");
                break;
            }
            None => panic!("the last page of chapter 2 leads to chapter 3"),
        }
    }
    // Back from the last page, each previous link is the page before.
    for pair in pages.windows(2).rev() {
        let html = get(pair[1].clone()).await.text().await.unwrap();
        let previous = link(&html, "prev").unwrap();
        let expected = pair[0].clone();
        assert_eq!(previous, expected, "before {}", pair[1]);
    }
    let last = pages.last().unwrap().clone();
    let past = last.replace(
        &format!("page={}", pages.len()),
        &format!("page={}", pages.len() + 1),
    );
    assert_eq!(get(past).await.status(), 404, "a page past the last");
    seen
}

fn assert_whole_chapter(seen: &[(String, bool)]) {
    let expected: Vec<String> = (0..PARAGRAPHS)
        .map(|i| format!("Paragraph {i:05} goes on."))
        .collect();
    // The chapter's heading is a row of its own, on the first page.
    let originals: Vec<String> = seen
        .iter()
        .map(|(o, _)| o.clone())
        .filter(|o| !o.starts_with("CHAPTER"))
        .collect();
    assert_eq!(originals.len(), PARAGRAPHS, "every paragraph once");
    assert_eq!(originals, expected, "in order");
    assert!(seen.iter().all(|(_, translated)| *translated));
}

#[tokio::test]
async fn both_readers_page_a_chapter_of_five_thousand_paragraphs_into_bounded_pages() {
    let app = TestApp::new().with_workers().start().await;
    let (client, cookie, user) = signed_in(&app).await;
    let id = app.upload_ok(&user.key, "long.txt", long_book()).await;
    app.wait_for_status(&user.key, &id, "EXTRACTED").await;
    // Without the translation memory: its 5,000 entries take the AWS emulator minutes (its
    // transactions slow down as its table grows), and the pages do not depend on them.
    let book = app
        .translate_to_end(&user.key, &id, serde_json::json!({"memory": false}))
        .await;
    assert_eq!(book["status"], "COMPLETED", "{book}");

    let owner = format!("/dashboard/books/{id}/read");
    let site = app.url.clone();
    let get: Get = Box::new(|path: String| {
        let request = client
            .get(format!("{site}{path}"))
            .header("cookie", cookie.clone());
        Box::pin(async move { request.send().await.unwrap() })
    });
    let first = get(owner.clone()).await;
    assert_eq!(first.status(), 200);
    let first = first.text().await.unwrap();
    assert!(first.contains("A short first chapter."), "{first}");
    assert_eq!(
        link(&first, "next"),
        Some(format!("{owner}?chapter=2")),
        "a one-page chapter leads to the next chapter"
    );
    let seen = walk(get, format!("{owner}?chapter=2")).await;
    assert_whole_chapter(&seen);

    let token = app.share(&user.key, &id).await;
    let shared = format!("/shared/{token}");
    let anyone = Client::new();
    let get: Get = Box::new(|path: String| {
        let request = anyone.get(format!("{site}{path}"));
        Box::pin(async move { request.send().await.unwrap() })
    });
    assert_eq!(
        get(format!("{shared}?chapter=2&page=0")).await.status(),
        404,
        "pages count from 1"
    );
    let seen = walk(get, format!("{shared}?chapter=2")).await;
    assert_whole_chapter(&seen);
}
