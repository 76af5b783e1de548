//! The words a new user reads in the web app, and where (issue 48 item 5), through the pages as
//! a browser without JavaScript uses them: a language typed by its name, an unknown one said
//! plainly; a passage that kept its source labelled as the original; what a run going on has
//! spent, never "free"; flag counts that add up; passages named as the reader names them;
//! sign-out said; errors in words for people; the way-in pages to someone signed in; a wrong
//! current password summarised at the top of its form, which the form's address leads to;
//! counts in the singular for one; "continue reading" by the chapter's title; the reader's
//! Edit links where they help.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::helpers::{sample_txt, TestApp};
use crate::stand_ins::StandIn;
use crate::web_app::{location, Browser};

/// The book's page and id a book page's address (`/dashboard/books/{id}?...`) names.
fn page_and_id(to: &str) -> (String, String) {
    let page = to.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    (page, id)
}

/// The text of the page's alerts (`class="alert"`), their markup left out.
fn alerts(html: &str) -> String {
    html.split("class=\"alert")
        .skip(1)
        .map(|rest| {
            let rest = &rest[rest.find('>').unwrap() + 1..];
            let end = rest.find("</p>").or_else(|| rest.find("</div>")).unwrap();
            strip_tags(&rest[..end])
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// A new user with the sample book uploaded (into `language`, as the form's field says it) and
/// read: the browser, the book's page, its id and the session's form token.
async fn with_a_book<'a>(
    app: &'a TestApp,
    language: &str,
) -> (Browser<'a>, String, String, String) {
    let mut browser = Browser::new(app);
    browser.sign_up().await;
    let token = browser.token("/dashboard").await;
    let uploaded = browser
        .upload_into(&token, "voyage.txt", sample_txt(), "The Voyage", language)
        .await;
    assert_eq!(uploaded.status(), 303, "{}", uploaded.text().await.unwrap());
    let (page, id) = page_and_id(&location(&uploaded));
    browser.wait_for(&id, "EXTRACTED").await;
    (browser, page, id, token)
}

#[tokio::test]
async fn a_target_language_is_typed_by_its_name_or_its_code_and_an_unknown_one_is_said_plainly() {
    let app = TestApp::new().with_workers().start().await;
    let (mut browser, page, id, token) = with_a_book(&app, "French").await;
    assert_eq!(browser.book(&id).await["targetLang"], "fr");

    // The quote's field shows the book's language by its name; the list offers every
    // language by name, with its own name and code.
    let book = browser.html(&page).await;
    assert!(
        book.contains("aria-describedby=\"q-lang-hint\" value=\"French\">"),
        "{book}"
    );
    assert!(
        book.contains(
            "<option value=\"German\" data-code=\"de\" data-names=\"German|alemán|Deutsch|de\">"
        ),
        "{book}"
    );
    assert!(book.contains("Type the language's name"), "{book}");

    // A quote for the language by its English, Spanish or own name, whatever the case and
    // accents, or by its code.
    for typed in ["Deutsch", "ALEM%C3%81N", "aleman", "german", "de"] {
        let quoted = browser.html(&format!("{page}?targetLang={typed}")).await;
        assert!(
            quoted.contains("<input type=\"hidden\" name=\"targetLang\" value=\"de\">")
                && quoted.contains("<dd>German</dd>"),
            "{typed}: {}",
            alerts(&quoted)
        );
    }

    // A language it does not know: said in words, with names and codes it could be; no raw
    // code error, no Start, and the field keeps what was typed.
    let unknown = browser.html(&format!("{page}?targetLang=Klingon")).await;
    let said = alerts(&unknown);
    assert!(
        said.contains("\u{201c}Klingon\u{201d} is not a language we know")
            && said.contains("French")
            && said.contains("pt-BR"),
        "{said}"
    );
    assert!(!unknown.contains("is not a language code"), "{unknown}");
    assert!(!unknown.contains(&format!("action=\"{page}/start\"")));
    assert!(unknown.contains("value=\"Klingon\">"), "{unknown}");

    // Spanish: the message in Spanish, and Spanish names understood.
    browser.language = "es";
    let unknown = browser.html(&format!("{page}?targetLang=Klingon")).await;
    assert!(
        alerts(&unknown).contains("\u{ab}Klingon\u{bb} no es un idioma que conozcamos"),
        "{}",
        alerts(&unknown)
    );
    browser.language = "en";

    // Start takes a name too.
    let started = browser
        .post_form(
            &format!("{page}/start"),
            &[("csrf", &token), ("targetLang", "japonés")],
        )
        .await;
    assert_eq!(started.status(), 303);
    browser.wait_for(&id, "COMPLETED").await;
    assert_eq!(browser.book(&id).await["targetLang"], "ja");

    // The defaults by name too; one that names no language is refused saying so.
    let saved = browser
        .post_form(
            "/dashboard/settings/preferences",
            &[
                ("csrf", token.as_str()),
                ("defaultModel", "gpt-4o-mini"),
                ("defaultTargetLanguage", "Portuguese (Brazil)"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let preferences: serde_json::Value = browser
        .get("/api/settings/preferences")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(preferences["defaultTargetLanguage"], "pt-BR");
    let settings = browser.html("/dashboard/settings/preferences").await;
    assert!(
        settings.contains("value=\"Portuguese (Brazil)\">"),
        "{settings}"
    );
    let library = browser.html("/dashboard").await;
    assert!(
        library.contains("value=\"Portuguese (Brazil)\""),
        "{library}"
    );
    let refused = browser
        .post_form(
            "/dashboard/settings/preferences",
            &[
                ("csrf", token.as_str()),
                ("defaultModel", "gpt-4o-mini"),
                ("defaultTargetLanguage", "Elvish"),
            ],
        )
        .await;
    assert_eq!(refused.status(), 400);
    let page = refused.text().await.unwrap();
    assert!(alerts(&page).contains("\u{201c}Elvish\u{201d} is not a language we know"));

    // An upload into a language it does not know changes nothing: no book.
    let refused = browser
        .upload_into(&token, "voyage.txt", sample_txt(), "Not this", "Elvish")
        .await;
    assert_eq!(refused.status(), 400);
    let books: serde_json::Value = browser.get("/api/books").await.json().await.unwrap();
    assert_eq!(books["books"].as_array().unwrap().len(), 1, "{books}");
}

#[tokio::test]
async fn a_run_going_on_says_what_it_has_spent_so_far_and_never_free() {
    let gate = Arc::new(Semaphore::new(0));
    let entered = Arc::new(Semaphore::new(0));
    let model = StandIn {
        gate: Some(gate.clone()),
        entered: Some(entered.clone()),
        ..StandIn::default()
    };
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(model))
        .start()
        .await;
    let (mut browser, page, id, token) = with_a_book(&app, "fr").await;
    let started = browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    entered.acquire().await.unwrap().forget();
    let going = browser.html(&page).await;
    assert!(
        going.contains("Spent so far on this run: nothing yet"),
        "{going}"
    );
    assert!(!going.contains("What the last run cost"), "{going}");
    assert!(!going.contains(": free"), "{going}");
    gate.add_permits(1000);
    browser.wait_for(&id, "COMPLETED").await;
    let done = browser.html(&page).await;
    assert!(done.contains("What the last run cost: "), "{done}");
    assert!(!done.contains("Spent so far"), "{done}");
}

#[tokio::test]
async fn the_flag_summary_counts_each_passage_once_and_a_kept_source_is_labelled_the_original() {
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(crate::passages::Refusing))
        .start()
        .await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard").await;
    let uploaded = browser
        .upload(&token, "voyage.txt", crate::passages::book(), "Voyage")
        .await;
    let (page, id) = page_and_id(&location(&uploaded));
    browser.wait_for(&id, "EXTRACTED").await;
    let started = browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    browser.wait_for(&id, "COMPLETED").await;

    // Every passage is refused, which leaves it untranslated too: each counts once, as refused.
    let status: serde_json::Value = browser
        .get(&format!("/api/translate/status?bookId={id}"))
        .await
        .json()
        .await
        .unwrap();
    let flagged = status["quality"]["flaggedBlocks"].as_u64().unwrap();
    assert!(flagged > 1, "{status}");
    let book = browser.html(&page).await;
    let line = strip_tags(
        book.split("class=\"quality\">")
            .nth(1)
            .and_then(|rest| rest.split("</p>").next())
            .unwrap(),
    );
    assert!(
        line.contains(&format!(
            "{flagged} passages flagged ({flagged} refused or commented on)"
        )),
        "{line}"
    );
    assert!(!line.contains("untranslated"), "{line}");
    // The run's warning counts the same way, in passages as the rest of the app (the API's
    // says blocks).
    assert!(
        book.contains(&format!(
            "Translation: {flagged} passages flagged ({flagged} refused or commented on); they \
             keep their source text."
        )),
        "{book}"
    );
    assert!(!book.contains("blocks flagged"), "{book}");

    // The editor of a passage that kept its source says the text is the original, not the
    // model's.
    let found = browser
        .get(&format!("{page}/flagged?chapter=1&from=0"))
        .await;
    let editor = browser.html(&location(&found)).await;
    assert!(
        editor.contains("The original text, kept: no translation of it passed the checks"),
        "{editor}"
    );
    assert!(!editor.contains("Text from the model"), "{editor}");

    // Kept as it is, it is still the original that is kept, not the model's text.
    let at = location(&found);
    let (chapter, index) = {
        let query = at.split(['?', '#']).nth(1).unwrap();
        let number = |name: &str| -> String {
            query
                .split('&')
                .find_map(|p| p.strip_prefix(name))
                .unwrap()
                .to_string()
        };
        (number("chapter="), number("edit="))
    };
    let version = editor
        .split("name=\"version\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    let kept = browser
        .post_form(
            &format!("{page}/passages/{chapter}/{index}"),
            &[
                ("csrf", &token),
                ("version", &version),
                ("text", "ignored"),
                ("action", "keep"),
            ],
        )
        .await;
    assert_eq!(kept.status(), 303);
    let editor = browser.html(&location(&kept)).await;
    assert!(
        editor.contains("The original text, kept as it is"),
        "{editor}"
    );
    assert!(!editor.contains("The model&#x27;s text"), "{editor}");
    assert!(!editor.contains("The model's text"), "{editor}");
}

#[tokio::test]
async fn sign_out_says_so_and_the_way_in_pages_know_a_signed_in_visitor() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    let email = browser.sign_up().await;

    // Signed in, sign-in and sign-up go on to where the visitor was going; the others show
    // the signed-in header.
    let again = browser.get("/signin").await;
    assert_eq!(again.status(), 303);
    assert_eq!(location(&again), "/dashboard");
    let again = browser.get("/signin?next=%2Fdashboard%2Fglossaries").await;
    assert_eq!(location(&again), "/dashboard/glossaries");
    let again = browser.get("/signup").await;
    assert_eq!(location(&again), "/dashboard");
    for path in ["/forgot", "/reset?token=x"] {
        let page = browser.html(path).await;
        assert!(
            page.contains("action=\"/signout\"") && !page.contains("href=\"/signup\""),
            "{path}: {page}"
        );
    }

    // Signing out says so, on the sign-in page.
    let token = browser.token("/dashboard").await;
    let out = browser.post_form("/signout", &[("csrf", &token)]).await;
    assert_eq!(out.status(), 303);
    assert_eq!(location(&out), "/signin?signed_out=yes");
    let page = browser.html("/signin?signed_out=yes").await;
    assert!(
        page.contains("<p class=\"ok\" role=\"status\">You are signed out.</p>"),
        "{page}"
    );
    assert!(page.contains("href=\"/signin\""), "the signed-out header");
    assert_eq!(browser.get("/dashboard").await.status(), 303);

    // A wrong password, in words, the same for an unknown email.
    for who in [email.as_str(), "nobody@example.com"] {
        let wrong = browser
            .post_form("/signin", &[("email", who), ("password", "not it")])
            .await;
        assert_eq!(wrong.status(), 401);
        let said = alerts(&wrong.text().await.unwrap());
        assert_eq!(said, "The email or the password is not right.");
    }
}

#[tokio::test]
async fn errors_in_the_web_app_are_said_in_words_for_people_never_as_api_messages() {
    let app = TestApp::new().with_workers().start().await;
    let (mut browser, page, _, token) = with_a_book(&app, "fr").await;

    // A spending cap that is not a sum, a share link's expiry that is not a number of days,
    // a key's expiry out of range.
    let refused = browser
        .post_form(
            &format!("{page}/start"),
            &[("csrf", &token), ("maxCost", "lots")],
        )
        .await;
    assert_eq!(refused.status(), 400);
    let said = alerts(&refused.text().await.unwrap());
    assert_eq!(
        said,
        "The spending cap is a sum of US dollars, such as 2.50."
    );
    let refused = browser
        .post_form(
            &format!("{page}/share"),
            &[("csrf", &token), ("days", "soon")],
        )
        .await;
    assert_eq!(
        alerts(&refused.text().await.unwrap()),
        "The link's expiry is a number of days, such as 30."
    );
    let refused = browser
        .post_form(
            "/dashboard/settings/keys",
            &[("csrf", &token), ("name", "k"), ("days", "0")],
        )
        .await;
    assert_eq!(refused.status(), 400);
    assert_eq!(
        alerts(&refused.text().await.unwrap()),
        "A key's expiry is a number of days, from 1 to 3650."
    );

    // A service's refusal: in words, with its own explanation, naming no API route.
    let paused = browser
        .post_form(&format!("{page}/resume"), &[("csrf", &token)])
        .await;
    assert_eq!(paused.status(), 400);
    let html = paused.text().await.unwrap();
    let said = alerts(&html);
    assert!(
        said.starts_with("That could not be done as asked."),
        "{said}"
    );
    assert!(!said.contains("/api/") && !said.contains("POST"), "{said}");
    assert!(html.contains("<h1>That could not be done</h1>"), "{html}");
    let unsupported = browser
        .upload_into(&token, "book.mobi", b"not a book".to_vec(), "M", "fr")
        .await;
    assert_eq!(unsupported.status(), 400);
    let said = alerts(&unsupported.text().await.unwrap());
    assert!(
        said.starts_with(
            "That could not be done as asked. 'book.mobi' is not a supported book file"
        ),
        "{said}"
    );

    // Another's glossary, a page that is not there: not found, in words.
    let missing = browser.get("/dashboard/glossaries/nope").await;
    assert_eq!(missing.status(), 404);
    assert!(alerts(&missing.text().await.unwrap()).starts_with("There is no page at this address"));

    // A form sent with another session's token: said as the form's problem, in Spanish too.
    browser.language = "es";
    let forged = browser
        .post_form(
            &format!("{page}/rename"),
            &[("csrf", "0123456789abcdef0123456789abcdef"), ("title", "x")],
        )
        .await;
    assert_eq!(forged.status(), 403);
    assert!(alerts(&forged.text().await.unwrap()).starts_with("Este formulario ha caducado"));
}

#[tokio::test]
async fn a_wrong_current_password_is_summarised_at_the_top_of_its_form_which_the_address_leads_to()
{
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/settings/profile").await;
    let profile = browser.html("/dashboard/settings/profile").await;
    assert!(
        profile.contains("action=\"/dashboard/settings/password#password-error\""),
        "{profile}"
    );
    let wrong = browser
        .post_form(
            "/dashboard/settings/password",
            &[
                ("csrf", &token),
                ("current", "not it"),
                ("new", "another long password"),
            ],
        )
        .await;
    assert_eq!(wrong.status(), 400);
    let html = wrong.text().await.unwrap();
    // The summary opens the form, before its fields, names the field and leads to it.
    let form = html
        .find("action=\"/dashboard/settings/password#password-error\"")
        .unwrap();
    let summary = html.find("id=\"password-error\"").unwrap();
    let field = html.find("id=\"pw-current\"").unwrap();
    assert!(form < summary && summary < field, "{html}");
    assert!(
        html.contains("<h4 id=\"password-error-h\">There is a problem</h4>")
            && html.contains(
                "<a href=\"#pw-current\">The current password is not right: nothing was changed.</a>"
            ),
        "{html}"
    );
    assert!(html[summary..].starts_with("id=\"password-error\" tabindex=\"-1\" data-error-summary"));
    // A new password the rules refuse: the summary leads to that field.
    let short = browser
        .post_form(
            "/dashboard/settings/password",
            &[
                ("csrf", &token),
                ("current", "a long password"),
                ("new", "short"),
            ],
        )
        .await;
    assert_eq!(short.status(), 400);
    let html = short.text().await.unwrap();
    assert!(html.contains("<a href=\"#pw-new\">"), "{html}");
    // Changed: the notice at the top of the page.
    let changed = browser
        .post_form(
            "/dashboard/settings/password",
            &[
                ("csrf", &token),
                ("current", "a long password"),
                ("new", "another long password"),
            ],
        )
        .await;
    assert_eq!(
        location(&changed),
        "/dashboard/settings/profile?password=changed#main"
    );
}

#[tokio::test]
async fn counts_are_said_in_the_singular_for_one_and_the_plural_for_the_rest() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/glossaries").await;
    for (name, csv) in [
        ("One", "whale,ballena\n"),
        ("Two", "whale,ballena\nsea,mar\n"),
    ] {
        let form = reqwest::multipart::Form::new()
            .text("csrf", token.clone())
            .text("name", name)
            .part(
                "file",
                reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("g.csv"),
            );
        let made = browser.post_multipart("/dashboard/glossaries", form).await;
        assert_eq!(made.status(), 303, "{}", made.text().await.unwrap());
    }
    let list = browser.html("/dashboard/glossaries").await;
    assert!(list.contains("One</a> · 1 entry<"), "{list}");
    assert!(list.contains("Two</a> · 2 entries<"), "{list}");
    browser.language = "es";
    let list = browser.html("/dashboard/glossaries").await;
    assert!(list.contains("One</a> · 1 entrada<"), "{list}");
    assert!(list.contains("Two</a> · 2 entradas<"), "{list}");
}

#[tokio::test]
async fn the_reader_offers_edit_links_on_every_passage_side_by_side_and_on_the_flagged_ones_alone()
{
    let app = TestApp::new()
        .with_workers()
        .with_models(Arc::new(crate::passages::Refusing))
        .start()
        .await;
    let (mut browser, page, id, token) = with_a_book(&app, "es").await;
    let started = browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    browser.wait_for(&id, "COMPLETED").await;
    // Keep one passage as it is: it is no longer flagged.
    let status: serde_json::Value = browser
        .get(&format!("/api/books/{id}/passages/flagged"))
        .await
        .json()
        .await
        .unwrap();
    let first = &status["passages"][0];
    let (chapter, index) = (
        first["chapter"].as_u64().unwrap(),
        first["index"].as_u64().unwrap(),
    );
    let kept = browser
        .post_form(
            &format!("/dashboard/books/{id}/passages/{chapter}/{index}"),
            &[
                ("csrf", token.as_str()),
                ("version", &first["version"].to_string()),
                ("text", ""),
                ("action", "keep"),
            ],
        )
        .await;
    assert_eq!(kept.status(), 303);

    let count = |html: &str, what: &str| html.matches(what).count();
    let both = browser
        .html(&format!("{page}/read?chapter={chapter}&view=both"))
        .await;
    let rows = count(&both, "<div class=\"row ");
    assert!(rows > 1);
    assert_eq!(
        count(&both, "class=\"edit\""),
        rows,
        "side by side: every passage"
    );
    let alone = browser
        .html(&format!("{page}/read?chapter={chapter}&view=translation"))
        .await;
    let flagged = count(&alone, " flagged\" id=\"p-");
    assert_eq!(flagged, rows - 1, "{alone}");
    assert_eq!(
        count(&alone, "class=\"edit\""),
        flagged,
        "translation alone: the flagged ones"
    );
    assert!(
        alone.contains(&format!("id=\"p-{index}\"")),
        "every passage keeps its anchor"
    );
    assert!(
        alone.contains("Side by side, every passage has an Edit link"),
        "{alone}"
    );
    // An editor opens in this view all the same.
    let editor = browser
        .html(&format!(
            "{page}/read?chapter={chapter}&view=translation&edit={index}"
        ))
        .await;
    assert!(editor.contains(
        "data-editor-for=\"{index}\""
            .replace("{index}", &index.to_string())
            .as_str()
    ));
}
