//! The caller's profile: `GET/PATCH /api/user`; taking the account's data away
//! (`GET /api/user/export`) and closing it (`DELETE /api/user/delete`).

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::error::ApiError;
use crate::extract::Json;
use crate::wire::accounts::User;
use crate::wire::privacy::{AccountExport, Deleted};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::Routes;
use crate::state::AppState;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(profile, update))
        .routes(routes!(export))
        .routes(routes!(close_account))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CloseAccount {
    confirmation: String,
    reason: Option<String>,
}

/// Everything the account holds, as one JSON document offered as a file download.
#[utoipa::path(get, path = "/api/user/export", tag = "account", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "The export", body = AccountExport)))]
async fn export(State(state): State<AppState>, caller: Caller) -> Result<Response, ApiError> {
    let export = state.services.privacy.export(&caller.0.user).await?;
    let file_name = format!(
        "booktr-export-{}.json",
        export.exported_at.format("%Y-%m-%d")
    );
    let mut response = axum::Json(AccountExport::from(export)).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{file_name}\"")) {
        response.headers_mut().insert(CONTENT_DISPOSITION, value);
    }
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Closes the account and deletes its data; `confirmation` must be the account's email.
#[utoipa::path(delete, path = "/api/user/delete", tag = "account", security(("apiKey" = []), ("session" = [])), request_body = CloseAccount,
    responses((status = 200, description = "What was deleted", body = Deleted)))]
async fn close_account(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CloseAccount>,
) -> Result<axum::Json<Deleted>, ApiError> {
    let reason = body
        .reason
        .as_deref()
        .map(|r| r.chars().take(1000).collect::<String>());
    let deleted = state
        .services
        .privacy
        .delete_account(&caller.0.user, &body.confirmation, reason.as_deref())
        .await?;
    Ok(axum::Json(deleted.into()))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateProfile {
    name: Option<String>,
    preferred_language: Option<String>,
}

/// The caller's profile.
#[utoipa::path(get, path = "/api/user", tag = "account", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Profile", body = User)))]
async fn profile(caller: Caller) -> axum::Json<User> {
    axum::Json(caller.0.user.into())
}

#[utoipa::path(patch, path = "/api/user", tag = "account", security(("apiKey" = []), ("session" = [])), request_body = UpdateProfile,
    responses((status = 200, description = "The profile now", body = User)))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<UpdateProfile>,
) -> Result<axum::Json<User>, ApiError> {
    let user = state
        .services
        .accounts
        .update_profile(caller.user_id(), body.name, body.preferred_language)
        .await?;
    Ok(axum::Json(user.into()))
}
