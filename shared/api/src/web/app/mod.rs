//! The web app: the account pages (`/signin`, `/signup`, `/signout`) and, for a signed-in user,
//! the library (`/dashboard`) and a book's page (`/dashboard/books/{id}`). Server-rendered from
//! the templates in `templates/app/`, which escape everything they are given; readable and usable
//! without JavaScript (every action is a form); one script of ours (`/assets/app.js`, compiled
//! into the binary) refreshes a translating book's progress and sends large files straight to
//! storage. Every page calls the services the API calls, with the session cookie's user: the
//! pages add no rules of their own. The owner's reader is the book's editor ([`editor`]).
//!
//! Forms that change anything carry the session's CSRF token ([`csrf`]) and are refused (403)
//! without it. Pages are in English or Spanish ([`i18n`]).

mod account;
mod assets;
mod books;
mod community;
pub mod csrf;
mod editor;
mod errors;
mod glossaries;
pub mod i18n;
mod proposals;
pub mod reading;
mod return_to;
mod review;
mod settings;
mod term_rename;
mod terms;

use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use booktr_core::accounts::User;
use minijinja::{context, Value};
use serde::Serialize;

pub use self::errors::pages_for_browsers;
use self::i18n::Lang;
use crate::auth::session_token;
use crate::error::ApiError;
use crate::{AppState, Routes};

/// Every page of the app (`booktr serve`).
pub fn router() -> Routes {
    pages_router()
        .merge(download_router())
        .merge(community_router())
}

/// The pages of the account, the library, books (but their downloads), glossaries, settings and
/// notifications, with the app's script and style sheet: the pages' own function on AWS.
pub fn pages_router() -> Routes {
    Routes::new()
        .merge(account::router())
        .merge(books::router())
        .merge(editor::router())
        .merge(proposals::router())
        .merge(review::router())
        .merge(settings::router())
        .merge(glossaries::router())
        .merge(terms::router())
        .merge(term_rename::router())
        .merge(assets::router())
}

/// A book's downloads from its page: on AWS beside the API's downloads, in the function that
/// carries the renderers (a partial file is rendered on request).
pub fn download_router() -> Routes {
    books::download_router()
}

/// Writing in the community and its administration: on AWS beside the community's API and
/// public pages, which already carry the Markdown rendering and sanitising they need.
pub fn community_router() -> Routes {
    community::router()
}

/// The signed-in user of a page, with what every page shows for them. A request without a
/// live session is sent to sign in, and comes back to the page afterwards.
pub struct SignedIn {
    pub user: User,
    pub csrf: String,
    session: String,
    pub lang: Lang,
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let lang = Lang::of(&parts.headers);
        let to_sign_in = || {
            // The path and query alone: behind API Gateway the URI is absolute.
            let uri = parts
                .extensions
                .get::<OriginalUri>()
                .map_or(&parts.uri, |u| &u.0);
            let here = uri.path_and_query().map_or("/dashboard", |p| p.as_str());
            let next = return_to::percent_encode(here);
            Redirect::to(&format!("/signin?next={next}")).into_response()
        };
        let Some(session) = session_token(&parts.headers) else {
            return Err(to_sign_in());
        };
        match state.services.accounts.authenticate_session(&session).await {
            Ok(principal) => {
                tracing::Span::current().record("user_id", principal.user.id.as_str());
                Ok(SignedIn {
                    csrf: csrf::token(&session),
                    user: principal.user,
                    session,
                    lang,
                })
            }
            Err(booktr_core::accounts::AccountsError::Store(e)) => {
                Err(page_error(lang, ApiError::from(e)))
            }
            Err(_) => Err(to_sign_in()),
        }
    }
}

/// Who views a public page (home, community): their language, and whether they are signed in
/// (the header then offers the library rather than sign-in and sign-up).
pub struct Visitor {
    pub lang: Lang,
    pub signed_in: bool,
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, std::convert::Infallible> {
        let lang = Lang::of(&parts.headers);
        // The rate-limit layer has authenticated the request already; served without it, the
        // session is read here.
        let signed_in = match parts.extensions.get::<crate::auth::Authenticated>() {
            Some(crate::auth::Authenticated(outcome)) => outcome
                .as_ref()
                .is_ok_and(|p| p.credential == booktr_core::accounts::Credential::Session),
            None => match session_token(&parts.headers) {
                Some(session) => state
                    .services
                    .accounts
                    .authenticate_session(&session)
                    .await
                    .is_ok(),
                None => false,
            },
        };
        Ok(Visitor { lang, signed_in })
    }
}

