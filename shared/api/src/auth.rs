//! Authentication of `Auth` endpoints: a bearer API key or the session cookie, then the scope
//! rule (GET and HEAD need `read`, every other method `write`).

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use booktr_core::accounts::{Credential, Principal, SESSION_COOKIE};
use booktr_core::types::Scope;

use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller of an `Auth` endpoint.
pub struct Caller(pub Principal);

impl Caller {
    pub fn user_id(&self) -> &str {
        &self.0.user.id
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let principal = outcome(parts, state).await.unwrap_or_else(|| {
            Err(ApiError::unauthorized(
                "authentication required: send 'Authorization: Bearer <API key>' or sign in",
            ))
        })?;
        let safe = parts.method == Method::GET || parts.method == Method::HEAD;
        if !safe && principal.credential == Credential::Session {
            require_same_origin(&parts.headers, state)?;
        }
        let needed = if safe { Scope::Read } else { Scope::Write };
        if !principal.may(needed) {
            let what = match principal.credential {
                Credential::ApiKey { .. } => "this API key",
                Credential::Session => "this session",
            };
            return Err(ApiError::forbidden(format!(
                "{what} lacks the '{needed}' scope needed for {}",
                parts.method
            )));
        }
        tracing::Span::current().record("user_id", principal.user.id.as_str());
        Ok(Caller(principal))
    }
}

/// A browser sends its cookies along with a request another site's page makes, so a request
/// that changes something on the strength of the session cookie (and a sign-in, sign-up or
/// sign-out, which set it) must come from our own pages: `Sec-Fetch-Site` says `same-origin`
/// (or `none`: typed by the user), or, from browsers that do not send it, `Origin` is ours. A
/// request with neither comes from no browser page (curl, a server) and cannot be forged by one.
/// Bearer keys are never sent by a browser on its own, so they need no such proof.
pub fn require_same_origin(headers: &HeaderMap, state: &AppState) -> Result<(), ApiError> {
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or_default());
    let ours = match (header("sec-fetch-site"), header("origin")) {
        (Some(site), _) => site == "same-origin" || site == "none",
        (None, Some(origin)) => origin == origin_of(&state.settings.public_url),
        (None, None) => true,
    };
    if ours {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "a request carried by the session cookie must come from this site's own pages",
        ))
    }
}

/// `https://books.example` from `https://books.example/base`.
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    url[after_scheme..]
        .find('/')
        .map_or(url, |slash| &url[..after_scheme + slash])
}

/// The caller of a public route: signed in or not. A credential that is sent but wrong is
/// still a 401, so a client learns its key is bad rather than silently seeing less.
pub struct OptionalCaller(pub Option<Principal>);

impl FromRequestParts<AppState> for OptionalCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(OptionalCaller(outcome(parts, state).await.transpose()?))
    }
}

/// The request's authentication: done by the rate-limit layer already, or here for routers
/// served without it (tests calling a router directly).
async fn outcome(parts: &mut Parts, state: &AppState) -> Option<Result<Principal, ApiError>> {
    match parts.extensions.remove::<Authenticated>() {
        Some(Authenticated(outcome)) => Some(outcome),
        None => authenticate(&parts.headers, state).await,
    }
}

/// The outcome of authenticating a request, kept on it for the `Caller` extractor.
#[derive(Clone)]
pub(crate) struct Authenticated(pub Result<Principal, ApiError>);

/// Who the request's credential names: None when it carries none; a bearer key wins over a
/// session cookie.
pub(crate) async fn authenticate(
    headers: &HeaderMap,
    state: &AppState,
) -> Option<Result<Principal, ApiError>> {
    let accounts = &state.services.accounts;
    if let Some(header) = headers.get(AUTHORIZATION) {
        let token = header
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        let Some(token) = token else {
            return Some(Err(ApiError::unauthorized(
                "the Authorization header must be 'Bearer <API key>'",
            )));
        };
        Some(accounts.authenticate_key(token).await.map_err(Into::into))
    } else {
        let token = session_token(headers)?;
        Some(
            accounts
                .authenticate_session(&token)
                .await
                .map_err(Into::into),
        )
    }
}

/// The session token from the `Cookie` header(s), if any.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_the_scheme_host_and_port_of_the_public_url() {
        assert_eq!(
            origin_of("https://books.example/base"),
            "https://books.example"
        );
        assert_eq!(origin_of("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
