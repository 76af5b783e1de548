//! A book's term list through its page, as a browser without JavaScript uses it: a run started
//! to stop at its terms leads to the list from the book's page, where its owner changes a
//! rendering, removes a term, adds one and continues the run; another person's book is not
//! found; a refused change keeps what was typed.

use serde_json::Value;

use crate::helpers::TestApp;
use crate::web_app::{location, Browser};

/// Four chapters in which "Queequeg" and "Ishmael" recur.
pub(crate) fn names() -> Vec<u8> {
    let mut text = String::from("The Term Book\n\n");
    for n in 1..=4 {
        text.push_str(&format!(
            "Chapter {n}\n\nIn chapter {n} the harpooneer Queequeg spoke, and then Ishmael \
             answered him.\n\nLater still Queequeg slept while Ishmael kept watch.\n\n"
        ));
    }
    text.into_bytes()
}

/// A signed-up owner's [`names`] book, started to stop at its term list and paused there; its
/// page's path and id, and the owner's form token.
async fn paused_at_terms(owner: &mut Browser<'_>) -> (String, String, String) {
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(&token, "names.txt", names(), "The Term Book")
        .await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(
            &format!("{page}/start"),
            &[("csrf", &token), ("pauseAtTerms", "yes")],
        )
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "PAUSED").await;
    (page, id, token)
}

/// The list as the API tells it to the owner's session.
async fn listed(owner: &Browser<'_>, id: &str) -> Value {
    let list = owner
        .get(&format!("/api/translate/terms?bookId={id}"))
        .await;
    assert_eq!(list.status(), 200);
    list.json().await.unwrap()
}

fn entry<'a>(list: &'a Value, source: &str) -> Option<&'a Value> {
    list["terms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["source"] == source)
}

/// The page's table as its form sends it: each term, the rendering shown, and `target` typed
/// in place of the rendering for the terms it names.
fn rows(list: &Value, typed: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    for term in list["terms"].as_array().unwrap() {
        if term["origin"] == "glossary" {
            continue;
        }
        let source = term["source"].as_str().unwrap();
        let shown = term["target"].as_str().unwrap();
        let target = typed
            .iter()
            .find(|(s, _)| *s == source)
            .map_or(shown, |(_, t)| *t);
        fields.push(("source".to_string(), source.to_string()));
        fields.push(("was".to_string(), shown.to_string()));
        fields.push(("target".to_string(), target.to_string()));
    }
    fields
}

