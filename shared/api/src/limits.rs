//! The request rate limits, for every route (`crate::finish` puts this layer on every group):
//! an authenticated caller is counted per user with their plan's windows, anyone else per
//! client address with the FREE plan's. Role DEV is never limited. Every counted response
//! carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` for the window
//! closest to running out; a refused one is 429 `rate_limited` with `Retry-After`.
//!
//! Authentication happens here once, before counting (the user decides the limits); the
//! `Caller` extractor then takes the outcome from the request instead of authenticating again.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use booktr_core::limits::rate::{self, Subject, Verdict};
use tracing::error;

use crate::auth::{self, Authenticated};
use crate::error::ApiError;
use crate::AppState;

/// The client's address as the transport saw it, put on the request by the binary that serves
/// it (API Gateway's `sourceIp` on Lambda). `booktr serve` uses the socket's peer instead.
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

pub async fn limit_requests(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let authenticated = auth::authenticate(request.headers(), &state).await;
    let counted = match &authenticated {
        Some(Ok(principal)) => rate::request_windows(principal.user.plan, principal.user.role)
            .map(|windows| (Subject::User(principal.user.id.clone()), windows)),
        _ => Some((
            Subject::Address(client_address(&request, &state)),
            rate::PUBLIC_WINDOWS,
        )),
    };
    if let Some(outcome) = authenticated {
        request.extensions_mut().insert(Authenticated(outcome));
    }
    let verdict = match counted {
        None => None,
        Some((subject, windows)) => {
            match state.services.limiter.hit(&subject, &windows).await {
                Ok(verdict) => Some(verdict),
                // Open, not closed: a table that cannot count cannot serve the request either,
                // and health must still be able to say so.
                Err(e) => {
                    error!(error = %e, "rate limit not counted");
                    None
                }
            }
        }
    };
    let Some(verdict) = verdict else {
        return next.run(request).await;
    };
    let mut response = if let Some(wait) = verdict.retry_after {
        booktr_core::metrics::rate_limit_refused("requests");
        let mut refused = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!(
                "rate limit of {} requests exceeded; try again in {wait} seconds",
                verdict.limit
            ),
        )
        .into_response();
        refused
            .headers_mut()
            .insert("retry-after", HeaderValue::from(wait));
        refused
    } else {
        next.run(request).await
    };
    add_headers(response.headers_mut(), &verdict);
    response
}

fn add_headers(headers: &mut HeaderMap, verdict: &Verdict) {
    headers.insert("x-ratelimit-limit", HeaderValue::from(verdict.limit));
    headers.insert(
        "x-ratelimit-remaining",
        HeaderValue::from(verdict.remaining),
    );
    headers.insert("x-ratelimit-reset", HeaderValue::from(verdict.reset));
}

/// Whom an anonymous request is counted as: the forwarded address when the proxy in front is
/// trusted (`BOOKTR_TRUST_FORWARDED_FOR`), else the transport's. IPv6 addresses count per /64,
/// the block one subscriber gets, so rotating addresses inside it buys nothing.
pub(crate) fn client_address<B>(request: &axum::http::Request<B>, state: &AppState) -> String {
    address_of(request.headers(), request.extensions(), state)
}

fn address_of(
    headers: &HeaderMap,
    extensions: &axum::http::Extensions,
    state: &AppState,
) -> String {
    let forwarded = state
        .settings
        .trust_forwarded_for
        .then(|| {
            headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .next_back()
                .and_then(|a| a.trim().parse::<IpAddr>().ok())
        })
        .flatten();
    let ip = forwarded
        .or_else(|| extensions.get::<ClientIp>().map(|c| c.0))
        .or_else(|| {
            extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip())
        });
    match ip.map(|ip| ip.to_canonical()) {
        Some(IpAddr::V4(v4)) => v4.to_string(),
        Some(IpAddr::V6(v6)) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        None => "unknown".into(),
    }
}

/// The caller's address, for handlers that limit by it themselves (password attempts).
pub struct ClientAddress(pub String);

impl FromRequestParts<AppState> for ClientAddress {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Ok(ClientAddress(address_of(
            &parts.headers,
            &parts.extensions,
            state,
        )))
    }
}
