//! The web app through its pages, as a browser without JavaScript uses them: forms posted,
//! redirects followed by hand, the session cookie carried.

use std::time::Duration;

use reqwest::multipart::{Form, Part};
use reqwest::redirect::Policy;
use reqwest::{Client, Response};
use serde_json::Value;

use crate::helpers::{eventually, on_aws, sample_txt, TestApp};
use crate::smtp_sink::SmtpSink;

/// A browser of one person: its own session cookie, redirects not followed (they are checked).
/// It asks for pages as browsers do (`Accept: text/html`).
pub(crate) struct Browser<'a> {
    app: &'a TestApp,
    client: Client,
    cookie: Option<String>,
    pub(crate) language: &'static str,
}

impl<'a> Browser<'a> {
    pub(crate) fn new(app: &'a TestApp) -> Self {
        Browser {
            app,
            client: Client::builder().redirect(Policy::none()).build().unwrap(),
            cookie: None,
            language: "en",
        }
    }

    fn with_headers(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let request = request
            .header("accept-language", self.language)
            .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8");
        match &self.cookie {
            Some(cookie) => request.header("cookie", cookie),
            None => request,
        }
    }

    pub(crate) async fn get(&self, path: &str) -> Response {
        self.with_headers(self.client.get(format!("{}{path}", self.app.url)))
            .send()
            .await
            .unwrap()
    }

    pub(crate) async fn html(&self, path: &str) -> String {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "{path}");
        response.text().await.unwrap()
    }

    pub(crate) async fn post_form(&mut self, path: &str, fields: &[(&str, &str)]) -> Response {
        let response = self
            .with_headers(self.client.post(format!("{}{path}", self.app.url)))
            .form(fields)
            .send()
            .await
            .unwrap();
        self.keep_cookie(&response);
        response
    }

    /// As [`Browser::post_form`], with one header more (what a page's script adds).
    pub(crate) async fn post_form_with(
        &self,
        header: &str,
        path: &str,
        fields: &[(&str, &str)],
    ) -> Response {
        self.with_headers(self.client.post(format!("{}{path}", self.app.url)))
            .header(header, "1")
            .form(fields)
            .send()
            .await
            .unwrap()
    }

    fn keep_cookie(&mut self, response: &Response) {
        if let Some(set) = response.headers().get("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_string();
            self.cookie = (!pair.ends_with('=')).then_some(pair);
        }
    }

    pub(crate) async fn sign_up(&mut self) -> String {
        let email = format!("{}@example.com", booktr_core::ids::new_id());
        let response = self
            .post_form(
                "/signup",
                &[
                    ("email", &email),
                    ("password", "a long password"),
                    ("name", ""),
                ],
            )
            .await;
        assert_eq!(response.status(), 303);
        assert_eq!(location(&response), "/dashboard");
        assert!(self.cookie.is_some());
        email
    }

    /// The CSRF token of the page at `path`.
    pub(crate) async fn token(&self, path: &str) -> String {
        let html = self.html(path).await;
        let at = html
            .find("name=\"csrf\" value=\"")
            .expect("a form with its token")
            + 19;
        html[at..at + 32].to_string()
    }

    pub(crate) async fn upload(
        &self,
        token: &str,
        name: &str,
        bytes: Vec<u8>,
        title: &str,
    ) -> Response {
        self.upload_into(token, name, bytes, title, "fr").await
    }

    /// As [`Browser::upload`], into the language the form's field names (a name or a code).
    pub(crate) async fn upload_into(
        &self,
        token: &str,
        name: &str,
        bytes: Vec<u8>,
        title: &str,
        language: &str,
    ) -> Response {
        let form = Form::new()
            .text("csrf", token.to_string())
            .part("file", Part::bytes(bytes).file_name(name.to_string()))
            .text("title", title.to_string())
            .text("targetLang", language.to_string());
        self.post_multipart("/dashboard/upload", form).await
    }

    /// A form with a file, posted to `path`.
    pub(crate) async fn post_multipart(&self, path: &str, form: Form) -> Response {
        self.with_headers(self.client.post(format!("{}{path}", self.app.url)))
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// The book's state as the API tells it to this session.
    pub(crate) async fn book(&self, id: &str) -> Value {
        self.get(&format!("/api/books/{id}"))
            .await
            .json()
            .await
            .unwrap()
    }

    pub(crate) async fn wait_for(&self, id: &str, status: &str) {
        eventually(Duration::from_secs(60), || async {
            let book = self.book(id).await;
            match book["status"] == status {
                true => Ok(()),
                false => Err(format!("{id} not {status}: {book}")),
            }
        })
        .await
    }
}

pub(crate) fn location(response: &Response) -> String {
    response.headers()["location"].to_str().unwrap().to_string()
}

#[tokio::test]
async fn the_dashboard_sends_a_visitor_to_sign_in_and_back_afterwards() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    let response = browser.get("/dashboard/books/x?y=1").await;
    assert_eq!(response.status(), 303);
    assert_eq!(
        location(&response),
        "/signin?next=%2Fdashboard%2Fbooks%2Fx%3Fy%3D1"
    );
    let page = browser.html("/signin?next=%2Fdashboard").await;
    assert!(
        page.contains("name=\"next\" value=\"/dashboard\""),
        "{page}"
    );

    let email = Browser::new(&app).sign_up().await;
    let wrong = browser
        .post_form(
            "/signin",
            &[
                ("email", &email),
                ("password", "not it"),
                ("next", "/dashboard"),
            ],
        )
        .await;
    assert_eq!(wrong.status(), 401);
    let nobody = browser
        .post_form(
            "/signin",
            &[
                ("email", "nobody@example.com"),
                ("password", "not it"),
                ("next", "/dashboard"),
            ],
        )
        .await;
    assert_eq!(nobody.status(), 401);
    let (wrong, nobody) = (wrong.text().await.unwrap(), nobody.text().await.unwrap());
    assert!(wrong.contains("The email or the password is not right."));
    assert_eq!(
        wrong.replace(&email, ""),
        nobody.replace("nobody@example.com", ""),
        "an unknown email and a wrong password read the same"
    );
    let signed_in = browser
        .post_form(
            "/signin",
            &[
                ("email", &email),
                ("password", "a long password"),
                ("next", "//evil.example"),
            ],
        )
        .await;
    assert_eq!(signed_in.status(), 303);
    assert_eq!(location(&signed_in), "/dashboard", "never to another site");
    assert!(browser.html("/dashboard").await.contains("Your books"));
}