impl SignedIn {
    /// The signed-in user of a page open to anyone (sign-in, a reset, an error), when the
    /// request's session is live: its header is then the signed-in one.
    pub(super) async fn if_any(state: &AppState, headers: &HeaderMap, lang: Lang) -> Option<Self> {
        let session = session_token(headers)?;
        let principal = state
            .services
            .accounts
            .authenticate_session(&session)
            .await
            .ok()?;
        Some(SignedIn {
            csrf: csrf::token(&session),
            user: principal.user,
            session,
            lang,
        })
    }

    /// Refuses a form without this session's token (403, nothing changed).
    pub fn check_form(&self, token: Option<&str>) -> Result<(), ApiError> {
        if token.is_some_and(|t| csrf::holds(t, &self.session)) {
            Ok(())
        } else {
            tracing::info!("a form without its session's CSRF token was refused");
            Err(ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                errors::SAID,
                self.lang.get("forbidden"),
            ))
        }
    }
}

impl SignedIn {
    /// As [`SignedIn::check_form`], for a form read as its list of fields.
    pub fn check_fields(&self, fields: &[(String, String)]) -> Result<(), ApiError> {
        self.check_form(field(fields, csrf::FIELD).as_deref())
    }
}

/// A form with nothing but its CSRF token (a button that acts).
#[derive(serde::Deserialize)]
pub(super) struct TokenForm {
    pub csrf: Option<String>,
}

/// The value of a form's field, as sent.
pub(super) fn field(fields: &[(String, String)], name: &str) -> Option<String> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

/// A language field as a form sent it: None when left empty, else the code of the language it
/// names or is the code of ([`crate::web::words::language_code`]); a field that holds no
/// language is refused (400) saying so, with a few names and codes it could hold.
pub(super) fn language_field(lang: Lang, typed: Option<&str>) -> Result<Option<String>, ApiError> {
    match typed.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(typed) => crate::web::words::language_code(typed)
            .map(Some)
            .ok_or_else(|| errors::refused(crate::web::words::unknown_language(lang, typed))),
    }
}

/// What the layout shows of the signed-in user.
#[derive(Serialize)]
struct Viewer<'a> {
    name: &'a str,
    email: &'a str,
    unread: usize,
    /// Sees the moderation pages.
    admin: bool,
}

/// Renders a page of the app in the user's language, never cached (it is theirs alone).
pub async fn page(
    state: &AppState,
    me: Option<&SignedIn>,
    lang: Lang,
    template: &str,
    title: &str,
    data: Value,
) -> Result<Response, Response> {
    let viewer = match me {
        Some(me) => {
            let unread = state
                .services
                .events
                .unread_count(&me.user.id)
                .await
                .map_err(|e| page_error(lang, e.into()))?;
            Some(Viewer {
                name: me.user.name.as_deref().unwrap_or(me.user.email.as_str()),
                email: me.user.email.as_str(),
                unread,
                admin: matches!(
                    me.user.role,
                    booktr_core::types::Role::Admin | booktr_core::types::Role::SuperAdmin
                ),
            })
        }
        None => None,
    };
    render(
        template,
        context! {
            lang => lang.code(),
            t => lang.messages(),
            title => title,
            viewer => viewer,
            csrf => me.map(|m| m.csrf.clone()),
            ..data
        },
    )
    .map_err(|e| page_error(lang, e))
}

fn render(template: &str, context: Value) -> Result<Response, ApiError> {
    let template = super::templates()
        .get_template(template)
        .map_err(|e| ApiError::internal(&e))?;
    let html = template
        .render(context)
        .map_err(|e| ApiError::internal(&e))?;
    Ok((
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "private, no-store"),
        ],
        html,
    )
        .into_response())
}

/// A failure as a page in the user's language, with its status: the answer carries the error,
/// and [`pages_for_browsers`] shows it with the header that fits the session.
pub fn page_error(lang: Lang, error: ApiError) -> Response {
    let mut response = error.into_response();
    response.extensions_mut().insert(errors::AsPage(lang));
    response
}

/// The app's script, style sheet, icons and manifest: files every page loads, never counted
/// against any rate limit.
pub fn is_asset(path: &str) -> bool {
    path.starts_with("/assets/") || assets::AT_THE_ROOT.contains(&path)
}

/// A page's own live update (its progress poll): counted in a budget of its own.
pub fn is_live_update(path: &str) -> bool {
    path == books::LIBRARY_LIVE
        || path
            .strip_prefix("/dashboard/books/")
            .is_some_and(|rest| rest.ends_with("/live") && rest.matches('/').count() == 1)
}
