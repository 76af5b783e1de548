//! The request rate limits, for every route (`crate::finish` puts this layer on every group).
//! They protect the service, not against its own pages, so a request is counted by what it is
//! ([`Kind`]):
//!
//! - an API call (`/api/...`): per user with their plan's windows, or per client address with
//!   the FREE plan's when anonymous;
//! - a page of a signed-in user (carried by the session cookie): per user in
//!   [`rate::PAGE_WINDOWS`], a budget sized for a person, never the plan's;
//! - a page's own live update (its progress poll): per user in [`rate::LIVE_WINDOWS`];
//! - a page of a visitor who is not signed in: per client address in [`rate::PAGE_WINDOWS`];
//!   the password forms (sign-in, sign-up, reset) count their attempts on top of that, per
//!   address and per account (`Accounts::limit_password_attempt`);
//! - the app's script, style sheet, icons and manifest: never counted.
//!
//! A page's form that changes what an API call changes (the passage editor's save, undo, reset
//! and keep) is also that API call: [`count_as_api_call`] counts it in the plan's windows, on
//! top of the page it is, so the page budget is never a way round the plan's limits.
//!
//! Role DEV is never limited. Every counted response carries `X-RateLimit-Limit`,
//! `X-RateLimit-Remaining` and `X-RateLimit-Reset` for the window closest to running out; a
//! refused one is 429 `rate_limited` with `Retry-After` (an HTML page for a browser, see
//! `crate::web::app::pages_for_browsers`).
//!
//! Authentication happens here once, before counting (the user decides the limits); the
//! `Caller` extractor then takes the outcome from the request instead of authenticating again.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use booktr_core::accounts::{Credential, User};
use booktr_core::limits::service::{self as rate, Subject, Verdict, Window};
use tracing::error;

use crate::auth::{self, Authenticated};
use crate::error::ApiError;
use crate::state::AppState;

/// The client's address as the transport saw it, put on the request by the binary that serves
/// it (API Gateway's `sourceIp` on Lambda). `booktr serve` uses the socket's peer instead.
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

pub async fn limit_requests(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let kind = Kind::of(request.uri().path());
    if kind == Kind::Asset {
        return next.run(request).await;
    }
    let authenticated = auth::authenticate(request.headers(), &state).await;
    let counted = match &authenticated {
        Some(Ok(principal)) => {
            let user = &principal.user;
            let by_session = principal.credential == Credential::Session;
            rate::request_windows(user.plan, user.role).map(|plan| {
                let windows = match kind {
                    Kind::Page if by_session => rate::PAGE_WINDOWS,
                    Kind::Live if by_session => rate::LIVE_WINDOWS,
                    _ => plan,
                };
                (Subject::User(user.id.clone()), windows)
            })
        }
        _ => Some((
            Subject::Address(client_address(&request, &state)),
            anonymous_windows(kind),
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
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!(
                "rate limit of {} requests exceeded; try again in {wait} seconds",
                verdict.limit
            ),
        )
        .retry_after(wait)
        .into_response()
    } else {
        next.run(request).await
    };
    add_headers(response.headers_mut(), &verdict);
    response
}

/// Counts a page's write (a form that changes what an API call changes) against the user's
/// plan, as the API call would be: per user, in the plan's windows (none for role DEV). A
/// refusal is the API's 429 `rate_limited` with `Retry-After`, for the page to show. A table
/// that cannot count lets the write through, as [`limit_requests`] does.
pub async fn count_as_api_call(state: &AppState, user: &User) -> Result<(), ApiError> {
    let Some(windows) = rate::request_windows(user.plan, user.role) else {
        return Ok(());
    };
    let subject = Subject::User(user.id.clone());
    match state.services.limiter.hit(&subject, &windows).await {
        Ok(Verdict {
            retry_after: Some(wait),
            limit,
            ..
        }) => {
            booktr_core::metrics::rate_limit_refused("requests");
            Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "rate limit of {limit} changes exceeded (your plan's API limit, which the \
                     editor's saves count against); try again in {wait} seconds"
                ),
            )
            .retry_after(wait))
        }
        Ok(_) => Ok(()),
        Err(e) => {
            error!(error = %e, "a page's write not counted");
            Ok(())
        }
    }
}

/// What a request is, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The app's script, style sheet, icons and manifest.
    Asset,
    /// A page's own progress poll.
    Live,
    /// A call of the API (`/api/...`).
    Api,
    /// Anything else: a page, a form's post, a file a page links to.
    Page,
}

impl Kind {
    fn of(path: &str) -> Kind {
        if crate::web::app::paths::is_asset(path) {
            Kind::Asset
        } else if path.starts_with("/api/") || path == "/api" {
            Kind::Api
        } else if crate::web::app::paths::is_live_update(path) {
            Kind::Live
        } else {
            Kind::Page
        }
    }
}

/// A visitor's pages (and a live update without a session, which only gets sent to sign in)
/// have the page budget of their address; their API calls the FREE plan's.
fn anonymous_windows(kind: Kind) -> [Window; 2] {
    match kind {
        Kind::Api => rate::PUBLIC_WINDOWS,
        _ => rate::PAGE_WINDOWS,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_are_free_api_calls_are_the_plans_and_everything_else_is_a_page() {
        assert_eq!(Kind::of("/assets/app.css"), Kind::Asset);
        assert_eq!(Kind::of("/favicon.ico"), Kind::Asset);
        assert_eq!(Kind::of("/manifest.webmanifest"), Kind::Asset);
        assert_eq!(Kind::of("/api/books/b1"), Kind::Api);
        assert_eq!(Kind::of("/dashboard/books/b1/live"), Kind::Live);
        assert_eq!(Kind::of("/dashboard/live"), Kind::Live);
        assert_eq!(Kind::of("/dashboard/books/b1"), Kind::Page);
        assert_eq!(Kind::of("/signin"), Kind::Page);
        assert_eq!(Kind::of("/nowhere"), Kind::Page);
        assert_eq!(anonymous_windows(Kind::Api), rate::PUBLIC_WINDOWS);
        assert_eq!(anonymous_windows(Kind::Page), rate::PAGE_WINDOWS);
    }
}