/// Return addresses as they arrive in a query string: each leads to another site once a browser
/// has dropped its tabs and new lines, read its backslashes as slashes or resolved its dots, or
/// once decoded again; `%0A`, `%0D` and `%00` once made the pages answer 500.
const HOSTILE_RETURNS: [&str; 16] = [
    "/%09/evil.example",
    "/%0A/evil.example",
    "/%0D/evil.example",
    "/%0D%0ASet-Cookie:%20a=b",
    "/%00/evil.example",
    "//evil.example",
    "/%5Cevil.example",
    "%2F%2Fevil.example",
    "/%252F/evil.example",
    "/%25%30%39/evil.example",
    "/..//evil.example",
    "https://evil.example",
    "javascript:alert(1)",
    "/%E2%80%A8/evil.example",
    "/%FF/%09/evil.example",
    "%09//evil.example",
];

#[tokio::test]
async fn the_language_switch_and_the_sign_in_page_go_back_only_to_pages_of_this_site() {
    let app = TestApp::new().with_workers().start().await;
    let browser = Browser::new(&app);
    for back in HOSTILE_RETURNS {
        let switched = browser.get(&format!("/language?to=en&back={back}")).await;
        assert_eq!(
            (switched.status().as_u16(), location(&switched)),
            (303, "/dashboard".into()),
            "/language back={back}"
        );
        let page = browser.get(&format!("/signin?next={back}")).await;
        assert_eq!(page.status(), 200, "/signin next={back}");
        let page = page.text().await.unwrap();
        assert!(
            page.contains("name=\"next\" value=\"/dashboard\""),
            "/signin next={back}"
        );
    }
    let switched = browser
        .get("/language?to=es&back=%2Fdashboard%2Fbooks%2Fx%3Fchapter%3D2")
        .await;
    assert_eq!(location(&switched), "/dashboard/books/x?chapter=2");
    let twice = browser.get("/language?to=es&back=/a&back=/b").await;
    assert!(!twice.status().is_server_error(), "{}", twice.status());
}

#[tokio::test]
async fn signing_in_with_a_return_address_to_another_site_lands_on_the_dashboard() {
    let app = TestApp::new().with_workers().start().await;
    let email = Browser::new(&app).sign_up().await;
    // Four sign-ins: within the five a minute one account allows from one address.
    for next in [
        "/\t/evil.example",
        "/\r\n/evil.example",
        "/\0/evil.example",
        "/\\evil.example",
    ] {
        let mut browser = Browser::new(&app);
        let signed_in = browser
            .post_form(
                "/signin",
                &[
                    ("email", &email),
                    ("password", "a long password"),
                    ("next", next),
                ],
            )
            .await;
        assert_eq!(
            (signed_in.status().as_u16(), location(&signed_in)),
            (303, "/dashboard".into()),
            "{}",
            next.escape_debug()
        );
        assert!(browser.cookie.is_some(), "signed in all the same");
    }
}

#[tokio::test]
async fn a_new_user_uploads_quotes_translates_and_downloads_through_the_pages() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard").await;
    let uploaded = browser
        .upload(&token, "voyage.txt", sample_txt(), "The Voyage")
        .await;
    assert_eq!(uploaded.status(), 303);
    let page = location(&uploaded);
    let id = page.rsplit('/').next().unwrap().to_string();
    browser.wait_for(&id, "EXTRACTED").await;

    let html = browser.html(&page).await;
    assert!(html.contains("The Voyage"));
    assert!(
        html.contains("Expected cost"),
        "the quote is shown before starting"
    );
    assert!(
        html.contains("offline demo engine"),
        "the quote names the offline engine for what it is"
    );
    let started = browser
        .post_form(
            &format!("{page}/start"),
            &[("csrf", &token), ("targetLang", "de"), ("maxCost", "")],
        )
        .await;
    assert_eq!(started.status(), 303);
    browser.wait_for(&id, "COMPLETED").await;
    assert_eq!(browser.book(&id).await["targetLang"], "de");

    let html = browser.html(&page).await;
    assert!(html.contains("download?format=epub"));
    assert!(
        html.contains("Flagged passages") && html.contains("no passage flagged."),
        "{html}"
    );
    // What each later pass did: the offline engine has nothing to improve.
    assert!(
        html.contains("Changed by the review: 0, by the polish: 0"),
        "{html}"
    );
    let reader = browser.html(&format!("{page}/read")).await;
    assert!(
        reader.contains("Translation · German") && reader.contains("noindex"),
        "{reader}"
    );
    assert!(reader.contains(&format!("{page}/read?chapter=2")));
    let link = browser.get(&format!("{page}/download?format=epub")).await;
    assert_eq!(link.status(), 303);
    let file = browser.client.get(location(&link)).send().await.unwrap();
    assert_eq!(file.status(), 200);
    let epub = file.bytes().await.unwrap();
    assert!(epub.starts_with(b"PK"), "an EPUB (a zip)");
    let library = browser.html("/dashboard").await;
    assert!(library.contains("COMPLETED") && library.contains("The Voyage"));

    let shared = browser
        .post_form(&format!("{page}/share"), &[("csrf", &token), ("days", "7")])
        .await;
    assert_eq!(shared.status(), 303);
    let html = browser.html(&page).await;
    let link = text_after(&html, "<a id=\"share-url\" href=\"")
        .split('"')
        .next()
        .unwrap()
        .to_string();
    assert!(link.starts_with(&format!("{}/shared/", app.url)), "{link}");
    assert_eq!(Client::new().get(&link).send().await.unwrap().status(), 200);
    let unshared = browser
        .post_form(&format!("{page}/unshare"), &[("csrf", &token)])
        .await;
    assert_eq!(unshared.status(), 303);
    assert_eq!(Client::new().get(&link).send().await.unwrap().status(), 404);

    let renamed = browser
        .post_form(
            &format!("{page}/rename"),
            &[("csrf", &token), ("title", "Voyage II")],
        )
        .await;
    assert_eq!(renamed.status(), 303);
    assert_eq!(browser.book(&id).await["title"], "Voyage II");
    let unconfirmed = browser
        .post_form(&format!("{page}/delete"), &[("csrf", &token)])
        .await;
    assert_eq!(unconfirmed.status(), 400);
    let deleted = browser
        .post_form(
            &format!("{page}/delete"),
            &[("csrf", &token), ("confirm", "yes")],
        )
        .await;
    assert_eq!(
        (deleted.status().as_u16(), location(&deleted)),
        (303, "/dashboard".into())
    );
    assert_eq!(browser.get(&page).await.status(), 404);
}

