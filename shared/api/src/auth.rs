//! Authentication of `Auth` endpoints: a bearer API key or the session cookie, then the scope
//! rule (GET and HEAD need `read`, every other method `write`).

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use booktr_core::accounts::{Credential, Principal, SESSION_COOKIE};
use booktr_core::types::Scope;

use crate::error::ApiError;
use crate::AppState;

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
        let accounts = &state.services.accounts;
        let principal = if let Some(header) = parts.headers.get(AUTHORIZATION) {
            let token = header
                .to_str()
                .ok()
                .and_then(|v| {
                    v.strip_prefix("Bearer ")
                        .or_else(|| v.strip_prefix("bearer "))
                })
                .map(str::trim)
                .ok_or_else(|| {
                    ApiError::unauthorized("the Authorization header must be 'Bearer <API key>'")
                })?;
            accounts.authenticate_key(token).await?
        } else if let Some(token) = session_token(&parts.headers) {
            accounts.authenticate_session(&token).await?
        } else {
            return Err(ApiError::unauthorized(
                "authentication required: send 'Authorization: Bearer <API key>' or sign in",
            ));
        };
        let needed = if parts.method == Method::GET || parts.method == Method::HEAD {
            Scope::Read
        } else {
            Scope::Write
        };
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
