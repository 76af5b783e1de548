//! Sign-up, sign-in and sign-out with the session cookie (the spec hides this flow; these
//! endpoints are ours, documented in docs/api.md).

use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use booktr_core::accounts::{NewUser, SESSION_COOKIE};
use booktr_core::types::{Email, Plan, Role};
use serde::{Deserialize, Serialize};

use super::SUCCESS;
use crate::auth::session_token;
use crate::error::ApiError;
use crate::extract::Json;
use crate::limits::ClientAddress;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::accounts::User;

pub(crate) const SESSION_MAX_AGE_SECS: i64 = booktr_core::accounts::SESSION_TTL_DAYS * 24 * 3600;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(sign_up))
        .routes(routes!(sign_in))
        .routes(routes!(sign_out))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SignUp {
    email: String,
    password: String,
    name: Option<String>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SignIn {
    email: String,
    password: String,
}

#[derive(Serialize, utoipa::ToSchema)]
struct UserBody {
    user: User,
}

/// Creates a USER on the FREE plan and signs it in (sets the `auth.session-token` cookie).
#[utoipa::path(post, path = "/api/auth/signup", tag = "auth", request_body = SignUp,
    responses((status = 201, description = "Signed up and in", body = UserBody,
        headers(("set-cookie" = String, description = "The session cookie"))),
        (status = 403, description = "Sent from another site's page", body = ErrorBody),
        (status = 409, description = "The email is taken", body = ErrorBody)))]
async fn sign_up(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Json(body): Json<SignUp>,
) -> Result<Response, ApiError> {
    crate::auth::require_same_origin(&headers, &state)?;
    let email = Email::parse(&body.email).map_err(|e| ApiError::bad_request(e.0))?;
    let accounts = &state.services.accounts;
    accounts.limit_password_attempt(&address, None).await?;
    accounts
        .create_user(NewUser {
            email: email.clone(),
            name: body.name,
            password: Some(body.password.clone()),
            role: Role::User,
            plan: Plan::Free,
        })
        .await?;
    let (user, token) = accounts.sign_in(email.as_str(), &body.password).await?;
    Ok(with_cookie(
        &state,
        &headers,
        &token,
        SESSION_MAX_AGE_SECS,
        (
            StatusCode::CREATED,
            axum::Json(UserBody { user: user.into() }),
        ),
    ))
}

/// Signs in with email and password (sets the `auth.session-token` cookie).
#[utoipa::path(post, path = "/api/auth/signin", tag = "auth", request_body = SignIn,
    responses((status = 200, description = "Signed in", body = UserBody,
        headers(("set-cookie" = String, description = "The session cookie"))),
        (status = 401, description = "Wrong email or password", body = ErrorBody),
        (status = 403, description = "Sent from another site's page", body = ErrorBody)))]
async fn sign_in(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Json(body): Json<SignIn>,
) -> Result<Response, ApiError> {
    crate::auth::require_same_origin(&headers, &state)?;
    let accounts = &state.services.accounts;
    accounts
        .limit_password_attempt(&address, Some(&body.email))
        .await?;
    let (user, token) = accounts.sign_in(&body.email, &body.password).await?;
    Ok(with_cookie(
        &state,
        &headers,
        &token,
        SESSION_MAX_AGE_SECS,
        axum::Json(UserBody { user: user.into() }),
    ))
}

/// Ends the session named by the cookie (if any) and clears the cookie. Always succeeds.
#[utoipa::path(post, path = "/api/auth/signout", tag = "auth",
    responses((status = 200, description = "Signed out", body = super::Success),
        (status = 403, description = "Sent from another site's page", body = ErrorBody)))]
async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    crate::auth::require_same_origin(&headers, &state)?;
    if let Some(token) = session_token(&headers) {
        state.services.accounts.sign_out(&token).await?;
    }
    Ok(with_cookie(&state, &headers, "", 0, axum::Json(SUCCESS)))
}

/// HttpOnly (no script can read it), SameSite=Lax (not sent on cross-site POSTs), and Secure
/// when the service is reached over https, directly or behind a TLS-terminating proxy.
pub(crate) fn with_cookie(
    state: &AppState,
    headers: &HeaderMap,
    token: &str,
    max_age: i64,
    body: impl IntoResponse,
) -> Response {
    let forwarded_https = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let secure = if state.settings.is_https() || forwarded_https {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"
    );
    let mut response = body.into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}