#[tokio::test]
async fn a_form_without_its_sessions_token_changes_nothing() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(&token, "voyage.txt", sample_txt(), "Kept")
        .await;
    let page = location(&uploaded);
    let id = page.rsplit('/').next().unwrap().to_string();

    let mut other = Browser::new(&app);
    other.sign_up().await;
    let others_token = other.token("/dashboard").await;
    for fields in [
        vec![("title", "Changed")],
        vec![
            ("csrf", "0123456789abcdef0123456789abcdef"),
            ("title", "Changed"),
        ],
        vec![("csrf", others_token.as_str()), ("title", "Changed")],
    ] {
        let response = owner.post_form(&format!("{page}/rename"), &fields).await;
        assert_eq!(response.status(), 403);
    }
    assert_eq!(owner.book(&id).await["title"], "Kept");
    let forged = owner.upload("", "voyage.txt", sample_txt(), "Forged").await;
    assert_eq!(forged.status(), 403);
    let signed_out = owner.post_form("/signout", &[]).await;
    assert_eq!(signed_out.status(), 403, "signing out needs the token too");
    let books: Value = owner.get("/api/books").await.json().await.unwrap();
    assert_eq!(books["books"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn two_people_see_only_their_own_books() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let page = location(
        &owner
            .upload(&token, "voyage.txt", sample_txt(), "Mine alone")
            .await,
    );

    let mut other = Browser::new(&app);
    other.sign_up().await;
    assert!(!other.html("/dashboard").await.contains("Mine alone"));
    assert_eq!(other.get(&page).await.status(), 404);
    assert_eq!(
        other
            .get(&format!("{page}/download?format=epub"))
            .await
            .status(),
        404
    );
    let others_token = other.token("/dashboard").await;
    let stopped = other
        .post_form(
            &format!("{page}/delete"),
            &[("csrf", &others_token), ("confirm", "yes")],
        )
        .await;
    assert_eq!(stopped.status(), 404);
    assert!(owner.html("/dashboard").await.contains("Mine alone"));

    // Nor each other's keys, webhooks, glossaries or settings.
    let made = owner
        .post_form(
            "/dashboard/settings/keys",
            &[("csrf", token.as_str()), ("name", "owner-laptop")],
        )
        .await;
    assert_eq!(made.status(), 200);
    let saved = owner
        .post_form(
            "/dashboard/settings/profile",
            &[("csrf", token.as_str()), ("name", "Owner Name")],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let keys = other.html("/dashboard/settings/keys").await;
    let profile = other.html("/dashboard/settings/profile").await;
    assert!(!keys.contains("owner-laptop") && !profile.contains("Owner Name"));
    assert!(owner
        .html("/dashboard/settings/keys")
        .await
        .contains("owner-laptop"));
}

#[tokio::test]
async fn pages_speak_spanish_when_asked_and_show_what_users_write_as_text() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.language = "es-ES,es;q=0.9,en;q=0.5";
    browser.sign_up().await;
    let html = browser.html("/dashboard").await;
    assert!(html.contains("<html lang=\"es\">") && html.contains("Tus libros"));
    let switched = browser.get("/language?to=en").await;
    assert_eq!(switched.status(), 303);
    let cookie = switched.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(cookie.starts_with("lang=en;"));
    let session = browser.cookie.clone().unwrap();
    browser.cookie = Some(format!("{session}; lang=en"));
    assert!(browser.html("/dashboard").await.contains("Your books"));

    let token = browser.token("/dashboard").await;
    browser
        .upload(
            &token,
            "voyage.txt",
            sample_txt(),
            "<script>alert(1)</script>",
        )
        .await;
    let html = browser.html("/dashboard").await;
    assert!(!html.contains("<script>alert(1)"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

/// The text between `start` and the next `<` after it.
fn text_after(html: &str, start: &str) -> String {
    let at = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {html}"))
        + start.len();
    html[at..].split('<').next().unwrap().to_string()
}

#[tokio::test]
async fn the_spanish_interface_says_states_languages_dates_and_cost_in_spanish() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.language = "es";
    browser.sign_up().await;
    let token = browser.token("/dashboard").await;
    let uploaded = browser
        .upload(&token, "voyage.txt", sample_txt(), "El viaje")
        .await;
    let page = location(&uploaded);
    let page = page.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    browser.wait_for(&id, "EXTRACTED").await;
    let quote = browser.html(&page).await;
    for said in [
        "listo para traducir",
        "Traducir al: francés",
        "gratis",
        "motor de demostración",
    ] {
        assert!(quote.contains(said), "{said} in {quote}");
    }
    for jargon in [
        ">EXTRACTED<",
        "USD",
        ": und",
        "offline-pseudo<",
        ">PENDING<",
    ] {
        assert!(!quote.contains(jargon), "{jargon} in {quote}");
    }
    let started = browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    browser.wait_for(&id, "COMPLETED").await;
    let library = browser.html("/dashboard").await;
    assert!(library.contains(">traducido<") && library.contains(">francés<"));
    assert!(!library.contains(">COMPLETED<"), "{library}");
    let months = [
        "ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic",
    ];
    assert!(
        months.iter().any(|m| library.contains(&format!(" {m} 20"))),
        "the upload's date in words: {library}"
    );
    let book = browser.html(&page).await;
    let reading = book.find("Tu traducción").unwrap();
    assert!(
        reading < book.find("id=\"state\"").unwrap(),
        "a finished book leads with its reading and downloads"
    );
}

/// The `name=value` pair a response sets for the cookie `name`.
fn set_cookie(response: &Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
        .find(|pair| pair.starts_with(&format!("{name}=")))
}

#[tokio::test]
async fn the_readers_remember_the_view_chosen_and_offer_to_continue_where_the_reading_stopped() {
    let app = TestApp::new().with_workers().start().await;
    let mut owner = Browser::new(&app);
    owner.sign_up().await;
    let token = owner.token("/dashboard").await;
    let uploaded = owner
        .upload(&token, "voyage.txt", sample_txt(), "The Voyage")
        .await;
    let page = location(&uploaded);
    let page = page.split('?').next().unwrap().to_string();
    let id = page.rsplit('/').next().unwrap().to_string();
    owner.wait_for(&id, "EXTRACTED").await;
    let started = owner
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    assert_eq!(started.status(), 303);
    owner.wait_for(&id, "COMPLETED").await;
    let session = owner.cookie.clone().unwrap();

    // Side by side until the translation alone is chosen; then remembered.
    let first = owner.html(&format!("{page}/read")).await;
    assert!(first.contains("<div class=\"original\""));
    let chosen = owner
        .get(&format!("{page}/read?chapter=3&view=translation"))
        .await;
    assert_eq!(chosen.status(), 200);
    let view = set_cookie(&chosen, "reader_view").unwrap();
    assert_eq!(view, "reader_view=translation");
    let reading = set_cookie(&chosen, "reading").unwrap();
    assert!(!chosen
        .text()
        .await
        .unwrap()
        .contains("<div class=\"original\""));
    owner.cookie = Some(format!("{session}; {view}; {reading}"));
    let later = owner.html(&format!("{page}/read?chapter=2")).await;
    assert!(
        !later.contains("<div class=\"original\""),
        "the view is remembered"
    );
    // The book's page offers to continue at the chapter last opened, named by its title.
    let book = owner.html(&page).await;
    assert!(
        book.contains(&format!("href=\"{page}/read?chapter=3&amp;page=1\""))
            && book.contains("Continue reading: CHAPTER II. The Carpet-Bag<"),
        "{book}"
    );

    // Whoever holds the share link is offered the same, on the book's first page.
    let share = owner
        .post_form(&format!("{page}/share"), &[("csrf", &token)])
        .await;
    assert_eq!(share.status(), 303);
    let book = owner.html(&page).await;
    let at = book.find("/shared/").unwrap();
    let shared = book[at..].split('"').next().unwrap().to_string();
    let visitor = Client::new();
    let url = format!("{}{shared}", app.url);
    let opened = visitor
        .get(format!("{url}?chapter=2"))
        .send()
        .await
        .unwrap();
    let reading = set_cookie(&opened, "reading").unwrap();
    let first = visitor
        .get(&url)
        .header("cookie", &reading)
        .send()
        .await
        .unwrap();
    assert!(
        set_cookie(&first, "reading").is_none(),
        "the offer does not forget"
    );
    let first = first.text().await.unwrap();
    assert!(
        first.contains(&format!(
            "<a href=\"{shared}?chapter=2\">Continue reading: CHAPTER I. Loomings<"
        )),
        "{first}"
    );
}

#[tokio::test]
async fn a_key_made_on_the_settings_page_is_shown_once_works_and_stops_when_revoked() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/settings/keys").await;
    let made = browser
        .post_form(
            "/dashboard/settings/keys",
            &[
                ("csrf", &token),
                ("name", "laptop"),
                ("access", "write"),
                ("days", "30"),
            ],
        )
        .await;
    assert_eq!(made.status(), 200);
    let html = made.text().await.unwrap();
    let secret = text_after(&html, "<code id=\"new-key\">");
    assert!(secret.starts_with("bt_"), "{secret}");
    let key_user: Value = app.get("/api/user", &secret).await.json().await.unwrap();
    assert!(key_user["email"].is_string(), "{key_user}");

    let settings = browser.html("/dashboard/settings/keys").await;
    assert!(
        settings.contains("laptop") && !settings.contains(&secret),
        "shown once"
    );
    let at = settings.find("/dashboard/settings/keys/").unwrap() + 25;
    let id = settings[at..].split('/').next().unwrap().to_string();
    let revoked = browser
        .post_form(
            &format!("/dashboard/settings/keys/{id}/revoke"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(revoked.status(), 303);
    assert_eq!(app.get("/api/user", &secret).await.status(), 401);
}

#[tokio::test]
async fn a_webhook_added_on_the_page_gets_its_test_and_shows_the_delivery() {
    let app = TestApp::new().with_workers().start().await;
    let receiver = crate::webhooks::Receiver::start(200).await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/settings/webhooks").await;
    let added = browser
        .post_form(
            "/dashboard/settings/webhooks",
            &[("csrf", &token), ("url", &receiver.url), ("completed", "1")],
        )
        .await;
    assert_eq!(added.status(), 200);
    let html = added.text().await.unwrap();
    assert!(text_after(&html, "<code id=\"new-webhook\">").starts_with("whsec_"));
    let at = html.find("/dashboard/settings/webhooks/").unwrap() + 29;
    let id = html[at..].split(['/', '"']).next().unwrap().to_string();
    let tested = browser
        .post_form(
            &format!("/dashboard/settings/webhooks/{id}/test"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(tested.status(), 200);
    assert!(tested
        .text()
        .await
        .unwrap()
        .contains("Test delivered: HTTP 200"));
    assert_eq!(receiver.hits().len(), 1);
    let deliveries = browser
        .html(&format!("/dashboard/settings/webhooks/{id}"))
        .await;
    assert!(deliveries.contains("test"), "{deliveries}");
}

#[tokio::test]
async fn the_account_closes_from_its_page_only_with_the_exact_phrase() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/settings/data").await;
    let export = browser.get("/api/user/export").await;
    assert_eq!(export.status(), 200);
    assert!(export.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    let wrong = browser
        .post_form(
            "/dashboard/settings/close",
            &[("csrf", &token), ("confirmation", "delete my account")],
        )
        .await;
    assert_eq!(wrong.status(), 400);
    assert_eq!(browser.get("/dashboard").await.status(), 200);
    let closed = browser
        .post_form(
            "/dashboard/settings/close",
            &[("csrf", &token), ("confirmation", "DELETE MY ACCOUNT")],
        )
        .await;
    assert_eq!(
        (closed.status().as_u16(), location(&closed)),
        (303, "/".to_string())
    );
    assert_eq!(browser.cookie, None, "the cookie is cleared");
    assert_eq!(browser.get("/dashboard").await.status(), 303);
}

#[tokio::test]
async fn notifications_are_listed_and_marked_read_from_their_page() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard").await;
    let page = location(
        &browser
            .upload(&token, "voyage.txt", sample_txt(), "Told")
            .await,
    );
    let id = page.rsplit('/').next().unwrap().to_string();
    browser.wait_for(&id, "EXTRACTED").await;
    browser
        .post_form(&format!("{page}/start"), &[("csrf", &token)])
        .await;
    browser.wait_for(&id, "COMPLETED").await;
    let html = eventually(Duration::from_secs(5), || async {
        let html = browser.html("/dashboard/notifications").await;
        match html.contains("Told") {
            true => Ok(html),
            false => Err(html),
        }
    })
    .await;
    assert!(
        html.contains(&format!("{}/dashboard/books/{id}", app.url)),
        "{html}"
    );
    assert!(html.contains("1 unread"));
    let read = browser
        .post_form("/dashboard/notifications/read", &[("csrf", &token)])
        .await;
    assert_eq!(read.status(), 303);
    assert!(browser
        .html("/dashboard/notifications")
        .await
        .contains("0 unread"));
}

#[tokio::test]
async fn a_glossary_is_made_from_a_csv_edited_in_its_table_exported_and_replaced() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/glossaries").await;
    let form = Form::new()
        .text("csrf", token.clone())
        .text("name", "Sea")
        .part(
            "file",
            Part::bytes(
                b"source,target,context\nwhale,ballena,the animal\n\"Ahab, captain\",Acab\n"
                    .to_vec(),
            )
            .file_name("sea.csv"),
        );
    let made = browser
        .with_headers(
            browser
                .client
                .post(format!("{}/dashboard/glossaries", app.url)),
        )
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 303);
    let page = location(&made);
    let html = browser.html(&page).await;
    assert!(html.contains("value=\"ballena\"") && html.contains("value=\"Ahab, captain\""));

    // The table: the first entry changed, the second emptied (removed), one row added.
    let id_of = |source: &str| {
        let at = html.find(&format!("value=\"{source}\"")).unwrap();
        let before = &html[..at];
        let from = before.rfind("name=\"id\" value=\"").unwrap() + 17;
        before[from..].split('"').next().unwrap().to_string()
    };
    let (whale, ahab) = (id_of("whale"), id_of("Ahab, captain"));
    let saved = browser
        .post_form(
            &format!("{page}/save"),
            &[
                ("csrf", token.as_str()),
                ("name", "Sea terms"),
                ("id", &whale),
                ("source", "whale"),
                ("target", "cachalote"),
                ("context", ""),
                ("id", &ahab),
                ("source", ""),
                ("target", ""),
                ("context", ""),
                ("id", ""),
                ("source", "Pequod"),
                ("target", "Pequod"),
                ("context", "the ship"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let exported = browser.get(&format!("{page}/export")).await;
    assert_eq!(exported.status(), 200);
    assert!(exported.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains("Sea-terms.csv"));
    assert_eq!(
        exported.text().await.unwrap(),
        "source,target,context\n\"whale\",\"cachalote\",\"\"\n\"Pequod\",\"Pequod\",\"the ship\"\n"
    );

    let form = Form::new().text("csrf", token.clone()).part(
        "file",
        Part::bytes(b"harpoon,arpon\n".to_vec()).file_name("new.csv"),
    );
    let imported = browser
        .with_headers(browser.client.post(format!("{}{page}/import", app.url)))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), 303);
    let html = browser.html(&page).await;
    assert!(html.contains("value=\"arpon\"") && !html.contains("value=\"cachalote\""));
    let deleted = browser
        .post_form(&format!("{page}/delete"), &[("csrf", token.as_str())])
        .await;
    assert_eq!(deleted.status(), 303);
    assert_eq!(browser.get(&page).await.status(), 404);
}

#[tokio::test]
async fn profile_defaults_and_notification_settings_are_saved_from_the_settings_page() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard/settings/profile").await;
    let saved = browser
        .post_form(
            "/dashboard/settings/profile",
            &[
                ("csrf", token.as_str()),
                ("name", "Ishmael"),
                ("preferredLanguage", "es"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let saved = browser
        .post_form(
            "/dashboard/settings/preferences",
            &[
                ("csrf", token.as_str()),
                ("defaultModel", "gpt-4o-mini"),
                ("defaultTargetLanguage", "de"),
                ("defaultGlossaryId", ""),
                ("autoStartTranslation", "on"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    // Only the in-app box ticked: every email setting goes off.
    let saved = browser
        .post_form(
            "/dashboard/settings/notifications",
            &[("csrf", token.as_str()), ("inAppEnabled", "on")],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let refused = browser
        .post_form(
            "/dashboard/settings/preferences",
            &[
                ("csrf", token.as_str()),
                ("defaultModel", "gpt-9"),
                ("defaultTargetLanguage", "de"),
            ],
        )
        .await;
    assert_eq!(refused.status(), 400);

    let user: Value = browser.get("/api/user").await.json().await.unwrap();
    assert_eq!(
        (user["name"].as_str(), user["preferredLanguage"].as_str()),
        (Some("Ishmael"), Some("es"))
    );
    let preferences: Value = browser
        .get("/api/settings/preferences")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(preferences["defaultTargetLanguage"], "de");
    assert_eq!(preferences["autoStartTranslation"], true);
    assert_eq!(preferences["preserveFormatting"], false);
    let notify: Value = browser
        .get("/api/settings/notifications")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(notify["inAppEnabled"], true);
    assert_eq!(notify["emailBookCompleted"], false);
    let html = browser.html("/dashboard/settings/profile").await;
    assert!(html.contains("value=\"Ishmael\""));
    let html = browser.html("/dashboard/settings/preferences").await;
    assert!(html.contains("<option value=\"gpt-4o-mini\" selected>"));
}

/// The link in a delivered email that starts with `start`.
fn link_in(body: &str, start: &str) -> String {
    let at = body
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {body}"));
    body[at..].split_whitespace().next().unwrap().to_string()
}

#[tokio::test]
async fn a_forgotten_password_is_reset_once_by_its_emailed_link_and_the_email_verified_by_its_own()
{
    let sink = SmtpSink::start().await;
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_SMTP_URL", sink.url.as_str()),
            ("BOOKTR_MAIL_FROM", "booktr <noreply@books.example>"),
        ])
        .start()
        .await;
    let mut browser = Browser::new(&app);
    let email = browser.sign_up().await;
    // Signing up mails the verification link.
    let sent = sink.wait_for(&email, "Confirm your email").await;
    let verify = link_in(&sent.body(), &format!("{}/verify?token=", app.url));
    let html = browser.html("/dashboard/settings/profile").await;
    assert!(html.contains("not verified yet"));
    let verified = Browser::new(&app)
        .get(verify.trim_start_matches(&app.url))
        .await;
    assert_eq!(verified.status(), 200);
    assert!(browser
        .html("/dashboard/settings/profile")
        .await
        .contains("· verified"));
    let again = Browser::new(&app)
        .get(verify.trim_start_matches(&app.url))
        .await;
    assert_eq!(again.status(), 400, "a link works once");

    // The same page for an email with an account and one without.
    let mut stranger = Browser::new(&app);
    let known = stranger.post_form("/forgot", &[("email", &email)]).await;
    let unknown = stranger
        .post_form("/forgot", &[("email", "nobody@example.com")])
        .await;
    assert_eq!(
        (known.status().as_u16(), unknown.status().as_u16()),
        (200, 200)
    );
    assert_eq!(known.text().await.unwrap(), unknown.text().await.unwrap());
    let sent = sink.wait_for(&email, "Reset your booktr password").await;
    let reset = link_in(&sent.body(), &format!("{}/reset?token=", app.url));
    let token = reset.split("token=").nth(1).unwrap().to_string();
    let form = stranger.html(reset.trim_start_matches(&app.url)).await;
    assert!(form.contains(&format!("value=\"{token}\"")));
    let short = stranger
        .post_form("/reset", &[("token", &token), ("password", "short")])
        .await;
    assert_eq!(
        short.status(),
        400,
        "a refused password does not spend the link"
    );
    let done = stranger
        .post_form(
            "/reset",
            &[("token", &token), ("password", "a brand new password")],
        )
        .await;
    assert_eq!(
        (done.status().as_u16(), location(&done)),
        (303, "/signin?reset=done".into())
    );
    let reused = stranger
        .post_form(
            "/reset",
            &[("token", &token), ("password", "yet another password")],
        )
        .await;
    assert_eq!(reused.status(), 400);

    // The old session ended with the old password; the new password signs in.
    assert_eq!(browser.get("/dashboard").await.status(), 303);
    let old = stranger
        .post_form(
            "/signin",
            &[("email", &email), ("password", "a long password")],
        )
        .await;
    assert_eq!(old.status(), 401);
    let new = stranger
        .post_form(
            "/signin",
            &[("email", &email), ("password", "a brand new password")],
        )
        .await;
    assert_eq!(new.status(), 303);
}

/// The messages in the outbox of the app's data directory, as text, oldest first.
fn outbox(app: &TestApp) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(app.data.path().join("outbox")) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect()
}

#[tokio::test]
async fn without_a_relay_a_reset_link_is_written_to_the_outbox_and_works_from_there() {
    let app = TestApp::new().start().await;
    let email = Browser::new(&app).sign_up().await;
    let mut stranger = Browser::new(&app);
    let asked = stranger.post_form("/forgot", &[("email", &email)]).await;
    assert_eq!(asked.status(), 200);
    if on_aws() {
        // A Lambda has no data directory: the message is dropped, and only that is logged.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(outbox(&app), Vec::<String>::new());
        return;
    }
    let message = eventually(Duration::from_secs(20), || async {
        outbox(&app)
            .into_iter()
            .find(|m| m.contains("Subject: Reset your booktr password"))
            .ok_or_else(|| format!("no reset message in {:?}", outbox(&app)))
    })
    .await;
    assert!(message.contains(&format!("To: {email}")), "{message}");
    let reset = link_in(&message, &format!("{}/reset?token=", app.url));
    let token = reset.split("token=").nth(1).unwrap().to_string();
    let done = stranger
        .post_form(
            "/reset",
            &[("token", &token), ("password", "a brand new password")],
        )
        .await;
    assert_eq!(
        done.status(),
        303,
        "{token}: {}",
        done.text().await.unwrap()
    );
    assert_eq!(location(&done), "/signin?reset=done");
}

#[tokio::test]
async fn made_up_reset_links_from_one_address_meet_a_429_on_the_eleventh_in_a_minute() {
    let app = TestApp::new().start().await;
    let user = app.user().await;
    let mut stranger = Browser::new(&app);
    let mut guess = async |n: usize| {
        let token = format!("{}.{}{n:02}", user.id, "G".repeat(46));
        stranger
            .post_form(
                "/reset",
                &[("token", &token), ("password", "a brand new password")],
            )
            .await
    };
    for n in 0..10 {
        assert_eq!(guess(n).await.status(), 400, "guess {n}: a dead link");
    }
    let refused = guess(10).await;
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let page = refused.text().await.unwrap();
    assert!(page.contains("Too many requests"), "{page}");

    app.clock.advance(chrono::Duration::seconds(61));
    assert_eq!(guess(11).await.status(), 400, "the next minute counts anew");
}

/// Waits (up to 20 s) for the `n`th password-reset link mailed to `email`; the links in the
/// order they arrived.
async fn reset_links(sink: &SmtpSink, email: &str, n: usize, site: &str) -> Vec<String> {
    eventually(Duration::from_secs(20), || async {
        let links: Vec<String> = sink
            .received()
            .into_iter()
            .filter(|m| m.rcpt_to.iter().any(|r| r == email))
            .filter(|m| m.header("subject").is_some_and(|s| s.contains("Reset")))
            .map(|m| link_in(&m.body(), &format!("{site}/reset?token=")))
            .map(|link| link.split("token=").nth(1).unwrap().to_string())
            .collect();
        match links.len() >= n {
            true => Ok(links),
            false => Err(format!(
                "{} reset links of {n} reached {email}",
                links.len()
            )),
        }
    })
    .await
}

/// Signs in on the page and keeps the session; the answer's status and where it sends to.
async fn sign_in_as(browser: &mut Browser<'_>, email: &str, password: &str) -> (u16, String) {
    let answer = browser
        .post_form("/signin", &[("email", email), ("password", password)])
        .await;
    let to = answer
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_string())
        .unwrap_or_default();
    (answer.status().as_u16(), to)
}

#[tokio::test]
async fn changing_the_password_needs_the_current_one_and_ends_every_other_session() {
    let app = TestApp::new().with_workers().start().await;
    let mut here = Browser::new(&app);
    let email = here.sign_up().await;
    let mut elsewhere = Browser::new(&app);
    let signed_in = sign_in_as(&mut elsewhere, &email, "a long password").await;
    assert_eq!(signed_in, (303, "/dashboard".to_string()));
    let me: Value = here.get("/api/user").await.json().await.unwrap();
    let user = app
        .services
        .accounts
        .user(me["id"].as_str().unwrap())
        .await
        .unwrap();
    let key = app
        .services
        .accounts
        .create_key(&user, "integration", None, None)
        .await
        .unwrap()
        .secret;
    let token = here.token("/dashboard/settings/profile").await;

    // Five password attempts at the account from this address in all (the sign-in limit a
    // minute, which a password change counts against too). A wrong current password: said on the form, nothing changed, nobody signed out.
    let wrong = here
        .post_form(
            "/dashboard/settings/password",
            &[
                ("csrf", &token),
                ("current", "not the password"),
                ("new", "a new long password"),
            ],
        )
        .await;
    assert_eq!(wrong.status(), 400);
    let html = wrong.text().await.unwrap();
    assert!(
        html.contains("The current password is not right") && html.contains("id=\"pw-current\""),
        "the form again, with its error"
    );
    assert_eq!(elsewhere.get("/dashboard").await.status(), 200);
    // Without the form's token, nothing happens.
    let forged = here
        .post_form(
            "/dashboard/settings/password",
            &[
                ("current", "a long password"),
                ("new", "a new long password"),
            ],
        )
        .await;
    assert_eq!(forged.status(), 403);

    let changed = here
        .post_form(
            "/dashboard/settings/password",
            &[
                ("csrf", &token),
                ("current", "a long password"),
                ("new", "a new long password"),
            ],
        )
        .await;
    assert_eq!(
        (changed.status().as_u16(), location(&changed)),
        (
            303,
            "/dashboard/settings/profile?password=changed#main".to_string()
        )
    );
    let profile = here
        .html("/dashboard/settings/profile?password=changed")
        .await;
    assert!(
        profile.contains("Your password is changed"),
        "this session stays"
    );
    assert_eq!(
        elsewhere.get("/dashboard").await.status(),
        303,
        "the other session is ended"
    );
    assert_eq!(app.get("/api/user", &key).await.status(), 200, "keys stay");
    let mut later = Browser::new(&app);
    let old = sign_in_as(&mut later, &email, "a long password").await;
    assert_ne!(old.0, 303, "the old password no longer signs in");
    let new = sign_in_as(&mut later, &email, "a new long password").await;
    assert_eq!(new, (303, "/dashboard".to_string()));
}

#[tokio::test]
async fn a_used_reset_link_ends_every_other_and_api_keys_survive_it_unless_revoked_with_it() {
    let sink = SmtpSink::start().await;
    let app = TestApp::new()
        .with_workers()
        .with_env(&[
            ("BOOKTR_SMTP_URL", sink.url.as_str()),
            ("BOOKTR_MAIL_FROM", "booktr <noreply@books.example>"),
        ])
        .start()
        .await;
    let mut browser = Browser::new(&app);
    let email = browser.sign_up().await;
    let me: Value = browser.get("/api/user").await.json().await.unwrap();
    let user = app
        .services
        .accounts
        .user(me["id"].as_str().unwrap())
        .await
        .unwrap();
    let key = app
        .services
        .accounts
        .create_key(&user, "integration", None, None)
        .await
        .unwrap()
        .secret;
    // Asked for through the service: the page counts each request against the sign-in limits.
    let recovery = &app.services.recovery;
    recovery.request_password_reset(&email).await.unwrap();
    reset_links(&sink, &email, 1, &app.url).await;
    recovery.request_password_reset(&email).await.unwrap();
    let links = reset_links(&sink, &email, 2, &app.url).await;
    let (older, newer) = (&links[0], &links[1]);

    // The newer link is used, keys kept (the box left empty): the older one is dead.
    let mut stranger = Browser::new(&app);
    let used = stranger
        .post_form(
            "/reset",
            &[("token", newer), ("password", "the second password")],
        )
        .await;
    assert_eq!(used.status(), 303);
    let stale = stranger
        .post_form(
            "/reset",
            &[("token", older), ("password", "the attacker's password")],
        )
        .await;
    assert_eq!(stale.status(), 400);
    assert!(stale
        .text()
        .await
        .unwrap()
        .contains("another reset link of the account was used"));
    assert_eq!(
        browser.get("/dashboard").await.status(),
        303,
        "sessions end"
    );
    assert_eq!(
        app.get("/api/user", &key).await.status(),
        200,
        "API keys survive a reset unless the box is ticked"
    );

    // Two links used at the same moment: one sets the password, the other is refused; the box
    // revokes every API key with the reset.
    recovery.request_password_reset(&email).await.unwrap();
    reset_links(&sink, &email, 3, &app.url).await;
    recovery.request_password_reset(&email).await.unwrap();
    let links = reset_links(&sink, &email, 4, &app.url).await;
    let (mut first, mut second) = (Browser::new(&app), Browser::new(&app));
    let fields = |token| {
        [
            ("token", token),
            ("password", "the final password"),
            ("revokeApiKeys", "yes"),
        ]
    };
    let (first_fields, second_fields) = (fields(links[2].as_str()), fields(links[3].as_str()));
    let (one, other) = tokio::join!(
        first.post_form("/reset", &first_fields),
        second.post_form("/reset", &second_fields),
    );
    let mut statuses = [one.status().as_u16(), other.status().as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [303, 400]);
    assert_eq!(app.get("/api/user", &key).await.status(), 401);
    let signed_in = stranger
        .post_form(
            "/signin",
            &[("email", &email), ("password", "the final password")],
        )
        .await;
    assert_eq!(signed_in.status(), 303);
}

/// A browser signed in as a new account of `role` (made with a password, as the CLI would).
async fn signed_in_as(app: &TestApp, role: booktr_core::types::Role) -> Browser<'_> {
    let email = format!("{}@example.com", booktr_core::ids::new_id());
    app.services
        .accounts
        .create_user(booktr_core::accounts::NewUser {
            email: booktr_core::types::Email::parse(&email).unwrap(),
            name: Some(format!("{role:?}")),
            password: Some("a long password".into()),
            role,
            plan: booktr_core::types::Plan::Business,
        })
        .await
        .unwrap();
    let mut browser = Browser::new(app);
    let signed_in = browser
        .post_form(
            "/signin",
            &[("email", &email), ("password", "a long password")],
        )
        .await;
    assert_eq!(signed_in.status(), 303);
    browser
}

#[tokio::test]
async fn a_post_is_previewed_published_edited_commented_and_moderated_from_the_pages() {
    use booktr_core::types::Role;
    let app = TestApp::new().with_workers().start().await;
    let mut admin = signed_in_as(&app, Role::Admin).await;
    let token = admin.token("/dashboard/posts/new").await;
    let text = "A **bold** claim.\n\n<script>alert(1)</script>";
    let preview = admin
        .post_form(
            "/dashboard/posts/new",
            &[
                ("csrf", token.as_str()),
                ("title", "On whales"),
                ("content", text),
                ("intent", "preview"),
            ],
        )
        .await;
    assert_eq!(preview.status(), 200);
    let html = preview.text().await.unwrap();
    assert!(html.contains("<strong>bold</strong>"), "{html}");
    assert!(
        !html.contains("<script>alert"),
        "the preview is sanitised as the public page is"
    );
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the text area keeps what was written"
    );
    let published = admin
        .post_form(
            "/dashboard/posts/new",
            &[
                ("csrf", token.as_str()),
                ("title", "On whales"),
                ("content", text),
                ("intent", "publish"),
            ],
        )
        .await;
    assert_eq!(published.status(), 303);
    let edit = location(&published);
    let edited = admin
        .post_form(
            &edit,
            &[
                ("csrf", token.as_str()),
                ("title", "On whales, again"),
                ("content", "Edited."),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(edited.status(), 303);
    let public = Client::new()
        .get(format!("{}/comunidad/on-whales", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(public.status(), 200, "the address stays");
    assert!(public.text().await.unwrap().contains("On whales, again"));

    let mut reader = Browser::new(&app);
    reader.sign_up().await;
    let reader_token = reader.token("/dashboard/community/on-whales").await;
    let commented = reader
        .post_form(
            "/dashboard/community/on-whales",
            &[
                ("csrf", reader_token.as_str()),
                ("content", "Call me a fan."),
            ],
        )
        .await;
    assert_eq!(commented.status(), 303);
    let queue = admin.html("/admin").await;
    assert!(queue.contains("Call me a fan."));
    let at = queue.find("/admin/comments/").unwrap() + 16;
    let id = queue[at..].split('"').next().unwrap().to_string();
    let approved = admin
        .post_form(
            &format!("/admin/comments/{id}"),
            &[("csrf", token.as_str()), ("status", "APPROVED")],
        )
        .await;
    assert_eq!(approved.status(), 303);
    assert!(!admin.html("/admin").await.contains("Call me a fan."));
    let thread = reader.html("/dashboard/community/on-whales").await;
    assert!(thread.contains("Call me a fan.") && thread.contains("name=\"parentId\""));
    let replied = reader
        .post_form(
            "/dashboard/community/on-whales",
            &[
                ("csrf", reader_token.as_str()),
                ("content", "And a reply."),
                ("parentId", &id),
            ],
        )
        .await;
    assert_eq!(replied.status(), 303);

    // The moderation and email pages are not the reader's; the email page is SUPER_ADMIN's.
    assert_eq!(reader.get("/admin").await.status(), 403);
    assert_eq!(admin.get("/admin/email").await.status(), 403);
    let mut root = signed_in_as(&app, Role::SuperAdmin).await;
    let root_token = root.token("/admin/email").await;
    let saved = root
        .post_form(
            "/admin/email/settings",
            &[
                ("csrf", root_token.as_str()),
                ("senderPrefix", "team"),
                ("senderName", "Booktr Team"),
                ("replyToPrefix", "support"),
            ],
        )
        .await;
    assert_eq!(saved.status(), 303);
    let settings = root.html("/admin/email").await;
    assert!(
        settings.contains("<option value=\"team\" selected>") && settings.contains("Booktr Team"),
        "{settings}"
    );
    let tested = root
        .post_form("/admin/email", &[("csrf", root_token.as_str())])
        .await;
    assert_eq!(tested.status(), 200);
    assert!(tested.text().await.unwrap().contains("role=\"status\""));
}

#[tokio::test]
async fn the_model_and_glossary_chosen_with_the_file_are_quoted_on_the_books_page() {
    let app = TestApp::new().with_workers().start().await;
    let mut browser = Browser::new(&app);
    browser.sign_up().await;
    let token = browser.token("/dashboard").await;
    let library = browser.html("/dashboard").await;
    assert!(
        library.contains("<option value=\"gpt-4o-mini\" selected>"),
        "the default model"
    );
    let form = Form::new()
        .text("csrf", token.clone())
        .part("file", Part::bytes(sample_txt()).file_name("voyage.txt"))
        .text("model", "gpt-4o-mini")
        .text("glossaryId", "");
    let uploaded = browser
        .with_headers(browser.client.post(format!("{}/dashboard/upload", app.url)))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 303);
    let page = location(&uploaded);
    assert!(page.ends_with("?model=gpt-4o-mini"), "{page}");
    let id = page.split(['/', '?']).nth(3).unwrap().to_string();
    browser.wait_for(&id, "EXTRACTED").await;
    let html = browser.html(&page).await;
    assert!(
        html.contains("<option value=\"gpt-4o-mini\" selected>") && html.contains("Expected cost")
    );
}
