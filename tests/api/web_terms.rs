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

/// The owner's [`names`] book translated to COMPLETED; its page's path and id, and the form
/// token.
async fn translated(owner: &mut Browser<'_>) -> (String, String, String) {
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(&token, "names.txt", names(), "The Term Book")
        .await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "COMPLETED").await;
    (page, id, token)
}

/// Every passage of the book, as the API tells it to the owner's session.
async fn passages(owner: &Browser<'_>, id: &str) -> Vec<Value> {
    let book = owner.book(id).await;
    let mut all = Vec::new();
    for chapter in 1..=book["chapterCount"].as_u64().unwrap() {
        let path = format!("/api/books/{id}/chapters/{chapter}/passages?limit=200");
        let page: Value = owner.get(&path).await.json().await.unwrap();
        all.extend(page["passages"].as_array().unwrap().iter().cloned());
    }
    all
}

fn text(passage: &Value) -> &str {
    passage["text"].as_str().unwrap_or_default()
}

/// The value of the hidden field `name` of the page's form whose action is `action`.
fn form_field(html: &str, action: &str, name: &str) -> String {
    let form = &html[html.find(&format!("action=\"{action}\"")).expect(action)..];
    let form = &form[..form.find("</form>").unwrap()];
    let start = format!("name=\"{name}\" value=\"");
    let at = form
        .find(&start)
        .unwrap_or_else(|| panic!("no {name}: {form}"))
        + start.len();
    form[at..].split('"').next().unwrap().to_string()
}

/// The passages the preview offers: each box's value, and whether it is ticked.
fn boxes(html: &str) -> Vec<(String, bool)> {
    html.split("name=\"p\" value=\"")
        .skip(1)
        .map(|rest| {
            let value = rest.split('"').next().unwrap().to_string();
            let ticked = rest[value.len() + 1..].starts_with(" checked");
            (value, ticked)
        })
        .collect()
}