fn with(mut fields: Vec<(String, String)>, more: &[(&str, &str)]) -> Vec<(String, String)> {
    fields.extend(more.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    fields
}

fn as_refs(fields: &[(String, String)]) -> Vec<(&str, &str)> {
    fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

#[tokio::test]
async fn an_owner_checks_and_changes_the_term_list_from_the_pages_then_continues_the_run() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (page, id, token) = paused_at_terms(&mut owner).await;
    let terms = format!("{page}/terms");

    // The book's page leads to the list, which says the run waits for it.
    let book = owner.html(&page).await;
    assert!(
        book.contains(&format!(
            "<a class=\"primary\" href=\"{terms}\">Check the term list</a>"
        )),
        "{book}"
    );
    assert!(book.contains("Paused with the term list ready"), "{book}");
    let html = owner.html(&terms).await;
    assert!(
        html.contains("The translation is waiting for you"),
        "{html}"
    );
    assert!(html.contains("Continue the translation"), "{html}");
    let before = listed(&owner, &id).await;
    let queequeg = entry(&before, "Queequeg").expect("Queequeg listed");
    let rendering = queequeg["target"].as_str().unwrap();
    assert!(html.contains("Queequeg"), "{html}");
    assert!(html.contains("Found by the model"), "{html}");
    assert!(
        html.contains("aria-label=\"Rendering of Queequeg\""),
        "{html}"
    );
    assert!(entry(&before, "Ishmael").is_some(), "{before}");

    // One rendering changed, one term removed, one added, through the form.
    let form = with(
        rows(&before, &[("Queequeg", " Kwikweg ")]),
        &[
            ("csrf", &token),
            ("remove", "Ishmael"),
            ("newSource", "Starbuck"),
            ("newTarget", "Estarbuck"),
        ],
    );
    let saved = owner.post_form(&terms, &as_refs(&form)).await;
    assert_eq!(saved.status(), 303);
    assert_eq!(location(&saved), format!("{terms}?saved=1"));
    let after = listed(&owner, &id).await;
    let queequeg = entry(&after, "Queequeg").unwrap();
    assert_eq!(
        (&queequeg["target"], &queequeg["origin"]),
        (&Value::from("Kwikweg"), &Value::from("owner")),
        "{after}"
    );
    assert!(entry(&after, "Ishmael").is_none(), "{after}");
    let starbuck = entry(&after, "Starbuck").expect("Starbuck added");
    assert_eq!(starbuck["target"], "Estarbuck");
    let html = owner.html(&format!("{terms}?saved=1")).await;
    assert!(
        html.contains("Saved: the chapters translated from now on use the list."),
        "{html}"
    );
    assert!(html.contains("value=\"Kwikweg\""), "{html}");
    assert!(html.contains("Set by you"), "{html}");
    assert_ne!(rendering, "Kwikweg");

    // A form sent again unchanged changes nothing.
    let same = owner
        .post_form(
            &terms,
            &as_refs(&with(rows(&after, &[]), &[("csrf", &token)])),
        )
        .await;
    assert_eq!(same.status(), 303);
    assert_eq!(listed(&owner, &id).await, after);

    // The run goes on from the list's page, and its chapters use the list.
    let html = owner.html(&terms).await;
    let resume = format!("action=\"{page}/resume\"");
    assert!(html.contains(&resume), "{html}");
    let resumed = owner
        .post_form(&format!("{page}/resume"), &[("csrf", &token)])
        .await;
    assert_eq!(resumed.status(), 303);
    assert_eq!(location(&resumed), page);
    owner.wait_for(&id, "COMPLETED").await;
    let mut kept = 0;
    for chapter in 1..=5 {
        let reader = owner.get(&format!("{page}/read?chapter={chapter}")).await;
        if reader.status() == 200 && reader.text().await.unwrap().contains("Kwikweg") {
            kept += 1;
        }
    }
    assert_eq!(
        kept, 4,
        "every chapter renders Queequeg as the owner set it"
    );
    // Done: the book's page still offers the list, no longer as a pause.
    let book = owner.html(&page).await;
    assert!(
        book.contains(&format!("<a href=\"{terms}\">The book's term list</a>")),
        "{book}"
    );
    assert!(!book.contains("Paused with the term list ready"), "{book}");
    let html = owner.html(&terms).await;
    assert!(
        !html.contains("The translation is waiting for you"),
        "{html}"
    );
}

#[tokio::test]
async fn a_refused_term_change_keeps_what_was_typed_and_another_persons_list_is_not_found() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (page, id, token) = paused_at_terms(&mut owner).await;
    let terms = format!("{page}/terms");
    let before = listed(&owner, &id).await;

    // A rendering too long: the page again (400), saying why, the text typed still there.
    let long = "K".repeat(201);
    let form = with(
        rows(&before, &[("Queequeg", &long)]),
        &[
            ("csrf", &token),
            ("newSource", "Starbuck"),
            ("newTarget", ""),
        ],
    );
    let refused = owner.post_form(&terms, &as_refs(&form)).await;
    assert_eq!(refused.status(), 400);
    let html = refused.text().await.unwrap();
    assert!(html.contains("Not saved:"), "{html}");
    assert!(
        html.contains("a new term needs both the term and its rendering."),
        "{html}"
    );
    assert!(html.contains("value=\"Starbuck\""), "{html}");
    let form = with(
        rows(&before, &[("Queequeg", &long)]),
        &[("csrf", &token), ("remove", "Ishmael")],
    );
    let refused = owner.post_form(&terms, &as_refs(&form)).await;
    assert_eq!(refused.status(), 400);
    let html = refused.text().await.unwrap();
    assert!(html.contains("1 to 200 characters"), "{html}");
    assert!(html.contains(&format!("value=\"{long}\"")), "{html}");
    assert!(
        html.contains("aria-describedby=\"terms-refused\""),
        "{html}"
    );
    assert!(html.contains("value=\"Ishmael\" checked"), "{html}");
    // What the owner writes is shown as text.
    let form = with(
        rows(&before, &[]),
        &[
            ("csrf", &token),
            ("newSource", "<b>Ahab</b>"),
            ("newTarget", "<i>Acab</i>"),
        ],
    );
    let added = owner.post_form(&terms, &as_refs(&form)).await;
    assert_eq!(added.status(), 303);
    let html = owner.html(&terms).await;
    assert!(html.contains(">&lt;b&gt;Ahab&lt;/b&gt;</td>"), "{html}");
    assert!(!html.contains("<b>Ahab</b>"), "{html}");
    let changed = listed(&owner, &id).await;
    assert_eq!(entry(&changed, "Queequeg"), entry(&before, "Queequeg"));

    // Without the session's token: refused, nothing changed.
    let form = with(rows(&changed, &[]), &[("remove", "Queequeg")]);
    let forged = owner.post_form(&terms, &as_refs(&form)).await;
    assert_eq!(forged.status(), 403);
    assert_eq!(listed(&owner, &id).await, changed);

    // Another person: neither the page nor its form.
    let mut other = Browser::new(&app);
    other.sign_up().await;
    let theirs = other.token("/dashboard").await;
    assert_eq!(other.get(&terms).await.status(), 404);
    let form = with(
        rows(&changed, &[]),
        &[("csrf", &theirs), ("remove", "Queequeg")],
    );
    let forged = other.post_form(&terms, &as_refs(&form)).await;
    assert_eq!(forged.status(), 404);
    assert_eq!(listed(&owner, &id).await, changed);
}

#[tokio::test]
async fn before_a_run_the_term_list_page_says_when_the_list_is_made() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(&token, "names.txt", names(), "The Term Book")
        .await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let book = owner.html(&page).await;
    assert!(!book.contains("/terms\""), "no list yet: {book}");
    let html = owner.html(&format!("{page}/terms")).await;
    assert!(
        html.contains("The list is made when a translation starts"),
        "{html}"
    );
    assert!(!html.contains("name=\"newSource\""), "{html}");
}
