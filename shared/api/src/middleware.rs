//! Request-wide layers: a tracing span per request, the headers that defend the browser, a limit
//! on the URI's length, and a last line of defence against panics.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::header::{
    CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, STRICT_TRANSPORT_SECURITY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use tracing::{error, info, info_span, Instrument};

use crate::error::ApiError;
use crate::state::AppState;

/// What an HTML page of ours may load: its own scripts, styles, images and web app manifest only
/// (no inline script, no other origin), `data:` images (Swagger UI's icons), inline styles (the pages' layout and
/// Swagger UI set some), and no framing by anyone.
const PAGE_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; \
     form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The headers every response carries, in both modes (see [`defences`]).
pub async fn defend_the_browser(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let share_page = request.uri().path().starts_with("/shared/");
    let mut response = next.run(request).await;
    let html = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let headers = response.headers_mut();
    for (name, value) in defences(share_page, html, state.settings.is_https()) {
        headers.insert(name, HeaderValue::from_static(value));
    }
    // The web app's script posts direct uploads to storage, which on AWS is the bucket.
    if let Some(origin) = state.settings.upload_origin.as_deref().filter(|_| html) {
        let policy = PAGE_POLICY.replace(
            "connect-src 'self'",
            &format!("connect-src 'self' {origin}"),
        );
        if let Ok(value) = HeaderValue::from_str(&policy) {
            headers.insert(CONTENT_SECURITY_POLICY, value);
        }
    }
    response
}

/// `nosniff` everywhere; on HTML, the page policy and `X-Frame-Options` for browsers without
/// `frame-ancestors`; a share page's address (a secret) never sent as a referrer, other pages'
/// only as their origin to other sites; HSTS when the service is reached over https.
fn defences(share_page: bool, html: bool, https: bool) -> Vec<(HeaderName, &'static str)> {
    let mut headers = vec![
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (
            REFERRER_POLICY,
            if share_page {
                "no-referrer"
            } else {
                "strict-origin-when-cross-origin"
            },
        ),
    ];
    if html {
        headers.push((CONTENT_SECURITY_POLICY, PAGE_POLICY));
        headers.push((X_FRAME_OPTIONS, "DENY"));
    }
    if https {
        headers.push((
            STRICT_TRANSPORT_SECURITY,
            "max-age=31536000; includeSubDomains",
        ));
    }
    headers
}

/// One span per request (method, path, request id, and the user once authenticated), and one
/// log line when it ends with status and latency.
pub async fn trace_requests(request: Request, next: Next) -> Response {
    let request_id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| v.len() <= 128)
        .map_or_else(booktr_core::ids::new_id, str::to_string);
    let span = info_span!(
        "request",
        method = %request.method(),
        path = %logged_path(request.uri().path()),
        request_id = %request_id,
        user_id = tracing::field::Empty,
    );
    let started = Instant::now();
    let mut response = next.run(request).instrument(span.clone()).await;
    let status = response.status().as_u16();
    span.in_scope(|| {
        info!(
            status,
            latency_ms = started.elapsed().as_millis() as u64,
            "request finished"
        )
    });
    if let Ok(value) = request_id.parse() {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

/// The request path as logged: a share token is a credential (whoever has it reads the book),
/// so the segment after `shared` (`/shared/{token}`, and a share's files under
/// `/files/{key}/shared/{token}/`) is replaced by `{token}`.
fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    // Most paths hold no share: logged as they are, without building a copy per request.
    if !path.contains("/shared/") {
        return path.into();
    }
    let mut after_shared = false;
    path.split('/')
        .map(|segment| {
            let shown = if after_shared { "{token}" } else { segment };
            after_shared = segment == "shared";
            shown
        })
        .collect::<Vec<_>>()
        .join("/")
        .into()
}

/// The longest request URI served, in bytes: what API Gateway and most proxies accept, far
/// beyond any URI the API builds (ids, a few query parameters).
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// A URI longer than [`MAX_URI_BYTES`] is refused with 414 before routing, in the error model.
/// hyper itself refuses URIs over 65,534 bytes while it reads the request head, before any
/// layer runs, with a bare 414 and no body: it has no hook to change that answer.
pub async fn refuse_long_uris(request: Request, next: Next) -> Response {
    let length = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if length > MAX_URI_BYTES {
        return ApiError::new(
            axum::http::StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request URI is {length} bytes; at most {MAX_URI_BYTES} are accepted"),
        )
        .into_response();
    }
    next.run(request).await
}

/// A panic in a handler is a bug; the caller still gets a JSON 500 and the server lives on.
pub async fn catch_panics(request: Request, next: Next) -> Response {
    match AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            error!(panic = %message, "handler panicked");
            ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "something went wrong on our side; it has been logged",
            )
            .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(headers: &[(HeaderName, &str)]) -> Vec<String> {
        headers.iter().map(|(n, _)| n.to_string()).collect()
    }

    #[test]
    fn share_tokens_are_kept_out_of_logged_paths() {
        assert_eq!(
            logged_path("/shared/abc123/download"),
            "/shared/{token}/download"
        );
        assert_eq!(
            logged_path("/files/books/b1/output/shared/abc123/book.epub"),
            "/files/books/b1/output/shared/{token}/book.epub"
        );
        assert_eq!(logged_path("/api/books/b1/share"), "/api/books/b1/share");
    }

    #[test]
    fn hsts_is_sent_only_when_the_service_is_reached_over_https() {
        assert!(names(&defences(false, false, true)).contains(&"strict-transport-security".into()));
        assert!(!names(&defences(false, true, false)).contains(&"strict-transport-security".into()));
    }

    #[test]
    fn pages_get_the_policy_and_share_pages_send_no_referrer() {
        let page = defences(true, true, false);
        assert!(page.contains(&(CONTENT_SECURITY_POLICY, PAGE_POLICY)));
        assert!(page.contains(&(REFERRER_POLICY, "no-referrer")));
        let json = defences(false, false, false);
        assert!(!names(&json).contains(&"content-security-policy".into()));
        assert!(json.contains(&(X_CONTENT_TYPE_OPTIONS, "nosniff")));
    }
}
