//! What a failure says to a person on a page: the web app's own refusals, a service's
//! refusal in words of the interface, and the mark that asks for an error answer to be shown
//! as a page ([`page_error`]; `errors::pages_for_browsers` shows it).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::i18n::Lang;
use crate::error::ApiError;

/// Put on an error answer by a page's handler: show it as a page in this language.
#[derive(Clone, Copy)]
pub(super) struct AsPage(pub Lang);

/// A failure as a page in the user's language, with its status: the answer carries the error,
/// and `errors::pages_for_browsers` shows it with the header that fits the session.
pub fn page_error(lang: Lang, error: ApiError) -> Response {
    let mut response = error.into_response();
    response.extensions_mut().insert(AsPage(lang));
    response
}

/// The code of an error whose message the web app wrote for people, in their language: shown
/// as it is. (A page's own; the API never answers it.)
pub(super) const SAID: &str = "said";

/// A form refused (400), saying why in words written for people.
pub(super) fn refused(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, SAID, message)
}

/// What a failure says to a person, in their language: the web app's own messages as they
/// are; a service's refusal in words of the interface (a form's values refused, a conflict, a
/// limit, a failure on our side), with the service's own explanation after it when it is a
/// sentence for people (it names no API route; a field's name before it is left out).
pub(super) fn for_people(lang: Lang, error: &ApiError) -> String {
    if error.code == SAID {
        return error.message.clone();
    }
    let detail = || explanation(&error.message);
    let with_detail = |headline: &str| match detail() {
        Some(detail) => format!("{headline} {detail}"),
        None => headline.to_string(),
    };
    match (error.status, error.code) {
        (StatusCode::NOT_FOUND, _) => lang.get("not_found_text").into(),
        (StatusCode::TOO_MANY_REQUESTS, _) => come_back_in(lang, error.retry_after.unwrap_or(60)),
        (StatusCode::UNAUTHORIZED, _) => lang.get("err_session").into(),
        (StatusCode::FORBIDDEN, _) => lang.get("err_not_yours").into(),
        (StatusCode::METHOD_NOT_ALLOWED, _) => lang.get("err_method").into(),
        (_, "email_taken") => lang.get("err_email_taken").into(),
        (StatusCode::CONFLICT, _) => lang.get("err_conflict").into(),
        (_, "quota_exceeded") => with_detail(lang.get("err_quota")),
        (_, "invalid_key") => with_detail(lang.get("err_invalid_key")),
        (_, "render_failed") => with_detail(lang.get("err_render")),
        (StatusCode::SERVICE_UNAVAILABLE, _) => lang.get("err_busy").into(),
        (s, _) if s.is_server_error() => lang.get("err_internal").into(),
        _ => match detail() {
            Some(detail) => format!("{} {detail}", lang.get("err_invalid")),
            None => format!("{} {}", lang.get("err_invalid"), lang.get("err_check_form")),
        },
    }
}

/// A service's message as a sentence for people: its first letter a capital, ending with a
/// full stop, without the field's name an API caller reads before it ("targetLang: ...": a word
/// such as "title" stays); None
/// for one that names an API route or method, which is for API callers alone.
fn explanation(message: &str) -> Option<String> {
    let names_a_route = message.contains("/api/")
        || ["GET ", "POST ", "PUT ", "PATCH ", "DELETE "]
            .iter()
            .any(|m| message.contains(m));
    if names_a_route {
        return None;
    }
    // A field's name as the API spells it (`targetLang`, `entries.0`), not a word ("title").
    let message = match message.split_once(": ") {
        Some((field, rest))
            if field
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
                && field
                    .chars()
                    .any(|c| c.is_ascii_uppercase() || c == '.' || c == '_') =>
        {
            rest
        }
        _ => message,
    };
    let message = message.trim();
    let mut chars = message.chars();
    let first = chars.next()?;
    let mut sentence: String = first.to_uppercase().chain(chars).collect();
    if !sentence.ends_with(['.', '!', '?']) {
        sentence.push('.');
    }
    Some(sentence)
}

/// "Come back in 7 minutes", rounded up to the minute (a wait under one says one).
pub(super) fn come_back_in(lang: Lang, seconds: i64) -> String {
    let minutes = (seconds.max(1) + 59) / 60;
    lang.get("come_back_in")
        .replace("{minutes}", &minutes.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_services_refusal_is_said_in_words_for_people_and_never_names_an_api_route() {
        let said = |e: ApiError| for_people(Lang::En, &e);
        assert_eq!(
            said(ApiError::bad_request("title: must not be empty")),
            "That could not be done as asked. Title: must not be empty."
        );
        assert_eq!(
            said(ApiError::bad_request(
                "targetLang: 'x' is not a language code"
            )),
            "That could not be done as asked. 'x' is not a language code."
        );
        assert_eq!(
            said(ApiError::bad_request("the file is empty")),
            "That could not be done as asked. The file is empty."
        );
        let routed = said(ApiError::bad_request(
            "the book is PAUSED; resume it with POST /api/translate/resume",
        ));
        assert!(
            !routed.contains("/api/") && !routed.contains("POST"),
            "{routed}"
        );
        assert!(routed.contains("check what the form holds"), "{routed}");
        let conflict = ApiError::new(StatusCode::CONFLICT, "version_conflict", "stale 3 != 4");
        assert!(said(conflict).starts_with("This changed elsewhere meanwhile"));
        let taken = ApiError::new(StatusCode::CONFLICT, "email_taken", "exists");
        assert!(said(taken).starts_with("An account with this email already exists"));
        let quota = ApiError::new(
            StatusCode::BAD_REQUEST,
            "quota_exceeded",
            "this book has 9,000 words; 1,000 are left this month",
        );
        assert_eq!(
            said(quota),
            "Your plan's monthly quota does not cover this. This book has 9,000 words; 1,000 are left this month."
        );
        assert_eq!(
            said(ApiError::not_found("book")),
            Lang::En.get("not_found_text")
        );
        let limited =
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "x").retry_after(90);
        assert_eq!(said(limited), "Come back in 2 min.");
        let internal = ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "x");
        assert!(for_people(Lang::Es, &internal).starts_with("Algo ha fallado"));
        assert_eq!(said(refused("Ya está.")), "Ya está.");
    }

    #[test]
    fn the_wait_is_said_in_whole_minutes_rounded_up() {
        assert_eq!(come_back_in(Lang::En, 1), "Come back in 1 min.");
        assert!(come_back_in(Lang::Es, 2439).contains("41"));
    }
}