/// An edit that renames a term in one passage offers the change in the whole book; its preview
/// shows every passage before and after, the owner's own edit apart and not ticked; applying
/// changes those ticked, leaves the owner's edit and a passage changed since alone, and puts
/// the term in the book's glossary.
#[tokio::test]
async fn an_edit_that_renames_a_term_offers_the_book_wide_change_previews_and_applies_it() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (page, id, token) = translated(&mut owner).await;
    let list = listed(&owner, &id).await;
    let from = entry(&list, "Queequeg").unwrap()["target"]
        .as_str()
        .unwrap()
        .to_string();
    let holding: Vec<Value> = passages(&owner, &id)
        .await
        .into_iter()
        .filter(|p| text(p).contains(&from))
        .collect();
    assert_eq!(holding.len(), 8, "{holding:?}");
    let at = |p: &Value| (p["chapter"].as_u64().unwrap(), p["index"].as_u64().unwrap());
    let action = |p: &Value| {
        let (chapter, index) = at(p);
        format!("/dashboard/books/{id}/passages/{chapter}/{index}")
    };

    // The owner's own text in one passage, which keeps the rendering: it suggests nothing.
    let own = &holding[7];
    let own_text = format!("{} Fin.", text(own));
    let saved = owner
        .post_form(
            &action(own),
            &[
                ("csrf", &token),
                ("version", "0"),
                ("text", &own_text),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let back = location(&saved);
    assert!(
        back.ends_with(&format!("&done=saved#p-{}", at(own).1)),
        "{back}"
    );
    assert!(!owner.html(&back).await.contains("This edit renames"));

    // The rename: the editor offers it, with the term's source, old and new renderings.
    let first = &holding[0];
    let renamed = text(first).replace(&from, "Kwikweg");
    let saved = owner
        .post_form(
            &action(first),
            &[
                ("csrf", &token),
                ("version", "0"),
                ("text", &renamed),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let back = location(&saved);
    assert!(back.contains("&done=saved&term=Queequeg&from="), "{back}");
    assert!(back.contains("&to=Kwikweg#p-"), "{back}");
    let editor = owner.html(&back).await;
    assert!(editor.contains("Saved: the book"), "{editor}");
    assert!(
        editor.contains("This edit renames a term of the book:"),
        "{editor}"
    );
    assert!(editor.contains("Rename it in the whole book"), "{editor}");
    let rename = format!("/dashboard/books/{id}/terms/rename");
    assert_eq!(form_field(&editor, &rename, "source"), "Queequeg");
    assert_eq!(form_field(&editor, &rename, "to"), "Kwikweg");
    assert_eq!(form_field(&editor, &rename, "from"), from);

    // The same save from the page's script: the editor alone, with the offer.
    let second = &holding[1];
    let fragment = owner
        .post_form_with(
            "x-booktr-fragment",
            &action(second),
            &[
                ("csrf", &token),
                ("version", "0"),
                ("text", &text(second).replace(&from, "Kwikweg")),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(fragment.status(), 200);
    let html = fragment.text().await.unwrap();
    assert!(
        html.starts_with("<div class=\"translation editing\""),
        "{html}"
    );
    assert!(html.contains(&format!("action=\"{rename}\"")), "{html}");

    // The preview: every other passage holding the old rendering, before and after; nothing
    // changes yet.
    let (chapter, index) = at(first);
    let fields = [
        ("csrf", token.as_str()),
        ("source", "Queequeg"),
        ("from", from.as_str()),
        ("to", "Kwikweg"),
        ("chapter", &chapter.to_string()),
        ("index", &index.to_string()),
    ];
    let preview = owner.post_form(&rename, &fields).await;
    assert_eq!(preview.status(), 200);
    let html = preview.text().await.unwrap();
    assert!(html.contains("Rename a term in the whole book"), "{html}");
    assert!(
        html.contains("Passages with the model&#x27;s text (5)")
            || html.contains("Passages with the model's text (5)"),
        "{html}"
    );
    assert!(html.contains("Your own edits (1)"), "{html}");
    assert!(html.contains(&format!("<mark>{from}</mark>")), "{html}");
    assert!(html.contains("<mark>Kwikweg</mark>"), "{html}");
    assert!(
        html.contains(&format!(
            "{page}/read?chapter={chapter}&amp;near={index}#p-{index}"
        )),
        "{html}"
    );
    let offered = boxes(&html);
    assert_eq!(offered.len(), 6, "{offered:?}");
    let (own_chapter, own_index) = at(own);
    let own_box = format!("{own_chapter}.{own_index}.1");
    assert_eq!(
        offered
            .iter()
            .filter(|(_, ticked)| !ticked)
            .map(|(v, _)| v.clone())
            .collect::<Vec<_>>(),
        std::slice::from_ref(&own_box),
        "the owner's edit is offered apart, not ticked"
    );
    let untouched = passages(&owner, &id).await;
    assert_eq!(
        untouched.iter().filter(|p| text(p).contains(&from)).count(),
        6
    );

    // Nothing ticked: nothing changed, and the page says so.
    let refused = owner.post_form(&format!("{rename}/apply"), &fields).await;
    assert_eq!(refused.status(), 400);
    let html = refused.text().await.unwrap();
    assert!(html.contains("tick at least one passage"), "{html}");

    // Applied to the ticked ones, and to the owner's edit named at a version it no longer has.
    let ticked: Vec<String> = offered
        .iter()
        .filter(|(_, ticked)| *ticked)
        .map(|(v, _)| v.clone())
        .collect();
    let stale = format!("{own_chapter}.{own_index}.0");
    let mut apply: Vec<(&str, &str)> = fields.to_vec();
    apply.extend(ticked.iter().map(|v| ("p", v.as_str())));
    apply.push(("p", &stale));
    let applied = owner.post_form(&format!("{rename}/apply"), &apply).await;
    assert_eq!(applied.status(), 200);
    let html = applied.text().await.unwrap();
    assert!(html.contains("Renamed in 5 passages."), "{html}");
    assert!(html.contains("changed since the preview"), "{html}");
    assert!(html.contains("made for this book"), "{html}");
    assert!(html.contains("Your own edits (1)"), "still offered: {html}");
    let after = passages(&owner, &id).await;
    let still: Vec<&Value> = after.iter().filter(|p| text(p).contains(&from)).collect();
    assert_eq!(still.len(), 1, "{still:?}");
    assert_eq!(text(still[0]), own_text, "the owner's edit is left alone");
    assert_eq!(
        after.iter().filter(|p| text(p).contains("Kwikweg")).count(),
        7
    );
    // The term is the book's glossary's now, for later runs.
    let glossary = owner.book(&id).await["glossaryId"]
        .as_str()
        .unwrap()
        .to_string();
    let glossary: Value = owner
        .get(&format!("/api/glossary/{glossary}"))
        .await
        .json()
        .await
        .unwrap();
    assert!(glossary.to_string().contains("Kwikweg"), "{glossary}");
}

#[tokio::test]
async fn the_book_wide_rename_needs_its_token_and_another_persons_book_is_not_found() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (_, id, token) = translated(&mut owner).await;
    let from = entry(&listed(&owner, &id).await, "Queequeg").unwrap()["target"]
        .as_str()
        .unwrap()
        .to_string();
    let rename = format!("/dashboard/books/{id}/terms/rename");
    let before = passages(&owner, &id).await;
    let one = before.iter().find(|p| text(p).contains(&from)).unwrap();
    let named = format!("{}.{}.0", one["chapter"], one["index"]);
    let fields = |csrf: &str| {
        vec![
            ("csrf", csrf.to_string()),
            ("source", "Queequeg".to_string()),
            ("from", from.clone()),
            ("to", "<b>Kwikweg</b>".to_string()),
            ("p", named.clone()),
        ]
    };
    let send = |fields: &[(&str, String)]| {
        fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect::<Vec<_>>()
    };
    // What the owner typed is shown as text.
    let shown = owner
        .post_form(&rename, &as_refs(&send(&fields(&token))))
        .await;
    assert_eq!(shown.status(), 200);
    let html = shown.text().await.unwrap();
    assert!(html.contains("“&lt;b&gt;Kwikweg&lt;/b&gt;”"), "{html}");
    assert!(!html.contains("<b>Kwikweg</b>"), "{html}");

    let forged = owner
        .post_form(
            &format!("{rename}/apply"),
            &as_refs(&send(&fields("forged"))),
        )
        .await;
    assert_eq!(forged.status(), 403);
    let mut other = Browser::new(&app);
    other.sign_up().await;
    let theirs = other.token("/dashboard").await;
    let not_theirs = other
        .post_form(&rename, &as_refs(&send(&fields(&theirs))))
        .await;
    assert_eq!(not_theirs.status(), 404);
    let not_theirs = other
        .post_form(
            &format!("{rename}/apply"),
            &as_refs(&send(&fields(&theirs))),
        )
        .await;
    assert_eq!(not_theirs.status(), 404);
    assert_eq!(passages(&owner, &id).await, before, "nothing changed");
}
