//! Who asks for a page: the signed-in user (with the session's CSRF token and language) or a
//! visitor of a public page; and what every form is checked and read with.

use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use booktr_core::accounts::User;

use super::failure::{page_error, refused, SAID};
use super::i18n::Lang;
use super::{csrf, return_to};
use crate::auth::session_token;
use crate::error::ApiError;
use crate::state::AppState;
use crate::web::words;

/// The signed-in user of a page, with what every page shows for them. A request without a
/// live session is sent to sign in, and comes back to the page afterwards.
pub struct SignedIn {
    pub user: User,
    pub csrf: String,
    pub(super) session: String,
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
                SAID,
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
/// names or is the code of ([`words::language_code`]); a field that holds no
/// language is refused (400) saying so, with a few names and codes it could hold.
pub(super) fn language_field(lang: Lang, typed: Option<&str>) -> Result<Option<String>, ApiError> {
    match typed.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(typed) => words::language_code(typed)
            .map(Some)
            .ok_or_else(|| refused(words::unknown_language(lang, typed))),
    }
}
