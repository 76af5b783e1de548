//! The owner's reader as the book's editor, through its pages as a browser without JavaScript
//! uses them: the next flagged passage opened, an edit refused by its marks, saved, lost to a
//! concurrent edit without losing what was typed, undone; forms without their token refused;
//! another person's book not found; what the owner wrote shown as text; a poem's line number a
//! mark to keep, never text to edit.

use std::sync::Arc;

use booktr_formats::markup;
use serde_json::Value;

use crate::helpers::{corpus, TestApp};
use crate::passages::{book, Refusing};
use crate::web_app::{location, Browser};

/// A signed-up owner's book, translated to COMPLETED by the app's models (with [`Refusing`],
/// every passage is flagged); its page's path and id, and the owner's form token.
async fn translated_book(owner: &mut Browser<'_>) -> (String, String, String) {
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner.upload(&token, "voyage.txt", book(), "Voyage").await;
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

/// The value of the form field `name` on the page.
fn field(html: &str, name: &str) -> String {
    let start = format!("name=\"{name}\" value=\"");
    let at = html
        .find(&start)
        .unwrap_or_else(|| panic!("no {name}: {html}"))
        + start.len();
    html[at..].split('"').next().unwrap().to_string()
}

/// What the editor's field holds, as the page writes it (escaped).
fn in_field(html: &str) -> String {
    let at = html.find("<textarea").expect("an open editor");
    let text = &html[at..];
    let text = &text[text.find('>').unwrap() + 1..];
    text[..text.find("</textarea>").unwrap()].to_string()
}

/// The chapter and passage of an editor's address (`...?chapter=C&edit=N...`).
fn position(url: &str) -> (u32, u32) {
    let query = url.split(['?', '#']).nth(1).unwrap();
    let number = |name: &str| -> u32 {
        query
            .split('&')
            .find_map(|p| p.strip_prefix(name))
            .unwrap()
            .parse()
            .unwrap()
    };
    (number("chapter="), number("edit="))
}

/// The passage as the API tells it to the owner's session.
async fn passage(owner: &Browser<'_>, id: &str, chapter: u32, index: u32) -> Value {
    let path = format!("/api/books/{id}/chapters/{chapter}/passages?offset={index}&limit=1");
    let page: Value = owner.get(&path).await.json().await.unwrap();
    page["passages"][0].clone()
}

#[tokio::test]
async fn a_flagged_passage_is_found_fixed_refused_kept_and_undone_through_the_editors_forms() {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(Refusing))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    let (page, id, token) = translated_book(&mut owner).await;

    // The reader says what is open and leads to the first flagged passage.
    let reader = owner.html(&format!("{page}/read")).await;
    assert!(
        reader.contains("Passages flagged by the checks and still open:"),
        "{reader}"
    );
    assert!(reader.contains("⚑ Flagged"), "{reader}");
    let next = format!("{page}/flagged?chapter=1&amp;from=0");
    assert!(reader.contains(&next), "{reader}");
    let found = owner.get(&next.replace("&amp;", "&")).await;
    assert_eq!(found.status(), 303);
    let opened = location(&found);
    let (chapter, index) = position(&opened);
    assert!(opened.ends_with(&format!("#p-{index}")), "{opened}");
    let model = passage(&owner, &id, chapter, index).await;
    let kinds = model["flags"].to_string();
    assert!(kinds.contains("\"refusal\""), "{model}");

    let editor = owner.html(&opened).await;
    assert!(editor.contains(&format!("id=\"p-{index}\"")), "{editor}");
    assert!(
        editor.contains("the model refused, or commented instead of translating"),
        "{editor}"
    );
    // Refused, it kept its source: the label says so.
    assert!(editor.contains("The original text, kept"), "{editor}");
    assert_eq!(field(&editor, "version"), "0");
    let action = format!("/dashboard/books/{id}/passages/{chapter}/{index}");
    assert!(editor.contains(&format!("action=\"{action}\"")), "{editor}");

    // Marks unlike the source's: refused, naming the mark, with what was typed kept.
    let refused = owner
        .post_form(
            &action,
            &[
                ("csrf", &token),
                ("version", "0"),
                ("text", "Texto <i>mal</i> marcado."),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(refused.status(), 400);
    let html = refused.text().await.unwrap();
    assert!(html.contains("the marks must be the original"), "{html}");
    assert!(
        html.contains("mark 1 (&lt;i&gt;) is not in the source"),
        "{html}"
    );
    assert_eq!(in_field(&html), "Texto &lt;i&gt;mal&lt;/i&gt; marcado.");
    assert!(html.contains("aria-invalid=\"true\""));
    assert_eq!(passage(&owner, &id, chapter, index).await, model);

    // Saved: back to the passage, its editor saying so, its flag gone.
    let fix = "Corregido a mano &amp; con cuidado.";
    let saved = owner
        .post_form(
            &action,
            &[
                ("csrf", &token),
                ("version", "0"),
                ("text", fix),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let back = location(&saved);
    assert_eq!(
        back,
        format!("{page}/read?chapter={chapter}&edit={index}&done=saved#p-{index}")
    );
    let html = owner.html(&back).await;
    assert!(html.contains("Saved: the book"), "{html}");
    assert!(html.contains("Your edit"), "{html}");
    // The owner's text: no confidence (the model's) said of it.
    assert!(!html.contains("Confidence:"), "{html}");
    assert_eq!(in_field(&html), "Corregido a mano &amp;amp; con cuidado.");
    assert_eq!(field(&html, "version"), "1");
    let now = passage(&owner, &id, chapter, index).await;
    assert_eq!(
        (now["text"].as_str(), now["flags"].clone()),
        (Some(fix), serde_json::json!([]))
    );
    // The next flagged passage is another one now.
    let next = owner
        .get(&format!("{page}/flagged?chapter={chapter}&from={index}"))
        .await;
    let next = location(&next);
    assert!(!next.contains(&format!("edit={index}#")), "{next}");
    // That one is kept as it is: its flags go, its text stays.
    let (other_chapter, other) = position(&next);
    let html = owner.html(&next).await;
    assert!(html.contains("Keep as it is"), "{html}");
    let kept_text = passage(&owner, &id, other_chapter, other).await["text"].clone();
    let kept = owner
        .post_form(
            &format!("/dashboard/books/{id}/passages/{other_chapter}/{other}"),
            &[
                ("csrf", &token),
                ("version", &field(&html, "version")),
                ("text", "ignored"),
                ("action", "keep"),
            ],
        )
        .await;
    assert_eq!(kept.status(), 303);
    assert!(location(&kept).contains("done=kept"));
    let now = passage(&owner, &id, other_chapter, other).await;
    assert_eq!(now["flags"], serde_json::json!([]));
    assert_eq!(now["text"], kept_text);
    assert_eq!(now["origin"]["kind"], "kept", "{now}");
    assert!(owner.html(&location(&kept)).await.contains("kept as it is"));

    // A form that read version 0 loses to the save, and keeps what it had typed.
    let stale = owner
        .post_form(
            &action,
            &[
                ("csrf", &token),
                ("version", "0"),
                ("text", "Otra versión."),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(stale.status(), 409);
    let html = stale.text().await.unwrap();
    assert!(
        html.contains("changed elsewhere since you opened it"),
        "{html}"
    );
    assert!(
        html.contains("Corregido a mano &amp; con cuidado."),
        "its text now: {html}"
    );
    assert_eq!(in_field(&html), "Otra versión.");
    assert_eq!(
        field(&html, "version"),
        "1",
        "a second save replaces it knowingly"
    );

    // A preview changes nothing and shows the marks rendered.
    let previewed = owner
        .post_form(
            &action,
            &[
                ("csrf", &token),
                ("version", "1"),
                ("text", "Sin <b>marcas</b>."),
                ("action", "preview"),
            ],
        )
        .await;
    assert_eq!(previewed.status(), 200);
    let html = previewed.text().await.unwrap();
    assert!(html.contains("Sin <strong>marcas</strong>."), "{html}");
    assert!(
        html.contains("is not in the source"),
        "a preview warns: {html}"
    );
    assert_eq!(passage(&owner, &id, chapter, index).await["version"], 1);

    // Undo: the model's text again, flagged again.
    let undone = owner
        .post_form(
            &action,
            &[
                ("csrf", &token),
                ("version", "1"),
                ("text", fix),
                ("action", "undo"),
            ],
        )
        .await;
    assert_eq!(undone.status(), 303);
    assert!(location(&undone).contains("done=undone"));
    let now = passage(&owner, &id, chapter, index).await;
    assert_eq!(now["text"], model["text"]);
    assert_eq!(now["flags"], model["flags"]);

    // The page's script asks for the editor alone.
    let fragment = owner
        .post_form_with(
            "x-booktr-fragment",
            &action,
            &[
                ("csrf", &token),
                ("version", "2"),
                ("text", "Una vez más."),
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
    assert!(
        !html.contains("<html") && html.contains("Saved: the book"),
        "{html}"
    );
    assert_eq!(
        passage(&owner, &id, chapter, index).await["text"],
        "Una vez más."
    );
}

#[tokio::test]
async fn the_editors_forms_need_their_token_and_another_persons_book_is_not_found() {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(Refusing))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    let (page, id, _) = translated_book(&mut owner).await;
    let action = format!("/dashboard/books/{id}/passages/2/0");
    let before = passage(&owner, &id, 2, 0).await;

    let mut other = Browser::new(&app);
    other.sign_up().await;
    let others_token = other.token("/dashboard").await;
    for fields in [
        vec![("version", "0"), ("text", "Forjado.")],
        vec![
            ("csrf", "0123456789abcdef0123456789abcdef"),
            ("version", "0"),
            ("text", "Forjado."),
        ],
        vec![
            ("csrf", others_token.as_str()),
            ("version", "0"),
            ("text", "Forjado."),
        ],
    ] {
        let refused = owner.post_form(&action, &fields).await;
        assert_eq!(refused.status(), 403);
        assert!(refused
            .text()
            .await
            .unwrap()
            .contains("This form has expired"));
    }
    assert_eq!(passage(&owner, &id, 2, 0).await, before);

    // Another person's book: the not-found page, wherever they look or post.
    for path in [
        format!("{page}/read"),
        format!("{page}/read?chapter=2&edit=0"),
        format!("{page}/flagged?chapter=1&from=0"),
    ] {
        let response = other.get(&path).await;
        assert_eq!(response.status(), 404, "{path}");
        let html = response.text().await.unwrap();
        assert!(
            html.contains("There is no page at this address"),
            "{path}: {html}"
        );
    }
    let posted = other
        .post_form(
            &action,
            &[("csrf", &others_token), ("version", "0"), ("text", "Mío.")],
        )
        .await;
    assert_eq!(posted.status(), 404);
    assert!(posted
        .text()
        .await
        .unwrap()
        .contains("There is no page at this address"));
    assert_eq!(passage(&owner, &id, 2, 0).await, before);
}

#[tokio::test]
async fn what_the_owner_writes_is_shown_as_text_and_the_editor_speaks_spanish() {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(Refusing))
        .start()
        .await;
    let mut owner = Browser::new(&app);
    owner.language = "es";
    let (page, id, token) = translated_book(&mut owner).await;
    let action = format!("/dashboard/books/{id}/passages/2/0");

    let script = "<script>alert(1)</script>";
    let refused = owner
        .post_form(
            &action,
            &[("csrf", &token), ("version", "0"), ("text", script)],
        )
        .await;
    assert_eq!(refused.status(), 400);
    let html = refused.text().await.unwrap();
    assert!(!html.contains(script), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("No se ha guardado: las marcas"), "{html}");

    let escaped = "Dijo &lt;img src=x onerror=alert(1)&gt; y se fue.";
    let saved = owner
        .post_form(
            &action,
            &[("csrf", &token), ("version", "0"), ("text", escaped)],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let reader = owner.html(&format!("{page}/read?chapter=2")).await;
    assert!(!reader.contains("<img src=x"), "{reader}");
    assert!(reader.contains("Dijo &lt;img src=x onerror=alert(1)&gt; y se fue."));
    assert!(reader.contains("Siguiente pasaje señalado"), "{reader}");
    let editor = owner.html(&location(&saved)).await;
    assert!(editor.contains("Guardado"), "{editor}");
    assert!(editor.contains("Tu corrección"), "{editor}");
}

#[tokio::test]
async fn a_passage_is_translated_again_with_an_instruction_and_the_proposal_accepted_from_the_pages(
) {
    // The offline engine: its proposal passes the checks, so accepting it takes it.
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (page, id, token) = translated_book(&mut owner).await;
    let editor = owner.html(&format!("{page}/read?chapter=2&edit=1")).await;
    assert!(editor.contains("Translate this passage again"), "{editor}");
    assert!(editor.contains("Translate this chapter again"), "{editor}");

    let asked = owner
        .post_form(
            &format!("{page}/retranslate"),
            &[
                ("csrf", &token),
                ("chapter", "2"),
                ("index", "1"),
                ("instruction", "more formal"),
            ],
        )
        .await;
    assert_eq!(asked.status(), 303);
    let proposal = location(&asked);
    assert!(
        proposal.starts_with(&format!("{page}/proposals/")),
        "{proposal}"
    );
    let shown = crate::helpers::eventually(std::time::Duration::from_secs(60), || async {
        let html = owner.html(&proposal).await;
        match html.contains("action=\"") && html.contains("/accept\"") {
            true => Ok(html),
            false => Err(format!("not ready: {html}")),
        }
    })
    .await;
    assert!(shown.contains("“more formal”"), "{shown}");
    let refused = owner.post_form(&format!("{proposal}/accept"), &[]).await;
    assert_eq!(refused.status(), 403);
    let accepted = owner
        .post_form(&format!("{proposal}/accept"), &[("csrf", &token)])
        .await;
    assert_eq!(accepted.status(), 303);
    assert_eq!(
        location(&accepted),
        format!("{page}/read?chapter=2&edit=1&done=accepted#p-1")
    );
    let now = passage(&owner, &id, 2, 1).await;
    assert_eq!(now["origin"]["kind"], "retranslated", "{now}");
    assert_eq!(now["origin"]["instruction"], "more formal", "{now}");
    let html = owner.html(&location(&accepted)).await;
    assert!(html.contains("Re-translated, accepted"), "{html}");
    assert!(html.contains("instruction: “more formal”"), "{html}");
    assert!(
        html.contains("Back to the model&#x27;s text") || html.contains("Back to the model's text"),
        "{html}"
    );

    // Another person sees no proposal of the book.
    let mut other = Browser::new(&app);
    other.sign_up().await;
    assert_eq!(other.get(&proposal).await.status(), 404);
}

#[tokio::test]
async fn the_editors_saves_count_against_the_plans_limits_as_the_apis_writes_do() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    let (_, id, token) = translated_book(&mut owner).await;
    let action = format!("/dashboard/books/{id}/passages/2/0");
    let fields = |what| {
        [
            ("csrf", token.as_str()),
            ("version", "0"),
            ("text", "Llamadme Ismael."),
            ("action", what),
        ]
    };
    // The owner (on the FREE plan) spends the plan's budget on API calls.
    let mut calls = 0;
    while owner.get("/api/usage").await.status() != 429 {
        calls += 1;
        assert!(calls <= 100, "the FREE plan's API limit never came");
    }
    // A save is an API write: refused like one, with the passage left as it was; a preview
    // changes nothing and is only a page.
    let save = fields("save");
    let refused = owner.post_form(&action, &save).await;
    assert_eq!(refused.status(), 429);
    assert!(refused.text().await.unwrap().contains("Too many requests"));
    let preview = fields("preview");
    assert_eq!(owner.post_form(&action, &preview).await.status(), 200);

    // An hour on, the plan's windows are new and the same save goes through.
    app.clock.advance(chrono::Duration::hours(1));
    let saved = owner.post_form(&action, &save).await;
    assert_eq!(saved.status(), 303);
    assert_eq!(passage(&owner, &id, 2, 0).await["text"], "Llamadme Ismael.");
}

/// Text as the page wrote it, unescaped.
fn unescaped(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

#[tokio::test]
async fn a_line_number_is_a_mark_to_keep_in_the_editor_never_text_to_edit() {
    // The offline engine translates The Waste Land.
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(
            &token,
            "wasteland.epub",
            corpus("wasteland.epub"),
            "The Waste Land",
        )
        .await;
    let page = location(&uploaded).split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "COMPLETED").await;

    // "And went on in sunlight, into the Hofgarten," and its line number, 10.
    let path = format!("/api/books/{id}/chapters/2/passages?offset=0&limit=50");
    let passages: Value = owner.get(&path).await.json().await.unwrap();
    let line = passages["passages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"].as_str().unwrap().contains("Hofgarten"))
        .expect("the line of the Hofgarten");
    let index = line["index"].as_u64().unwrap();
    let number = r#"<num class="lnum" text="10"/>"#;
    assert!(line["source"].as_str().unwrap().ends_with(number), "{line}");

    let editor = owner
        .html(&format!("{page}/read?chapter=2&edit={index}"))
        .await;
    // The field holds the number as the mark it is, not as words among the verse's.
    let field = unescaped(&in_field(&editor));
    assert!(field.ends_with(number), "{field}");
    let words = markup::translatable_text(&field);
    assert!(
        !words.contains("10"),
        "the number is text to edit: {words:?}"
    );
    assert!(!markup::plain_text(&field).contains(",10,"));
    // It is listed with the marks to keep.
    let marks = editor
        .split("id=\"ed-marks-")
        .nth(1)
        .expect("the marks to keep")
        .split("</p>")
        .next()
        .unwrap();
    assert!(
        unescaped(marks).contains(&format!("<code>{number}</code>")),
        "{marks}"
    );

    // A text without it is refused, naming it, and the line keeps its number.
    let without = field.replace(number, "");
    let version = line["version"].to_string();
    let refused = owner
        .post_form(
            &format!("/dashboard/books/{id}/passages/2/{index}"),
            &[("csrf", &token), ("version", &version), ("text", &without)],
        )
        .await;
    assert_eq!(refused.status(), 400);
    let html = unescaped(&refused.text().await.unwrap());
    assert!(html.contains("is missing"), "{html}");
    assert!(html.contains(number), "{html}");
    let now = passage(&owner, &id, 2, index as u32).await;
    assert!(now["text"].as_str().unwrap().ends_with(number), "{now}");
}
