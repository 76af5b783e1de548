//! Request-wide layers: a tracing span per request, and a last line of defence against panics.

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
