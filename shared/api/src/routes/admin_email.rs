//! The administrator's email settings (role SUPER_ADMIN, else 403): `GET/PUT
//! /api/admin/emails/config`, `POST /api/admin/emails/test`, `POST /api/admin/emails/verify`
//! and the deprecated `DELETE /api/admin/emails/verify`. Bodies are read after the role check,
//! so that anyone else gets 403 whatever they send.

use axum::extract::State;
use axum::http::HeaderName;
use axum::response::{IntoResponse, Response};
use booktr_core::email::Outcome;
use booktr_core::types::{Email, Role};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::extract::Query;
use crate::wire::email::{EmailConfig, EmailSettingsPatch};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::Routes;
use crate::state::AppState;

/// When the verification removal was deprecated (RFC 9745: `@` and seconds since the epoch,
/// here 2026-11-23T00:00:00Z).
const DEPRECATED_SINCE: &str = "@1795392000";

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(config, update))
        .routes(routes!(test))
        .routes(routes!(verify, unverify))
}

fn super_admin(caller: &Caller) -> Result<(), ApiError> {
    if caller.0.user.role == Role::SuperAdmin {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "only a SUPER_ADMIN manages the email settings",
        ))
    }
}

/// A JSON body; None when there is none at all.
fn body<T: DeserializeOwned>(bytes: &Bytes) -> Result<Option<T>, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(bytes)
        .map(Some)
        .map_err(|e| ApiError::bad_request(format!("invalid body: {e}")))
}

fn email(raw: &str) -> Result<Email, ApiError> {
    Email::parse(raw).map_err(|e| ApiError::bad_request(format!("email: {e}")))
}

#[derive(Serialize, utoipa::ToSchema)]
struct Answer {
    success: bool,
    message: String,
}

impl From<Outcome> for Answer {
    fn from(outcome: Outcome) -> Self {
        Answer {
            success: outcome.success,
            message: outcome.message,
        }
    }
}

/// The email settings and the mail server's state (SUPER_ADMIN).
#[utoipa::path(get, path = "/api/admin/emails/config", tag = "admin", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Settings", body = EmailConfig)))]
async fn config(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<EmailConfig>, ApiError> {
    super_admin(&caller)?;
    Ok(axum::Json(state.services.email.config().await?.into()))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Updated {
    success: bool,
    sender_email: String,
}

/// Sets the given fields (SUPER_ADMIN); an empty body changes nothing.
#[utoipa::path(put, path = "/api/admin/emails/config", tag = "admin", security(("apiKey" = []), ("session" = [])),
    request_body(content = Option<EmailSettingsPatch>),
    responses((status = 200, description = "Saved", body = Updated)))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    bytes: Bytes,
) -> Result<axum::Json<Updated>, ApiError> {
    super_admin(&caller)?;
    let patch = body::<EmailSettingsPatch>(&bytes)?
        .map(Into::into)
        .unwrap_or_default();
    let sender_email = state.services.email.update(patch).await?;
    Ok(axum::Json(Updated {
        success: true,
        sender_email,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct To {
    email: Option<String>,
}

/// Sends a test email, to `email` or the caller (SUPER_ADMIN).
#[utoipa::path(post, path = "/api/admin/emails/test", tag = "admin", security(("apiKey" = []), ("session" = [])),
    request_body(content = Option<To>),
    responses((status = 200, description = "What the mail server said", body = Answer)))]
async fn test(
    State(state): State<AppState>,
    caller: Caller,
    bytes: Bytes,
) -> Result<axum::Json<Answer>, ApiError> {
    super_admin(&caller)?;
    let to = match body::<To>(&bytes)?.and_then(|b| b.email) {
        Some(raw) => Some(email(&raw)?),
        None => None,
    };
    let outcome = state.services.email.test(to.as_ref()).await?;
    Ok(axum::Json(outcome.into()))
}

/// Allows a recipient in sandbox mode (SUPER_ADMIN).
#[utoipa::path(post, path = "/api/admin/emails/verify", tag = "admin", security(("apiKey" = []), ("session" = [])),
    request_body = To,
    responses((status = 200, description = "Verified", body = Answer)))]
async fn verify(
    State(state): State<AppState>,
    caller: Caller,
    bytes: Bytes,
) -> Result<axum::Json<Answer>, ApiError> {
    super_admin(&caller)?;
    let raw = body::<To>(&bytes)?
        .and_then(|b| b.email)
        .ok_or_else(|| ApiError::bad_request("email is required"))?;
    let outcome = state.services.email.verify(&email(&raw)?).await?;
    Ok(axum::Json(outcome.into()))
}

#[derive(Deserialize)]
struct EmailQuery {
    email: Option<String>,
}

/// Removes an allowed recipient (SUPER_ADMIN). Deprecated: answers carry a `Deprecation` header.
#[utoipa::path(delete, path = "/api/admin/emails/verify", tag = "admin", security(("apiKey" = []), ("session" = [])),
    params(("email" = String, Query)),
    responses((status = 200, description = "Removed", body = Answer,
        headers(("deprecation" = String)))))]
async fn unverify(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<EmailQuery>,
) -> Result<Response, ApiError> {
    super_admin(&caller)?;
    let raw = q
        .email
        .ok_or_else(|| ApiError::bad_request("email is required (query parameter)"))?;
    let outcome = state.services.email.unverify(&email(&raw)?).await?;
    Ok((
        [(HeaderName::from_static("deprecation"), DEPRECATED_SINCE)],
        axum::Json(Answer::from(outcome)),
    )
        .into_response())
}
