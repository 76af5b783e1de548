//! API keys: `GET/POST /api/keys`, `DELETE /api/keys/{id}`.

use axum::extract::State;
use booktr_core::types::Scope;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Success, SUCCESS};
use crate::error::ApiError;
use crate::extract::{Json, Path};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::openapi::ErrorBody;
use crate::openapi::Routes;
use crate::state::AppState;
use crate::wire::accounts::ApiKey;
use crate::wire::Mirror;

pub fn router() -> Routes {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(revoke))
}

#[derive(Serialize, utoipa::ToSchema)]
struct KeyList {
    keys: Vec<ApiKey>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateKey {
    name: String,
    #[schema(value_type = Option<Vec<crate::wire::types::Scope>>)]
    scopes: Option<Vec<Scope>>,
    expires_at: Option<DateTime<Utc>>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CreatedKey {
    key: ApiKey,
    secret_key: String,
}

/// The caller's API keys (never their secrets).
#[utoipa::path(get, path = "/api/keys", tag = "keys", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Keys", body = KeyList)))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<KeyList>, ApiError> {
    let keys = state.services.accounts.list_keys(caller.user_id()).await?;
    Ok(axum::Json(KeyList {
        keys: Mirror::mirror(keys),
    }))
}

/// A new key; its secret is shown in this answer only.
#[utoipa::path(post, path = "/api/keys", tag = "keys", security(("apiKey" = []), ("session" = [])), request_body = CreateKey,
    responses((status = 200, description = "The key and its secret", body = CreatedKey)))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<CreateKey>,
) -> Result<axum::Json<CreatedKey>, ApiError> {
    let created = state
        .services
        .accounts
        .create_key(&caller.0.user, &body.name, body.scopes, body.expires_at)
        .await?;
    Ok(axum::Json(CreatedKey {
        key: created.key.into(),
        secret_key: created.secret,
    }))
}

#[utoipa::path(delete, path = "/api/keys/{id}", tag = "keys", security(("apiKey" = []), ("session" = [])),
    params(("id" = String, Path, description = "The key's id")),
    responses((status = 200, description = "Revoked", body = super::Success),
        (status = 404, description = "No such key", body = ErrorBody)))]
async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<Success>, ApiError> {
    state
        .services
        .accounts
        .revoke_key(caller.user_id(), &id)
        .await
        .map_err(|e| match e {
            booktr_core::accounts::AccountsError::NotFound => ApiError::not_found("API key"),
            e => e.into(),
        })?;
    Ok(axum::Json(SUCCESS))
}
