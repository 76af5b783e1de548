//! Request-wide layers: a tracing span per request, a limit on the URI's length, and a last
//! line of defence against panics.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use tracing::{error, info, info_span, Instrument};

use crate::error::ApiError;

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
        path = %request.uri().path(),
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
