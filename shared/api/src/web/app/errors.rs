//! Every failure a browser meets is a page: in the app's look, in the reader's language, with
//! the header that fits the session (the library for a signed-in user, sign-in and sign-up for
//! a visitor), saying what happened and what to do. API callers keep the spec's JSON
//! `{error, message}`.
//!
//! One layer ([`pages_for_browsers`]) does it for every route: an error answer (it carries its
//! [`ApiError`]) becomes a page when it answers a browser asking for a page (`Accept` names
//! `text/html`, the path is not under `/api/`), or when a page's handler asked for a page
//! ([`super::page_error`]), as a form posted without that `Accept` still expects one. The
//! answer's status, `Retry-After` and rate-limit headers are kept.

use axum::extract::{Request, State};
use axum::http::header::{ACCEPT, ACCEPT_LANGUAGE, COOKIE, RETRY_AFTER};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use minijinja::context;

use super::failure::{come_back_in, for_people, AsPage};
use super::i18n::Lang;
use super::page::page;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::state::AppState;

/// Whether the request is a browser's asking for a page.
fn wants_a_page(path: &str, headers: &HeaderMap) -> bool {
    !path.starts_with("/api/")
        && headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("text/html"))
}

pub async fn pages_for_browsers(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let browser = wants_a_page(request.uri().path(), request.headers());
    let share = request.uri().path().starts_with("/shared/");
    // What the page needs of the request: its language and its session.
    let mut kept = HeaderMap::new();
    for name in [COOKIE, ACCEPT_LANGUAGE] {
        for value in request.headers().get_all(&name) {
            kept.append(name.clone(), value.clone());
        }
    }
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let asked = response.extensions().get::<AsPage>().map(|p| p.0);
    let Some(error) = response.extensions().get::<ApiError>().cloned() else {
        return response;
    };
    let lang = match asked {
        Some(lang) => lang,
        None if browser => Lang::of(&kept),
        None => return response,
    };
    let mut shown = error_page(&state, &kept, lang, &error, share).await;
    for (name, value) in response.headers() {
        if name == RETRY_AFTER || name.as_str().starts_with("x-ratelimit-") {
            shown.headers_mut().insert(name.clone(), value.clone());
        }
    }
    shown
}

/// The error's page, with the signed-in user's header when the request's session is live.
async fn error_page(
    state: &AppState,
    headers: &HeaderMap,
    lang: Lang,
    error: &ApiError,
    share: bool,
) -> Response {
    let me = SignedIn::if_any(state, headers, lang).await;
    let status = error.status;
    let (title, message) = match status {
        StatusCode::NOT_FOUND if share => {
            (lang.get("share_gone"), lang.get("share_gone_text").into())
        }
        StatusCode::NOT_FOUND => (lang.get("not_found"), lang.get("not_found_text").into()),
        StatusCode::TOO_MANY_REQUESTS => (
            lang.get("too_many_requests"),
            come_back_in(lang, error.retry_after.unwrap_or(60)),
        ),
        StatusCode::FORBIDDEN => (lang.get("not_allowed"), for_people(lang, error)),
        StatusCode::CONFLICT => (lang.get("err_conflict_title"), for_people(lang, error)),
        StatusCode::SERVICE_UNAVAILABLE => (lang.get("err_busy_title"), for_people(lang, error)),
        s if s.is_server_error() => (lang.get("err_internal_title"), for_people(lang, error)),
        _ => (lang.get("err_invalid_title"), for_people(lang, error)),
    };
    let data = context! { message, status => status.as_u16() };
    match page(state, me.as_ref(), lang, "app/error.html", title, data).await {
        Ok(mut response) | Err(mut response) => {
            *response.status_mut() = status;
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_gets_pages_and_the_api_keeps_its_json() {
        let mut html = HeaderMap::new();
        html.insert(
            ACCEPT,
            "text/html,application/xhtml+xml;q=0.9".parse().unwrap(),
        );
        assert!(wants_a_page("/dashboard", &html));
        assert!(wants_a_page("/nowhere", &html));
        assert!(!wants_a_page("/api/books", &html));
        assert!(!wants_a_page("/dashboard", &HeaderMap::new()));
    }
}
